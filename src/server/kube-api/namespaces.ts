/**
 * Namespaces on the Kubernetes API, as the apiserver's namespace registry and its lifecycle
 * admission answer them (pkg/registry/core/namespace, plugin/pkg/admission/namespace/lifecycle),
 * on a node where namespaces also exist by use:
 *
 * - Shown (`GET`): the system ones (`default`, `kube-node-lease`, `kube-public`, `kube-system`),
 *   every namespace a pod, ConfigMap or Secret uses, and the empty ones created here.
 * - `POST /api/v1/namespaces` (`kubectl create namespace`, a Namespace in `apply -f`): a
 *   core/v1 Namespace with `metadata.name` a DNS-1123 label (422 naming the field otherwise), string
 *   maps of labels and annotations; 409 AlreadyExists for a name already shown; 201 with the
 *   Namespace once it is on disk (src/main/serving/namespace-store.ts). `?dryRun=All` checks and stores nothing.
 * - `PUT`/`PATCH /api/v1/namespaces/{name}` (`kubectl label namespace`, `apply -f`): the labels and
 *   annotations, among them the Pod Security Admission ones (`pod-security.kubernetes.io/*`,
 *   checked as upstream's admission checks them); see updateNamespace.
 * - `DELETE /api/v1/namespaces/{name}`: 403 for the system ones (the apiserver's `this namespace
 *   may not be deleted`); 404 for a name neither created nor in use; 200 with the Namespace, now
 *   gone, for an empty created one. A namespace that still holds pods, ConfigMaps or Secrets is
 *   refused with 409 naming what it holds: the apiserver would instead mark it Terminating and
 *   delete its contents, but here static pods and file-source objects cannot be deleted through
 *   the API, so the agent asks the user to delete them first.
 *
 * Handlers only; resources.ts mounts them beside the GETs.
 */
import type { Pod, Status } from '../../shared/api.js';
import { kDefaultPolicy } from '../../shared/pod-security/admission.js';
import { evaluatePod, levelVersionString, policyToEvaluate } from '../../shared/pod-security/policy.js';
import { dns1123LabelErrors } from '../../shared/names.js';
import { isStringMap } from '../../shared/validation-util.js';
import { hostClock, type AgentHost, type CreatedNamespace } from '../host/agent-host.js';
import type { HttpReply } from '../http/reply.js';
import type { RouteContext } from '../routes/router.js';
import { statusError } from '../http/status.js';
import { kProtobufMediaType } from '../../shared/kube-protobuf.js';
import { decodeBodyOffThread } from './protobuf-body.js';
import { warningHeader, withHeaders } from '../routes/intake.js';
import { patchPod } from './patch.js';
import { isStatus, kubeErrorStatus, objectReply, parseDryRun, statusReply } from './request.js';
import type { NamespaceObject } from './table.js';
import { realClock } from '../../shared/clock.js';

/** kSystemNamespaces: the namespaces every cluster has, listed even when empty; they cannot be deleted. */
export const kSystemNamespaces: readonly string[] = Object.freeze(['default', 'kube-node-lease', 'kube-public', 'kube-system']);

/** kNameLabel: the label every namespace carries with its own name (set by the apiserver, not by users). */
const kNameLabel = 'kubernetes.io/metadata.name';

/** The time this module was loaded: the creationTimestamp of namespaces that exist by use (they exist since the server started). */
const kStartedAt = new Date(realClock.now()).toISOString();

function toObject(name: string, created?: CreatedNamespace): NamespaceObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      creationTimestamp: created?.creationTimestamp ?? kStartedAt,
      ...(created ? { uid: created.uid } : {}),
      labels: { ...created?.labels, [kNameLabel]: name },
      ...(created?.annotations ? { annotations: created.annotations } : {}),
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

/** usage: how many pods and ConfigMaps/Secrets each namespace in use holds. */
function usage(host: AgentHost): Map<string, { pods: number; objects: number }> {
  const used = new Map<string, { pods: number; objects: number }>();
  const at = (ns: string | undefined) => {
    const name = ns ?? 'default';
    let u = used.get(name);
    if (!u) used.set(name, (u = { pods: 0, objects: 0 }));
    return u;
  };
  for (const p of host.listPods()) at(p.metadata?.namespace).pods++;
  for (const o of host.listObjects?.() ?? []) at(o.metadata?.namespace).objects++;
  return used;
}

/** namespaceObjects: the Namespaces this node shows (see the module comment), sorted by name. */
export function namespaceObjects(host: AgentHost): NamespaceObject[] {
  const created = new Map((host.createdNamespaces?.() ?? []).map((n) => [n.name, n]));
  const names = new Set([...kSystemNamespaces, ...usage(host).keys(), ...created.keys()]);
  return [...names].sort().map((name) => toObject(name, created.get(name)));
}

const notServed = () => statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not create or delete namespaces'));

function invalid(name: string, field: string, message: string): Status {
  return statusError(422, 'Invalid', `Namespace ${JSON.stringify(name)} is invalid: ${field}: ${message}`, {
    name,
    kind: 'Namespace',
    causes: [{ reason: 'FieldValueInvalid', field, message }],
  });
}

/**
 * parseNamespace decodes a create's body: JSON, or protobuf (`application/vnd.kubernetes.protobuf`,
 * which kubectl's typed client sends for `create namespace`).
 * @returns the name, labels and annotations, or a 400/422 Status naming what is wrong.
 */
async function parseNamespace(
  host: AgentHost,
  body: Buffer | undefined,
  contentType: string | undefined,
): Promise<{ name: string; labels?: Record<string, string>; annotations?: Record<string, string> } | Status> {
  let raw: unknown;
  if ((contentType ?? '').split(';')[0].trim().toLowerCase() === kProtobufMediaType) {
    // A Namespace only (refused before decoding), decoded off the main thread.
    raw = await decodeBodyOffThread(host, body, ['Namespace']);
    if (isStatus(raw)) return raw;
    raw = { ...(raw as Record<string, unknown>), metadata: (raw as Record<string, unknown>).metadata ?? {} };
  } else {
    try {
      raw = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
    } catch {
      return statusError(400, 'BadRequest', 'the Namespace body could not be decoded as JSON');
    }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return statusError(400, 'BadRequest', 'the Namespace body must be a JSON object');
  const ns = raw as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown; generateName?: unknown; labels?: unknown; annotations?: unknown };
  };
  if (ns.kind !== undefined && ns.kind !== 'Namespace')
    return statusError(
      400,
      'BadRequest',
      `kind: Invalid value: ${JSON.stringify(ns.kind)}: the body of POST /api/v1/namespaces must be a Namespace`,
    );
  if (ns.apiVersion !== undefined && ns.apiVersion !== 'v1')
    return statusError(400, 'BadRequest', `apiVersion: Invalid value: ${JSON.stringify(ns.apiVersion)}: must be "v1"`);
  const m = ns.metadata ?? {};
  if (typeof m !== 'object' || Array.isArray(m)) return statusError(400, 'BadRequest', 'metadata: Invalid value: must be an object');
  const name = m.name;
  if (name === undefined || name === '') {
    return statusError(
      422,
      'Invalid',
      'Namespace "" is invalid: metadata.name: Required value: name is required (generateName is not served for namespaces)',
      {
        kind: 'Namespace',
        causes: [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value' }],
      },
    );
  }
  if (typeof name !== 'string') return invalid(String(name), 'metadata.name', 'must be a string');
  const errors = dns1123LabelErrors(name);
  if (errors.length > 0) return invalid(name, 'metadata.name', `Invalid value: ${JSON.stringify(name)}: ${errors.join('; ')}`);
  if (m.labels !== undefined && !isStringMap(m.labels)) return invalid(name, 'metadata.labels', 'must be a map of strings');
  if (m.annotations !== undefined && !isStringMap(m.annotations)) return invalid(name, 'metadata.annotations', 'must be a map of strings');
  return { name, ...(m.labels ? { labels: m.labels } : {}), ...(m.annotations ? { annotations: m.annotations } : {}) };
}

/**
 * podSecurityLabelErrors: 422 Invalid naming each `pod-security.kubernetes.io/*` label whose value
 * is no level or version, as upstream's PodSecurity admission refuses a namespace create or
 * update with them (pod-security-admission/admission/admission.go ValidateNamespace); else undefined.
 */
function podSecurityLabelErrors(name: string, labels: Record<string, string> | undefined): Status | undefined {
  const { errors } = policyToEvaluate(labels, kDefaultPolicy);
  if (errors.length === 0) return undefined;
  const text = errors.map((e) => `${e.field}: Invalid value: ${JSON.stringify(e.value)}: ${e.message}`);
  return statusError(
    422,
    'Invalid',
    `Namespace ${JSON.stringify(name)} is invalid: ${text.length === 1 ? text[0] : `[${text.join(', ')}]`}`,
    {
      name,
      kind: 'Namespace',
      causes: errors.map((e) => ({
        reason: 'FieldValueInvalid',
        field: e.field,
        message: `Invalid value: ${JSON.stringify(e.value)}: ${e.message}`,
      })),
    },
  );
}

/**
 * enforceWarnings: when an update makes the namespace's enforce level stricter, one warning naming
 * it and one per pod of the namespace that would now be refused (`<pod>: <reasons>`), as the
 * apiserver's PodSecurity admission answers a namespace label change (admission.go
 * EvaluatePodsInNamespace). The pods keep running: enforcement applies to writes only.
 */
function enforceWarnings(
  host: AgentHost,
  name: string,
  before: Record<string, string> | undefined,
  after: Record<string, string> | undefined,
): string[] {
  const { policy: old } = policyToEvaluate(before, kDefaultPolicy);
  const { policy } = policyToEvaluate(after, kDefaultPolicy);
  if (levelVersionString(old.enforce) === levelVersionString(policy.enforce) || policy.enforce.level === 'privileged') return [];
  const pods = host.listPods().filter((p) => (p.metadata?.namespace ?? 'default') === name);
  const failing = pods
    .map((p) => [p.metadata?.name ?? '', evaluatePod(policy.enforce, p).map((f) => f.reason)] as const)
    .filter(([, reasons]) => reasons.length > 0);
  if (failing.length === 0) return [];
  return [
    `existing pods in namespace ${JSON.stringify(name)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(policy.enforce))}`,
    ...failing.map(([pod, reasons]) => `${pod}: ${[...new Set(reasons)].join(', ')}`),
  ];
}

/**
 * updateNamespace: `PUT` and `PATCH /api/v1/namespaces/{name}` (`kubectl label namespace`,
 * `annotate namespace`, `replace`, and `apply -f` of a Namespace that exists): the labels and
 * annotations are what may change (a namespace has no other field to set here); a PATCH is
 * applied to the namespace as it is (JSON, merge, strategic merge or apply patch: patch.ts).
 * 404 for a namespace not shown; 400 for a body naming another namespace; 422 for labels that are
 * no string map or `pod-security.kubernetes.io/*` values that are no level or version; 200 with
 * the Namespace once stored (a namespace only in use is stored from now on). The
 * `kubernetes.io/metadata.name` label is the name's, whatever the body says. `?dryRun=All` checks
 * and stores nothing. A stricter enforce level answers with the apiserver's warnings about the
 * namespace's pods that it would refuse.
 */
export async function updateNamespace({ host, req, params, body }: RouteContext): Promise<HttpReply> {
  if (!host.updateNamespace) return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not update namespaces'));
  const dryRun = parseDryRun(req.query);
  if (isStatus(dryRun)) return statusReply(dryRun);
  const name = params.namespace ?? params.name;
  const current = namespaceObjects(host).find((n) => n.metadata.name === name);
  if (!current) return statusReply(statusError(404, 'NotFound', `namespaces "${name}" not found`, { name, kind: 'namespaces' }));
  let next: unknown;
  if (req.method === 'patch') {
    try {
      next = patchPod(current as unknown as Pod, req.headers['content-type'] ?? '', (body ?? Buffer.alloc(0)).toString('utf8'), {});
    } catch (err) {
      return statusReply(kubeErrorStatus(err, 'namespaces', name));
    }
  } else {
    const parsed = await parseNamespace(host, body, req.headers['content-type']);
    if (isStatus(parsed)) return statusReply(parsed);
    if (parsed.name !== name)
      return statusReply(
        statusError(400, 'BadRequest', `the name of the object (${parsed.name}) does not match the name on the URL (${name})`),
      );
    next = { metadata: parsed };
  }
  const m = (next as { metadata?: { labels?: unknown; annotations?: unknown } }).metadata ?? {};
  if (m.labels !== undefined && m.labels !== null && !isStringMap(m.labels))
    return statusReply(invalid(name, 'metadata.labels', 'must be a map of strings'));
  if (m.annotations !== undefined && m.annotations !== null && !isStringMap(m.annotations))
    return statusReply(invalid(name, 'metadata.annotations', 'must be a map of strings'));
  const labels = Object.fromEntries(Object.entries((m.labels ?? {}) as Record<string, string>).filter(([k]) => k !== kNameLabel));
  const annotations = (m.annotations ?? undefined) as Record<string, string> | undefined;
  const refused = podSecurityLabelErrors(name, labels);
  if (refused) return statusReply(refused);
  const before = host.createdNamespaces?.().find((n) => n.name === name);
  const warnings = enforceWarnings(host, name, before?.labels, labels);
  const headers: Record<string, string> = warnings.length > 0 ? { Warning: warningHeader(warnings) } : {};
  const ns = {
    name,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
  };
  if (dryRun)
    return withHeaders(
      objectReply(
        toObject(name, {
          ...ns,
          uid: before?.uid ?? '',
          creationTimestamp: before?.creationTimestamp ?? current.metadata.creationTimestamp ?? '',
        }),
      ),
      headers,
    );
  try {
    return withHeaders(objectReply(toObject(name, await host.updateNamespace(ns))), headers);
  } catch (err) {
    return statusReply(
      statusError(
        500,
        'InternalError',
        `Internal error occurred: cannot store namespace "${name}": ${(err as Error)?.message ?? String(err)}`,
      ),
    );
  }
}

/** createNamespace: `POST /api/v1/namespaces`. */
export async function createNamespace({ host, req, body }: RouteContext): Promise<HttpReply> {
  if (!host.createNamespace) return notServed();
  const dryRun = parseDryRun(req.query);
  if (isStatus(dryRun)) return statusReply(dryRun);
  const ns = await parseNamespace(host, body, req.headers['content-type']);
  if (isStatus(ns)) return statusReply(ns);
  const badLabels = podSecurityLabelErrors(ns.name, ns.labels);
  if (badLabels) return statusReply(badLabels);
  if (namespaceObjects(host).some((n) => n.metadata.name === ns.name)) {
    return statusReply(statusError(409, 'AlreadyExists', `namespaces "${ns.name}" already exists`, { name: ns.name, kind: 'namespaces' }));
  }
  if (dryRun)
    return objectReply(toObject(ns.name, { ...ns, uid: '', creationTimestamp: new Date(hostClock(host).now()).toISOString() }), 201);
  try {
    return objectReply(toObject(ns.name, await host.createNamespace(ns)), 201);
  } catch (err) {
    return statusReply(
      statusError(
        500,
        'InternalError',
        `Internal error occurred: cannot store namespace "${ns.name}": ${(err as Error)?.message ?? String(err)}`,
      ),
    );
  }
}

/** deleteNamespace: `DELETE /api/v1/namespaces/{name}`. */
export async function deleteNamespace({ host, req, params }: RouteContext): Promise<HttpReply> {
  if (!host.deleteNamespace) return notServed();
  const dryRun = parseDryRun(req.query);
  if (isStatus(dryRun)) return statusReply(dryRun);
  const name = params.name;
  if (kSystemNamespaces.includes(name)) {
    return statusReply(
      statusError(403, 'Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`, { name, kind: 'namespaces' }),
    );
  }
  const created = host.createdNamespaces?.().find((n) => n.name === name);
  const inUse = usage(host).get(name);
  if (inUse) {
    const held = [inUse.pods ? `${inUse.pods} pod(s)` : '', inUse.objects ? `${inUse.objects} ConfigMap(s)/Secret(s)` : '']
      .filter(Boolean)
      .join(' and ');
    return statusReply(
      statusError(
        409,
        'Conflict',
        `namespace "${name}" is not empty: it holds ${held}; delete them first (this node does not delete a namespace's contents)`,
        { name, kind: 'namespaces' },
      ),
    );
  }
  if (!created) return statusReply(statusError(404, 'NotFound', `namespaces "${name}" not found`, { name, kind: 'namespaces' }));
  const object = toObject(name, created);
  if (dryRun) return objectReply(object);
  try {
    await host.deleteNamespace(name);
  } catch (err) {
    return statusReply(
      statusError(
        500,
        'InternalError',
        `Internal error occurred: cannot delete namespace "${name}": ${(err as Error)?.message ?? String(err)}`,
      ),
    );
  }
  return objectReply(object);
}
