/**
 * Counterpart of pkg/kubelet/prober/prober.go's ProberResults counter as the kubelet serves it at
 * GET /metrics/probes (pkg/kubelet/server/server.go: its own registry): prober_probe_total
 * {probe_type, result, container, pod, namespace, pod_uid}, probe_type `Liveness` | `Readiness` |
 * `Startup`, result `successful` | `failed` | `unknown`. A pod's series are dropped when it goes
 * (as the kubelet's worker deletes its label values on stop). Main thread only.
 */
import { Counter, Registry } from 'prom-client';

/** ProbeMetrics: the probe results counter and its registry. */
export interface ProbeMetrics {
  /** observe: one probe of `type` (liveness|readiness|startup) gave `result` (success|failure|unknown). Cheap. */
  observe(
    type: 'liveness' | 'readiness' | 'startup',
    result: 'success' | 'failure' | 'unknown',
    pod: { uid: string; name: string; namespace: string },
    container: string,
  ): void;
  /** forgetPod: drops the series of pod `uid`. */
  forgetPod(uid: string): void;
  /** text: the Prometheus exposition of GET /metrics/probes. */
  text(): Promise<{ contentType: string; body: string }>;
}

const kType = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' } as const;
const kResult = { success: 'successful', failure: 'failed', unknown: 'unknown' } as const;

/** One probe worker's series: its fixed labels and a count per result. */
interface ProbeSeries {
  probeType: string;
  container: string;
  pod: string;
  namespace: string;
  counts: Record<'success' | 'failure' | 'unknown', number>;
}

/**
 * newProbeMetrics builds the counter in its own registry (the kubelet's /metrics/probes is not in
 * /metrics). observe only bumps a number in the worker's series (found by pod UID, probe type and
 * container): at 200 probes/s, prom-client's per-increment label hashing was a measurable part of a
 * probe's cost (issue #16); the counter takes its values from the series when scraped (`collect`).
 */
export function newProbeMetrics(): ProbeMetrics {
  const registry = new Registry();
  /** Series by pod UID, then by `${probe type}/${container}`. */
  const byPod = new Map<string, Map<string, ProbeSeries>>();
  new Counter({
    name: 'prober_probe_total',
    help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
    labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [uid, series] of byPod) {
        for (const x of series.values()) {
          for (const r of ['success', 'failure', 'unknown'] as const) {
            if (x.counts[r] > 0)
              this.inc(
                { probe_type: x.probeType, result: kResult[r], container: x.container, pod: x.pod, namespace: x.namespace, pod_uid: uid },
                x.counts[r],
              );
          }
        }
      }
    },
  });
  return {
    observe(type, result, pod, container) {
      let series = byPod.get(pod.uid);
      if (!series) byPod.set(pod.uid, (series = new Map()));
      const key = `${type}/${container}`;
      let x = series.get(key);
      if (!x)
        series.set(
          key,
          (x = {
            probeType: kType[type],
            container,
            pod: pod.name,
            namespace: pod.namespace,
            counts: { success: 0, failure: 0, unknown: 0 },
          }),
        );
      x.counts[result]++;
    },
    forgetPod(uid) {
      byPod.delete(uid);
    },
    async text() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
