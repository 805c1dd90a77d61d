// Counterpart of pkg/kubelet/server/stats/handler.go (GET /stats/summary) and of the kubelet server's /metrics/resource, /metrics/cadvisor and /metrics/probes handlers (pkg/kubelet/server/server.go InstallDefaultHandlers).
import type { AgentHost } from '../host/agent-host.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from './router.js';
import { notFound, statusError } from '../http/status.js';

/**
 * summaryHandler answers `GET /stats/summary`: the Summary JSON (stats/v1alpha1) with every pod,
 * at most two collection periods old (a read after a quiet spell waits for a collection:
 * AgentHost.statsSummary); 503 ServiceUnavailable when no collection succeeded; 404 when the host
 * has no stats. `?only_cpu_and_memory=true` (the kubelet's query) drops fs, volumes and logs.
 */
export async function summaryHandler({ host, req }: RouteContext): Promise<HttpReply> {
  if (!host.statsSummary) return statusReply(notFound('stats', 'summary'));
  const s = await host.statsSummary();
  if (!s) return statusReply(statusError(503, 'ServiceUnavailable', 'stats are not collected yet; retry after --housekeeping-interval'));
  if (req.query.get('only_cpu_and_memory') === 'true') {
    return jsonReply(200, {
      node: { nodeName: s.node.nodeName, startTime: s.node.startTime, cpu: s.node.cpu, memory: s.node.memory },
      pods: s.pods.map((p) => ({
        podRef: p.podRef,
        startTime: p.startTime,
        cpu: p.cpu,
        memory: p.memory,
        containers: p.containers.map((c) => ({ name: c.name, startTime: c.startTime, cpu: c.cpu, memory: c.memory })),
      })),
    });
  }
  return jsonReply(200, s);
}

function textHandler(pick: (h: AgentHost) => (() => Promise<{ contentType: string; body: string }>) | undefined, name: string) {
  return async ({ host }: RouteContext): Promise<HttpReply> => {
    const fn = pick(host);
    if (!fn) return statusReply(notFound('metrics', name));
    const { contentType, body } = await fn.call(host);
    return { status: 200, contentType, body };
  };
}

/** statsRoutes: GET /stats/summary, /metrics/resource, /metrics/cadvisor, /metrics/probes (reads: auth.ts lets whoever may GET /metrics read them). */
export function statsRoutes(): Route[] {
  return [
    { path: '/stats/summary', methods: { get: summaryHandler } },
    { path: '/metrics/resource', methods: { get: textHandler((h) => h.resourceMetrics, 'resource') } },
    { path: '/metrics/cadvisor', methods: { get: textHandler((h) => h.cadvisorMetrics, 'cadvisor') } },
    { path: '/metrics/probes', methods: { get: textHandler((h) => h.probeMetrics, 'probes') } },
  ];
}
