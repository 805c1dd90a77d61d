import { describe, expect, it } from 'vitest';
import { newPinnedWorkerPool, shardOf } from '../../../src/main/pool/pinned-pool.js';
import type { PodSyncRunner } from '../../../src/main/pool/worker-pool.js';
import type { WorkerTask } from '../../../src/shared/messages.js';

function shard(id: number, seen: string[]): PodSyncRunner {
  return {
    run: (async (task: WorkerTask) => {
      seen.push(`${id}:${task.kind}:${task.kind === 'syncPod' ? task.pod.metadata?.uid : (task as { podUid?: string }).podUid ?? ''}`);
      if (task.kind === 'relist') return { containers: [{ id: `c${id}`, podUid: `p${id}`, name: 'main', state: 'running' }], observedAtMs: 100 + id };
      return { podUid: '', steps: [], events: [], runtimePod: null, waiting: {}, backoff: {}, requeueAfterMs: 0 };
    }) as PodSyncRunner['run'],
    stats: () => ({ threads: 1, queueSize: 0, completed: 0, utilization: 0 }),
    close: async () => {},
  };
}

describe('pinned worker pool (fake runtime: one in-memory state per thread)', () => {
  it('sends every task of a pod to the same thread and relists every thread', async () => {
    const seen: string[] = [];
    const pool = newPinnedWorkerPool({} as never, {}, [shard(0, seen), shard(1, seen), shard(2, seen)]);
    const uids = Array.from({ length: 30 }, (_, i) => `uid-${i}`);
    for (const uid of uids) {
      await pool.run({ kind: 'syncPod', protocol: 1, pod: { metadata: { uid } }, backoff: {}, hostIp: '', deadlineMs: 0 } as never);
      await pool.run({ kind: 'killPod', protocol: 1, podUid: uid, gracePeriodSeconds: 0, remove: true });
    }
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
