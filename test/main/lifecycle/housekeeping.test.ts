// HandlePodCleanups (src/main/lifecycle/housekeeping.ts): which runtime pods are killed as orphans, and when.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newHousekeeping, type HousekeepingDeps } from '../../../src/main/lifecycle/housekeeping.js';

function setup(over: Partial<HousekeepingDeps> = {}) {
  const kills: string[] = [];
  const housekeeping = newHousekeeping({
    logger: pino({ level: 'silent' }),
    seenAllSources: () => true,
    changesPending: () => false,
    isDesired: (uid) => uid === 'desired',
    desiredPodUids: () => ['desired'],
    mergedPodUids: () => ['desired', 'queued'],
    runtimePodUids: () => new Set(['desired', 'orphan', 'busy', '']),
    podWorkers: {
      busy: (uid) => uid === 'busy',
      update: (uid, w) => {
        kills.push(`${uid} ${w.gracePeriodSeconds} ${w.remove}`);
      },
    },
    ...over,
  });
  return { housekeeping, kills };
}

describe('housekeeping', () => {
  it('kills (grace period from the labels, remove) only runtime pods nobody wants and no pod worker is busy with', () => {
    const { housekeeping, kills } = setup();
    expect(housekeeping.handlePodCleanups()).toEqual(['orphan']);
    expect(kills).toEqual(['orphan -1 true']);
  });

  it.each([
    ['before every source has reported', { seenAllSources: () => false }],
    ['while config changes are queued', { changesPending: () => true }],
  ])('kills nothing %s', (_when, over) => {
    const { housekeeping, kills } = setup(over);
    expect(housekeeping.handlePodCleanups()).toEqual([]);
    expect(kills).toEqual([]);
  });

  it("keeps for GC the pod manager's UIDs, and the merge's too while changes are queued", () => {
    expect(setup().housekeeping.activePodUids()).toEqual(['desired']);
    expect(setup({ changesPending: () => true }).housekeeping.activePodUids()).toEqual(['desired', 'desired', 'queued']);
  });
});
