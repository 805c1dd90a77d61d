// Counterpart of the kubelet's CRI error handling (pkg/kubelet/cri/remote/remote_runtime.go: status.FromError; grpc status codes in k8s.io/cri-api/pkg/errors).
/**
 * gRPC errors of a CRI call as the project's AgentError, the CRI method named first and the rest
 * in the form the kubelet shows (`rpc error: code = NotFound desc = …`), e.g.
 * `ContainerStatus: rpc error: code = NotFound desc = an error occurred when try to find container "x": not found`.
 */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { AgentError, type AgentErrorCode } from '../../../shared/errors.js';
import { kDeadlineExceeded } from './deadline.js';

/** Go's names of the gRPC codes (google.golang.org/grpc/codes String()), as the kubelet's messages show them. */
const kCodeNames: Record<number, string> = {
  0: 'OK',
  1: 'Canceled',
  2: 'Unknown',
  3: 'InvalidArgument',
  4: 'DeadlineExceeded',
  5: 'NotFound',
  6: 'AlreadyExists',
  7: 'PermissionDenied',
  8: 'ResourceExhausted',
  9: 'FailedPrecondition',
  10: 'Aborted',
  11: 'OutOfRange',
  12: 'Unimplemented',
  13: 'Internal',
  14: 'Unavailable',
  15: 'DataLoss',
  16: 'Unauthenticated',
};

/** Codes a retry may cure: the runtime busy, restarting or slow, or its own internal failure. */
const kRetriable = new Set<number>([
  GrpcStatus.CANCELLED,
  GrpcStatus.UNKNOWN,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.ABORTED,
  GrpcStatus.INTERNAL,
  GrpcStatus.UNAVAILABLE,
]);

/** grpcCodeOf: the gRPC status code behind a CRI error (`cause.code`), or undefined. */
export function grpcCodeOf(err: unknown): number | undefined {
  const cause = err instanceof AgentError ? (err as Error).cause : err;
  const code = (cause as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * criError maps a failed call of CRI method `method` to an AgentError (the grpc error as `cause`):
 * NOT_FOUND → `ERR_NOT_FOUND`, ALREADY_EXISTS → `ERR_ALREADY_EXISTS`, UNAVAILABLE →
 * `ERR_RUNTIME_UNAVAILABLE` (the socket absent or the runtime down), DEADLINE_EXCEEDED →
 * `ERR_RUNTIME` `<method>: context deadline exceeded (--runtime-request-timeout <n>s)` as
 * ../deadline.ts words it (`timeoutMs` in milliseconds), anything else `ERR_RUNTIME`. Retriable:
 * Unavailable, DeadlineExceeded, Canceled, Unknown, Internal, ResourceExhausted, Aborted.
 */
export function criError(method: string, err: unknown, timeoutMs: number): AgentError {
  const e = err as Partial<ServiceError>;
  const code = typeof e.code === 'number' ? e.code : GrpcStatus.UNKNOWN;
  const retriable = kRetriable.has(code);
  if (code === GrpcStatus.DEADLINE_EXCEEDED) {
    return new AgentError('ERR_RUNTIME', `${method}: ${kDeadlineExceeded} (--runtime-request-timeout ${timeoutMs / 1000}s)`, {
      retriable,
      cause: err,
    });
  }
  const desc = typeof e.details === 'string' && e.details !== '' ? e.details : (e.message ?? String(err));
  const ours: AgentErrorCode =
    code === GrpcStatus.NOT_FOUND
      ? 'ERR_NOT_FOUND'
      : code === GrpcStatus.ALREADY_EXISTS
        ? 'ERR_ALREADY_EXISTS'
        : code === GrpcStatus.UNAVAILABLE
          ? 'ERR_RUNTIME_UNAVAILABLE'
          : 'ERR_RUNTIME';
  return new AgentError(ours, `${method}: rpc error: code = ${kCodeNames[code] ?? code} desc = ${desc}`, { retriable, cause: err });
}

/**
 * execTimeoutError: ExecSync's command outlived its own timeout (`timeoutSeconds`) — the runtime
 * answers DeadlineExceeded before the call's deadline. The kubelet makes this a timeout of the
 * command, not of the runtime (remote_runtime.go ExecSync: exec.NewTimeoutError), so that a probe
 * fails as timed out: `ExecSync: command "sleep 10" timed out after 1s`, not retriable, the gRPC
 * error as `cause`.
 */
export function execTimeoutError(cmd: readonly string[], timeoutSeconds: number, cause: unknown): AgentError {
  return new AgentError('ERR_RUNTIME', `ExecSync: command ${JSON.stringify(cmd.join(' '))} ${kCommandTimedOut} ${timeoutSeconds}s`, {
    cause,
  });
}

const kCommandTimedOut = 'timed out after';

/** isCommandTimeout: `err` is an {@link execTimeoutError} (also after a trip across threads, by message). */
export function isCommandTimeout(err: unknown): boolean {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /^ExecSync: command ".*" timed out after \d+s$/s.test(message);
}
