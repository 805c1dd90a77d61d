/**
 * Counterpart of pkg/kubelet/metrics/collectors/resource_metrics.go (GET /metrics/resource: the
 * metrics-server's source) and of cAdvisor's Prometheus collector as the kubelet serves it at
 * /metrics/cadvisor (cadvisor/metrics/prometheus.go: labels container, id, image, name,
 * namespace, pod). Both are rendered from the latest Summary and StatsSample into a fresh
 * prom-client Registry per scrape (a collector, as the kubelet's, not long-lived series: a gone
 * pod's series go with it). Main thread; pure apart from prom-client.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { StatsSample, Summary } from '../../shared/stats.js';

const ms2s = (ms: number) => ms / 1000;
const ns2s = (ns: number) => ns / 1e9;
const iso2s = (t: string) => Date.parse(t) / 1000;

/** Registers a counter on `reg` and returns a setter (a fresh registry per scrape: inc once = set). */
function counter(reg: Registry, name: string, help: string, labelNames: string[]): (labels: Record<string, string>, v: number) => void {
  const c = new Counter({ name, help, labelNames, registers: [reg] });
  return (labels, v) => c.inc(labels, v);
}

function gauge(reg: Registry, name: string, help: string, labelNames: string[]): (labels: Record<string, string>, v: number) => void {
  const g = new Gauge({ name, help, labelNames, registers: [reg] });
  return (labels, v) => g.set(labels, v);
}

/**
 * resourceMetricsText: the text of /metrics/resource from `summary` (undefined before the first
 * collection: only `scrape_error 1`). `scrapeError` says the last collection failed. Names, help
 * and labels as resource_metrics.go: node_cpu_usage_seconds_total, node_memory_working_set_bytes,
 * container_cpu_usage_seconds_total / container_memory_working_set_bytes /
 * container_start_time_seconds {container,pod,namespace}, pod_cpu_usage_seconds_total /
 * pod_memory_working_set_bytes {pod,namespace}, scrape_error.
 */
export async function resourceMetricsText(
  summary: Summary | undefined,
  scrapeError: boolean,
): Promise<{ contentType: string; body: string }> {
  const reg = new Registry();
  const nodeCpu = counter(reg, 'node_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the node in core-seconds', []);
  const nodeMem = gauge(reg, 'node_memory_working_set_bytes', 'Current working set of the node in bytes', []);
  const cCpu = counter(reg, 'container_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the container in core-seconds', [
    'container',
    'pod',
    'namespace',
  ]);
  const cMem = gauge(reg, 'container_memory_working_set_bytes', 'Current working set of the container in bytes', [
    'container',
    'pod',
    'namespace',
  ]);
  const cStart = gauge(reg, 'container_start_time_seconds', 'Start time of the container since unix epoch in seconds', [
    'container',
    'pod',
    'namespace',
  ]);
  const pCpu = counter(reg, 'pod_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the pod in core-seconds', ['pod', 'namespace']);
  const pMem = gauge(reg, 'pod_memory_working_set_bytes', 'Current working set of the pod in bytes', ['pod', 'namespace']);
  const scrape = gauge(reg, 'scrape_error', '1 if there was an error while getting container metrics, 0 otherwise', []);
  scrape({}, scrapeError || !summary ? 1 : 0);
  if (summary) {
    const n = summary.node;
    if (n.cpu?.usageCoreNanoSeconds !== undefined) nodeCpu({}, ns2s(n.cpu.usageCoreNanoSeconds));
    if (n.memory?.workingSetBytes !== undefined) nodeMem({}, n.memory.workingSetBytes);
    for (const p of summary.pods) {
      const pl = { pod: p.podRef.name, namespace: p.podRef.namespace };
      if (p.cpu?.usageCoreNanoSeconds !== undefined) pCpu(pl, ns2s(p.cpu.usageCoreNanoSeconds));
      if (p.memory?.workingSetBytes !== undefined) pMem(pl, p.memory.workingSetBytes);
      for (const c of p.containers) {
        const cl = { container: c.name, ...pl };
        if (c.cpu?.usageCoreNanoSeconds !== undefined) cCpu(cl, ns2s(c.cpu.usageCoreNanoSeconds));
        if (c.memory?.workingSetBytes !== undefined) cMem(cl, c.memory.workingSetBytes);
        cStart(cl, iso2s(c.startTime));
      }
    }
  }
  return { contentType: reg.contentType, body: await reg.metrics() };
}

/**
 * cadvisorMetricsText: the text of /metrics/cadvisor from the latest sample (none before the first
 * collection): per container, with cAdvisor's labels (container, id = the cgroup path, image, name
 * = the runtime's container name (Docker's; a CRI runtime's container ID), namespace, pod): container_cpu_usage_seconds_total,
 * container_memory_working_set_bytes, container_memory_rss, container_memory_usage_bytes,
 * container_memory_failures_total{failure_type=pgfault|pgmajfault, scope=container},
 * container_spec_memory_limit_bytes, container_start_time_seconds, container_last_seen; and
 * machine_memory_bytes.
 */
export async function cadvisorMetricsText(sample: StatsSample | undefined): Promise<{ contentType: string; body: string }> {
  const reg = new Registry();
  const L = ['container', 'id', 'image', 'name', 'namespace', 'pod'];
  const cpu = counter(reg, 'container_cpu_usage_seconds_total', 'Cumulative cpu time consumed in seconds.', [...L, 'cpu']);
  const ws = gauge(reg, 'container_memory_working_set_bytes', 'Current working set in bytes.', L);
  const rss = gauge(reg, 'container_memory_rss', 'Size of RSS in bytes.', L);
  const usage = gauge(
    reg,
    'container_memory_usage_bytes',
    'Current memory usage in bytes, including all memory regardless of when it was accessed',
    L,
  );
  const failures = counter(reg, 'container_memory_failures_total', 'Cumulative count of memory allocation failures.', [
    ...L,
    'failure_type',
    'scope',
  ]);
  const limit = gauge(reg, 'container_spec_memory_limit_bytes', 'Memory limit for the container.', L);
  const start = gauge(reg, 'container_start_time_seconds', 'Start time of the container since unix epoch in seconds.', L);
  const seen = gauge(reg, 'container_last_seen', 'Last time a container was seen by the exporter', L);
  const machine = gauge(reg, 'machine_memory_bytes', 'Amount of memory installed on the machine.', []);
  if (sample) {
    machine({}, sample.node.memoryCapacityBytes);
    for (const p of sample.pods) {
      for (const c of p.containers) {
        const l = { container: c.name, id: c.cgroupPath, image: c.image, name: c.metricsName, namespace: p.namespace, pod: p.name };
        seen(l, ms2s(sample.observedAtMs));
        start(l, ms2s(c.startedAtMs));
        const u = c.cgroup;
        if (!u) continue;
        if (u.cpuUsageNs !== undefined) cpu({ ...l, cpu: 'total' }, ns2s(u.cpuUsageNs));
        if (u.workingSetBytes !== undefined) ws(l, u.workingSetBytes);
        if (u.rssBytes !== undefined) rss(l, u.rssBytes);
        if (u.memoryUsageBytes !== undefined) usage(l, u.memoryUsageBytes);
        if (u.pageFaults !== undefined) failures({ ...l, failure_type: 'pgfault', scope: 'container' }, u.pageFaults);
        if (u.majorPageFaults !== undefined) failures({ ...l, failure_type: 'pgmajfault', scope: 'container' }, u.majorPageFaults);
        limit(l, u.memoryLimitBytes ?? 0);
      }
    }
  }
  return { contentType: reg.contentType, body: await reg.metrics() };
}
