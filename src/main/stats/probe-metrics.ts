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
  observe(type: 'liveness' | 'readiness' | 'startup', result: 'success' | 'failure' | 'unknown', pod: { uid: string; name: string; namespace: string }, container: string): void;
  /** forgetPod: drops the series of pod `uid`. */
  forgetPod(uid: string): void;
  /** text: the Prometheus exposition of GET /metrics/probes. */
  text(): Promise<{ contentType: string; body: string }>;
}

const kType = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' } as const;
const kResult = { success: 'successful', failure: 'failed', unknown: 'unknown' } as const;

/** newProbeMetrics builds the counter in its own registry (the kubelet's /metrics/probes is not in /metrics). */
export function newProbeMetrics(): ProbeMetrics {
  const registry = new Registry();
  const total = new Counter({
    name: 'prober_probe_total', help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
    labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'], registers: [registry],
  });
  const byPod = new Map<string, Set<string>>();
  return {
    observe(type, result, pod, container) {
      const labels = { probe_type: kType[type], result: kResult[result], container, pod: pod.name, namespace: pod.namespace, pod_uid: pod.uid };
      total.inc(labels);
      let keys = byPod.get(pod.uid);
      if (!keys) byPod.set(pod.uid, (keys = new Set()));
      keys.add(JSON.stringify(labels));
    },
    forgetPod(uid) {
      for (const k of byPod.get(uid) ?? []) total.remove(JSON.parse(k) as Record<string, string>);
      byPod.delete(uid);
    },
    async text() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
