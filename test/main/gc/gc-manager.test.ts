// Tests of src/main/gc/gc-manager.ts: the periodic GC loop (kubelet StartGarbageCollection).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { newGcManager } from '../../../src/main/gc/gc-manager.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';
import { PROTOCOL_VERSION } from '../../../src/shared/thread-wire.js';
import type { GcResult, GcTask } from '../../../src/shared/sync-tasks.js';

const empty: GcResult = { removedContainers: [], removedSandboxes: [], removedImages: [], errors: [] };
const logger = pino({ level: 'silent' });

describe('GcManager', () => {
  it('sends one gc task with the flag values and the known pod UIDs', async () => {
    const tasks: GcTask[] = [];
    const gc = newGcManager(
      { maximumDeadContainersPerContainer: 2, imageGcHighThresholdPercent: 90, imageGcLowThresholdPercent: 70 },
      {
        run: async (t) => {
          tasks.push(t);
          return empty;
        },
        activePodUids: () => ['a', 'b'],
        logger,
      },
    );
    await gc.runOnce();
    expect(tasks).toEqual([
      {
        kind: 'gc',
        protocol: PROTOCOL_VERSION,
        maximumDeadContainersPerContainer: 2,
        activePodUids: ['a', 'b'],
        imageGc: { highThresholdPercent: 90, lowThresholdPercent: 70 },
      },
    ]);
  });

  it('joins a run in progress instead of starting a second one', async () => {
    let calls = 0;
    let release!: () => void;
    const gc = newGcManager(
      { maximumDeadContainersPerContainer: 1, imageGcHighThresholdPercent: 85, imageGcLowThresholdPercent: 80 },
      {
        run: () => {
          calls++;
          return new Promise<GcResult>((r) => {
            release = () => r(empty);
          });
        },
        activePodUids: () => [],
        logger,
      },
    );
    const a = gc.runOnce();
    const b = gc.runOnce();
    release();
    await Promise.all([a, b]);
    expect(calls).toBe(1);
  });

  it('runs once a period, first after one period (as StartGarbageCollection), and stops', async () => {
    let calls = 0;
    const clock = new FakeClock();
    const gc = newGcManager(
      { periodMs: 60_000, maximumDeadContainersPerContainer: 1, imageGcHighThresholdPercent: 85, imageGcLowThresholdPercent: 80 },
      {
        run: async () => {
          calls++;
          return empty;
        },
        activePodUids: () => [],
        logger,
        clock,
      },
    );
    gc.start();
    gc.start(); // a second start keeps the one timer
    await clock.advance(59_999);
    expect(calls).toBe(0);
    await clock.advance(1);
    expect(calls).toBe(1);
    await clock.advance(120_000);
    expect(calls).toBe(3);
    await gc.stop();
    expect(clock.hasWaiters()).toBe(false);
    await clock.advance(600_000);
    expect(calls).toBe(3);
  });

  it('a run still going when the timer fires again is joined, not doubled; a failed run is logged and the timer goes on', async () => {
    const clock = new FakeClock();
    let calls = 0;
    let release: (() => void) | undefined;
    const gc = newGcManager(
      { periodMs: 1_000, maximumDeadContainersPerContainer: 1, imageGcHighThresholdPercent: 85, imageGcLowThresholdPercent: 80 },
      {
        run: () => {
          calls++;
          return calls === 1
            ? new Promise<GcResult>((r) => {
                release = () => r(empty);
              })
            : Promise.reject(new Error('docker down'));
        },
        activePodUids: () => [],
        logger,
        clock,
      },
    );
    gc.start();
    await clock.advance(3_000);
    expect(calls).toBe(1);
    release?.();
    await flush();
    await clock.advance(2_000);
    expect(calls).toBe(3);
    await gc.stop();
  });

  it('rejects a bad period', () => {
    expect(() =>
      newGcManager(
        { periodMs: 0, maximumDeadContainersPerContainer: 1, imageGcHighThresholdPercent: 85, imageGcLowThresholdPercent: 80 },
        { run: async () => empty, activePodUids: () => [], logger },
      ),
    ).toThrow(/periodMs/);
  });
});
