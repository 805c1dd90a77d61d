/**
 * The kubelet's own write paths take no `dryRun` (a break test's finding on issue #38: `POST
 * /pods?dryRun=All` created and ran a real pod, `DELETE …?dryRun=All` really deleted it, and
 * `?dryRun=bogus` was taken silently). Dry runs are the Kubernetes API's (`/api/v1/…`, where the
 * apiserver's semantics are served: kube-api/pods.ts); here any `dryRun` parameter is refused
 * with 400 before the handler runs, as the apiserver refuses a query parameter it cannot honour,
 * so no client believes a real change was only a rehearsal.
 */
import { statusReply } from '../http/reply.js';
import type { RouteHandler } from './router.js';
import { statusError } from '../http/status.js';

/** refusingDryRun: `handler`, unless the request carries a `dryRun` query parameter (then 400 naming it and where it is served). */
export function refusingDryRun(handler: RouteHandler): RouteHandler {
  return (ctx) =>
    ctx.req.query.has('dryRun')
      ? statusReply(
          statusError(
            400,
            'BadRequest',
            `dryRun is not served on ${ctx.req.path}: the kubelet's own paths change the node at once; use the Kubernetes API (/api/v1/namespaces/{namespace}/…) for a dry run`,
          ),
        )
      : handler(ctx);
}
