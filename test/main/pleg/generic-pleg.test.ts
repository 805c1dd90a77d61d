import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { diffRelist, newGenericPleg, type PodLifecycleEvent } from '../../../src/main/pleg/generic-pleg.js';
import type { RelistContainer } from '../../../src/shared/sync-tasks.js';
import type { RuntimeContainer } from '../../../src/shared/runtime-pod.js';
import { newFakePodSyncRunner, type FakePodSyncRunner } from '../../fakes/fake-pod-sync-runner.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';

const c = (id: string, podUid: string, state: RelistContainer['state']): RelistContainer => ({ id, podUid, name: 'x', state });
const m = (...cs: RelistContainer[]) => new Map(cs.map((x) => [x.id, x]));

describe('diffRelist', () => {
  it('reports started, died, removed and nothing for unchanged containers', () => {
    const before = m(c('1', 'p1', 'running'), c('2', 'p1', 'running'), c('3', 'p2', 'exited'));
    const after = m(c('1', 'p1', 'running'), c('2', 'p1', 'exited'), c('4', 'p3', 'running'), c('5', 'p3', 'created'));
    expect(diffRelist(before, after)).toEqual([
      { uid: 'p1', type: 'ContainerDied', containerId: '2' },
      { uid: 'p3', type: 'ContainerStarted', containerId: '4' },
      { uid: 'p3', type: 'ContainerChanged', containerId: '5' },
      { uid: 'p2', type: 'ContainerRemoved', containerId: '3' },
    ]);
  });
});

describe('generic PLEG', () => {
  /** A runner whose n-th relist answers lists[n] (the last one from then on); a missing list is Docker down. */
  function runner(lists: RelistContainer[][]): FakePodSyncRunner {
    return newFakePodSyncRunner({
      relist: (_task, n) => {
        const list = lists[Math.min(n, lists.length - 1)];
        if (!list) return new Error('docker down');
        return { containers: list, observedAtMs: Date.now() };
      },
    });
  }

  it('groups events by pod and reports every pod with containers', async () => {
    const seen: string[][] = [];
    const uids: string[][] = [];
    const pleg = newGenericPleg(
      {},
      {
        runner: runner([[c('1', 'p1', 'running')], [c('1', 'p1', 'exited'), c('2', 'p2', 'running')]]),
        logger: pino({ level: 'silent' }),
        onEvents: (byPod) => seen.push([...byPod.keys()].sort()),
        onRelist: (u) => uids.push([...u].sort()),
      },
    );
    await pleg.relist();
    await pleg.relist();
    expect(seen).toEqual([['p1'], ['p1', 'p2']]);
    expect(uids).toEqual([['p1'], ['p1', 'p2']]);
    expect(pleg.healthy().ok).toBe(true);
  });

  it('a container seen created makes no event, as the kubelet drops ContainerChanged from its relist; its start does', async () => {
    // A relist that lands between a sync's CreateContainer and its StartContainer: delivered, the
    // ContainerChanged made the pod's next sync read it whole again (on containerd, 4 CRI calls).
    const seen: PodLifecycleEvent[] = [];
    const pleg = newGenericPleg(
      {},
      {
        runner: runner([
          [c('s', 'p1', 'running')],
          [c('s', 'p1', 'running'), c('a', 'p1', 'created')],
          [c('s', 'p1', 'running'), c('a', 'p1', 'running')],
        ]),
        logger: pino({ level: 'silent' }),
        onEvents: (byPod) => seen.push(...[...byPod.values()].flat()),
      },
    );
    await pleg.relist();
    seen.length = 0;
    await pleg.relist();
    expect(seen).toEqual([]);
    expect(pleg.hasContainersOf('p1')).toBe(true);
    await pleg.relist();
    expect(seen).toEqual([{ uid: 'p1', type: 'ContainerStarted', containerId: 'a' }]);
  });

  it('a container a sync read and something removed before the next relist makes a ContainerRemoved (observeRuntimePod)', async () => {
    // Relists: only the sandbox (the container started and was removed between them).
    const r = newFakePodSyncRunner({ relist: () => ({ containers: [c('s', 'p1', 'running')], observedAtMs: 1000 }) });
    const seen: PodLifecycleEvent[] = [];
    const pleg = newGenericPleg(
      {},
      { runner: r, logger: pino({ level: 'silent' }), onEvents: (byPod) => seen.push(...[...byPod.values()].flat()) },
    );
    await pleg.relist();
    seen.length = 0;
    const sandbox = { id: 's', name: 'POD', state: 'running' } as RuntimeContainer;
    const app = { id: 'a', name: 'main', state: 'running' } as RuntimeContainer;
    pleg.observeRuntimePod({
      uid: 'p1',
      name: 'p',
      namespace: 'default',
      sandboxes: [sandbox],
      containers: [app],
      podIp: '',
      terminationGracePeriodSeconds: 30,
    });
    await pleg.relist();
    expect(seen).toEqual([{ uid: 'p1', type: 'ContainerRemoved', containerId: 'a' }]);
    await pleg.relist();
    expect(seen).toHaveLength(1); // reported once
  });

  it('hasContainersOf follows the relists and the events observed between them; lastRelistObservedAtMs the last relist', async () => {
    const r = newFakePodSyncRunner({
      relist: (_task, n) => ({ containers: n === 0 ? [c('1', 'p1', 'running'), c('2', 'p1', 'running')] : [], observedAtMs: 1000 + n }),
    });
    const pleg = newGenericPleg({}, { runner: r, logger: pino({ level: 'silent' }), onEvents: () => {} });
    expect(pleg.lastRelistObservedAtMs()).toBe(0);
    await pleg.relist();
    expect(pleg.lastRelistObservedAtMs()).toBe(1000);
    expect([pleg.hasContainersOf('p1'), pleg.hasContainersOf('p2')]).toEqual([true, false]);
    pleg.observe(c('1', 'p1', 'running'), null);
    expect(pleg.hasContainersOf('p1')).toBe(true);
    pleg.observe(c('2', 'p1', 'running'), null);
    pleg.observe(c('2', 'p1', 'running'), null); // a second destroy of the same container counts once
    expect(pleg.hasContainersOf('p1')).toBe(false);
    pleg.observe(c('3', 'p2', 'created'), 'created');
    pleg.observe(c('3', 'p2', 'created'), 'running');
    expect(pleg.hasContainersOf('p2')).toBe(true);
    await pleg.relist();
    expect([pleg.hasContainersOf('p1'), pleg.hasContainersOf('p2'), pleg.lastRelistObservedAtMs()]).toEqual([false, false, 1001]);
  });

  it("relists every relistPeriodMs on its clock, and is unhealthy once no relist succeeded for healthThresholdMs (the kubelet's PLEG check)", async () => {
    const clock = new FakeClock();
    const r = newFakePodSyncRunner({ relist: () => ({ containers: [], observedAtMs: clock.now() }) });
    const pleg = newGenericPleg(
      { relistPeriodMs: 1_000, healthThresholdMs: 180_000 },
      { runner: r, logger: pino({ level: 'silent' }), onEvents: () => {}, clock },
    );
    pleg.start();
    await clock.advance(10_000);
    expect(r.callsOf('relist')).toHaveLength(11); // at start, then one a second
    r.err = new Error('docker down');
    await clock.advance(180_000);
    expect(pleg.healthy()).toEqual({ ok: true });
    await clock.advance(1_000);
    expect(pleg.healthy()).toEqual({ ok: false, message: 'pleg was last seen active 181s ago; threshold is 180s' });
    r.err = undefined;
    await clock.advance(1_000);
    expect(pleg.healthy().ok).toBe(true);
    await pleg.stop();
    await flush();
    expect(clock.hasWaiters()).toBe(false);
  });

  it('a failed relist keeps the last known containers (no spurious removals)', async () => {
    const seen: string[][] = [];
    const lists = [[c('1', 'p1', 'running')], undefined as unknown as RelistContainer[], [c('1', 'p1', 'running')]];
    const r = newFakePodSyncRunner({ relist: (_task, n) => (lists[n] ? { containers: lists[n], observedAtMs: 0 } : new Error('down')) });
    const pleg = newGenericPleg(
      {},
      { runner: r, logger: pino({ level: 'silent' }), onEvents: (b) => seen.push([...b.keys()]), onRelist: () => {} },
    );
    await pleg.relist();
    await pleg.relist();
    await pleg.relist();
    expect(seen).toEqual([['p1']]);
  });

  it('asks for pod names in the first relist only; old runtime copies shrink as pods claim their names or are removed', async () => {
    const named = (id: string, podUid: string, podName: string): RelistContainer => ({
      ...c(id, podUid, 'running'),
      podNamespace: 'default',
      podName,
    });
    const r = runner([[named('1', 'old', 'web'), named('2', 'old', 'web'), named('3', 'db1', 'db')]]);
    const pleg = newGenericPleg({}, { runner: r, logger: pino({ level: 'silent' }), onEvents: () => {} });
    await pleg.relist();
    await pleg.relist();
    expect(r.callsOf('relist').map((t) => t.withPodNames ?? false)).toEqual([true, false]);
    expect(pleg.runtimePodUids()).toEqual(new Set(['old', 'db1']));
    // A new web pod finds the old copy; db1 claims its own name, which leaves the index.
    expect(pleg.oldRuntimeCopies('default/web', 'new')).toEqual(['old']);
    expect(pleg.oldRuntimeCopies('default/db', 'db1')).toEqual([]);
    expect(pleg.oldRuntimeCopies('default/db', 'other')).toEqual([]);
    // Once its removal is observed, the old copy is found neither by name nor by housekeeping.
    pleg.observePodRemoved('old');
    expect(pleg.oldRuntimeCopies('default/web', 'new')).toEqual([]);
    expect(pleg.runtimePodUids()).toEqual(new Set(['db1']));
  });
});
