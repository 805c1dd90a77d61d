/**
 * Counterpart of pkg/kubelet/runtime.go (runtimeState: setRuntimeSync, runtimeErrors) and of
 * kubelet.go's updateRuntimeUp loop: whether the container runtime is up, for the `runtime` check
 * of /healthz and the node's Ready condition (GET /node and, in cluster mode, the etcd Node key).
 *
 * Every `periodMs` (5 s, the kubelet's updateRuntimeUp period) a `runtimeStatus` pool task asks the
 * runtime (the CRI Status; Docker's `GET /_ping`; off the main thread). The runtime is down when no check has
 * succeeded for `thresholdMs` (30 s, the kubelet's maxWaitForContainerRuntime); before the first
 * success the agent's start is the baseline, so an agent that starts without its runtime is reported
 * down 30 s later, and a short cut below the threshold stays healthy, as upstream. Unlike upstream,
 * while the last check failed it asks every `downPeriodMs` (1 s) so that the runtime's return is
 * seen at once, and on that return `onRuntimeUp` fires (the agent syncs every pod then, so pods
 * that failed during the outage do not wait out their error backoff). Main thread only.
 */
import { InvalidArgumentError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/** kRuntimeDownMessage: the kubelet's runtimeErrors message, also the Ready condition's. */
export const kRuntimeDownMessage = 'container runtime is down';

/** Options of {@link newRuntimeState} (milliseconds). */
export interface RuntimeStateOptions {
  /** Period of the status check while the runtime answers (updateRuntimeUp: 5 s). */
  periodMs?: number;
  /** Period of the check while the last one failed (1 s). */
  downPeriodMs?: number;
  /** No successful check for this long = the runtime is down (maxWaitForContainerRuntime: 30 s). */
  thresholdMs?: number;
  /** A check that has not answered after this long counts as failed (5 s). */
  checkTimeoutMs?: number;
}

/** kDefaultRuntimeStateOptions: check every 5 s (every 1 s while failing), down after 30 s, a check times out after 5 s. */
export const kDefaultRuntimeStateOptions: Required<RuntimeStateOptions> = {
  periodMs: 5_000,
  downPeriodMs: 1_000,
  thresholdMs: 30_000,
  checkTimeoutMs: 5_000,
};

/** Dependencies of {@link newRuntimeState}. */
export interface RuntimeStateDeps {
  /** Asks the runtime once; resolves when it answered (the agent runs a `runtimeStatus` pool task). */
  check(): Promise<unknown>;
  logger: Logger;
  /** Called when a check succeeds after one or more failed (the runtime is back). */
  onRuntimeUp?(): void;
  /** Default realClock. */
  clock?: Clock;
}

/** RuntimeState: the runtime's health as the agent last saw it. */
export interface RuntimeState {
  /** start runs the first check now and keeps checking until stop(). Idempotent. */
  start(): void;
  /** stop ends the checks (a check in flight is ignored). Idempotent. */
  stop(): void;
  /** check runs one check now (also what the timer calls); resolves when it is done, never rejects. */
  check(): Promise<void>;
  /**
   * runtimeErrors, as runtimeState.runtimeErrors: `['container runtime is down']` when no check
   * succeeded for the threshold, else `[]`.
   */
  runtimeErrors(): string[];
  /** healthy: the `runtime` check of /healthz (ok, or the message with the last error). */
  healthy(): { ok: boolean; message?: string };
}

class RuntimeStateImpl implements RuntimeState {
  readonly #clock: Clock;
  /** Epoch ms of the last successful check, or of start() before the first. */
  #lastSyncMs: number;
  #lastError = '';
  #failing = false;
  #timer: TimerHandle | undefined;
  #running = false;
  #stopped = false;
  #started = false;

  constructor(
    private readonly o: Required<RuntimeStateOptions>,
    private readonly deps: RuntimeStateDeps,
  ) {
    this.#clock = deps.clock ?? realClock;
    this.#lastSyncMs = this.#clock.now();
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#lastSyncMs = this.#clock.now();
    void this.#tick();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #tick(): Promise<void> {
    await this.check();
    if (this.#stopped) return;
    this.#timer = this.#clock.setTimeout(() => void this.#tick(), this.#failing ? this.o.downPeriodMs : this.o.periodMs);
  }

  async check(): Promise<void> {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    let timer: TimerHandle | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = this.#clock.setTimeout(() => resolve('timeout'), this.o.checkTimeoutMs);
    });
    // A slow answer still counts when it comes: the timeout only lets the next check start.
    const answered = this.deps.check().then(
      () => {
        this.#succeeded();
        return 'answered' as const;
      },
      (err: unknown) => {
        this.#failed((err as Error)?.message ?? String(err));
        return 'failed' as const;
      },
    );
    const outcome = await Promise.race([answered, timedOut]);
    this.#clock.clearTimeout(timer);
    if (outcome === 'timeout') this.#failed(`no answer in ${this.o.checkTimeoutMs} ms`);
    this.#running = false;
  }

  #succeeded(): void {
    if (this.#stopped) return;
    this.#lastSyncMs = this.#clock.now();
    if (!this.#failing) return;
    this.#failing = false;
    this.#lastError = '';
    this.deps.logger.info({}, 'Container runtime is up again');
    this.deps.onRuntimeUp?.();
  }

  #failed(message: string): void {
    if (this.#stopped) return;
    this.#lastError = message;
    if (!this.#failing) this.deps.logger.warn({ err: message }, 'Container runtime status check failed');
    this.#failing = true;
  }

  runtimeErrors(): string[] {
    return this.#clock.now() - this.#lastSyncMs >= this.o.thresholdMs ? [kRuntimeDownMessage] : [];
  }

  healthy(): { ok: boolean; message?: string } {
    if (this.runtimeErrors().length === 0) return { ok: true };
    const since = Math.round((this.#clock.now() - this.#lastSyncMs) / 1000);
    return { ok: false, message: `${kRuntimeDownMessage}: no answer for ${since}s${this.#lastError ? `: ${this.#lastError}` : ''}` };
  }
}

/**
 * newRuntimeState builds the runtime state; nothing is checked until start().
 * @throws InvalidArgumentError naming the option when a period, the threshold or the timeout is not a positive number.
 */
export function newRuntimeState(options: RuntimeStateOptions, deps: RuntimeStateDeps): RuntimeState {
  const o = { ...kDefaultRuntimeStateOptions, ...options };
  for (const k of ['periodMs', 'downPeriodMs', 'thresholdMs', 'checkTimeoutMs'] as const) {
    if (!(Number.isFinite(o[k]) && o[k] > 0))
      throw new InvalidArgumentError(`options.${k} must be a positive number of milliseconds, got ${o[k]}`);
  }
  return new RuntimeStateImpl(o, deps);
}
