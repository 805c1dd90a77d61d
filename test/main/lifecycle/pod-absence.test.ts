// PodAbsence (src/main/lifecycle/pod-absence.ts): when the main thread may tell a sync that a pod has no
// container (SyncPodTask.knownAbsent) — only from a relist that asked after the pod's last task.
import { describe, expect, it } from 'vitest';
import { PodAbsence } from '../../../src/main/lifecycle/pod-absence.js';
import { FakeClock } from '../../fakes/fake-clock.js';

function setUp() {
  const view = { observedAtMs: 0, pods: new Set<string>() };
  const clock = new FakeClock();
  const absence = new PodAbsence({ lastRelistObservedAtMs: () => view.observedAtMs, hasContainersOf: (uid) => view.pods.has(uid) }, clock);
  /** A relist that asks the runtime after everything so far (a clock tick later: the same millisecond counts as not after). */
  const relist = async (pods: string[] = [], afterMs = 1) => {
    clock.step(afterMs);
    view.observedAtMs = clock.now();
    view.pods = new Set(pods);
  };
  return { view, absence, relist };
}

describe('PodAbsence', () => {
  it('knows nothing before the first relist', () => {
    const { absence } = setUp();
    expect(absence.isKnownAbsent('a')).toBe(false);
  });

  it('a pod the last relist did not show, with no task of it, is absent; one it showed is not', async () => {
    const { absence, relist } = setUp();
    await relist(['b']);
    expect(absence.isKnownAbsent('a')).toBe(true);
    expect(absence.isKnownAbsent('b')).toBe(false);
  });

  it('not while a task of the pod runs, nor after it until a relist that asked later', async () => {
    const { absence, relist, view } = setUp();
    await relist();
    let finish!: () => void;
    const task = absence.run('a', () => new Promise<void>((r) => (finish = r)));
    expect(absence.isKnownAbsent('a')).toBe(false);
    finish();
    await task;
    // The last relist asked before the task ended: the task may have made containers.
    view.observedAtMs = 1;
    expect(absence.isKnownAbsent('a')).toBe(false);
    await relist();
    expect(absence.isKnownAbsent('a')).toBe(true);
  });

  it("a relist in the same millisecond as the task's end does not count as after it (the task's end is on the clock)", async () => {
    const { absence, relist } = setUp();
    await absence.run('a', async () => undefined);
    await relist([], 0);
    expect(absence.isKnownAbsent('a')).toBe(false);
    await relist([], 1);
    expect(absence.isKnownAbsent('a')).toBe(true);
  });

  it('a failed task counts as run', async () => {
    const { absence, view } = setUp();
    view.observedAtMs = 1;
    await expect(absence.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(absence.isKnownAbsent('a')).toBe(false);
  });

  it('forgets the tasks a later relist covers, and still answers right for them', async () => {
    const { absence, relist, view } = setUp();
    view.observedAtMs = 1;
    for (let i = 0; i < 300; i++) await absence.run(`p${i}`, async () => undefined);
    expect(absence.isKnownAbsent('p0')).toBe(false);
    await relist(['p1']);
    await absence.run('q', async () => undefined); // prunes p0…p299 (ended before the relist asked)
    expect(absence.isKnownAbsent('p0')).toBe(true);
    expect(absence.isKnownAbsent('p1')).toBe(false);
    expect(absence.isKnownAbsent('q')).toBe(false);
  });

  it('a burst the last relist does not cover is pruned only each time the table has doubled, not at every task end past 256 (issue #42)', async () => {
    const clock = new FakeClock();
    let prunes = 0; // each prune reads the relist time once; nothing else in run() does
    const absence = new PodAbsence({ lastRelistObservedAtMs: () => (prunes++, 1), hasContainersOf: () => false }, clock);
    clock.step(10); // every task ends after the relist asked: a prune drops none of them
    for (let i = 0; i < 4000; i++) await absence.run(`p${i}`, async () => undefined);
    expect(prunes).toBe(4); // above 256, 512, 1024 and 2048 entries
    expect(absence.isKnownAbsent('p0')).toBe(false);
    expect(absence.isKnownAbsent('p3999')).toBe(false);
  });

  it('isSettled: no task of the pod in flight and the last one did not fail, relist or not (KillPodTask.cachedRuntimePod)', async () => {
    const { absence, relist } = setUp();
    expect(absence.isSettled('a')).toBe(true);
    let finish!: () => void;
    const task = absence.run('a', () => new Promise<void>((r) => (finish = r)));
    expect(absence.isSettled('a')).toBe(false);
    finish();
    await task;
    expect(absence.isSettled('a')).toBe(true);
    await expect(absence.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(absence.isSettled('a')).toBe(false);
    // A later relist does not settle it (its events of a pod being terminated are not applied to the pod
    // cache), nor does the pruning of the tasks it covers; the next task that succeeds does.
    await relist();
    for (let i = 0; i < 300; i++) await absence.run(`p${i}`, async () => undefined);
    await relist();
    await absence.run('q', async () => undefined);
    expect(absence.isSettled('a')).toBe(false);
    await absence.run('a', async () => undefined);
    expect(absence.isSettled('a')).toBe(true);
  });
});
