/**
 * One error base class with stable codes (undici's errors.js shape), classified by behaviour
 * (virtual-kubelet's errdefs). Errors cross the worker boundary as `SerializedError` data.
 */
import type { SerializedError } from './messages.js';

/** Stable error codes. Add, never rename: logs and tests match on them. */
export type AgentErrorCode =
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_INVALID_MANIFEST'
  | 'ERR_NOT_FOUND'
  | 'ERR_ALREADY_EXISTS'
  | 'ERR_RUNTIME'
  | 'ERR_RUNTIME_UNAVAILABLE'
  | 'ERR_PROTOCOL';

/**
 * AgentError is the base of every error kubelet-ts throws on purpose.
 * `reason` holds a Kubernetes reason where one exists (`ErrImageNeverPull`, `CreateContainerError`)
 * so it can flow unchanged into ContainerStatus.state.waiting.reason.
 */
export class AgentError extends Error {
  readonly code: AgentErrorCode;
  readonly retriable: boolean;
  readonly reason?: string;
  constructor(code: AgentErrorCode, message: string, opts: { retriable?: boolean; reason?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AgentError';
    this.code = code;
    this.retriable = opts.retriable ?? false;
    this.reason = opts.reason;
  }
}

/** InvalidArgumentError: a bad option or flag value; the message names the option. */
export class InvalidArgumentError extends AgentError {
  constructor(message: string) {
    super('ERR_INVALID_ARGUMENT', message);
    this.name = 'InvalidArgumentError';
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

/** isRetriable: worth trying again later (Docker down, a timeout). */
export function isRetriable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retriable?: unknown }).retriable === true;
}

/** isNotFound: the thing asked for does not exist. */
export function isNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ERR_NOT_FOUND';
}

/** isInvalidInput: bad input from a user; retrying the same input will not help. */
export function isInvalidInput(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return code === 'ERR_INVALID_ARGUMENT' || code === 'ERR_INVALID_MANIFEST';
}

/** serializeError turns anything thrown into plain data that survives structured clone. */
export function serializeError(err: unknown): SerializedError {
  if (err instanceof AgentError) {
    return { name: err.name, code: err.code, message: err.message, retriable: err.retriable, reason: err.reason };
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, code: typeof code === 'string' ? code : 'ERR_RUNTIME', message: err.message, retriable: true };
  }
  return { name: 'Error', code: 'ERR_RUNTIME', message: String(err), retriable: true };
}

/** deserializeError rebuilds an AgentError from `SerializedError` on the main thread. */
export function deserializeError(e: SerializedError): AgentError {
  const known: AgentErrorCode[] = ['ERR_INVALID_ARGUMENT', 'ERR_INVALID_MANIFEST', 'ERR_NOT_FOUND', 'ERR_ALREADY_EXISTS', 'ERR_RUNTIME', 'ERR_RUNTIME_UNAVAILABLE', 'ERR_PROTOCOL'];
  const code = (known as string[]).includes(e.code) ? (e.code as AgentErrorCode) : 'ERR_RUNTIME';
  const err = new AgentError(code, e.message, { retriable: e.retriable, reason: e.reason });
  return err;
}
