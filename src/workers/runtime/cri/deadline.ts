// Counterpart of the kubelet's CRI client deadlines (pkg/kubelet/cri/remote/remote_runtime.go: every call under context.WithTimeout(--runtime-request-timeout)).
/**
 * The deadline of one runtime call. The kubelet gives each CRI call `--runtime-request-timeout`
 * (2 min), StopContainer and ExecSync that plus their own timeout, and long-running calls (image
 * pulls, log follows, exec/attach streams, event streams) none. A call past its deadline fails
 * with `context deadline exceeded`: the sync reports it (FailedCreatePodSandBox / Failed event)
 * and the pod worker retries with backoff. Worker threads only.
 */
import { realClock, type Clock, type TimerHandle } from '../../../shared/clock.js';
import { AgentError } from '../../../shared/errors.js';

/** kDeadlineExceeded: the words of a call that passed its deadline (Go's context.DeadlineExceeded). */
export const kDeadlineExceeded = 'context deadline exceeded';

/**
 * withDeadline runs `call` with an AbortSignal that fires after `timeoutMs` (milliseconds; 0 or
 * less = no deadline) and settles no later than that: past it, the request is aborted (dockerode
 * passes the signal to its HTTP request) and the returned promise rejects with a retriable
 * `ERR_RUNTIME` AgentError `<what>: context deadline exceeded (--runtime-request-timeout <n>s)`,
 * whatever the call does afterwards. Otherwise it settles as `call` does. The deadline's timer is
 * `clock`'s (default realClock).
 */
export function withDeadline<T>(
  timeoutMs: number,
  what: string,
  call: (signal: AbortSignal | undefined) => Promise<T>,
  clock: Clock = realClock,
): Promise<T> {
  if (!(timeoutMs > 0)) return call(undefined);
  const ac = new AbortController();
  let timer: TimerHandle | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => {
      reject(
        new AgentError('ERR_RUNTIME', `${what}: ${kDeadlineExceeded} (--runtime-request-timeout ${timeoutMs / 1000}s)`, {
          retriable: true,
        }),
      );
      ac.abort();
    }, timeoutMs);
  });
  const running = call(ac.signal);
  // The call's own late rejection (an AbortError) is not unhandled.
  running.catch(() => {});
  return Promise.race([running, expired]).finally(() => clock.clearTimeout(timer));
}

/** isDeadlineExceeded: `err` is a runtime call that passed its deadline ({@link withDeadline}); also after a trip across threads (by message). */
export function isDeadlineExceeded(err: unknown): boolean {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.includes(`: ${kDeadlineExceeded}`);
}
