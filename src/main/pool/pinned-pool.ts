/**
 * A PodSyncRunner that pins every pod to one worker thread, for the fake runtime (`--runtime fake`),
 * and newRuntimeWorkerPool, which picks the pool a runtime needs (this one, or worker-pool.ts's).
 * Counterpart of nothing upstream: the kubelet has one runtime process, we have one fake per thread.
 *
 * Why: each piscina thread holds its own in-memory fake runtime (src/workers/runtime/fake/fake-runtime.ts),
 * so a pod synced on thread A and then on thread B would see none of its containers on B and
 * create them again. Rather than share state between threads (SharedArrayBuffer, or a runtime
 * thread every call would cross), each pod UID is hashed to one of `threads` single-thread pools:
 * a pod's containers live in exactly one fake, every sync and kill of that pod goes there, and a
 * relist asks every thread and concatenates the answers (their pods are disjoint). Tasks without a
 * pod (none today) go to thread 0. Docker and CRI runtimes do not need this (the runtime is the shared state).
 */
import { InvalidArgumentError } from '../../shared/errors.js';
import type { StatsSample } from '../../shared/stats.js';
import type { WorkerBootstrap, WorkerResultMap } from '../../shared/thread-wire.js';
import type { RelistResult, WorkerTask } from '../../shared/sync-tasks.js';
import { newWorkerPool, type PodSyncRunner, type TaskOf, type WorkerPoolOptions } from './worker-pool.js';

/** shardOf maps a pod UID to a thread index in 0..n-1 (FNV-1a; stable across runs). */
export function shardOf(uid: string, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < uid.length; i++) {
    h ^= uid.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % n;
}

/** podUidOf: the pod a task is about, or '' (relist). */
function podUidOf(task: WorkerTask): string {
  if (task.kind === 'syncPod') return task.pod.metadata?.uid ?? '';
  const t = task as { podUid?: unknown };
  return typeof t.podUid === 'string' ? t.podUid : '';
}

/**
 * newPinnedWorkerPool starts `options.threads` single-thread pools (each with
 * `concurrentTasksPerWorker` slots) from the same bootstrap and routes tasks by pod UID.
 * `pools` may be given instead (tests): one runner per shard.
 * @throws InvalidArgumentError for a thread count below 1.
 */
export function newPinnedWorkerPool(bootstrap: WorkerBootstrap, options: WorkerPoolOptions = {}, pools?: PodSyncRunner[]): PodSyncRunner {
  const threads = options.threads ?? 2;
  if (!pools && (!Number.isInteger(threads) || threads < 1))
    throw new InvalidArgumentError(`--workers must be an integer >= 1, got ${threads}`);
  const shards = pools ?? Array.from({ length: threads }, () => newWorkerPool(bootstrap, { ...options, threads: 1 }));
  return {
    async run<K extends WorkerTask['kind']>(task: TaskOf<K>): Promise<WorkerResultMap[K]> {
      if (task.kind === 'relist') {
        const parts = (await Promise.all(shards.map((s) => s.run(task as TaskOf<'relist'>)))) as RelistResult[];
        const merged: RelistResult = {
          containers: parts.flatMap((p) => p.containers),
          observedAtMs: Math.min(...parts.map((p) => p.observedAtMs)),
        };
        if ((task as TaskOf<'relist'>).withRuntimePods) merged.runtimePods = parts.flatMap((p) => p.runtimePods ?? []);
        return merged as WorkerResultMap[K];
      }
      if (task.kind === 'stats' && shards.length > 1) {
        // Every thread holds its own fake pods: each samples its own; the node's figures are the first's.
        const parts = (await Promise.all(shards.map((s) => s.run(task as TaskOf<'stats'>)))) as StatsSample[];
        const merged: StatsSample = { ...parts[0], pods: parts.flatMap((p) => p.pods), errors: parts.flatMap((p) => p.errors) };
        return merged as WorkerResultMap[K];
      }
      const uid = podUidOf(task);
      return shards[uid ? shardOf(uid, shards.length) : 0].run(task);
    },
    stats() {
      const all = shards.map((s) => s.stats());
      return {
        threads: all.reduce((a, s) => a + s.threads, 0),
        queueSize: all.reduce((a, s) => a + s.queueSize, 0),
        completed: all.reduce((a, s) => a + s.completed, 0),
        utilization: all.reduce((a, s) => a + s.utilization, 0) / all.length,
      };
    },
    async close() {
      await Promise.all(shards.map((s) => s.close()));
    },
  };
}

/**
 * newRuntimeWorkerPool starts the pool `bootstrap.runtime` needs: one shared piscina pool for
 * a real runtime (it is the shared state), a pinned pool (newPinnedWorkerPool) for the fake runtime,
 * whose state is per thread. So the agent picks no pool by runtime itself.
 * @throws InvalidArgumentError for a thread count or per-thread concurrency below 1.
 */
export function newRuntimeWorkerPool(bootstrap: WorkerBootstrap, options: WorkerPoolOptions = {}): PodSyncRunner {
  return bootstrap.runtime === 'fake' ? newPinnedWorkerPool(bootstrap, options) : newWorkerPool(bootstrap, options);
}
