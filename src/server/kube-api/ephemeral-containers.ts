/**
 * Counterpart of pkg/registry/core/pod/storage EphemeralContainersREST (with the strategy of
 * pkg/registry/core/pod strategy.go ephemeralContainersStrategy and the validation of
 * ValidatePodEphemeralContainersUpdate): `GET|PUT|PATCH /api/v1/namespaces/{ns}/pods/{name}/ephemeralcontainers`,
 * what `kubectl debug POD --image …` patches (strategic merge) before it attaches. Only
 * `spec.ephemeralContainers` is taken from the body (the strategy copies the rest from the stored
 * pod); existing ephemeral containers may not change or go (validation-ephemeral.ts); the new pod is
 * validated and admitted (Pod Security, as upstream evaluates this subresource) as a pod update,
 * then stored through AgentHost.replacePod. Authorized as `pods/ephemeralcontainers` with the verb
 * of the method (get, update, patch). Only API pods take it: a static pod (a manifest on the node)
 * and a pod of another source (etcd) are refused by name with 403.
 */
import type { Pod, Status } from '../../shared/api.js';
import { isStaticPod, podSource } from '../../shared/annotations.js';
import { validateEphemeralContainersUpdate } from '../../shared/validation-ephemeral.js';
import type { AgentHost } from '../host/agent-host.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from '../routes/router.js';
import { admitApiPods, invalidStatus, parsePodsBody, withHeaders } from '../routes/intake.js';
import { notFound, statusError } from '../http/status.js';
import type { PatchQuery } from './patch.js';
import { mirrorPodWriteRefused } from './present.js';
import { jsonRequestBody } from './protobuf-body.js';
import { isStatus, kubeErrorStatus, parseDryRun } from './request.js';

/** EphemeralContainersDeps: what the routes share with the pod routes: the API view of a pod (resourceVersion in) and the patcher. */
export interface EphemeralContainersDeps {
  present(host: AgentHost, pod: Pod): Pod;
  patchPod(current: Pod, contentType: string, body: string, query: PatchQuery): Pod;
}

/** writeRefusal: the 403 for a pod whose ephemeral containers the API may not change (not an API pod), else undefined. */
function writeRefusal(pod: Pod, name: string, verb: string): Status | undefined {
  if (isStaticPod(pod)) return mirrorPodWriteRefused(name, verb);
  const source = podSource(pod);
  if (source === undefined || source === 'api') return undefined;
  return statusError(
    403,
    'Forbidden',
    `pods ${JSON.stringify(name)} is forbidden: cannot ${verb} the ephemeral containers of a pod of the ${source} source: only pods created through the API take them`,
    { name, kind: 'pods' },
  );
}

/**
 * ephemeralContainersRoutes: the subresource's GET (the Pod), PUT (a Pod whose
 * `spec.ephemeralContainers` replaces the stored list; `metadata.resourceVersion`, when set, a
 * precondition: 409 Conflict) and PATCH (json, merge, strategic merge or apply patch of the Pod).
 * Answers 200 with the updated Pod; `?dryRun=All` stores nothing.
 */
export function ephemeralContainersRoutes(deps: EphemeralContainersDeps): Route[] {
  const get = ({ host, params }: RouteContext): HttpReply => {
    const pod = host.getPod(params.namespace, params.name);
    return pod ? jsonReply(200, deps.present(host, pod)) : statusReply(notFound('pods', params.name));
  };

  /** write: `change` turns the API view of the stored pod into the requested Pod (or a refusal); its ephemeral containers are stored. */
  const write = async (ctx: RouteContext, verb: 'update' | 'patch', change: (base: Pod) => Pod | Status): Promise<HttpReply> => {
    const { host, req, params } = ctx;
    if (!host.replacePod) return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not update pods'));
    const dryRun = parseDryRun(req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    const current = host.getPod(params.namespace, params.name);
    if (!current) return statusReply(notFound('pods', params.name));
    const refused = writeRefusal(current, params.name, verb);
    if (refused) return statusReply(refused);
    const base = deps.present(host, current);
    let requested: Pod | Status;
    try {
      requested = change(base);
    } catch (err) {
      return statusReply(kubeErrorStatus(err, 'pods', params.name));
    }
    if (isStatus(requested)) return statusReply(requested);
    // The strategy: everything but spec.ephemeralContainers comes from the stored pod.
    const { status: _status, ...stored } = base;
    const next: Pod = { ...stored, spec: { ...stored.spec!, ephemeralContainers: requested.spec?.ephemeralContainers ?? [] } };
    if ((next.spec?.ephemeralContainers ?? []).length === 0) delete next.spec?.ephemeralContainers;
    const parsed = await parsePodsBody(host, Buffer.from(JSON.stringify(next), 'utf8'), 'application/json', {
      namespace: params.namespace,
      name: params.name,
    });
    if (!parsed.ok) return parsed.reply;
    const pod = parsed.pods[0];
    const errors = validateEphemeralContainersUpdate(pod, current);
    if (errors.length > 0) return statusReply(invalidStatus(params.name, errors));
    const admission = admitApiPods(ctx, [pod], [current]);
    if (admission.refused) return withHeaders(admission.refused, admission.headers);
    try {
      return withHeaders(
        jsonReply(200, deps.present(host, await host.replacePod(params.namespace, params.name, pod, { dryRun }))),
        admission.headers,
      );
    } catch (err) {
      return statusReply(kubeErrorStatus(err, 'pods', params.name));
    }
  };

  const update = async (ctx: RouteContext) => {
    // A protobuf body is decoded off the main thread first (protobuf.ts decodeBodyOffThread).
    const decoded = await jsonRequestBody(ctx.host, ctx.body, ctx.req.headers['content-type'], 'Pod');
    return write(ctx, 'update', (base) => {
      if (isStatus(decoded)) return decoded;
      let body: Pod;
      try {
        body = JSON.parse((decoded.body ?? Buffer.alloc(0)).toString('utf8')) as Pod;
      } catch (err) {
        return statusError(400, 'BadRequest', `the body of the request cannot be handled as a Pod: ${(err as Error).message}`);
      }
      if (body === null || typeof body !== 'object') return statusError(400, 'BadRequest', 'the body of the request must be a Pod');
      if (body.metadata?.name !== undefined && body.metadata.name !== ctx.params.name) {
        return statusError(
          400,
          'BadRequest',
          `the name of the object (${body.metadata.name}) does not match the name on the URL (${ctx.params.name})`,
        );
      }
      const rv = body.metadata?.resourceVersion;
      if (rv !== undefined && rv !== '' && rv !== base.metadata?.resourceVersion) {
        return statusError(
          409,
          'Conflict',
          `Operation cannot be fulfilled on pods ${JSON.stringify(ctx.params.name)}: the object has been modified; please apply your changes to the latest version and try again`,
          { name: ctx.params.name, kind: 'pods' },
        );
      }
      return body;
    });
  };

  const patch = (ctx: RouteContext) =>
    write(ctx, 'patch', (base) => {
      const contentType = (ctx.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      const fieldManager = ctx.req.query.get('fieldManager');
      const force = (ctx.req.query.get('force') ?? '').toLowerCase();
      return deps.patchPod(base, contentType, (ctx.body ?? Buffer.alloc(0)).toString('utf8'), {
        ...(fieldManager !== null ? { fieldManager } : {}),
        ...(force === 'true' || force === '1' ? { force: true } : {}),
      });
    });

  return [{ path: '/api/v1/namespaces/:namespace/pods/:name/ephemeralcontainers', methods: { get, put: update, patch } }];
}
