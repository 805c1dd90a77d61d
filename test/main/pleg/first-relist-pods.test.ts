// Issue 38 finding 10 (restart): the PLEG's first relist reads every pod in full and hands the
// pods to the pod cache (seed), so a restored pod's first status shows its running containers;
// the seed never makes the entry current (the first sync still reads Docker) nor overrides a read.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newGenericPleg } from '../../../src/main/pleg/generic-pleg.js';
import { newPodCache } from '../../../src/main/pleg/pod-cache.js';
import { newPinnedWorkerPool } from '../../../src/main/pool/pinned-pool.js';
import type { RuntimePod } from '../../../src/shared/runtime-pod.js';
import { newFakePodSyncRunner } from '../../fakes/fake-pod-sync-runner.js';

const runtimePod = (uid: string, state: 'running' | 'exited' = 'running'): RuntimePod => ({
  uid,
  name: 'web',
  namespace: 'default',
  podIp: '',
  terminationGracePeriodSeconds: 30,
  sandboxes: [],
  containers: [{ id: `${uid}-c`, name: 'main', state } as RuntimePod['containers'][number]],
});

describe('the first relist fills the pod cache', () => {
  it('asks for full pods in the first relist only and hands them over once, before the events', async () => {
    const order: string[] = [];
    const seeded: RuntimePod[][] = [];
    const r = newFakePodSyncRunner({
      relist: (task) => ({
        containers: [{ id: 'p1-c', podUid: 'p1', name: 'main', state: 'running' }],
        observedAtMs: Date.now(),
        ...(task.withRuntimePods ? { runtimePods: [runtimePod('p1')] } : {}),
      }),
    });
    const pleg = newGenericPleg(
      {},
      {
        runner: r,
        logger: pino({ level: 'silent' }),
        onEvents: () => order.push('events'),
        onRuntimePods: (pods) => {
          order.push('pods');
          seeded.push(pods);
        },
      },
    );
    await pleg.relist();
    await pleg.relist();
    expect(r.callsOf('relist').map((t) => t.withRuntimePods ?? false)).toEqual([true, false]);
    expect(seeded).toEqual([[runtimePod('p1')]]);
    expect(order).toEqual(['pods', 'events']);
  });

  it('seed: readable at once, never current, and never over an entry the syncs wrote', () => {
    const cache = newPodCache();
    cache.seed('p1', runtimePod('p1'));
    expect(cache.get('p1')).toEqual(runtimePod('p1'));
    expect(cache.snapshot('p1').current).toBe(false);
    cache.set('p2', runtimePod('p2', 'exited'), cache.snapshot('p2').generation);
    cache.seed('p2', runtimePod('p2'));
    expect(cache.get('p2')!.containers[0].state).toBe('exited');
  });
});

describe("the pinned pool (fake runtime) merges the first relist's full pods of every thread", () => {
  it("concatenates each thread's runtimePods when asked, and adds none otherwise", async () => {
    const shards = [0, 1].map((id) =>
      newFakePodSyncRunner(
        {
          relist: (task) => ({ containers: [], observedAtMs: 1, ...(task.withRuntimePods ? { runtimePods: [runtimePod(`p${id}`)] } : {}) }),
        },
        { threads: 1 },
      ),
    );
    const pool = newPinnedWorkerPool({} as never, {}, shards);
    expect((await pool.run({ kind: 'relist', protocol: 1, withRuntimePods: true })).runtimePods?.map((p) => p.uid)).toEqual(['p0', 'p1']);
    expect((await pool.run({ kind: 'relist', protocol: 1 })).runtimePods).toBeUndefined();
  });
});
