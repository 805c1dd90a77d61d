import { describe, expect, it } from 'vitest';
import { newPinnedWorkerPool, shardOf } from '../../../src/main/pool/pinned-pool.js';
import type { PodSyncResult } from '../../../src/shared/sync-tasks.js';
import { newFakePodSyncRunner, type FakePodSyncRunner } from '../../fakes/fake-pod-sync-runner.js';
import { syncPodTask } from '../../support/sync-worker.js';

const kSynced: PodSyncResult = {
  podUid: '',
  steps: [],
  events: [],
  runtimePod: null,
  waiting: {},
  backoff: {},
  requeueAfterMs: 0,
} as unknown as PodSyncResult;

/** One pinned thread: a fake runner whose relist reports one container of its own. */
function shard(id: number): FakePodSyncRunner {
  return newFakePodSyncRunner(
    {
      relist: { containers: [{ id: `c${id}`, podUid: `p${id}`, name: 'main', state: 'running' }], observedAtMs: 100 + id },
      syncPod: kSynced,
      killPod: kSynced,
    },
    { threads: 1 },
  );
}

/** `thread:kind:podUid` of every task each shard received. */
function seenBy(shards: FakePodSyncRunner[]): string[] {
  return shards.flatMap((s, id) =>
    s.calls.map(
      (task) => `${id}:${task.kind}:${task.kind === 'syncPod' ? task.pod.metadata?.uid : ((task as { podUid?: string }).podUid ?? '')}`,
    ),
  );
}

describe('pinned worker pool (fake runtime: one in-memory state per thread)', () => {
  it('sends every task of a pod to the same thread and relists every thread', async () => {
    const shards = [shard(0), shard(1), shard(2)];
    const pool = newPinnedWorkerPool({} as never, {}, shards);
    const uids = Array.from({ length: 30 }, (_, i) => `uid-${i}`);
    for (const uid of uids) {
      await pool.run(syncPodTask({ metadata: { uid } }));
      await pool.run({ kind: 'killPod', protocol: 1, podUid: uid, gracePeriodSeconds: 0, remove: true });
    }
    const seen = seenBy(shards);
    for (const uid of uids) {
      const threads = new Set(seen.filter((s) => s.endsWith(`:${uid}`)).map((s) => s.split(':')[0]));
      expect(threads).toEqual(new Set([String(shardOf(uid, 3))]));
    }
    expect(new Set(uids.map((u) => shardOf(u, 3))).size).toBe(3); // spreads over the threads
    const relist = await pool.run({ kind: 'relist', protocol: 1 });
    expect(relist.containers.map((c) => c.id).sort()).toEqual(['c0', 'c1', 'c2']);
    expect(relist.observedAtMs).toBe(100);
    expect(pool.stats().threads).toBe(3);
  });
});
