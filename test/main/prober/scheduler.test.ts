import { describe, expect, it } from 'vitest';
import { newProbeScheduler } from '../../../src/main/prober/scheduler.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';

describe('probe scheduler', () => {
  it('runs every job on its period from its first due time, with one timer for all jobs', async () => {
    const clock = new FakeClock();
    const s = newProbeScheduler({ maxInFlight: 1000 }, clock);
    const runs = new Map<string, number[]>();
    for (let i = 0; i < 600; i++) {
      const key = `pod${i}/c/liveness`;
      s.add(key, clock.t + (i % 10) * 100, 1000, async () => void runs.set(key, [...(runs.get(key) ?? []), clock.now()]));
    }
    expect(clock.timers.size).toBe(1);
    await clock.advance(3_950);
    expect(clock.timers.size).toBe(1);
    expect(s.stats()).toMatchObject({ jobs: 600, inFlight: 0, waiting: 0, timers: 1 });
    const start = 1_000_000;
    expect(runs.get('pod0/c/liveness')).toEqual([start, start + 1000, start + 2000, start + 3000]);
    expect(runs.get('pod7/c/liveness')).toEqual([start + 700, start + 1700, start + 2700, start + 3700]);
    expect([...runs.values()].every((r) => r.length === 4)).toBe(true);
    await s.stop();
  });

  it('runs at most maxInFlight jobs at once; the others wait for a slot in arrival order', async () => {
    const clock = new FakeClock();
    const s = newProbeScheduler({ maxInFlight: 2 }, clock);
    const release: Array<() => void> = [];
    const started: string[] = [];
    for (const k of ['a', 'b', 'c', 'd']) {
      s.add(
        k,
        clock.t,
        10_000,
        () =>
          new Promise<void>((resolve) => {
            started.push(k);
            release.push(resolve);
          }),
      );
    }
    await clock.advance(0);
    expect(started).toEqual(['a', 'b']);
    expect(s.stats()).toMatchObject({ inFlight: 2, waiting: 2 });
    release.shift()!();
    await flush();
    await flush();
    expect(started).toEqual(['a', 'b', 'c']);
    release.splice(0).forEach((r) => r());
    await flush();
    await flush();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    release.splice(0).forEach((r) => r());
    await s.stop();
  });

  it('never overlaps runs of one job: a slow run delays the next instead of piling up', async () => {
    const clock = new FakeClock();
    const s = newProbeScheduler({}, clock);
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    s.add('slow', clock.t, 1000, async () => {
      runs++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise<void>((resolve) => clock.setTimeout(resolve, 3500));
      running--;
    });
    await clock.advance(10_000);
    expect(maxRunning).toBe(1);
    // runs at 0, 3500, 7000 (each starts as soon as the previous ended, no catch-up burst)
    expect(runs).toBe(3);
    const stopped = s.stop();
    await clock.advance(5000);
    await stopped;
    expect(runs).toBe(3);
  });

  it('remove stops a job and add replaces one with the same key', async () => {
    const clock = new FakeClock();
    const s = newProbeScheduler({}, clock);
    const calls: string[] = [];
    s.add('x', clock.t, 1000, async () => void calls.push('x1'));
    s.add('y', clock.t, 1000, async () => void calls.push('y'));
    await clock.advance(0);
    s.add('x', clock.t + 500, 1000, async () => void calls.push('x2'));
    s.remove('y');
    await clock.advance(2000);
    expect(calls).toEqual(['x1', 'y', 'x2', 'x2']);
    expect(s.size()).toBe(1);
    s.remove('x');
    expect(s.stats()).toMatchObject({ jobs: 0, timers: 0 });
    await clock.advance(5000);
    expect(calls).toHaveLength(4);
    await s.stop();
  });

  it('runs the jobs due within one tick together at its end, and keeps each period exact', async () => {
    const clock = new FakeClock();
    let wakeUps = 0;
    const counting = {
      now: () => clock.now(),
      monotonicMs: () => clock.monotonicMs(),
      setInterval: clock.setInterval.bind(clock),
      clearInterval: clock.clearInterval.bind(clock),
      setTimeout: (fn: () => void, ms: number) =>
        clock.setTimeout(() => {
          wakeUps++;
          fn();
        }, ms),
      clearTimeout: (h: unknown) => clock.clearTimeout(h),
    };
    const s = newProbeScheduler({ tickMs: 100 }, counting);
    const runs: Array<[string, number]> = [];
    for (const [key, at] of [
      ['a', 10],
      ['b', 40],
      ['c', 90],
      ['d', 150],
    ] as const)
      s.add(key, clock.t + at, 1000, async () => void runs.push([key, clock.now() - 1_000_000]));
    await clock.advance(99);
    expect(runs).toEqual([]);
    await clock.advance(1);
    expect(runs).toEqual([
      ['a', 100],
      ['b', 100],
      ['c', 100],
    ]);
    await clock.advance(1000);
    expect(runs.slice(3)).toEqual([
      ['d', 200],
      ['a', 1100],
      ['b', 1100],
      ['c', 1100],
    ]);
    // Two ticks per period (100 and 200 ms past each second): 3 wake-ups for the 7 runs so far.
    expect(wakeUps).toBe(3);
    await s.stop();
    // tickMs 1: each job when due, one wake-up each.
    const exact = newProbeScheduler({ tickMs: 1 }, clock);
    const at: number[] = [];
    exact.add('x', clock.t + 10, 1000, async () => void at.push(clock.now()));
    exact.add('y', clock.t + 40, 1000, async () => void at.push(clock.now()));
    const t0 = clock.t;
    await clock.advance(50);
    expect(at).toEqual([t0 + 10, t0 + 40]);
    await exact.stop();
  });

  it('trigger runs a job at the end of the current tick, then keeps its period from that run; a no-op for unknown, running or due jobs', async () => {
    const clock = new FakeClock();
    const s = newProbeScheduler({}, clock);
    const runs: number[] = [];
    const start = clock.t;
    s.add('r', start, 60_000, async () => void runs.push(clock.now() - start));
    await clock.advance(0);
    expect(runs).toEqual([0]);
    await clock.advance(5_050);
    s.trigger('r');
    s.trigger('r'); // a second trigger before the run does not queue another
    s.trigger('unknown');
    await clock.advance(50);
    expect(runs).toEqual([0, 5_100]);
    await clock.advance(60_000);
    expect(runs).toEqual([0, 5_100, 65_100]);
    expect(s.stats()).toMatchObject({ jobs: 1, timers: 1 });
    await s.stop();
  });

  it('refuses a non-positive period, a bad maxInFlight and a bad tick', () => {
    expect(() => newProbeScheduler({ maxInFlight: 0 })).toThrow(/maxInFlight/);
    expect(() => newProbeScheduler({ tickMs: 0.5 })).toThrow(/tickMs must be an integer >= 1 \(milliseconds\), got 0.5/);
    const s = newProbeScheduler({}, new FakeClock());
    expect(() => s.add('k', 0, 0, async () => {})).toThrow(/periodMs of k/);
  });
});
