/**
 * The pod `log` subresource of the Kubernetes API slice (pods.ts): the apiserver's pod LogREST
 * (pkg/registry/core/pod/rest/log.go: `container`, defaulted for a one-container pod, `sinceTime`,
 * and the kubelet's other log options), answered by the kubelet's own log route (routes/logs.ts).
 */
import { hostClock } from '../host/agent-host.js';
import { statusReply, type HttpReply } from '../http/reply.js';
import { notFound, statusError } from '../http/status.js';
import { containerLogsHandler } from '../routes/logs.js';
import type { RouteContext } from '../routes/router.js';

/**
 * podLogHandler: `GET …/pods/{name}/log`, the kubelet-style log route (routes/logs.ts) with
 * `?container=` (defaulted when the pod has one container: 400 naming the containers otherwise)
 * and `sinceTime` (RFC 3339) turned into `sinceSeconds` by the agent's clock.
 */
export function podLogHandler(ctx: RouteContext): HttpReply | Promise<HttpReply> {
  const { host, req, params } = ctx;
  const pod = host.getPod(params.namespace, params.name);
  if (!pod) return statusReply(notFound('pods', params.name));
  let container = req.query.get('container') ?? '';
  if (container === '') {
    const names = (pod.spec?.containers ?? []).map((c) => c.name);
    if (names.length !== 1) {
      return statusReply(
        statusError(400, 'BadRequest', `a container name must be specified for pod ${params.name}, choose one of: [${names.join(' ')}]`),
      );
    }
    container = names[0];
  }
  if (req.query.has('sinceTime')) {
    const t = Date.parse(req.query.get('sinceTime')!);
    if (Number.isNaN(t))
      return statusReply(
        statusError(400, 'BadRequest', `sinceTime: Invalid value: ${JSON.stringify(req.query.get('sinceTime'))}: must be an RFC 3339 time`),
      );
    const query = new URLSearchParams(req.query);
    query.delete('sinceTime');
    query.set('sinceSeconds', String(Math.max(1, Math.ceil((hostClock(host).now() - t) / 1000))));
    return containerLogsHandler({ ...ctx, req: { ...req, query }, params: { namespace: params.namespace, pod: params.name, container } });
  }
  return containerLogsHandler({ ...ctx, params: { namespace: params.namespace, pod: params.name, container } });
}
