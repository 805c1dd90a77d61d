// Counterpart of the apiserver's create/update/delete handlers (k8s.io/apiserver/pkg/endpoints/handlers: create.go, update.go, delete.go) for the `api` pod source.
import type { Pod, PodList, Status, StatusCause } from '../../shared/api.js';
import { formatFieldError, isInsufficientStorage, statusReasonOf, type FieldError } from '../../shared/errors.js';
import type { ManifestFormat } from '../../shared/manifest.js';
import { decodePodsBody, type DecodedPodsBody, type PodIdentity } from '../../shared/pods-body.js';
import type { AgentHost } from '../host/agent-host.js';
import { redactConfigObject, type ConfigObject } from '../../shared/config-objects.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from './router.js';
import { admitPod } from '../../shared/pod-security/admission.js';
import { agentPortConflicts } from '../../shared/pod-security/agent-ports.js';
import { statusError, type StatusReason } from '../http/status.js';
import { refusingDryRun } from './no-dry-run.js';

/** kIntakeMediaTypes: the Content-Types POST and PUT accept, and the manifest format each means. */
export const kIntakeMediaTypes: Readonly<Record<string, ManifestFormat>> = Object.freeze({
  'application/json': 'json',
  'application/yaml': 'yaml',
  'text/yaml': 'yaml',
  'application/x-yaml': 'yaml',
});

/**
 * kFieldErrorReasons: field.ErrorType words → the `StatusCause.reason` the apiserver sends
 * (metav1.CauseType values, as errors.NewInvalid maps them).
 */
export const kFieldErrorReasons: Readonly<Record<string, string>> = Object.freeze({
  'Required value': 'FieldValueRequired',
  'Invalid value': 'FieldValueInvalid',
  'Duplicate value': 'FieldValueDuplicate',
  'Unsupported value': 'FieldValueNotSupported',
  'Not supported': 'FieldValueNotSupported',
  'Not found': 'FieldValueNotFound',
  Forbidden: 'FieldValueForbidden',
  'Too long': 'FieldValueTooLong',
  'Too many': 'FieldValueTooMany',
  'Internal error': 'InternalError',
  'Type error': 'FieldValueTypeInvalid',
});

/** fieldErrorCause: one FieldError as a StatusCause `{field, reason, message}` (message as field.Error.Error()). */
export function fieldErrorCause(e: FieldError): StatusCause {
  return { field: e.field, reason: kFieldErrorReasons[e.type] ?? 'FieldValueInvalid', message: formatFieldError(e) };
}

/**
 * invalidStatus: 422 `Invalid` as errors.NewInvalid builds it: `Pod "web" is invalid: <errors>`
 * (a list in `[…]` when several), with one cause per invalid field.
 */
export function invalidStatus(name: string, errors: FieldError[], kind = 'Pod'): Status {
  const text = errors.length === 1 ? formatFieldError(errors[0]) : `[${errors.map(formatFieldError).join(', ')}]`;
  return statusError(422, 'Invalid', `${kind} "${name}" is invalid: ${text}`, {
    name,
    kind: kind === 'Pod' ? 'Pod' : kind,
    causes: errors.map(fieldErrorCause),
  });
}

/** mediaFormat: the manifest format of a Content-Type header (parameters ignored), or undefined when not accepted. */
export function mediaFormat(contentType: string | undefined): ManifestFormat | undefined {
  const base = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return Object.hasOwn(kIntakeMediaTypes, base) ? kIntakeMediaTypes[base] : undefined;
}

function unsupportedMediaType(contentType: string | undefined): Status {
  return statusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format (Content-Type ${JSON.stringify(contentType ?? '')}) - accepted media types include: ${Object.keys(kIntakeMediaTypes).join(', ')}`,
  );
}

/** ParsedBody: the pods (and ConfigMaps/Secrets) of a request body, defaulted and valid, or the reply that refuses it. */
type ParsedBody = { ok: true; pods: Pod[]; objects: ConfigObject[]; single: boolean } | { ok: false; reply: HttpReply };

export type { PodIdentity };

/**
 * refusalReply maps a decoder refusal to its Status: `unparsable` → 400 BadRequest, `invalid` →
 * 422 Invalid naming `kind` (`Pod "x" is invalid`) with one cause per field, `tooLarge` → 413 RequestEntityTooLarge, `busy` → 429
 * TooManyRequests with `Retry-After` (seconds), as the apiserver's max-in-flight filter answers
 * (k8s.io/apiserver/pkg/server/filters/maxinflight.go, tooManyRequests).
 */
function refusalReply(r: Exclude<DecodedPodsBody, { ok: true }>, kind: string): HttpReply {
  switch (r.kind) {
    case 'unparsable':
      return statusReply(statusError(400, 'BadRequest', r.message));
    case 'invalid':
      return statusReply(invalidStatus(r.name, r.errors, kind));
    case 'tooLarge':
      return statusReply(statusError(413, 'RequestEntityTooLarge', r.message));
    case 'busy':
      return statusReply(statusError(429, 'TooManyRequests', r.message, { retryAfterSeconds: r.retryAfterSeconds }), {
        'Retry-After': String(r.retryAfterSeconds),
      });
  }
}

/**
 * parsePodsBody decodes, defaults and validates a request body (Pod, List/PodList or multi-document
 * YAML) through the host's decoder thread (`AgentHost.decodePodsBody`; in this thread only for a
 * host without one: tests and benches). All or nothing: 415 for an unknown Content-Type (decided
 * here, before any decoding), then the Status of {@link refusalReply}, e.g. 422 with every invalid
 * field of every pod (paths prefixed by document and item, e.g. `[1].spec.containers[0].image`).
 * @param fromUrl PUT: the URL's identity, filled into a lone Pod that leaves it out (shared/pods-body.ts).
 * @param kind the kind a 422 names (`Pod "x" is invalid`; the ConfigMap and Secret routes name theirs,
 *   as the apiserver's errors.NewInvalid names the kind of the request).
 * Never rejects unless the host's decoder does (→ 500).
 */
export async function parsePodsBody(
  host: AgentHost,
  body: Buffer | undefined,
  contentType: string | undefined,
  fromUrl?: PodIdentity,
  kind = 'Pod',
): Promise<ParsedBody> {
  const format = mediaFormat(contentType);
  if (format === undefined) return { ok: false, reply: statusReply(unsupportedMediaType(contentType)) };
  const request = { text: (body ?? Buffer.alloc(0)).toString('utf8'), format, fromUrl };
  const decoded = host.decodePodsBody ? await host.decodePodsBody(request) : decodePodsBody(request);
  return decoded.ok ? decoded : { ok: false, reply: refusalReply(decoded, kind) };
}

/** The Status reasons an intake error answers with, their HTTP codes, and whether the Status names the pod. */
const kHostErrorStatus: Partial<Record<StatusReason, [code: number, namesPod: boolean]>> = {
  Forbidden: [403, true],
  Conflict: [409, true],
  AlreadyExists: [409, true],
  NotFound: [404, true],
  BadRequest: [400, false],
};

/**
 * insufficientStorageStatus: 507 for a write the file system had no room for. Kubernetes has no
 * StatusReason of its own for 507: the apiserver answers etcd's "mvcc: database space exceeded"
 * as an internal error (errors.NewInternalError), and a client that gets a bare 507 reads it as
 * `InternalError` (errors.NewGenericServerResponse: any code ≥ 500). So the Status is built as
 * NewInternalError builds it — reason `InternalError`, `Internal error occurred: <message>`, one
 * cause with the message — with the HTTP code that says what went wrong: 507 Insufficient Storage.
 */
export function insufficientStorageStatus(message: string): Status {
  return statusError(507, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/**
 * hostErrorStatus maps an error from an AgentHost intake method to a Status by its Status reason
 * ({@link statusReasonOf}: the error's `statusReason`, else its code's): ERR_FORBIDDEN → 403
 * Forbidden, ERR_CONFLICT → 409 Conflict, ERR_ALREADY_EXISTS → 409 AlreadyExists, ERR_NOT_FOUND →
 * 404, ERR_INVALID_MANIFEST → 422 with its field causes, ERR_INVALID_ARGUMENT → 400 BadRequest,
 * ERR_INSUFFICIENT_STORAGE → 507 ({@link insufficientStorageStatus}). Anything else is rethrown (→ 500).
 */
export function hostErrorStatus(err: unknown, name: string): Status {
  const message = typeof (err as { message?: unknown })?.message === 'string' ? (err as Error).message : String(err);
  if (isInsufficientStorage(err)) return insufficientStorageStatus(message);
  const reason = statusReasonOf(err);
  if (reason === 'Invalid') return invalidStatus(name, (err as { errors?: FieldError[] }).errors ?? []);
  const mapped = reason === undefined ? undefined : kHostErrorStatus[reason];
  if (reason === undefined || mapped === undefined) throw err;
  const [code, namesPod] = mapped;
  return namesPod ? statusError(code, reason, message, { name, kind: 'pods' }) : statusError(code, reason, message);
}

/** The apiserver's superuser group: its members are exempt from Pod Security Admission. */
export const kPrivilegedGroup = 'system:masters';

/** PodAdmission: a refusal (when any pod is refused), and the headers every answer carries (`Warning`). */
export interface PodAdmission {
  refused?: HttpReply;
  headers: Record<string, string>;
}

/**
 * warningHeader: one `Warning` header value per text, comma-joined (a list header), each as the
 * apiserver writes it: `299 - "<text>"` with `"` and `\` escaped (k8s.io/apimachinery/pkg/util/net
 * NewWarningHeader, used by the apiserver's warning recorder; kubectl prints `Warning: <text>`).
 */
export function warningHeader(texts: readonly string[]): string {
  // Control characters (CR, LF, NUL…) may not appear in a header value: each becomes a space.
  return texts.map((t) => `299 - "${t.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\u0000-\u001f\u007f]/g, ' ')}"`).join(', ');
}

/** withHeaders: `reply` with `headers` added (the Warning headers of admission). */
export function withHeaders(reply: HttpReply, headers: Record<string, string>): HttpReply {
  return Object.keys(headers).length === 0 ? reply : { ...reply, headers: { ...reply.headers, ...headers } };
}

/**
 * admitApiPods: the admission of pods written through the API (POST/PUT /pods and the Kubernetes
 * API's pod create, update, patch), in two steps, all or nothing for a batch:
 * 1. for every identity (the admin's too): a TCP hostPort that is one of the agent's own ports
 *    (shared/pod-security/agent-ports.ts) → 422 Invalid naming the field;
 * 2. Pod Security Admission (shared/pod-security/admission.ts) with the namespace's
 *    `pod-security.kubernetes.io/*` labels, baseline:latest by default; members of
 *    `system:masters` are exempt, and `user` undefined (a server without auth: in-process tests)
 *    skips it. `enforce` → 403 Forbidden `pods "x" is forbidden: violates PodSecurity
 *    "baseline:latest": …` as the apiserver answers an admission denial; `warn` → `Warning`
 *    headers; `audit` → an info line in the server's log (this node keeps no audit log).
 * The static sources (file, URL) and etcd never pass here: the kubelet trusts its own sources.
 * @param oldPods for an update, the stored pod each replaces (an update changing neither spec nor
 *   security annotations is not evaluated again, as upstream).
 */
export function admitApiPods(
  ctx: Pick<RouteContext, 'host' | 'user' | 'server'>,
  pods: readonly Pod[],
  oldPods?: ReadonlyArray<Pod | undefined>,
): PodAdmission {
  const { host, user, server } = ctx;
  const warnings: string[] = [];
  const headers = (): Record<string, string> => (warnings.length > 0 ? { Warning: warningHeader(warnings) } : {});
  for (const pod of pods) {
    const name = pod.metadata?.name ?? '';
    const conflicts = server ? agentPortConflicts(pod, server.listen) : [];
    if (conflicts.length > 0) return { refused: statusReply(invalidStatus(name, conflicts)), headers: headers() };
  }
  if (!user) return { headers: {} };
  const exempt = user.groups.includes(kPrivilegedGroup);
  const created = new Map((host.createdNamespaces?.() ?? []).map((n) => [n.name, n]));
  for (const [i, pod] of pods.entries()) {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? 'default';
    const result = admitPod({ pod, namespace, namespaceLabels: created.get(namespace)?.labels, oldPod: oldPods?.[i], exempt });
    warnings.push(...result.warnings);
    if (result.audit)
      server?.logger.info(
        { user: user.name, namespace, pod: name, 'pod-security.kubernetes.io/audit-violations': result.audit },
        'PodSecurity audit',
      );
    if (result.denied) {
      const message = `pods ${JSON.stringify(name)} is forbidden: ${result.denied}`;
      return { refused: statusReply(statusError(403, 'Forbidden', message, { name, kind: 'pods' })), headers: headers() };
    }
  }
  return { headers: headers() };
}

function notSupported(what: string): HttpReply {
  return statusReply(statusError(405, 'MethodNotAllowed', `this agent does not support ${what}`));
}

/**
 * createPodsHandler answers `POST /pods`: 201 with the created Pod (a lone Pod in the body) or a
 * PodList (a List, PodList or several documents); the whole batch of pods is admitted or none of
 * it. ConfigMaps and Secrets in the body are stored first (AgentHost.submitObjects; 409 when one
 * exists), so that the pods find them at their first sync; a lone object answers with itself, a
 * body with objects and pods with a `List` of both. Secrets are answered without their data
 * (redactConfigObject). When the pods are refused after their objects were stored, the objects stay.
 */
export async function createPodsHandler(ctx: RouteContext): Promise<HttpReply> {
  const { host, req, body } = ctx;
  if (!host.submitPods) return notSupported('POST /pods');
  const parsed = await parsePodsBody(host, body, req.headers['content-type']);
  if (!parsed.ok) return parsed.reply;
  const admission = admitApiPods(ctx, parsed.pods);
  return withHeaders(admission.refused ?? (await storePodsBody(host, parsed)), admission.headers);
}

/** storePodsBody: the admitted body's objects, then its pods (createPodsHandler). */
async function storePodsBody(host: AgentHost, parsed: Extract<ParsedBody, { ok: true }>): Promise<HttpReply> {
  if (!host.submitPods) return notSupported('POST /pods');
  let objects: ConfigObject[] = [];
  if (parsed.objects.length > 0) {
    if (!host.submitObjects) return notSupported('ConfigMaps and Secrets');
    try {
      objects = (await host.submitObjects(parsed.objects)).map(redactConfigObject);
    } catch (err) {
      return statusReply(hostErrorStatus(err, parsed.objects.length === 1 ? (parsed.objects[0].metadata?.name ?? '') : ''));
    }
    if (parsed.pods.length === 0) {
      if (parsed.single) return jsonReply(201, objects[0]);
      return jsonReply(201, { apiVersion: 'v1', kind: 'List', metadata: {}, items: objects });
    }
  }
  try {
    const created = await host.submitPods(parsed.pods);
    if (objects.length > 0)
      return jsonReply(201, {
        apiVersion: 'v1',
        kind: 'List',
        metadata: {},
        items: [...objects, ...created.map((p) => ({ apiVersion: 'v1', kind: 'Pod', ...p }))],
      });
    if (parsed.single) return jsonReply(201, { apiVersion: 'v1', kind: 'Pod', ...created[0] });
    const list: PodList = {
      apiVersion: 'v1',
      kind: 'PodList',
      metadata: {},
      items: created.map((p) => ({ apiVersion: 'v1', kind: 'Pod', ...p })),
    };
    return jsonReply(201, list);
  } catch (err) {
    return statusReply(hostErrorStatus(err, parsed.pods.length === 1 ? (parsed.pods[0].metadata?.name ?? '') : ''));
  }
}

/**
 * replacePodHandler answers `PUT /pods/{namespace}/{name}`: the body is one Pod whose
 * name/namespace, when given, must match the URL (400 otherwise); 200 with the stored pod (same
 * UID; changed containers are restarted by the next sync).
 */
export async function replacePodHandler(ctx: RouteContext): Promise<HttpReply> {
  const { host, req, params, body } = ctx;
  if (!host.replacePod) return notSupported('PUT /pods/{namespace}/{name}');
  // Fill a missing name/namespace from the URL before validation, as the apiserver's update does.
  const parsed = await parsePodsBody(host, body, req.headers['content-type'], { namespace: params.namespace, name: params.name });
  if (!parsed.ok) return parsed.reply;
  if (parsed.pods.length !== 1 || !parsed.single) {
    return statusReply(statusError(400, 'BadRequest', 'PUT /pods/{namespace}/{name} takes exactly one Pod'));
  }
  const pod = parsed.pods[0];
  if (pod.metadata?.name !== params.name) {
    return statusReply(
      statusError(400, 'BadRequest', `the name of the object (${pod.metadata?.name}) does not match the name on the URL (${params.name})`),
    );
  }
  if ((pod.metadata?.namespace ?? 'default') !== params.namespace) {
    return statusReply(
      statusError(
        400,
        'BadRequest',
        `the namespace of the provided object (${pod.metadata?.namespace}) does not match the namespace sent on the request (${params.namespace})`,
      ),
    );
  }
  const admission = admitApiPods(ctx, [pod], [host.getPod(params.namespace, params.name)]);
  if (admission.refused) return withHeaders(admission.refused, admission.headers);
  try {
    return withHeaders(
      jsonReply(200, { apiVersion: 'v1', kind: 'Pod', ...(await host.replacePod(params.namespace, params.name, pod)) }),
      admission.headers,
    );
  } catch (err) {
    return statusReply(hostErrorStatus(err, params.name));
  }
}

/**
 * parseGracePeriod reads `?gracePeriodSeconds=` (or a DeleteOptions body's `gracePeriodSeconds`):
 * a non-negative integer, seconds.
 * @returns the value, undefined when absent, or a 400 Status naming the parameter.
 */
export function parseGracePeriod(query: URLSearchParams, body: Buffer | undefined): number | undefined | Status {
  let raw: unknown = query.get('gracePeriodSeconds') ?? undefined;
  if (raw === undefined && body && body.length > 0) {
    try {
      const opts = JSON.parse(body.toString('utf8')) as { gracePeriodSeconds?: unknown };
      raw = opts?.gracePeriodSeconds;
    } catch {
      return statusError(400, 'BadRequest', 'the DeleteOptions body could not be decoded as JSON');
    }
  }
  if (raw === undefined || raw === null) return undefined;
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(String(raw)) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    return statusError(400, 'BadRequest', `gracePeriodSeconds must be a non-negative integer, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/**
 * deletePodHandler answers `DELETE /pods/{namespace}/{name}`: a graceful delete of an intake pod;
 * `?gracePeriodSeconds=` overrides the pod's. 200 with the pod (deletionTimestamp set), 404 when
 * absent, 403 for a pod of another source (a static pod is deleted by removing its manifest).
 */
export async function deletePodHandler({ host, req, params, body }: RouteContext): Promise<HttpReply> {
  if (!host.deletePod) return notSupported('DELETE /pods/{namespace}/{name}');
  const grace = parseGracePeriod(req.query, body);
  if (typeof grace === 'object') return statusReply(grace);
  try {
    return jsonReply(200, { apiVersion: 'v1', kind: 'Pod', ...(await host.deletePod(params.namespace, params.name, grace)) });
  } catch (err) {
    return statusReply(hostErrorStatus(err, params.name));
  }
}

/** intakeRoutes: POST /pods, PUT and DELETE /pods/{namespace}/{name} (merged with the GET routes by server.ts). */
export function intakeRoutes(): Route[] {
  return [
    { path: '/pods', methods: { post: refusingDryRun(createPodsHandler) } },
    { path: '/pods/:namespace/:name', methods: { put: refusingDryRun(replacePodHandler), delete: refusingDryRun(deletePodHandler) } },
  ];
}
