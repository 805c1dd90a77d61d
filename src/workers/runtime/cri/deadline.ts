// Counterpart of the kubelet's CRI client deadlines (pkg/kubelet/cri/remote/remote_runtime.go: every call under context.WithTimeout(--runtime-request-timeout)).
/**
 * The deadline of one runtime call. The kubelet gives each CRI call `--runtime-request-timeout`
 * (2 min), StopContainer and ExecSync that plus their own timeout, and long-running calls (image
 * pulls, log follows, exec/attach streams, event streams) none. A call past its deadline fails
 * with `context deadline exceeded`: the sync reports it (FailedCreatePodSandBox / Failed event)
 * and the pod worker retries with backoff. Worker threads only.
 */
import { realClock, type Clock } from '../../../shared/clock.js';
import { AgentError } from '../../../shared/errors.js';
import { timerList, type TimerEntry, type TimerList } from './timer-list.js';

/** kDeadlineExceeded: the words of a call that passed its deadline (Go's context.DeadlineExceeded). */
export const kDeadlineExceeded = 'context deadline exceeded';

/**
 * deadlineError: the error of a call `what` past its deadline of `timeoutMs` milliseconds: a
 * retriable `ERR_RUNTIME` AgentError `<what>: context deadline exceeded (--runtime-request-timeout <n>s)`.
 */
export function deadlineError(what: string, timeoutMs: number): AgentError {
  return new AgentError('ERR_RUNTIME', `${what}: ${kDeadlineExceeded} (--runtime-request-timeout ${timeoutMs / 1000}s)`, {
    retriable: true,
  });
}

/** Deadline: one call's entry in its clock's TimerList; settles the returned promise once. */
class Deadline<T> implements TimerEntry {
  due = 0;
  settled = false;
  readonly #ac = new AbortController();
  readonly #list: TimerList;
  readonly #what: string;
  readonly #timeoutMs: number;
  /** The returned promise's resolving functions; dropped once it settles (a settled entry can wait in its TimerList). */
  #resolve: (v: T) => void;
  #reject: (err: unknown) => void;

  constructor(list: TimerList, what: string, timeoutMs: number, resolve: (v: T) => void, reject: (err: unknown) => void) {
    this.#list = list;
    this.#what = what;
    this.#timeoutMs = timeoutMs;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  run(call: (signal: AbortSignal) => Promise<T>): void {
    this.#list.add(this);
    let running: Promise<T>;
    try {
      running = call(this.#ac.signal);
    } catch (err) {
      this.#list.settle(this);
      return this.#reject(err);
    }
    running.then(
      (v) => {
        if (this.settled) return;
        this.#list.settle(this);
        const resolve = this.#resolve;
        this.#drop();
        resolve(v);
      },
      (err: unknown) => {
        // Past the deadline the call's own late rejection (an AbortError) is dropped.
        if (this.settled) return;
        this.#list.settle(this);
        const reject = this.#reject;
        this.#drop();
        reject(err);
      },
    );
  }

  fire(): void {
    const reject = this.#reject;
    this.#drop();
    reject(deadlineError(this.#what, this.#timeoutMs));
    this.#ac.abort();
  }

  #drop(): void {
    this.#resolve = this.#reject = noop;
  }
}

function noop(): void {}

/**
 * withDeadline runs `call` with an AbortSignal that fires after `timeoutMs` (milliseconds; 0 or
 * less = no deadline) and settles no later than that: past it, the request is aborted (dockerode
 * and the CRI client pass the signal to their request) and the returned promise rejects with
 * {@link deadlineError}, whatever the call does afterwards. Otherwise it settles as `call` does.
 * The deadlines of one `clock` (default realClock) and duration share one timer (./timer-list.ts),
 * which is cleared once none is pending. (The Docker Engine client takes its deadline without a
 * signal: engine-client.ts.)
 */
export function withDeadline<T>(
  timeoutMs: number,
  what: string,
  call: (signal: AbortSignal | undefined) => Promise<T>,
  clock: Clock = realClock,
): Promise<T> {
  if (!(timeoutMs > 0)) return call(undefined);
  return new Promise<T>((resolve, reject) => new Deadline<T>(timerList(clock, timeoutMs), what, timeoutMs, resolve, reject).run(call));
}

/** isDeadlineExceeded: `err` is a runtime call that passed its deadline ({@link withDeadline}); also after a trip across threads (by message). */
export function isDeadlineExceeded(err: unknown): boolean {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.includes(`: ${kDeadlineExceeded}`);
}
