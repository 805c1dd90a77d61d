// A fake SchedulerClock for the probe manager's tests (STYLE.md C13: drive time, never sleep).
import type { SchedulerClock } from '../../../src/main/prober/scheduler.js';

/** flush lets pending promise callbacks (a probe's await chain) run. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** FakeClock: time moves only in advance(); timers fire in due order. */
export class FakeClock implements SchedulerClock {
  t = 1_000_000;
  #id = 0;
  readonly timers = new Map<number, { due: number; fn: () => void }>();
  now(): number {
    return this.t;
  }
  setTimer(fn: () => void, delayMs: number): unknown {
    const id = ++this.#id;
    this.timers.set(id, { due: this.t + delayMs, fn });
    return id;
  }
  clearTimer(h: unknown): void {
    this.timers.delete(h as number);
  }
  /** advance moves time by `ms`, firing every timer that comes due (and letting promises settle). */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      let next: [number, { due: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].due <= end && (!next || e[1].due < next[1].due)) next = e;
      if (!next) break;
      this.t = Math.max(this.t, next[1].due);
      this.timers.delete(next[0]);
      next[1].fn();
    }
    this.t = end;
    await flush();
  }
}
