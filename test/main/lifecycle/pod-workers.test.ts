import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { FakeClock, flush } from '../../fakes/fake-clock.js';
import { newPodWorkers, type PodSyncer, type PodWork, type SyncPodOutcome } from '../../../src/main/lifecycle/pod-workers.js';

const logger = pino({ level: 'silent' });

/**
 * A controllable pod syncer: each syncPod / syncTerminatingPod call is recorded as the work it
 * carries out and waits until the test releases it (with an error, or, for a sync, an outcome).
 */
function gate() {
  const calls: { uid: string; work: PodWork; release: (err?: Error, outcome?: SyncPodOutcome) => void }[] = [];
  const terminated: string[] = [];
  const wait = <T>(uid: string, work: PodWork, value: (o?: SyncPodOutcome) => T) =>
    new Promise<T>((resolve, reject) => {
      calls.push({ uid, work, release: (err, outcome) => (err ? reject(err) : resolve(value(outcome))) });
    });
  const syncer: PodSyncer = {
    syncPod: (uid) => wait(uid, { type: 'sync' }, (o) => o ?? {}),
    syncTerminatingPod: (uid, gracePeriodSeconds, remove) => wait(uid, { type: 'kill', gracePeriodSeconds, remove }, () => undefined),
    syncTerminatedPod: (uid) => {
      terminated.push(uid);
    },
  };
  return { calls, syncer, terminated };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('pod workers', () => {
  it('runs one piece of work per pod at a time and coalesces waiting updates (latest wins)', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, syncer: g.syncer });
    workers.update('p1', { type: 'sync' });
    workers.update('p1', { type: 'sync' });
    workers.update('p1', { type: 'sync' });
    await tick();
    expect(g.calls).toHaveLength(1);
    g.calls[0].release();
    await tick();
    expect(g.calls).toHaveLength(2); // the three updates became one in flight + one coalesced
    g.calls[1].release();
    await tick();
    expect(g.calls).toHaveLength(2);
    expect(workers.busy('p1')).toBe(false);
  });

  it('a kill waiting is never replaced by a sync', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, syncer: g.syncer });
    workers.update('p1', { type: 'sync' });
    await tick();
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 30, remove: true });
    workers.update('p1', { type: 'sync' });
    g.calls[0].release();
    await tick();
    expect(g.calls[1].work).toEqual({ type: 'kill', gracePeriodSeconds: 30, remove: true });
  });

  it('two kills merge to the shorter grace period', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, syncer: g.syncer });
    workers.update('p1', { type: 'sync' });
    await tick();
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 30, remove: false });
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 5, remove: true });
    g.calls[0].release();
    await tick();
    expect(g.calls[1].work).toEqual({ type: 'kill', gracePeriodSeconds: 5, remove: true });
  });

  it('different pods run in parallel up to maxInFlight, the rest in arrival order', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 2 }, { logger, syncer: g.syncer });
    for (const uid of ['a', 'b', 'c', 'd']) workers.update(uid, { type: 'sync' });
    await tick();
    expect(g.calls.map((c) => c.uid)).toEqual(['a', 'b']);
    g.calls[1].release();
    await tick();
    expect(g.calls.map((c) => c.uid)).toEqual(['a', 'b', 'c']);
    expect(workers.stats().inFlight).toBe(2);
  });

  it('kills run on their own budget: a kill does not wait for the syncs slots, nor a sync for the kills (issue #43: 40 static pods removed at once)', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 2, maxKillsInFlight: 2 }, { logger, syncer: g.syncer });
    for (const uid of ['a', 'b']) workers.update(uid, { type: 'sync' });
    for (const uid of ['k1', 'k2', 'k3']) workers.update(uid, { type: 'kill', gracePeriodSeconds: 10, remove: true });
    workers.update('c', { type: 'sync' });
    await tick();
    // Two syncs and two kills in flight; k3 waits for a kill slot and c for a sync slot.
    expect(g.calls.map((c) => c.uid)).toEqual(['a', 'b', 'k1', 'k2']);
    expect(workers.stats().inFlight).toBe(4);
    g.calls[2].release(); // k1 done: k3 takes its slot, not c
    await tick();
    expect(g.calls.map((c) => c.uid)).toEqual(['a', 'b', 'k1', 'k2', 'k3']);
    g.calls[0].release(); // a done: c takes its slot
    await tick();
    expect(g.calls.map((c) => c.uid)).toEqual(['a', 'b', 'k1', 'k2', 'k3', 'c']);
  });

  it('a waiting sync that becomes a kill moves to the kill budget', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 1, maxKillsInFlight: 1 }, { logger, syncer: g.syncer });
    workers.update('a', { type: 'sync' });
    workers.update('b', { type: 'sync' });
    workers.update('b', { type: 'kill', gracePeriodSeconds: 1, remove: false });
    await tick();
    expect(g.calls.map((c) => `${c.uid}:${c.work.type}`)).toEqual(['a:sync', 'b:kill']);
    g.calls[0].release();
    g.calls[1].release();
    await tick();
    expect(g.calls).toHaveLength(2);
    expect(workers.busy('b')).toBe(false);
  });

  it("a pod's sync asked while its sync ran goes on at once on that slot, before the pods waiting (as podWorkerLoop: the exit a start sync missed)", async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 1 }, { logger, syncer: g.syncer });
    workers.update('never', { type: 'sync' }); // its start sync
    for (const uid of ['b', 'c', 'd']) workers.update(uid, { type: 'sync' });
    await tick();
    expect(g.calls.map((c) => c.uid)).toEqual(['never']);
    workers.update('never', { type: 'sync' }); // the PLEG's ContainerDied while the start sync runs
    g.calls[0].release();
    await tick();
    expect(g.calls.map((c) => c.uid)).toEqual(['never', 'never']);
    g.calls[1].release();
    await tick();
    expect(g.calls.map((c) => c.uid)).toEqual(['never', 'never', 'b']);
  });

  it('a failed sync is retried after the error backoff (jittered to 0.5–1.5 times it), not before', async () => {
    const g = gate();
    const clock = new FakeClock();
    const workers = newPodWorkers({ maxInFlight: 2, errorBackoffMs: 10_000 }, { logger, syncer: g.syncer, clock });
    workers.update('p1', { type: 'sync' });
    await tick();
    g.calls[0].release(new Error('docker down'));
    await flush();
    expect(workers.stats().timers).toBe(1);
    clock.step(4_999);
    await flush();
    expect(g.calls).toHaveLength(1);
    clock.step(10_001);
    await flush();
    expect(g.calls).toHaveLength(2);
    expect(g.calls[1].work.type).toBe('sync');
  });

  it('forget drops a waiting timer', async () => {
    const g = gate();
    const clock = new FakeClock();
    const workers = newPodWorkers({ maxInFlight: 2 }, { logger, syncer: g.syncer, clock });
    workers.requeue('p1', 5);
    expect(clock.hasWaiters()).toBe(true);
    workers.forget('p1');
    expect(clock.hasWaiters()).toBe(false);
    clock.step(20);
    await flush();
    expect(g.calls).toHaveLength(0);
  });

  it('a requeue beyond 2^31-1 ms (activeDeadlineSeconds) waits its whole delay', async () => {
    const g = gate();
    const clock = new FakeClock();
    const workers = newPodWorkers({ maxInFlight: 2 }, { logger, syncer: g.syncer, clock });
    const long = 2 ** 31 + 5_000;
    workers.requeue('p1', long);
    clock.step(long - 1);
    await flush();
    expect(g.calls).toHaveLength(0);
    clock.step(1);
    await flush();
    expect(g.calls.map((c) => c.uid)).toEqual(['p1']);
  });

  it('stop clears the waiting timers', async () => {
    const g = gate();
    const clock = new FakeClock();
    const workers = newPodWorkers({ maxInFlight: 2 }, { logger, syncer: g.syncer, clock });
    workers.requeue('p1', 5);
    await workers.stop();
    expect(clock.hasWaiters()).toBe(false);
  });

  it('a kill marks the pod terminating at once; later syncs are dropped; after a kill with remove it is forgotten and syncTerminatedPod runs', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, syncer: g.syncer });
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 30, remove: false });
    expect(workers.isPodTerminationRequested('p1')).toBe(true);
    expect(workers.stats()).toMatchObject({ terminating: 1, terminated: 0 });
    expect(workers.isPodTerminal('p1')).toBe(true);
    expect(workers.shouldPodContentBeRemoved('p1')).toBe(false);
    await tick();
    g.calls[0].release();
    await tick();
    expect(workers.stats()).toMatchObject({ terminating: 0, terminated: 1 });
    workers.update('p1', { type: 'sync' });
    await tick();
    expect(g.calls).toHaveLength(1); // the sync of a terminated pod was dropped
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 5, remove: true });
    expect(workers.shouldPodContentBeRemoved('p1')).toBe(true);
    expect(workers.isPodTerminal('p1')).toBe(true); // it finished before it was removed
    await tick();
    expect(g.calls[1].work).toEqual({ type: 'kill', gracePeriodSeconds: 5, remove: true });
    g.calls[1].release();
    await tick();
    expect(g.terminated).toEqual(['p1']);
    expect(workers.isPodTerminationRequested('p1')).toBe(false);
    expect(workers.busy('p1')).toBe(false);
  });

  it('a terminal sync outcome becomes a kill without remove; a requeue outcome syncs again later', async () => {
    const g = gate();
    const clock = new FakeClock();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, syncer: g.syncer, clock });
    workers.update('done', { type: 'sync' });
    workers.update('backoff', { type: 'sync' });
    await tick();
    g.calls[0].release(undefined, { terminal: { gracePeriodSeconds: 7 } });
    g.calls[1].release(undefined, { requeueAfterMs: 5 });
    await tick();
    expect(g.calls[2]).toMatchObject({ uid: 'done', work: { type: 'kill', gracePeriodSeconds: 7, remove: false } });
    expect(workers.isPodTerminal('done')).toBe(true);
    clock.step(4);
    await flush();
    expect(g.calls).toHaveLength(3);
    clock.step(1);
    await flush();
    expect(g.calls[3]).toMatchObject({ uid: 'backoff', work: { type: 'sync' } });
  });

  it('setTerminated (a pod admission rejected) drops its syncs without running anything', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, syncer: g.syncer });
    workers.setTerminated('rejected');
    workers.update('rejected', { type: 'sync' });
    await tick();
    expect(g.calls).toHaveLength(0);
    expect(workers.isPodTerminal('rejected')).toBe(true);
  });

  it('stop waits for work in flight and refuses new work', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 2 }, { logger, syncer: g.syncer });
    workers.update('p1', { type: 'sync' });
    await tick();
    let stopped = false;
    const done = workers.stop().then(() => (stopped = true));
    await tick();
    expect(stopped).toBe(false);
    workers.update('p2', { type: 'sync' });
    g.calls[0].release();
    await done;
    expect(g.calls.map((c) => c.uid)).toEqual(['p1']);
  });
});

describe('pod workers: a kill with a shorter grace period while a kill runs (issue #11 finding 6)', () => {
  it('stops the containers again at once with the shorter grace period, once per shortening, and retries with it', async () => {
    const g = gate();
    const shortened: { uid: string; gracePeriodSeconds: number }[] = [];
    const syncer: PodSyncer = {
      ...g.syncer,
      shortenTermination: async (uid, gracePeriodSeconds) => {
        shortened.push({ uid, gracePeriodSeconds });
      },
    };
    const clock = new FakeClock();
    const workers = newPodWorkers({ maxInFlight: 10, errorBackoffMs: 0 }, { logger, syncer, clock });
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 300, remove: true });
    await tick();
    expect(g.calls).toHaveLength(1);
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 0, remove: true });
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 0, remove: true }); // the same DELETE again
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 10, remove: true }); // longer: no effect
    await tick();
    expect(shortened).toEqual([{ uid: 'p1', gracePeriodSeconds: 0 }]);
    // The kill in flight fails: it is retried with the grace period as shortened, not the 300 s.
    g.calls[0].release(new Error('docker hiccup'));
    await flush();
    clock.step(0);
    await flush();
    expect(g.calls[1]?.work).toEqual({ type: 'kill', gracePeriodSeconds: 0, remove: true });
  });

  it('takes any explicit grace period over "the one on the labels" (-1) when kills merge', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, syncer: g.syncer });
    workers.update('p1', { type: 'sync' });
    await tick();
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 0, remove: true });
    workers.update('p1', { type: 'kill', gracePeriodSeconds: -1, remove: true });
    g.calls[0].release();
    await tick();
    expect(g.calls[1].work).toEqual({ type: 'kill', gracePeriodSeconds: 0, remove: true });
  });
});
