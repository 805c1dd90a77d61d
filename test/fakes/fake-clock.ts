// FakeClock: the Clock of src/shared/clock.ts whose time moves only when a test moves it: the
// counterpart of k8s.io/utils/clock/testing FakeClock (Step, SetTime, HasWaiters) (STYLE.md C13).
// The one fake clock of the tests: every component that keeps time takes a Clock in its deps.
import type { Clock, TimerHandle } from '../../src/shared/clock.js';

/** flush lets pending promise callbacks (an await chain started by a timer) run: one macrotask turn. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A timer of the FakeClock: due time (epoch ms), callback, and the period of an interval (ms). */
export interface FakeTimer {
  due: number;
  fn: () => void;
  periodMs?: number;
}

/**
 * FakeClock: now() and monotonicMs() are `t` (epoch ms, default 1,000,000; tests may set it). Timers fire only
 * inside step() / advance(), in due order (equal due times in the order they were set), each at
 * its own due time; an interval is set again for its next period before its callback runs.
 * Handles are numbers; `timers` holds the pending ones (tests may count them).
 */
export class FakeClock implements Clock {
  t: number;
  readonly timers = new Map<number, FakeTimer>();
  #id = 0;

  constructor(startMs = 1_000_000) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  /** monotonicMs: moves with now() (step, advance, and a test's own changes of `t`). */
  monotonicMs(): number {
    return this.t;
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    return this.#add({ due: this.t + Math.max(0, delayMs), fn });
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  setInterval(fn: () => void, periodMs: number): TimerHandle {
    return this.#add({ due: this.t + Math.max(1, periodMs), fn, periodMs: Math.max(1, periodMs) });
  }

  clearInterval(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** hasWaiters: whether a timer is pending (k8s FakeClock.HasWaiters). */
  hasWaiters(): boolean {
    return this.timers.size > 0;
  }

  /**
   * step moves time forward by `ms` (k8s FakeClock.Step), synchronously: every timer due on the
   * way fires in due order at its own due time, also those set by the callbacks when they fall
   * within the window. Promise callbacks the timers start run only after step returns (await
   * flush(), or use advance()). @throws RangeError for a negative or non-finite `ms`.
   */
  step(ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`FakeClock.step: ms must be a finite number >= 0, got ${ms}`);
    const end = this.t + ms;
    for (let next = this.#next(end); next; next = this.#next(end)) this.#fire(next);
    this.t = end;
  }

  /**
   * advance is step() for timers whose callbacks start promise chains: it lets promises settle
   * (flush) before each timer and at the end. Resolves with now() = the old now() + ms.
   * @throws RangeError for a negative or non-finite `ms`.
   */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`FakeClock.advance: ms must be a finite number >= 0, got ${ms}`);
    const end = this.t + ms;
    for (;;) {
      await flush();
      const next = this.#next(end);
      if (!next) break;
      this.#fire(next);
    }
    this.t = end;
    await flush();
  }

  /** The earliest timer due at or before `end` (the first set among equals). */
  #next(end: number): [number, FakeTimer] | undefined {
    let next: [number, FakeTimer] | undefined;
    for (const e of this.timers) if (e[1].due <= end && (!next || e[1].due < next[1].due)) next = e;
    return next;
  }

  #fire([id, timer]: [number, FakeTimer]): void {
    this.t = Math.max(this.t, timer.due);
    if (timer.periodMs === undefined) this.timers.delete(id);
    else timer.due += timer.periodMs;
    timer.fn();
  }

  #add(timer: FakeTimer): number {
    const id = ++this.#id;
    this.timers.set(id, timer);
    return id;
  }
}
