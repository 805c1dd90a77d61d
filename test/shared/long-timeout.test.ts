import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { kMaxTimerDelayMs, setLongTimeout } from '../../src/shared/long-timeout.js';
import { realClock } from '../../src/shared/clock.js';

// Fake timers keep Node's rule that a delay above 2^31-1 ms becomes 1 ms, so these fail with a plain setTimeout.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const long = 2_147_484 * 1000; // a probe timeoutSeconds of 2,147,484, in ms: just past Node's limit

describe('setLongTimeout', () => {
  it('waits the whole delay past 2^31-1 ms, then fires once', () => {
    const fn = vi.fn();
    setLongTimeout(fn, long);
    vi.advanceTimersByTime(kMaxTimerDelayMs);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(long - kMaxTimerDelayMs - 1);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10 * kMaxTimerDelayMs);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('fires short delays as setTimeout does, and a negative or NaN delay on the next turn', () => {
    const fns = [vi.fn(), vi.fn(), vi.fn()];
    setLongTimeout(fns[0], 50);
    setLongTimeout(fns[1], -5);
    setLongTimeout(fns[2], Number.NaN);
    vi.advanceTimersByTime(0);
    expect(fns.map((f) => f.mock.calls.length)).toEqual([0, 1, 1]);
    vi.advanceTimersByTime(50);
    expect(fns[0]).toHaveBeenCalledTimes(1);
  });

  it('clear() cancels it in any chunk, and Infinity never fires', () => {
    const a = vi.fn();
    const b = vi.fn();
    const h = setLongTimeout(a, 3 * kMaxTimerDelayMs);
    setLongTimeout(b, Infinity).unref();
    vi.advanceTimersByTime(kMaxTimerDelayMs + 5);
    h.clear();
    h.clear();
    vi.advanceTimersByTime(5 * kMaxTimerDelayMs);
    expect(a).not.toHaveBeenCalled();
    expect(b).not.toHaveBeenCalled();
  });

  it('is what the shared real clock arms (the probe scheduler runs on it)', () => {
    const fn = vi.fn();
    realClock.setTimeout(fn, long);
    vi.advanceTimersByTime(1000);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(long);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});
