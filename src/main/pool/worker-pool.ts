/**
 * Counterpart of the kubelet's CRI client (pkg/kubelet/cri/remote): the piscina pools the main
 * thread hands work to — the sync pool (threads run src/workers/sync.worker.ts) and each static
 * source's manifest thread and the API's body decoder threads (src/workers/manifest.worker.ts). The events and logs threads are plain
 * Workers started through worker-entry.ts. With pinned-pool.ts, the project's only piscina user.
 */
import { Piscina } from 'piscina';
import { AgentError, InvalidArgumentError, deserializeError } from '../../shared/errors.js';
import type { WorkerBootstrap, WorkerResult, WorkerResultMap } from '../../shared/thread-wire.js';
import type { WorkerTask } from '../../shared/sync-tasks.js';
import type { DecodePodsBodyTask, DecodeProtobufBodyTask, LoadStaticPodsTask } from '../../shared/manifest-tasks.js';
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
  /** Tasks one thread runs at once: they are I/O-bound (waiting on the runtime), so several. */
  concurrentTasksPerWorker?: number;
}

/** kDefaultWorkerPoolOptions: 2 threads (--workers), 16 tasks each (they wait on the runtime, not the CPU). */
export const kDefaultWorkerPoolOptions: Required<WorkerPoolOptions> = { threads: 2, concurrentTasksPerWorker: 16 };

/**
 * newWorkerPool starts the piscina pool of sync workers. Each thread picks its own runtime from
 * `bootstrap` (workerData: its RuntimeEndpoint) through getRuntime.
 * @throws InvalidArgumentError for a thread count or per-thread concurrency below 1.
 */
export function newWorkerPool(bootstrap: WorkerBootstrap, options: WorkerPoolOptions = {}): PodSyncRunner {
  const opts = { ...kDefaultWorkerPoolOptions, ...options };
  if (!Number.isInteger(opts.threads) || opts.threads < 1)
    throw new InvalidArgumentError(`--workers must be an integer >= 1, got ${opts.threads}`);
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

/** Options of {@link newBodyDecoderPool}. */
export interface BodyDecoderPoolOptions {
  /** Decoder threads (default 1: bodies are small; a second core stays for the rest of the agent). */
  threads?: number;
  /** Bodies waiting for a thread beyond the ones being decoded (default 32); more → `run` rejects (ERR_UNAVAILABLE, status reason TooManyRequests). */
  maxQueue?: number;
  /** Each thread's V8 old generation, MiB (`--body-decoder-max-heap-mb`, default 256). */
  maxHeapMb?: number;
  /** Each thread's stack, MiB (default 4, as Node's). */
  stackSizeMb?: number;
}

/** kDefaultBodyDecoderPoolOptions: the defaults of {@link BodyDecoderPoolOptions}. */
export const kDefaultBodyDecoderPoolOptions: Readonly<Required<BodyDecoderPoolOptions>> = Object.freeze({
  threads: 1,
  maxQueue: 32,
  maxHeapMb: 256,
  stackSizeMb: 4,
});

/** BodyDecoderPool: the threads that decode API request bodies (tasks `decodePodsBody` and `decodeProtobufBody`). Main thread only. */
export interface BodyDecoderPool {
  /**
   * run decodes one body; aborting `signal` ends the thread that runs it (a new one replaces it).
   * Rejects when the thread could not answer: AgentError `ERR_UNAVAILABLE` with statusReason
   * `TooManyRequests` (every thread busy and the queue full, nothing started), or the thread's own end — Node's `ERR_WORKER_OUT_OF_MEMORY`
   * when it passed its heap limit, an `AbortError` when `signal` fired, or another error when it
   * died. Piscina starts a new thread in place of one that ended.
   */
  run<T extends DecodePodsBodyTask | DecodeProtobufBodyTask>(task: T, signal?: AbortSignal): Promise<WorkerResult<T['kind']>>;
  /** close stops the threads; runs in flight reject. Idempotent. */
  close(): Promise<void>;
}

/**
 * newBodyDecoderPool starts the API's body decoder threads (src/workers/manifest.worker.ts, task
 * `decodePodsBody`), each with V8 resourceLimits (old generation `maxHeapMb`, young generation a
 * sixteenth of it, stack `stackSizeMb`): a body that exhausts a thread's memory or stack ends
 * that thread only, never the agent (issue 11, finding 1). One body per thread at a time (the
 * work is CPU-bound) and a bounded queue, so that a flood of bodies cannot grow memory without
 * limit: the apiserver's max-in-flight filter likewise refuses what is past its limit at once
 * rather than queueing it (k8s.io/apiserver/pkg/server/filters/maxinflight.go).
 * @throws InvalidArgumentError for a thread count, queue length or limit out of range.
 * @throws AgentError ERR_PROTOCOL when the worker entry file does not exist (see piscinaEntry).
 */
export function newBodyDecoderPool(options: BodyDecoderPoolOptions = {}): BodyDecoderPool {
  const opts = { ...kDefaultBodyDecoderPoolOptions, ...options };
  for (const [key, min] of [
    ['threads', 1],
    ['maxQueue', 0],
    ['maxHeapMb', 8],
    ['stackSizeMb', 1],
  ] as const) {
    if (!Number.isInteger(opts[key]) || opts[key] < min)
      throw new InvalidArgumentError(`options.${key} must be an integer >= ${min}, got ${opts[key]}`);
  }
  const { filename, execArgv } = piscinaEntry('manifest');
  const pool = new Piscina<DecodePodsBodyTask | DecodeProtobufBodyTask, WorkerResult<'decodePodsBody' | 'decodeProtobufBody'>>({
    filename,
    execArgv,
    minThreads: opts.threads,
    maxThreads: opts.threads,
    concurrentTasksPerWorker: 1,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    resourceLimits: {
      maxOldGenerationSizeMb: opts.maxHeapMb,
      maxYoungGenerationSizeMb: Math.max(4, Math.round(opts.maxHeapMb / 16)),
      stackSizeMb: opts.stackSizeMb,
    },
  });
  let closing: Promise<void> | undefined;
  // Bodies running or waiting: a semaphore as the apiserver's max-in-flight filter keeps (piscina's
  // own maxQueue does not hold while its threads start).
  let inFlight = 0;
  return {
    async run(task, signal) {
      if (inFlight >= opts.threads + opts.maxQueue) {
        throw new AgentError('ERR_UNAVAILABLE', `all ${opts.threads} body decoder thread(s) are busy and ${opts.maxQueue} bodies wait`, {
          statusReason: 'TooManyRequests',
        });
      }
      inFlight++;
      try {
        return (await pool.run(task, signal ? { signal } : {})) as WorkerResult<(typeof task)['kind']>;
      } finally {
        inFlight--;
      }
    },
    close() {
      closing ??= pool.close({ force: true });
      return closing;
    },
  };
}
