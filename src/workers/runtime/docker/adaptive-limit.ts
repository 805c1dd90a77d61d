/**
 * The number of Docker-bound operations a worker thread lets run at once, found from Docker's own
 * latency instead of a flag (issue #16). Pure: no timers, no I/O; the clock is injected.
 *
 * The algorithm is TCP Vegas' delay-based congestion avoidance as Netflix's concurrency-limits
 * (`VegasLimit`) applies it to a server: with `rttNoLoad` the latency an operation has when nothing
 * queues and `rtt` the latency seen now, about `limit × (1 − rttNoLoad / rtt)` of the operations in
 * flight are waiting in the engine's queue rather than being worked on. Fewer than `alpha` queued:
 * the engine has idle capacity, the limit grows; more than `beta`: the engine is past its knee
 * (latency rises, throughput does not), the limit shrinks; in between it holds. Docker's knee on
 * this 2-core machine is about 8 concurrent create/start pairs (the raw floor is slower at 32).
 *
 * Adapted to Docker, where one engine serves operations of very different cost (a create takes
 * tens of milliseconds, a start hundreds): the no-load latency is kept per operation kind (`op`),
 * as the lowest latency of that kind over the last two epochs of `epochSamples` samples (so it
 * follows an engine that became slower or faster for good), and each sample contributes the ratio
 * `rttNoLoad[op] / rtt`. The limit changes at most once per window of `max(limit, 4)` samples,
 * from the window's mean ratio (one change per "round trip", as Vegas does per RTT), within
 * [minLimit, maxLimit]:
 * - fewer than alpha = 3·log10(limit) queued (Netflix's default): up by `max(1, log10(limit))`,
 *   but only when at least half of the limit was in use during the window (an idle node's limit
 *   stays where the last burst left it);
 * - more than beta = 6·log10(limit): down by that step, or at once to `limit × ratio + alpha` (what
 *   the engine works on, plus alpha queued) when that is lower — Vegas alone takes about `limit`
 *   windows to come down from a limit far too high.
 * A failed operation is not a latency sample (a name conflict answers fast and says nothing about
 * load), except an engine that stopped answering (ERR_RUNTIME_UNAVAILABLE), which halves the limit
 * (the multiplicative decrease of AIMD).
 */
import { realClock, type Clock } from '../../../shared/clock.js';

/** AdaptiveLimitOptions: bounds and tuning; every field optional. */
export interface AdaptiveLimitOptions {
  /** The limit before any sample (default 4). */
  initialLimit?: number;
  /** Never below (default 2). */
  minLimit?: number;
  /** Never above (default 32: the pod workers' own bound on concurrent syncs). */
  maxLimit?: number;
  /** Samples per epoch of the no-load latency minimum (default 200). */
  epochSamples?: number;
}

/** AdaptiveLimitDeps: the Clock whose monotonicMs times each slot (default realClock). */
export interface AdaptiveLimitDeps {
  clock?: Clock;
}

/** The highest priority `acquire` takes (priorities are 0..kMaxPriority). */
export const kMaxPriority = 7;

/** A granted slot: call it once with how the operation ended. */
export type Release = (outcome: 'ok' | 'error' | 'overload') => void;

/** LimitSnapshot: the limiter's state for logs, metrics and benches. */
export interface LimitSnapshot {
  limit: number;
  inFlight: number;
  waiting: number;
  /** Samples taken since start. */
  samples: number;
  /** The lowest and highest limit reached since start. */
  minSeen: number;
  maxSeen: number;
}

/**
 * AdaptiveConcurrencyLimit: a semaphore whose size follows Docker's latency (see the module
 * docstring). `acquire(op, priority)` resolves with a {@link Release} once fewer than `limit`
 * operations are in flight; a freed slot goes to the waiter of the highest priority, first come
 * first served among equals; the latency of the slot (acquire resolved → release) is the sample.
 * @throws RangeError from the constructor when the bounds are not integers with 1 ≤ min ≤ initial ≤ max.
 */
export class AdaptiveConcurrencyLimit {
  #limit: number;
  readonly #min: number;
  readonly #max: number;
  readonly #epochSamples: number;
  readonly #clock: Clock;
  #inFlight = 0;
  /** Waiters by priority: index = priority (0 lowest), each FIFO. */
  readonly #waiting: Array<Array<() => void>> = [];
  #waitingCount = 0;
  /** Per op kind: the minimum latency (ms) of the current and of the previous epoch. */
  readonly #noLoad = new Map<string, { current: number; previous: number; count: number }>();
  #windowRatioSum = 0;
  #windowSamples = 0;
  /** The most operations in flight during the current window. */
  #windowPeak = 0;
  #samples = 0;
  #minSeen: number;
  #maxSeen: number;

  constructor(opts: AdaptiveLimitOptions = {}, deps: AdaptiveLimitDeps = {}) {
    const initial = opts.initialLimit ?? 4;
    this.#min = opts.minLimit ?? 2;
    this.#max = opts.maxLimit ?? 32;
    for (const [name, v] of [
      ['initialLimit', initial],
      ['minLimit', this.#min],
      ['maxLimit', this.#max],
    ] as const) {
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`AdaptiveConcurrencyLimit: ${name} must be an integer >= 1, got ${v}`);
    }
    if (this.#min > initial || initial > this.#max)
      throw new RangeError(
        `AdaptiveConcurrencyLimit: need minLimit <= initialLimit <= maxLimit, got ${this.#min}, ${initial}, ${this.#max}`,
      );
    this.#limit = this.#minSeen = this.#maxSeen = initial;
    this.#epochSamples = opts.epochSamples ?? 200;
    this.#clock = deps.clock ?? realClock;
  }

  /** The current limit (an integer). */
  get limit(): number {
    return this.#limit;
  }

  /** The highest the limit can go (`maxLimit`, an integer): the most calls it ever admits at once. */
  get maxLimit(): number {
    return this.#max;
  }

  snapshot(): LimitSnapshot {
    return {
      limit: this.#limit,
      inFlight: this.#inFlight,
      waiting: this.#waitingCount,
      samples: this.#samples,
      minSeen: this.#minSeen,
      maxSeen: this.#maxSeen,
    };
  }

  /**
   * acquire waits for a slot for one operation of kind `op` (e.g. `create`, `start`); among
   * waiters, a higher `priority` (an integer 0..kMaxPriority, default 0) is admitted first.
   * @throws RangeError for a priority outside 0..kMaxPriority.
   */
  async acquire(op: string, priority = 0): Promise<Release> {
    return this.tryAcquire(op, priority) ?? this.#wait(op, priority);
  }

  /**
   * tryAcquire: {@link AdaptiveConcurrencyLimit.acquire} without waiting: the slot's Release when one
   * is free and nobody waits, else undefined (nothing queued). O(1).
   * @throws RangeError for a priority outside 0..kMaxPriority.
   */
  tryAcquire(op: string, priority = 0): Release | undefined {
    if (!Number.isInteger(priority) || priority < 0 || priority > kMaxPriority)
      throw new RangeError(`AdaptiveConcurrencyLimit.acquire: priority must be an integer 0..${kMaxPriority}, got ${priority}`);
    if (this.#inFlight >= this.#limit || this.#waitingCount > 0) return undefined;
    this.#inFlight++;
    return this.#granted(op);
  }

  async #wait(op: string, priority: number): Promise<Release> {
    // A waiter is counted in flight by #admit when it is woken, so one release never wakes two.
    await new Promise<void>((resolve) => {
      (this.#waiting[priority] ??= []).push(resolve);
      this.#waitingCount++;
    });
    return this.#granted(op);
  }

  /** #granted: the Release of a slot just counted in flight for `op`, timed from now. */
  #granted(op: string): Release {
    if (this.#inFlight > this.#windowPeak) this.#windowPeak = this.#inFlight;
    const t0 = this.#clock.monotonicMs();
    let released = false;
    return (outcome) => {
      if (released) return;
      released = true;
      this.#inFlight--;
      if (outcome === 'ok') this.#sample(op, this.#clock.monotonicMs() - t0);
      else if (outcome === 'overload') this.#setLimit(Math.floor(this.#limit / 2));
      if (this.#waitingCount > 0) this.#admit();
    };
  }

  #admit(): void {
    for (let p = this.#waiting.length - 1; p >= 0 && this.#inFlight < this.#limit; p--) {
      const queue = this.#waiting[p];
      while (queue && queue.length > 0 && this.#inFlight < this.#limit) {
        this.#inFlight++;
        this.#waitingCount--;
        queue.shift()!();
      }
    }
  }

  #sample(op: string, rttMs: number): void {
    const rtt = Math.max(rttMs, 0.001);
    let nl = this.#noLoad.get(op);
    if (!nl) this.#noLoad.set(op, (nl = { current: rtt, previous: rtt, count: 0 }));
    nl.current = Math.min(nl.current, rtt);
    if (++nl.count >= this.#epochSamples) {
      nl.previous = nl.current;
      nl.current = rtt;
      nl.count = 0;
    }
    const noLoad = Math.min(nl.current, nl.previous);
    this.#samples++;
    this.#windowRatioSum += noLoad / rtt;
    if (++this.#windowSamples < Math.max(this.#limit, 4)) return;
    const ratio = this.#windowRatioSum / this.#windowSamples;
    this.#windowRatioSum = 0;
    this.#windowSamples = 0;
    const peak = this.#windowPeak;
    this.#windowPeak = this.#inFlight;
    const queued = this.#limit * (1 - ratio);
    const log = Math.log10(this.#limit);
    const step = Math.max(1, log);
    const alpha = 3 * log;
    const beta = 6 * log;
    // Grow only when the limit was what held operations back (not when fewer were asked for).
    if (queued < alpha) {
      if (peak >= this.#limit / 2) this.#setLimit(this.#limit + step);
    }
    // Past the knee: straight down to what the engine works on (limit × ratio) plus alpha queued,
    // or by one step when that is less (the gradient limiters' fast decrease; Vegas alone takes
    // ~limit windows to come down from a limit far too high).
    else if (queued > beta) this.#setLimit(Math.min(this.#limit - step, this.#limit * ratio + alpha));
  }

  #setLimit(next: number): void {
    this.#limit = Math.min(this.#max, Math.max(this.#min, Math.round(next)));
    this.#minSeen = Math.min(this.#minSeen, this.#limit);
    this.#maxSeen = Math.max(this.#maxSeen, this.#limit);
    this.#admit();
  }
}
