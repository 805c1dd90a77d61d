// The sync loop's timing on the fake clock (src/main/lifecycle/sync-loop.ts): its resync and housekeeping
// ticks, and its health check (the kubelet's syncLoop health: unhealthy when the loop has not run
// for 2 × --sync-frequency, at least 5 minutes).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { newSyncLoop, type SyncLoopDeps } from '../../../src/main/lifecycle/sync-loop.js';
import { FakeClock } from '../../fakes/fake-clock.js';

function setUp(syncFrequencyMs: number) {
  const clock = new FakeClock();
  const synced: string[] = [];
  let cleanups = 0;
  const deps = {
    logger: pino({ level: 'silent' }),
    clock,
    handler: { stop: () => {} },
    housekeeping: {
      handlePodCleanups: () => {
        cleanups++;
      },
    },
    podManager: { all: () => [{ uid: 'a' }, { uid: 'b' }], get: () => undefined },
    podWorkers: {
      update: (uid: string) => {
        synced.push(uid);
      },
    },
  } as unknown as SyncLoopDeps;
  const loop = newSyncLoop({ syncFrequencyMs, housekeepingPeriodMs: 2_000 }, deps);
  return { clock, loop, synced, cleanups: () => cleanups };
}

describe('sync loop on its clock', () => {
  it('resyncs every pod each --sync-frequency and runs housekeeping each period, until stopped', () => {
    const { clock, loop, synced, cleanups } = setUp(10_000);
    loop.start();
    clock.step(9_999);
    expect(synced).toEqual([]);
    expect(cleanups()).toBe(4);
    clock.step(1);
    expect(synced).toEqual(['a', 'b']);
    clock.step(20_000);
    expect(synced).toHaveLength(6);
    loop.stop();
    expect(clock.hasWaiters()).toBe(false);
    clock.step(60_000);
    expect(synced).toHaveLength(6);
  });

  it('is unhealthy once it has not run for 2 × --sync-frequency, at least 5 minutes; any event makes it healthy again', () => {
    const { clock, loop } = setUp(60_000);
    clock.step(300_000);
    expect(loop.healthy()).toEqual({ ok: true });
    clock.step(1_000);
    expect(loop.healthy()).toEqual({ ok: false, message: 'sync loop last active 301s ago' });
    void loop.iteration({ kind: 'housekeeping' });
    expect(loop.healthy()).toEqual({ ok: true });
    const slow = setUp(600_000);
    slow.clock.step(1_200_000);
    expect(slow.loop.healthy().ok).toBe(true);
    slow.clock.step(1);
    expect(slow.loop.healthy().ok).toBe(false);
  });
});
