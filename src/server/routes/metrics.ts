// Counterpart of the kubelet server's /metrics endpoint (pkg/kubelet/server: legacyregistry handler) and its HTTP metrics filter.
import { performance } from 'node:perf_hooks';
import { hostClock, type AgentHost } from '../host/agent-host.js';
import { statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext, RouteHandler } from './router.js';
import { notFound } from '../http/status.js';

/**
 * metricsHandler answers `GET /metrics`: the agent's Prometheus text exposition (prom-client,
 * kubelet metric names), or 404 when the host has no metrics.
 */
export async function metricsHandler({ host }: RouteContext): Promise<HttpReply> {
  if (!host.metrics) return statusReply(notFound('metrics', 'metrics'));
  const { contentType, body } = await host.metrics();
  return { status: 200, contentType, body };
}

/**
 * instrumentRoutes wraps every handler of `routes` so that each answered request is reported to
 * `host.observeHttpRequest(method, path, code, seconds)` with `path` the route's first segment
 * (`pods`, `metrics`, … as the kubelet's `path` label, which keeps the label's cardinality
 * bounded). Returns `routes` unchanged when the host observes nothing. The wrapper allocates
 * nothing per request beyond the handler's own promise.
 */
export function instrumentRoutes(routes: Route[], host: AgentHost): Route[] {
  if (!host.observeHttpRequest) return routes;
  const observe = host.observeHttpRequest.bind(host);
  const clock = hostClock(host);
  return routes.map((route) => {
    const label = route.path.split('/')[1] || '/';
    const methods: Route['methods'] = {};
    for (const [method, handler] of Object.entries(route.methods) as [keyof Route['methods'], RouteHandler][]) {
      const upper = method.toUpperCase();
      methods[method] = (ctx) => {
        const started = clock.monotonicMs();
        const reply = handler(ctx);
        if (!(reply instanceof Promise)) {
          observe(upper, label, reply.status, (clock.monotonicMs() - started) / 1000);
          return reply;
        }
        return reply.then(
          (r) => {
            observe(upper, label, r.status, (clock.monotonicMs() - started) / 1000);
            return r;
          },
          (err: unknown) => {
            observe(upper, label, 500, (clock.monotonicMs() - started) / 1000);
            throw err;
          },
        );
      };
    }
    return { path: route.path, methods };
  });
}
