// Counterpart of the apiserver's create/update/delete handlers (k8s.io/apiserver/pkg/endpoints/handlers: create.go, update.go, delete.go) for the `api` pod source.
import type { Pod, PodList, Status, StatusCause } from '../../shared/api.js';
import { applyPodDefaults } from '../../shared/defaults.js';
import { formatFieldError, InvalidManifestError, isInsufficientStorage, statusReasonOf, type FieldError } from '../../shared/errors.js';
import { parseManifestEntries, prefixFieldErrors, type ManifestFormat } from '../../shared/manifest.js';
import { validatePodForNode } from '../../shared/validation.js';
import { jsonReply, statusReply, type HttpReply } from '../reply.js';
import type { Route, RouteContext } from '../router.js';
import { statusError, type StatusReason } from '../status.js';

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
  return statusError(422, 'Invalid', `${kind} "${name}" is invalid: ${text}`, { name, kind: kind === 'Pod' ? 'Pod' : kind, causes: errors.map(fieldErrorCause) });
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

/** A syntax error or a non-object document: the body is not a manifest at all (400, not 422). */
function isUnparsable(e: FieldError): boolean {
  return (typeof e.detail === 'string' && /^(YAML|JSON) syntax error/.test(e.detail)) || (typeof e.detail === 'string' && e.detail.startsWith('must be an object'));
}

/** ParsedBody: the pods of a request body, defaulted and valid, or the reply that refuses it. */
type ParsedBody = { ok: true; pods: Pod[]; single: boolean } | { ok: false; reply: HttpReply };

/** PodIdentity: the namespace and name a request URL names (`PUT /pods/{namespace}/{name}`). */
export interface PodIdentity {
  namespace: string;
  name: string;
}

/**
 * parsePodsBody decodes, defaults and validates a request body (Pod, List/PodList or multi-document
 * YAML). All or nothing: 400 for an unparsable body, 415 for an unknown Content-Type, 422 with every
 * invalid field of every pod (paths prefixed by document and item, e.g. `[1].spec.containers[0].image`).
 * @param fromUrl when given and the body is one lone Pod, a `metadata.name` / `metadata.namespace`
 *   the body leaves out (absent or null) is taken from it before defaulting and validation, as the
 *   apiserver's update fills the object's namespace from the request; the same for JSON and YAML.
 *   A value the body does give is kept (the caller compares it with the URL).
 */
export function parsePodsBody(body: Buffer | undefined, contentType: string | undefined, fromUrl?: PodIdentity): ParsedBody {
  const format = mediaFormat(contentType);
  if (format === undefined) return { ok: false, reply: statusReply(unsupportedMediaType(contentType)) };
  const text = (body ?? Buffer.alloc(0)).toString('utf8');
  let entries: ReturnType<typeof parseManifestEntries>;
  try {
    entries = parseManifestEntries(text, 'request body', format);
  } catch (err) {
    if (!(err instanceof InvalidManifestError)) throw err;
    const unparsable = err.errors.filter(isUnparsable);
    if (unparsable.length > 0) {
      return { ok: false, reply: statusReply(statusError(400, 'BadRequest', `the request body could not be decoded: ${unparsable.map(formatFieldError).join('; ')}`)) };
    }
    return { ok: false, reply: statusReply(invalidStatus(firstName(text, format) || (fromUrl?.name ?? ''), err.errors)) };
  }
  if (entries.length === 0) return { ok: false, reply: statusReply(statusError(400, 'BadRequest', 'the request body holds no pods')) };
  if (fromUrl && entries.length === 1 && entries[0].path === '') fillIdentity(entries[0].pod, fromUrl);
  const errors: FieldError[] = [];
  const seen = new Map<string, string>();
  const pods = entries.map(({ pod, path }) => {
    const defaulted = applyPodDefaults(pod);
    errors.push(...prefixFieldErrors(path, validatePodForNode(defaulted)));
    const full = `${defaulted.metadata?.namespace ?? 'default'}/${defaulted.metadata?.name ?? ''}`;
    const field = path ? `${path}.metadata.name` : 'metadata.name';
    if (defaulted.metadata?.name && seen.has(full)) {
      errors.push({ field, type: 'Duplicate value', value: defaulted.metadata.name, detail: `also at ${seen.get(full) || 'the first document'}` });
    } else {
      seen.set(full, path);
    }
    return defaulted;
  });
  if (errors.length > 0) {
    const name = entries.length === 1 ? (entries[0].pod.metadata?.name ?? '') : 'request body';
    return { ok: false, reply: statusReply(invalidStatus(name, errors)) };
  }
  const single = entries.length === 1 && entries[0].path === '';
  return { ok: true, pods, single };
}

function firstName(text: string, format: ManifestFormat): string {
  if (format === 'json') {
    try {
      const v = JSON.parse(text) as { metadata?: { name?: unknown } };
      if (typeof v?.metadata?.name === 'string') return v.metadata.name;
    } catch {
      // fall through
    }
  }
  return /^\s*name:\s*(\S+)/m.exec(text)?.[1] ?? '';
}

/** The Status reasons an intake error answers with, their HTTP codes, and whether the Status names the pod. */
const kHostErrorStatus: Partial<Record<StatusReason, [code: number, namesPod: boolean]>> = {
  Forbidden: [403, true], Conflict: [409, true], AlreadyExists: [409, true], NotFound: [404, true], BadRequest: [400, false],
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

function notSupported(what: string): HttpReply {
  return statusReply(statusError(405, 'MethodNotAllowed', `this agent does not support ${what}`));
}

/**
 * createPodsHandler answers `POST /pods`: 201 with the created Pod (a lone Pod in the body) or a
 * PodList (a List, PodList or several documents); the whole batch is admitted or none of it.
 */
export async function createPodsHandler({ host, req, body }: RouteContext): Promise<HttpReply> {
  if (!host.submitPods) return notSupported('POST /pods');
  const parsed = parsePodsBody(body, req.headers['content-type']);
  if (!parsed.ok) return parsed.reply;
  try {
    const created = await host.submitPods(parsed.pods);
    if (parsed.single) return jsonReply(201, { apiVersion: 'v1', kind: 'Pod', ...created[0] });
    const list: PodList = { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: created.map((p) => ({ apiVersion: 'v1', kind: 'Pod', ...p })) };
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
export async function replacePodHandler({ host, req, params, body }: RouteContext): Promise<HttpReply> {
  if (!host.replacePod) return notSupported('PUT /pods/{namespace}/{name}');
  // Fill a missing name/namespace from the URL before validation, as the apiserver's update does.
  const parsed = parsePodsBody(body, req.headers['content-type'], { namespace: params.namespace, name: params.name });
  if (!parsed.ok) return parsed.reply;
  if (parsed.pods.length !== 1 || !parsed.single) {
    return statusReply(statusError(400, 'BadRequest', 'PUT /pods/{namespace}/{name} takes exactly one Pod'));
  }
  const pod = parsed.pods[0];
  if (pod.metadata?.name !== params.name) {
    return statusReply(statusError(400, 'BadRequest', `the name of the object (${pod.metadata?.name}) does not match the name on the URL (${params.name})`));
  }
  if ((pod.metadata?.namespace ?? 'default') !== params.namespace) {
    return statusReply(statusError(400, 'BadRequest', `the namespace of the provided object (${pod.metadata?.namespace}) does not match the namespace sent on the request (${params.namespace})`));
  }
  try {
    return jsonReply(200, { apiVersion: 'v1', kind: 'Pod', ...(await host.replacePod(params.namespace, params.name, pod)) });
  } catch (err) {
    return statusReply(hostErrorStatus(err, params.name));
  }
}

/**
 * fillIdentity sets `metadata.name` / `metadata.namespace` of a decoded (not yet defaulted) pod from
 * the URL where the body leaves them absent or null; a `metadata` that is not an object is left
 * for validation to report. Mutates `pod`.
 */
function fillIdentity(pod: Pod, fromUrl: PodIdentity): void {
  const raw = pod as { metadata?: unknown };
  raw.metadata ??= {};
  if (typeof raw.metadata !== 'object' || raw.metadata === null || Array.isArray(raw.metadata)) return;
  const meta = raw.metadata as { name?: unknown; namespace?: unknown };
  meta.name ??= fromUrl.name;
  meta.namespace ??= fromUrl.namespace;
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
    { path: '/pods', methods: { post: createPodsHandler } },
    { path: '/pods/:namespace/:name', methods: { put: replacePodHandler, delete: deletePodHandler } },
  ];
}
