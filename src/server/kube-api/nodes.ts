/**
 * `PATCH /api/v1/nodes/{name}`: the one write of this node's Node the agent takes,
 * `spec.unschedulable` — what `kubectl cordon` and `uncordon` send (a strategic merge patch
 * `{"spec":{"unschedulable":true}}`, or `null` to clear it) and what `kubectl drain` sends before
 * it evicts the pods. The patch kinds are the pods' (patch.ts: JSON patch, merge patch, strategic
 * merge patch; server-side apply as well); the result may differ from the current Node only in
 * `spec.unschedulable` (and the unschedulable taint that comes with it): anything else is a 422
 * naming the field, since the rest of the Node is the agent's report of itself (the kubelet's
 * node status), not a user's to change. `?dryRun=All` answers with the patched Node and stores
 * nothing. What a cordon does here is in src/main/node/node-spec.ts. Handler only; resources.ts
 * mounts it.
 */
import type { Node, Pod } from '../../shared/api.js';
import type { HttpReply } from '../http/reply.js';
import type { RouteContext } from '../routes/router.js';
import { notFound, statusError } from '../http/status.js';
import { patchPod } from './patch.js';
import { isStatus, kubeErrorStatus, objectReply, parseDryRun, statusReply } from './request.js';

const kUnschedulableTaint = 'node.kubernetes.io/unschedulable';

/** comparable: the Node without what a cordon changes, as JSON text. */
function comparable(n: Node): string {
  const { unschedulable: _u, taints, ...spec } = n.spec ?? {};
  const kept = (taints ?? []).filter((t) => t.key !== kUnschedulableTaint);
  return JSON.stringify({
    ...n,
    metadata: { ...n.metadata, managedFields: undefined },
    spec: { ...spec, ...(kept.length ? { taints: kept } : {}) },
  });
}

/** firstDifference: the first path (`spec.podCIDR`, `metadata.labels`) where `a` and `b` differ, for the 422's field. */
function firstDifference(a: unknown, b: unknown, path: string): string {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) || Array.isArray(b)) return path;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
    if (JSON.stringify(ao[k]) !== JSON.stringify(bo[k])) return firstDifference(ao[k], bo[k], path ? `${path}.${k}` : k);
  }
  return path;
}

/** patchNode: `PATCH /api/v1/nodes/{name}` (see the module comment). */
export async function patchNode({ host, req, params, body }: RouteContext): Promise<HttpReply> {
  if (!host.getNode || !host.setNodeUnschedulable)
    return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not change its Node'));
  const dryRun = parseDryRun(req.query);
  if (isStatus(dryRun)) return statusReply(dryRun);
  const current = await host.getNode();
  if (current.metadata?.name !== params.name) return statusReply(notFound('nodes', params.name));
  const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  let patched: Node;
  try {
    const fieldManager = req.query.get('fieldManager');
    patched = patchPod(
      current as Pod,
      contentType,
      (body ?? Buffer.alloc(0)).toString('utf8'),
      fieldManager ? { fieldManager } : {},
    ) as Node;
  } catch (err) {
    return statusReply(kubeErrorStatus(err, 'nodes', params.name));
  }
  const unschedulable = patched.spec?.unschedulable;
  if (unschedulable !== undefined && unschedulable !== null && typeof unschedulable !== 'boolean') {
    return statusReply(
      statusError(
        422,
        'Invalid',
        `Node "${params.name}" is invalid: spec.unschedulable: Invalid value: ${JSON.stringify(unschedulable)}: must be a boolean`,
        {
          name: params.name,
          kind: 'Node',
          causes: [{ reason: 'FieldValueInvalid', field: 'spec.unschedulable', message: 'must be a boolean' }],
        },
      ),
    );
  }
  const want = unschedulable === true;
  const wanted = { ...current, spec: { ...patched.spec } } as Node;
  if (comparable(current) !== comparable(patched)) {
    const field = firstDifference(JSON.parse(comparable(current)), JSON.parse(comparable(patched)), '');
    const message = `Forbidden: only spec.unschedulable (kubectl cordon/uncordon) may be changed on this node; the rest is the agent's own status`;
    return statusReply(
      statusError(422, 'Invalid', `Node "${params.name}" is invalid: ${field}: ${message}`, {
        name: params.name,
        kind: 'Node',
        causes: [{ reason: 'FieldValueForbidden', field, message }],
      }),
    );
  }
  if (dryRun) return objectReply(want ? wanted : { ...current, spec: {} });
  try {
    return objectReply(await host.setNodeUnschedulable(want));
  } catch (err) {
    return statusReply(
      statusError(500, 'InternalError', `Internal error occurred: cannot store the node's spec: ${(err as Error)?.message ?? String(err)}`),
    );
  }
}
