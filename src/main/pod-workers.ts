/**
 * Counterpart of pkg/kubelet/pod_workers.go: one pod worker per pod UID. A pod never has two
 * pieces of work in flight; a newer update replaces a waiting one (latest wins), and a kill is
 * never replaced by a sync. Work for different pods runs in parallel up to `maxInFlight` (the
 * pool's capacity), in arrival order: a pod that waits here, not in piscina's queue, can still be
 * coalesced.
 *
 * The pod workers only order and time the work; what a sync or kill does is the `execute`
 * callback's business (the agent's). Main thread only.
 */
import { InvalidArgumentError, isRetriable } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';

/** PodWork: what a pod worker is asked to do. */
export type PodWork =
  | { type: 'sync' }
  /** Stop the pod's containers within `gracePeriodSeconds`; `remove` also removes them (pod gone). */
  | { type: 'kill'; gracePeriodSeconds: number; remove: boolean };

/** Options of `newPodWorkers` (milliseconds). */
export interface PodWorkersOptions {
  /** Pieces of work in flight at once across all pods. */
  maxInFlight?: number;
  /** Requeue delay after a failed sync (kubelet: backOffPeriod 10 s), jittered ±50 %. */
  errorBackoffMs?: number;
}

export const kDefaultPodWorkersOptions: Required<PodWorkersOptions> = { maxInFlight: 32, errorBackoffMs: 10_000 };

/** Dependencies of `newPodWorkers`. */
export interface PodWorkersDeps {
  logger: Logger;
  /** Does the work; rejects on failure (the pod is then retried after errorBackoffMs). */
  execute(uid: string, work: PodWork): Promise<void>;
}

/** PodWorkers: the scheduler of per-pod work. */
export interface PodWorkers {
  /** update asks for `work` on pod `uid`; coalesces with work already waiting. */
  update(uid: string, work: PodWork): void;
  /** requeue asks for `work` (default a sync) on `uid` after `delayMs` (backoff expiry, retry); replaces an earlier timer. */
  requeue(uid: string, delayMs: number, work?: PodWork): void;
  /** forget drops every waiting piece and timer of `uid` (after it was removed). */
  forget(uid: string): void;
  /** True while `uid` has work in flight or waiting. */
  busy(uid: string): boolean;
  /** Figures for metrics and benches. */
  stats(): { inFlight: number; waiting: number; timers: number };
  /** Resolves once nothing is in flight; new work is refused after stop(). */
  stop(): Promise<void>;
}

interface WorkerState {
  inFlight: PodWork | null;
  pending: PodWork | null;
  queued: boolean;
  timer?: NodeJS.Timeout;
  timerWork?: PodWork;
}

/** merge: the piece of work that survives when `next` arrives while `waiting` has not started. */
function merge(waiting: PodWork | null, next: PodWork): PodWork {
  if (!waiting) return next;
  if (waiting.type === 'kill' && next.type === 'sync') return waiting; // kill is never dropped
  if (waiting.type === 'kill' && next.type === 'kill') {
    return { type: 'kill', gracePeriodSeconds: Math.min(waiting.gracePeriodSeconds, next.gracePeriodSeconds), remove: waiting.remove || next.remove };
  }
  return next;
}

class PodWorkersImpl implements PodWorkers {
  readonly #states = new Map<string, WorkerState>();
  readonly #ready: string[] = [];
  #readyHead = 0;
  #inFlight = 0;
  #stopped = false;
  #idle: (() => void) | null = null;

  constructor(private readonly opts: Required<PodWorkersOptions>, private readonly deps: PodWorkersDeps) {}

  #state(uid: string): WorkerState {
    let s = this.#states.get(uid);
    if (!s) this.#states.set(uid, (s = { inFlight: null, pending: null, queued: false }));
    return s;
  }

  update(uid: string, work: PodWork): void {
    if (this.#stopped) return;
    const s = this.#state(uid);
    s.pending = merge(s.pending, work);
    if (!s.inFlight && !s.queued) {
      s.queued = true;
      this.#ready.push(uid);
    }
    this.#pump();
  }

  requeue(uid: string, delayMs: number, work: PodWork = { type: 'sync' }): void {
    if (this.#stopped) return;
    const s = this.#state(uid);
    if (s.timer) clearTimeout(s.timer);
    const queued = merge(s.timerWork ?? null, work);
    s.timerWork = queued;
    s.timer = setTimeout(() => {
      s.timer = undefined;
      s.timerWork = undefined;
      this.update(uid, queued);
    }, Math.max(0, delayMs));
    s.timer.unref();
  }

  forget(uid: string): void {
    const s = this.#states.get(uid);
    if (!s) return;
    if (s.timer) clearTimeout(s.timer);
    s.timer = undefined;
    s.pending = null;
    if (!s.inFlight) this.#states.delete(uid);
  }

  busy(uid: string): boolean {
    const s = this.#states.get(uid);
    return !!s && (s.inFlight !== null || s.pending !== null);
  }

  #pump(): void {
    while (this.#inFlight < this.opts.maxInFlight && this.#readyHead < this.#ready.length) {
      const uid = this.#ready[this.#readyHead++];
      const s = this.#states.get(uid);
      if (!s) continue;
      s.queued = false;
      if (!s.pending || s.inFlight) continue;
      const work = s.pending;
      s.pending = null;
      s.inFlight = work;
      this.#inFlight++;
      void this.#run(uid, s, work);
    }
    if (this.#readyHead > 1024 && this.#readyHead * 2 > this.#ready.length) {
      this.#ready.splice(0, this.#readyHead);
      this.#readyHead = 0;
    }
  }

  async #run(uid: string, s: WorkerState, work: PodWork): Promise<void> {
    try {
      await this.deps.execute(uid, work);
    } catch (err) {
      const delay = Math.round(this.opts.errorBackoffMs * (0.5 + Math.random()));
      this.deps.logger.warn({ uid, workType: work.type, err, retriable: isRetriable(err), delayMs: delay }, 'Error syncing pod, will retry');
      // A failed kill is retried as a kill (never downgraded to a sync); a waiting kill wins anyway.
      if (!this.#stopped) this.requeue(uid, delay, work);
    } finally {
      s.inFlight = null;
      this.#inFlight--;
      if (s.pending && !this.#stopped) {
        if (!s.queued) {
          s.queued = true;
          this.#ready.push(uid);
        }
      } else if (!s.pending && !s.timer && this.#states.get(uid) === s) {
        // keep the state only while something refers to it
        this.#states.delete(uid);
      }
      this.#pump();
      if (this.#inFlight === 0) this.#idle?.();
    }
  }

  stats() {
    let timers = 0;
    let waiting = 0;
    for (const s of this.#states.values()) {
      if (s.timer) timers++;
      if (s.pending) waiting++;
    }
    return { inFlight: this.#inFlight, waiting, timers };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const s of this.#states.values()) if (s.timer) clearTimeout(s.timer);
    if (this.#inFlight === 0) return;
    await new Promise<void>((resolve) => (this.#idle = resolve));
  }
}

/**
 * newPodWorkers creates the pod workers.
 * @throws InvalidArgumentError for a maxInFlight below 1 or a negative errorBackoffMs.
 */
export function newPodWorkers(options: PodWorkersOptions, deps: PodWorkersDeps): PodWorkers {
  const opts = { ...kDefaultPodWorkersOptions, ...options };
  if (!Number.isInteger(opts.maxInFlight) || opts.maxInFlight < 1) throw new InvalidArgumentError(`options.maxInFlight must be an integer >= 1, got ${opts.maxInFlight}`);
  if (!(opts.errorBackoffMs >= 0)) throw new InvalidArgumentError(`options.errorBackoffMs must be >= 0, got ${opts.errorBackoffMs}`);
  return new PodWorkersImpl(opts, deps);
}
