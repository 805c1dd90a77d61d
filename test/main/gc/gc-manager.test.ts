// Tests of src/main/gc/gc-manager.ts: the periodic GC loop (kubelet StartGarbageCollection).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { newGcManager } from '../../../src/main/gc/gc-manager.js';
import { PROTOCOL_VERSION, type GcResult, type GcTask } from '../../../src/shared/messages.js';

const empty: GcResult = { removedContainers: [], removedSandboxes: [], removedImages: [], errors: [] };
const logger = pino({ level: 'silent' });

describe('GcManager', () => {
  it('sends one gc task with the flag values and the known pod UIDs', async () => {
    const tasks: GcTask[] = [];
    const gc = newGcManager(
      { maximumDeadContainersPerContainer: 2, imageGcHighThresholdPercent: 90, imageGcLowThresholdPercent: 70 },
      { run: async (t) => { tasks.push(t); return empty; }, activePodUids: () => ['a', 'b'], logger },
    );
    await gc.runOnce();
    expect(tasks).toEqual([{
      kind: 'gc', protocol: PROTOCOL_VERSION, maximumDeadContainersPerContainer: 2, activePodUids: ['a', 'b'],
      imageGc: { highThresholdPercent: 90, lowThresholdPercent: 70 },
    }]);
  });

  it('joins a run in progress instead of starting a second one', async () => {
    let calls = 0;
    let release!: () => void;
    const gc = newGcManager(
      { maximumDeadContainersPerContainer: 1, imageGcHighThresholdPercent: 85, imageGcLowThresholdPercent: 80 },
      { run: () => { calls++; return new Promise<GcResult>((r) => { release = () => r(empty); }); }, activePodUids: () => [], logger },
    );
    const a = gc.runOnce();
    const b = gc.runOnce();
    release();
    await Promise.all([a, b]);
    expect(calls).toBe(1);
  });

  it('runs on its timer and stops', async () => {
    let calls = 0;
    const gc = newGcManager(
      { periodMs: 10, maximumDeadContainersPerContainer: 1, imageGcHighThresholdPercent: 85, imageGcLowThresholdPercent: 80 },
      { run: async () => { calls++; return empty; }, activePodUids: () => [], logger },
    );
    gc.start();
    await new Promise((r) => setTimeout(r, 200));
    await gc.stop();
    const n = calls;
    expect(n).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(n);
  });

  it('rejects a bad period', () => {
    expect(() => newGcManager({ periodMs: 0, maximumDeadContainersPerContainer: 1, imageGcHighThresholdPercent: 85, imageGcLowThresholdPercent: 80 }, { run: async () => empty, activePodUids: () => [], logger })).toThrow(/periodMs/);
  });
});
