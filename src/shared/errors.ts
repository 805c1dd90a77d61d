// Counterpart of k8s.io/apimachinery/pkg/api/errors (IsNotFound, IsConflict, …) and virtual-kubelet's errdefs.
/**
 * One error base class with stable codes (undici's lib/core/errors.js shape: `UND_ERR_*` codes, a
 * `Symbol.for` brand, `static [Symbol.hasInstance]`), classified by behaviour (virtual-kubelet's
 * errdefs). Errors cross the worker boundary as `SerializedError` data.
 */
import type { StatusReason } from './api.js';
import type { SerializedError } from './thread-wire.js';

/** Stable error codes. Add, never rename: logs and tests match on them. */
export type AgentErrorCode =
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_INVALID_MANIFEST'
  | 'ERR_NOT_FOUND'
  | 'ERR_ALREADY_EXISTS'
  | 'ERR_CONFLICT'
  | 'ERR_FORBIDDEN'
  | 'ERR_UNAVAILABLE'
  | 'ERR_RUNTIME'
  | 'ERR_RUNTIME_UNAVAILABLE'
  | 'ERR_PROTOCOL'
  | 'ERR_INSUFFICIENT_STORAGE'
  | 'ERR_NETWORK';

/** kAgentErrorCodes: every {@link AgentErrorCode}, e.g. to check a code that came as data. */
export const kAgentErrorCodes: readonly AgentErrorCode[] = Object.freeze([
  'ERR_INVALID_ARGUMENT',
  'ERR_INVALID_MANIFEST',
  'ERR_NOT_FOUND',
  'ERR_ALREADY_EXISTS',
  'ERR_CONFLICT',
  'ERR_FORBIDDEN',
  'ERR_UNAVAILABLE',
  'ERR_RUNTIME',
  'ERR_RUNTIME_UNAVAILABLE',
  'ERR_PROTOCOL',
  'ERR_INSUFFICIENT_STORAGE',
  'ERR_NETWORK',
] as const);

/**
 * ContainerReason: a container's waiting reason an error stands for, as the kubelet's
 * kuberuntime and images packages name them; it flows unchanged into
 * `ContainerStatus.state.waiting.reason`. Not an HTTP Status reason (that is {@link StatusReason}).
 */
export type ContainerReason =
  | 'ErrImagePull'
  | 'ImagePullBackOff'
  | 'ErrImageNeverPull'
  | 'CreateContainerConfigError'
  | 'CreateContainerError'
  | 'RunContainerError'
  | 'PostStartHookError'
  | 'CrashLoopBackOff';

/**
 * kAgentErrorBrand: the brand every AgentError carries (a non-enumerable own property holding the
 * names of the classes in its chain). `Symbol.for` makes it the same symbol in every copy of this
 * module, so `instanceof` classifies an error made by another copy (undici's trick).
 */
export const kAgentErrorBrand: unique symbol = Symbol.for('kubelet-ts.error');

/** AgentErrorOptions: the optional parts of an {@link AgentError}. */
export interface AgentErrorOptions {
  /** Worth retrying later (Docker down, a timeout); default false. */
  retriable?: boolean;
  /** The container waiting reason this error stands for, e.g. `ErrImagePull`. */
  reason?: ContainerReason;
  /** The HTTP Status reason to answer with when it is not the code's own (see {@link statusReasonOf}). */
  statusReason?: StatusReason;
  /** The error this one wraps (`Error.cause`). */
  cause?: unknown;
}

/**
 * AgentError is the base of every error kubelet-ts throws on purpose. `reason` holds a container
 * waiting reason where one exists (`ErrImageNeverPull`, `CreateContainerConfigError`) and
 * `statusReason` an HTTP Status reason (`Forbidden`, `Conflict`): two fields, never one for both.
 * `instanceof` checks the {@link kAgentErrorBrand} brand, not the prototype chain.
 */
export class AgentError extends Error {
  readonly code: AgentErrorCode;
  readonly retriable: boolean;
  readonly reason?: ContainerReason;
  readonly statusReason?: StatusReason;
  declare readonly [kAgentErrorBrand]: readonly string[];

  /** True when `instance` is branded with this class's name, whichever copy of the module made it. */
  static override [Symbol.hasInstance](instance: unknown): boolean {
    const brand =
      typeof instance === 'object' && instance !== null ? (instance as { [kAgentErrorBrand]?: unknown })[kAgentErrorBrand] : undefined;
    return Array.isArray(brand) && brand.includes(this.name);
  }

  constructor(code: AgentErrorCode, message: string, opts: AgentErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AgentError';
    this.code = code;
    this.retriable = opts.retriable ?? false;
    if (opts.reason !== undefined) this.reason = opts.reason;
    if (opts.statusReason !== undefined) this.statusReason = opts.statusReason;
    const chain: string[] = [];
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) chain.push(c.name);
    Object.defineProperty(this, kAgentErrorBrand, { value: Object.freeze(chain) });
  }
}

/** InvalidArgumentError: a bad option or flag value; the message names the option. */
export class InvalidArgumentError extends AgentError {
  constructor(message: string, opts: AgentErrorOptions = {}) {
    super('ERR_INVALID_ARGUMENT', message, opts);
    this.name = 'InvalidArgumentError';
  }
}

/** ConflictError: the request conflicts with the current state (a UID precondition, a stale write); HTTP 409 `Conflict`. */
export class ConflictError extends AgentError {
  constructor(message: string, opts: Omit<AgentErrorOptions, 'statusReason'> = {}) {
    super('ERR_CONFLICT', message, { ...opts, statusReason: 'Conflict' });
    this.name = 'ConflictError';
  }
}

/** ForbiddenError: the caller may not do this to this object (e.g. delete a static pod through the API); HTTP 403 `Forbidden`. */
export class ForbiddenError extends AgentError {
  constructor(message: string, opts: Omit<AgentErrorOptions, 'statusReason'> = {}) {
    super('ERR_FORBIDDEN', message, { ...opts, statusReason: 'Forbidden' });
    this.name = 'ForbiddenError';
  }
}

/** One invalid field, as Kubernetes' field.Error: `spec.containers[1].name: Duplicate value: "web"`. */
export interface FieldError {
  /** Field path, e.g. `spec.containers[1].name`. */
  field: string;
  /** field.ErrorType words: `Required value`, `Invalid value`, `Duplicate value`, `Unsupported value`, `Forbidden`, `Not supported`. */
  type: string;
  /** The offending value, if any (rendered JSON-quoted in the message). */
  value?: unknown;
  /** Extra detail, e.g. which values are allowed. */
  detail?: string;
}

/** formatFieldError renders a FieldError the way field.Error.Error() does. */
export function formatFieldError(e: FieldError): string {
  let s = `${e.field}: ${e.type}`;
  if (e.value !== undefined && e.type !== 'Required value' && e.type !== 'Forbidden') {
    s += `: ${JSON.stringify(e.value)}`;
  }
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/**
 * InvalidManifestError: a manifest that does not parse or validate. `source` names the file,
 * URL or request it came from; `errors` lists every invalid field (never just the first).
 */
export class InvalidManifestError extends AgentError {
  readonly source: string;
  readonly errors: FieldError[];
  constructor(source: string, errors: FieldError[], message?: string) {
    super('ERR_INVALID_MANIFEST', message ?? `${source}: ${errors.map(formatFieldError).join('; ')}`);
    this.name = 'InvalidManifestError';
    this.source = source;
    this.errors = errors;
  }
}

function codeOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
}

/** isRetriable: worth trying again later (Docker down, a timeout). */
export function isRetriable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retriable?: unknown }).retriable === true;
}

/** isNotFound: the thing asked for does not exist (`ERR_NOT_FOUND`; errors.IsNotFound). */
export function isNotFound(err: unknown): boolean {
  return codeOf(err) === 'ERR_NOT_FOUND';
}

/** isAlreadyExists: the name (or UID) asked for is taken (`ERR_ALREADY_EXISTS`; errors.IsAlreadyExists). */
export function isAlreadyExists(err: unknown): boolean {
  return codeOf(err) === 'ERR_ALREADY_EXISTS';
}

/** isConflict: the request conflicts with the current state, e.g. a UID precondition (`ERR_CONFLICT`; errors.IsConflict). */
export function isConflict(err: unknown): boolean {
  return codeOf(err) === 'ERR_CONFLICT';
}

/** isForbidden: the caller may not do this (`ERR_FORBIDDEN`; errors.IsForbidden). */
export function isForbidden(err: unknown): boolean {
  return codeOf(err) === 'ERR_FORBIDDEN';
}

/**
 * isUnavailable: a service this process depends on does not answer — the container runtime
 * (`ERR_RUNTIME_UNAVAILABLE`) or another one such as the agent's API seen from the client
 * (`ERR_UNAVAILABLE`); errdefs.IsUnavailable / errors.IsServiceUnavailable.
 */
export function isUnavailable(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ERR_RUNTIME_UNAVAILABLE' || code === 'ERR_UNAVAILABLE';
}

/**
 * isInsufficientStorage: a write failed because the file system is full (`ERR_INSUFFICIENT_STORAGE`,
 * made from ENOSPC / EDQUOT by {@link insufficientStorageError}); the server answers it with 507.
 */
export function isInsufficientStorage(err: unknown): boolean {
  return codeOf(err) === 'ERR_INSUFFICIENT_STORAGE';
}

/** isNoSpaceErrno: a Node.js I/O error of a full file system or an exhausted quota (`ENOSPC`, `EDQUOT`). */
export function isNoSpaceErrno(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * insufficientStorageError wraps a Node.js ENOSPC / EDQUOT error of a write under `dir` as
 * AgentError `ERR_INSUFFICIENT_STORAGE` (retriable: freeing space helps), the message naming the
 * directory and the errno, e.g. `no space left on device (ENOSPC) writing /var/lib/kubelet-ts/intake`.
 */
export function insufficientStorageError(err: unknown, dir: string): AgentError {
  const code = String(codeOf(err) ?? 'ENOSPC');
  const what = code === 'EDQUOT' ? 'disk quota exceeded' : 'no space left on device';
  return new AgentError('ERR_INSUFFICIENT_STORAGE', `${what} (${code}) writing ${dir}`, { retriable: true, cause: err });
}

/** isInvalidInput: bad input from a user; retrying the same input will not help. */
export function isInvalidInput(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ERR_INVALID_ARGUMENT' || code === 'ERR_INVALID_MANIFEST';
}

const kStatusReasonByCode: Partial<Record<AgentErrorCode, StatusReason>> = {
  ERR_INVALID_ARGUMENT: 'BadRequest',
  ERR_INVALID_MANIFEST: 'Invalid',
  ERR_NOT_FOUND: 'NotFound',
  ERR_ALREADY_EXISTS: 'AlreadyExists',
  ERR_CONFLICT: 'Conflict',
  ERR_FORBIDDEN: 'Forbidden',
  ERR_UNAVAILABLE: 'ServiceUnavailable',
  ERR_RUNTIME_UNAVAILABLE: 'ServiceUnavailable',
};

/**
 * statusReasonOf: the HTTP Status reason an error answers with: its `statusReason` if set, else
 * its code's (`ERR_NOT_FOUND` → `NotFound`, `ERR_FORBIDDEN` → `Forbidden`, …), else undefined
 * (an internal error). Pure; used by the server's error mapping.
 */
export function statusReasonOf(err: unknown): StatusReason | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const own = (err as { statusReason?: unknown }).statusReason;
  if (typeof own === 'string') return own as StatusReason;
  return kStatusReasonByCode[codeOf(err) as AgentErrorCode];
}

/**
 * serializeError turns anything thrown into plain data that survives structured clone: name,
 * code, message, retriable, the container and Status reasons, and an InvalidManifestError's
 * source and field errors. A non-AgentError keeps its string `code` (else `ERR_RUNTIME`) and is retriable.
 */
export function serializeError(err: unknown): SerializedError {
  if (err instanceof AgentError) {
    const out: SerializedError = { name: err.name, code: err.code, message: err.message, retriable: err.retriable, reason: err.reason };
    if (err.statusReason !== undefined) out.statusReason = err.statusReason;
    if (err instanceof InvalidManifestError) {
      out.source = err.source;
      out.errors = err.errors.map((f) => ({ ...f }));
    }
    return out;
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, code: typeof code === 'string' ? code : 'ERR_RUNTIME', message: err.message, retriable: true };
  }
  return { name: 'Error', code: 'ERR_RUNTIME', message: String(err), retriable: true };
}

/**
 * deserializeError rebuilds an AgentError from `SerializedError` on the main thread (the inverse
 * of {@link serializeError}): `ERR_INVALID_MANIFEST` becomes an InvalidManifestError with its field
 * errors, `ERR_INVALID_ARGUMENT` an InvalidArgumentError; the `name` is kept as sent. An unknown
 * code becomes `ERR_RUNTIME`.
 */
export function deserializeError(e: SerializedError): AgentError {
  const code = (kAgentErrorCodes as readonly string[]).includes(e.code) ? (e.code as AgentErrorCode) : 'ERR_RUNTIME';
  const opts: AgentErrorOptions = {
    retriable: e.retriable,
    reason: e.reason as ContainerReason | undefined,
    statusReason: e.statusReason as StatusReason | undefined,
  };
  let err: AgentError;
  if (code === 'ERR_INVALID_MANIFEST' && Array.isArray(e.errors)) err = new InvalidManifestError(e.source ?? '', e.errors, e.message);
  else if (code === 'ERR_INVALID_ARGUMENT') err = new InvalidArgumentError(e.message, opts);
  else err = new AgentError(code, e.message, opts);
  err.name = e.name;
  return err;
}
