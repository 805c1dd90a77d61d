/**
 * Counterpart of metrics-server's metrics.k8s.io/v1beta1 API (sigs.k8s.io/metrics-server pkg/api:
 * PodMetrics and NodeMetrics from the kubelet's Summary API), which `kubectl top pod` and
 * `kubectl top node` read: here straight from this node's Summary (AgentHost.statsSummary).
 */
import type { Summary } from '../../shared/stats.js';
import { hostClock, type AgentHost } from '../host/agent-host.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from '../routes/router.js';
import { notFound, statusError } from '../http/status.js';
import { isStatus, matchesFilter, parseListFilter } from './request.js';
import { realClock, type Clock } from '../../shared/clock.js';

const kGroupVersion = 'metrics.k8s.io/v1beta1';
/** kWindow: the window the usage is averaged over as reported (the stats collection's interval is ~10 s). */
const kWindow = '10s';

/** cpuQuantity: nanocores as a Quantity (`1234n`). */
function cpuQuantity(nanoCores: number | undefined): string {
  return `${Math.max(0, Math.round(nanoCores ?? 0))}n`;
}

/** memoryQuantity: bytes as a Quantity in KiB (`2048Ki`), as metrics-server reports working set. */
function memoryQuantity(bytes: number | undefined): string {
  return `${Math.max(0, Math.round((bytes ?? 0) / 1024))}Ki`;
}

/** podMetrics: the PodMetrics objects of a Summary (containers' CPU and working-set memory), created at `clock`'s now. */
export function podMetrics(summary: Summary, clock: Clock = realClock): Record<string, unknown>[] {
  const now = new Date(clock.now()).toISOString();
  return summary.pods.map((p) => ({
    kind: 'PodMetrics',
    apiVersion: kGroupVersion,
    metadata: { name: p.podRef.name, namespace: p.podRef.namespace, creationTimestamp: now },
    timestamp: p.cpu?.time ?? p.memory?.time ?? now,
    window: kWindow,
    containers: p.containers.map((c) => ({
      name: c.name,
      usage: { cpu: cpuQuantity(c.cpu?.usageNanoCores), memory: memoryQuantity(c.memory?.workingSetBytes) },
    })),
  }));
}

/** nodeMetrics: the node's NodeMetrics of a Summary, created at `clock`'s now. */
export function nodeMetrics(summary: Summary, clock: Clock = realClock): Record<string, unknown> {
  const n = summary.node;
  const now = new Date(clock.now()).toISOString();
  return {
    kind: 'NodeMetrics',
    apiVersion: kGroupVersion,
    metadata: { name: n.nodeName, creationTimestamp: now },
    timestamp: n.cpu?.time ?? now,
    window: kWindow,
    usage: { cpu: cpuQuantity(n.cpu?.usageNanoCores), memory: memoryQuantity(n.memory?.workingSetBytes) },
  };
}

async function summaryOf(host: AgentHost): Promise<Summary | HttpReply> {
  if (!host.statsSummary)
    return statusReply(statusError(404, 'NotFound', 'the server could not find the requested resource: this agent collects no stats'));
  const s = await host.statsSummary();
  if (!s) return statusReply(statusError(503, 'ServiceUnavailable', 'metrics are not collected yet; retry after --housekeeping-interval'));
  return s;
}

function isReply(v: unknown): v is HttpReply {
  return typeof (v as HttpReply).status === 'number' && typeof (v as HttpReply).contentType === 'string';
}

async function listPodMetrics({ host, req, params }: RouteContext): Promise<HttpReply> {
  const s = await summaryOf(host);
  if (isReply(s)) return s;
  const filter = parseListFilter(req.query, ['metadata.name', 'metadata.namespace']);
  if (isStatus(filter)) return statusReply(filter);
  const labelsOf = new Map(host.listPods().map((p) => [`${p.metadata?.namespace ?? 'default'}/${p.metadata?.name}`, p.metadata?.labels]));
  const items = podMetrics(s, hostClock(host)).filter((m) => {
    const md = m.metadata as { name: string; namespace: string };
    if (params.namespace !== undefined && md.namespace !== params.namespace) return false;
    return matchesFilter(filter, labelsOf.get(`${md.namespace}/${md.name}`), {
      'metadata.name': md.name,
      'metadata.namespace': md.namespace,
    });
  });
  return jsonReply(200, { kind: 'PodMetricsList', apiVersion: kGroupVersion, metadata: {}, items });
}

async function getPodMetrics({ host, params }: RouteContext): Promise<HttpReply> {
  const s = await summaryOf(host);
  if (isReply(s)) return s;
  const m = podMetrics(s, hostClock(host)).find(
    (x) =>
      (x.metadata as { name: string; namespace: string }).name === params.name &&
      (x.metadata as { namespace: string }).namespace === params.namespace,
  );
  return m ? jsonReply(200, m) : statusReply(notFound('pods.metrics.k8s.io', params.name));
}

async function listNodeMetrics({ host }: RouteContext): Promise<HttpReply> {
  const s = await summaryOf(host);
  if (isReply(s)) return s;
  return jsonReply(200, { kind: 'NodeMetricsList', apiVersion: kGroupVersion, metadata: {}, items: [nodeMetrics(s, hostClock(host))] });
}

async function getNodeMetrics({ host, params }: RouteContext): Promise<HttpReply> {
  const s = await summaryOf(host);
  if (isReply(s)) return s;
  return s.node.nodeName === params.name
    ? jsonReply(200, nodeMetrics(s, hostClock(host)))
    : statusReply(notFound('nodes.metrics.k8s.io', params.name));
}

/** metricsRoutes: GET /apis/metrics.k8s.io/v1beta1/{pods,namespaces/{ns}/pods[/{name}],nodes[/{name}]}. */
export function metricsRoutes(): Route[] {
  const base = `/apis/${kGroupVersion}`;
  return [
    { path: `${base}/pods`, methods: { get: listPodMetrics } },
    { path: `${base}/namespaces/:namespace/pods`, methods: { get: listPodMetrics } },
    { path: `${base}/namespaces/:namespace/pods/:name`, methods: { get: getPodMetrics } },
    { path: `${base}/nodes`, methods: { get: listNodeMetrics } },
    { path: `${base}/nodes/:name`, methods: { get: getNodeMetrics } },
  ];
}
