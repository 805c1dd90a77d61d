// FakeClock: the Clock of src/shared/clock.ts (and the probe scheduler's SchedulerClock) whose time
// moves only in advance(): the counterpart of k8s.io/utils/clock/testing FakeClock (STYLE.md C13).
import type { SchedulerClock } from '../../src/main/prober/scheduler.js';
import type { Clock, TimerHandle } from '../../src/shared/clock.js';

/** flush lets pending promise callbacks (an await chain started by a timer) run: one macrotask turn. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A timer of the FakeClock: due time (epoch ms), callback, and the period of an interval. */
export interface FakeTimer {
  due: number;
  fn: () => void;
  periodMs?: number;
}

/**
 * FakeClock: now() is `t` (epoch ms, default 1,000,000; tests may set it). Timers fire only
 * inside advance(), in due order (equal due times in the order they were set), each at its own due
 * time; an interval is set again for its next period before its callback runs. Handles are
 * numbers; `timers` holds the pending ones (tests may count them).
 */
export class FakeClock implements Clock, SchedulerClock {
  t: number;
  readonly timers = new Map<number, FakeTimer>();
  #id = 0;

  constructor(startMs = 1_000_000) {
    this.t = startMs;
  }

  now(): number {
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

  /** setTimer / clearTimer: the probe scheduler's names for setTimeout / clearTimeout. */
  setTimer(fn: () => void, delayMs: number): unknown {
    return this.setTimeout(fn, delayMs);
  }

  clearTimer(handle: unknown): void {
    this.clearTimeout(handle);
  }

  /**
   * advance moves time forward by `ms`, firing every timer that comes due on the way (also those
   * set by callbacks, when they fall within the window), letting promises settle (flush) before
   * each timer and at the end. Resolves with now() = the old now() + ms.
   */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      let next: [number, FakeTimer] | undefined;
      for (const e of this.timers) if (e[1].due <= end && (!next || e[1].due < next[1].due)) next = e;
      if (!next) break;
      const [id, timer] = next;
      this.t = Math.max(this.t, timer.due);
      if (timer.periodMs === undefined) this.timers.delete(id);
      else timer.due += timer.periodMs;
      timer.fn();
    }
    this.t = end;
    await flush();
  }

  #add(timer: FakeTimer): number {
    const id = ++this.#id;
    this.timers.set(id, timer);
    return id;
  }
}
