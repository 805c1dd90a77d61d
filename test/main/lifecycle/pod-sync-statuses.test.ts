// The pod workers' lifecycle table (src/main/lifecycle/pod-sync-statuses.ts, pod_workers.go podSyncStatuses):
// its queries as a table, and the real pod workers (src/main/lifecycle/pod-workers.ts) writing the table the
// agent hands them, which the syncer and the status publisher read without the pod workers.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newPodSyncStatuses, type PodTermination } from '../../../src/main/lifecycle/pod-sync-statuses.js';
import { newPodWorkers, type PodSyncer } from '../../../src/main/lifecycle/pod-workers.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';

describe('pod sync statuses: the queries', () => {
  it.each([
    ['syncing (absent)', undefined, [false, false, false]],
    ['terminating, finished', { state: 'terminating', terminal: true, remove: false }, [true, true, false]],
    ['terminating, left the desired set', { state: 'terminating', terminal: false, remove: true }, [true, false, true]],
    ['terminated, finished', { state: 'terminated', terminal: true, remove: false }, [true, true, false]],
  ] as const)('%s → requested, terminal, remove = %j', (_what, t, want) => {
    const s = newPodSyncStatuses();
    if (t) s.set('u', { ...t } as PodTermination);
    expect([s.isPodTerminationRequested('u'), s.isPodTerminal('u'), s.shouldPodContentBeRemoved('u')]).toEqual(want);
  });
});

describe('pod sync statuses written by the pod workers', () => {
  it('a kill marks the table handed to the pod workers at once; a finished removal drops the pod from it', async () => {
    const statuses = newPodSyncStatuses();
    let finish!: () => void;
    const syncer: PodSyncer = {
      syncPod: async () => ({}),
      syncTerminatingPod: () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
      syncTerminatedPod: () => {},
    };
    const workers = newPodWorkers({}, { logger: pino({ level: 'silent' }), syncer, clock: new FakeClock(), statuses });
    workers.update('p', { type: 'kill', gracePeriodSeconds: 5, remove: true });
    expect([statuses.isPodTerminationRequested('p'), statuses.shouldPodContentBeRemoved('p')]).toEqual([true, true]);
    await flush();
    finish();
    await flush();
    expect(statuses.isPodTerminationRequested('p')).toBe(false);
    workers.setTerminated('q');
    expect(statuses.isPodTerminal('q')).toBe(true);
    await workers.stop();
  });
});
