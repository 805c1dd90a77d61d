/**
 * Counterpart of the kubelet's CRI client (pkg/kubelet/cri/remote): the piscina pools the main
 * thread hands work to — the sync pool (threads run src/workers/sync.worker.ts) and each static
 * source's manifest thread (src/workers/manifest.worker.ts). The events and logs threads are plain
 * Workers started through worker-entry.ts. With pinned-pool.ts, the project's only piscina user.
 */
import { Piscina } from 'piscina';
import { InvalidArgumentError, deserializeError } from '../../shared/errors.js';
import type { LoadStaticPodsTask, WorkerBootstrap, WorkerResult, WorkerResultMap, WorkerTask } from '../../shared/messages.js';
import { piscinaEntry } from './worker-entry.js';

/** The task of kind K. */
export type TaskOf<K extends WorkerTask['kind']> = Extract<WorkerTask, { kind: K }>;

/**
 * PodSyncRunner runs one worker task and resolves with its payload. Rejects with an AgentError
 * (rehydrated from the worker's SerializedError) when the task failed. Called on the main thread;
 * many tasks may be in flight at once. Tests and benches substitute a fake.
 */
export interface PodSyncRunner {
  run<K extends WorkerTask['kind']>(task: TaskOf<K>): Promise<WorkerResultMap[K]>;
  /** Pool figures for /metrics and benches. */
  stats(): { threads: number; queueSize: number; completed: number; utilization: number };
  /** Resolves when the threads have exited; tasks still queued are rejected. */
  close(): Promise<void>;
}

/** Options of `newWorkerPool`. */
export interface WorkerPoolOptions {
  /** Worker threads (--workers). */
  threads?: number;
  /** Tasks one thread runs at once: they are I/O-bound (waiting on dockerd), so several. */
  concurrentTasksPerWorker?: number;
}

/** kDefaultWorkerPoolOptions: 2 threads (--workers), 16 tasks each (they wait on dockerd, not the CPU). */
export const kDefaultWorkerPoolOptions: Required<WorkerPoolOptions> = { threads: 2, concurrentTasksPerWorker: 16 };

/**
 * newWorkerPool starts the piscina pool of sync workers. Each thread picks its own runtime from
 * `bootstrap` (workerData: Docker, or the fake) through getRuntime.
 * @throws InvalidArgumentError for a thread count or per-thread concurrency below 1.
 */
export function newWorkerPool(bootstrap: WorkerBootstrap, options: WorkerPoolOptions = {}): PodSyncRunner {
  const opts = { ...kDefaultWorkerPoolOptions, ...options };
  if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new InvalidArgumentError(`--workers must be an integer >= 1, got ${opts.threads}`);
  if (!Number.isInteger(opts.concurrentTasksPerWorker) || opts.concurrentTasksPerWorker < 1) {
    throw new InvalidArgumentError(`options.concurrentTasksPerWorker must be an integer >= 1, got ${opts.concurrentTasksPerWorker}`);
  }
  const { filename, execArgv } = piscinaEntry('sync');
  const pool = new Piscina<WorkerTask, WorkerResult>({
    filename,
    execArgv,
    minThreads: opts.threads,
    maxThreads: opts.threads,
    concurrentTasksPerWorker: opts.concurrentTasksPerWorker,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    workerData: bootstrap,
  });
  return {
    async run<K extends WorkerTask['kind']>(task: TaskOf<K>): Promise<WorkerResultMap[K]> {
      const result = (await pool.run(task)) as WorkerResult<K>;
      if (result.ok) return result.value;
      throw deserializeError(result.error);
    },
    stats() {
      return { threads: pool.threads.length, queueSize: pool.queueSize, completed: pool.completed, utilization: pool.utilization };
    },
    async close() {
      await pool.close({ force: true });
    },
  };
}

/**
 * ManifestLoader: a static pod source's own worker thread for decoding manifests (task
 * `loadStaticPods`, src/workers/manifest.worker.ts). The file source and the URL source each
 * start one. Main thread only.
 */
export interface ManifestLoader {
  /**
   * load runs one task and resolves with its WorkerResult: `{ok:true}` with the pods, or
   * `{ok:false}` with the manifest's error as data. Rejects only when the thread could not answer
   * (it died, or the loader is closed): a failure worth retrying, unlike a bad manifest.
   */
  load(task: LoadStaticPodsTask): Promise<WorkerResult<'loadStaticPods'>>;
  /** close stops the thread; a load in flight rejects. Idempotent. */
  close(): Promise<void>;
}

/**
 * newManifestLoader starts one manifest thread (src/workers/manifest.worker.ts) for a static pod
 * source's `loadStaticPods` tasks. Its own thread rather than the agent's pool: a file of 2,000
 * pods takes ~0.5 s to parse, which would hold a sync thread (and, with the fake runtime, every pod
 * pinned to it) that long, and would queue behind every pending sync. The thread needs no
 * bootstrap (workerData) and builds no runtime. It starts at once and stays until close():
 * starting one takes longer than the ~100 ms within which a manifest edit should be seen.
 * @throws AgentError ERR_PROTOCOL when the worker entry file does not exist (see piscinaEntry).
 */
export function newManifestLoader(): ManifestLoader {
  const { filename, execArgv } = piscinaEntry('manifest');
  const pool = new Piscina<LoadStaticPodsTask, WorkerResult<'loadStaticPods'>>({
    filename,
    execArgv,
    minThreads: 1,
    maxThreads: 1,
    concurrentTasksPerWorker: 1,
    idleTimeout: Number.MAX_SAFE_INTEGER,
  });
  let closing: Promise<void> | undefined;
  return {
    load(task) {
      return pool.run(task);
    },
    close() {
      closing ??= pool.close({ force: true });
      return closing;
    },
  };
}
