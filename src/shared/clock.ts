// Counterpart of k8s.io/utils/clock (clock.Clock / clock.RealClock): the time and timers a component uses.
/**
 * The clock a subsystem is given in its `deps` (STYLE.md C7, C13), so that its tests drive time
 * with test/fakes/fake-clock.ts instead of sleeping. Times are epoch milliseconds, delays ms.
 * Pure interface plus the real implementation; safe in any thread.
 */
import { setLongTimeout, type LongTimeout } from './long-timeout.js';

/** TimerHandle: what a Clock's setTimeout / setInterval return; only good for its own clear calls. */
export type TimerHandle = unknown;

/**
 * Clock: the current time and timers. `setTimeout` / `setInterval` call `fn` after `delayMs`
 * (every `periodMs`) until cleared; the real clock unrefs its timers (a pending timer never keeps
 * the process alive). Clearing an unknown or already fired handle is a no-op.
 */
export interface Clock {
  /** now: epoch milliseconds (wall clock: it may step back or forward). */
  now(): number;
  /**
   * monotonicMs: milliseconds since an arbitrary origin, never going back: for durations and
   * "how long since" (k8s.io/utils/clock Since, which Go computes on the monotonic clock).
   */
  monotonicMs(): number;
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  setInterval(fn: () => void, periodMs: number): TimerHandle;
  clearInterval(handle: TimerHandle): void;
}

/** realClock: Date.now and Node's unref'd timers; a timeout may be longer than 2^31-1 ms (see long-timeout.ts). */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonicMs: () => performance.now(),
  setTimeout: (fn, delayMs) => setLongTimeout(fn, delayMs).unref(),
  clearTimeout: (handle) => (handle as LongTimeout | undefined)?.clear(),
  setInterval: (fn, periodMs) => setInterval(fn, periodMs).unref(),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};
