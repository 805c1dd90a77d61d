// FakePodSyncRunner: a PodSyncRunner (src/main/pool/worker-pool.ts) without threads or Docker, for
// the main thread's unit tests; the role of the kubelet's fake runtime service behind the CRI
// (STYLE.md C13: records calls, answers per task kind, takes an injected error).
import type { PodSyncRunner, TaskOf } from '../../src/main/pool/worker-pool.js';
import type { WorkerResultMap } from '../../src/shared/thread-wire.js';
import type { WorkerTask } from '../../src/shared/sync-tasks.js';

/**
 * FakeAnswer: how the fake answers tasks of kind K — a fixed payload, an Error to reject with, or
 * a function of the task and of `n` (0 for the first task of that kind, then 1, 2, …) that returns
 * either (or a promise of the payload), or throws.
 */
export type FakeAnswer<K extends WorkerTask['kind']> =
  WorkerResultMap[K] | Error | ((task: TaskOf<K>, n: number) => WorkerResultMap[K] | Error | Promise<WorkerResultMap[K]>);

/** FakeAnswers: an answer per task kind; a kind without one rejects (the test did not expect it). */
export type FakeAnswers = { [K in WorkerTask['kind']]?: FakeAnswer<K> };

/** FakeRunnerStats: what stats() returns. */
export type FakeRunnerStats = ReturnType<PodSyncRunner['stats']>;

/**
 * FakePodSyncRunner records every task in `calls` (in order), then answers it from `answers`
 * (see FakeAnswer). While `err` is set, every task rejects with it instead (recorded all the same),
 * like FakeRuntime's injected error. `stats()` returns `statsValue`; `close()` sets `closed`.
 * run() is async, so answers settle on a later microtask, as a real pool's do.
 * @throws (rejects) Error `FakePodSyncRunner: no answer for task kind X` for an unanswered kind.
 */
export class FakePodSyncRunner implements PodSyncRunner {
  readonly calls: WorkerTask[] = [];
  answers: FakeAnswers;
  err: Error | undefined;
  statsValue: FakeRunnerStats;
  closed = false;
  readonly #count = new Map<string, number>();

  constructor(answers: FakeAnswers = {}, stats: Partial<FakeRunnerStats> = {}) {
    this.answers = answers;
    this.statsValue = { threads: 0, queueSize: 0, completed: 0, utilization: 0, ...stats };
  }

  async run<K extends WorkerTask['kind']>(task: TaskOf<K>): Promise<WorkerResultMap[K]> {
    this.calls.push(task);
    const n = this.#count.get(task.kind) ?? 0;
    this.#count.set(task.kind, n + 1);
    if (this.err) throw this.err;
    const answer = this.answers[task.kind] as FakeAnswer<K> | undefined;
    if (answer === undefined) throw new Error(`FakePodSyncRunner: no answer for task kind ${task.kind}`);
    const value = typeof answer === 'function' ? await answer(task, n) : answer;
    if (value instanceof Error) throw value;
    return value;
  }

  stats(): FakeRunnerStats {
    return this.statsValue;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** callsOf: the recorded tasks of one kind, in order. */
  callsOf<K extends WorkerTask['kind']>(kind: K): TaskOf<K>[] {
    return this.calls.filter((t): t is TaskOf<K> => t.kind === kind);
  }
}

/** newFakePodSyncRunner: a FakePodSyncRunner, checked at compile time against PodSyncRunner. */
export function newFakePodSyncRunner(answers: FakeAnswers = {}, stats: Partial<FakeRunnerStats> = {}): FakePodSyncRunner {
  return new FakePodSyncRunner(answers, stats) satisfies PodSyncRunner;
}
