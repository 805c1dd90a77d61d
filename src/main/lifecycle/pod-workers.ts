/**
 * Counterpart of pkg/kubelet/pod_workers.go: one pod worker per pod UID. A pod never has two
 * pieces of work in flight; a newer update replaces a waiting one (latest wins), and a kill is
 * never replaced by a sync. Work for different pods runs in parallel, syncs up to `maxInFlight`
 * and kills up to `maxKillsInFlight` (each its share of the pool's capacity), in arrival order: a
 * pod that waits here, not in piscina's queue, can still be coalesced.
 *
 * Kills have their own budget because a kill mostly waits out a grace period in the runtime (a
 * container stopped with `t=gracePeriodSeconds`): sharing the syncs' slots, the 33rd of 40 static
 * pods removed at once waited for a whole grace period of one of the first 32 before its own began
 * (removing 40 pods of 5 s took two grace periods, 13.3 s; issue #43). The kubelet's pod workers
 * are one goroutine per pod, with no node-wide bound at all.
 *
 * A pod whose work finishes while newer work for it waits goes on at once on the slot it held, as
 * pod_workers.go's podWorkerLoop takes the pod's next update as soon as its sync returns: the sync
 * that a container's exit asked while the pod's start sync ran (the PLEG event that makes a
 * `restartPolicy: Never` pod Failed) does not queue behind every other pod's work.
 *
 * Each pod also has a lifecycle, as pod_workers.go's podSyncStatus: it syncs until a kill is asked
 * (the pod finished, failed its deadline, or left the desired set), is terminating while the kill
 * runs, and is terminated once it ran; a pod that left the desired set is then forgotten. Syncs
 * asked for a pod whose termination was requested are dropped, so no caller needs to check first;
 * the other loops ask the queries (`isPodTerminationRequested`, `isPodTerminal`,
 * `shouldPodContentBeRemoved`) instead of keeping flags of their own.
 *
 * They also hold the start gate (pod-start-gate.ts, the kubelet's allowPodStart): a pod waiting
 * for an older pod of its full name starts once the pod workers have forgotten that one.
 *
 * The pod workers only order and time the work; what a sync or kill does is the {@link PodSyncer}'s
 * business (pod-syncer.ts). Main thread only.
 */
import { InvalidArgumentError, isRetriable } from '../../shared/errors.js';
import { boundedErr, type Logger } from '../../shared/logging.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import { kKillOldCopyWork, newPodStartGate, type PodStartGate, type PodStartGateDeps } from './pod-start-gate.js';
import { newPodSyncStatuses, type PodLifecycle, type PodSyncStatuses } from './pod-sync-statuses.js';

/** PodWork: what a pod worker is asked to do. */
export type PodWork =
  /**
   * Sync the pod. `cause: 'pleg'`: only PLEG events asked for it (syncLoopIteration's plegCh); the
   * syncer may leave it out when the pod cache shows them all and a sync would change nothing
   * (PodSyncer.syncPod). Merged with any other sync, the cause is dropped: that one runs.
   */
  | { type: 'sync'; cause?: 'pleg' }
  /** Stop the pod's containers within `gracePeriodSeconds`; `remove` also removes them (pod gone). */
  | { type: 'kill'; gracePeriodSeconds: number; remove: boolean };

/** Options of `newPodWorkers` (milliseconds). */
export interface PodWorkersOptions {
  /** Syncs in flight at once across all pods. */
  maxInFlight?: number;
  /** Kills in flight at once across all pods, beside the syncs (default: maxInFlight). */
  maxKillsInFlight?: number;
  /** Requeue delay after a failed sync (kubelet: backOffPeriod 10 s), jittered ±50 %. */
  errorBackoffMs?: number;
}

/** kDefaultPodWorkersOptions: 32 syncs in flight (and, unless maxKillsInFlight says otherwise, 32 kills), 10 s error backoff (the kubelet's backOffPeriod). */
export const kDefaultPodWorkersOptions: Required<Omit<PodWorkersOptions, 'maxKillsInFlight'>> = { maxInFlight: 32, errorBackoffMs: 10_000 };

/** SyncPodOutcome: what one syncPod tells the pod workers to do next. */
export interface SyncPodOutcome {
  /** The pod is done (Succeeded, Failed, or failed by the agent): stop it within this grace period, keep it listed. */
  terminal?: { gracePeriodSeconds: number };
  /** Sync again after this many milliseconds (restart backoff expiry, active deadline); 0 or absent = no. */
  requeueAfterMs?: number;
}

/**
 * PodSyncer: what the pod workers call, as pod_workers.go's podSyncer (SyncPod, SyncTerminatingPod,
 * SyncTerminatedPod). Each may reject; the pod workers then retry the same work after the error
 * backoff (a kill stays a kill).
 */
export interface PodSyncer {
  /**
   * syncPod brings pod `uid` to its desired state once; not called once its termination was
   * requested. `cause` 'pleg': only PLEG events asked for this sync (PodWork); the syncer may then
   * leave the runtime alone when it knows the sync would change nothing.
   */
  syncPod(uid: string, cause?: 'pleg'): Promise<SyncPodOutcome>;
  /**
   * plegSyncNeeded: false when syncPod would leave out a sync of `uid` that only PLEG events asked
   * (nothing to do): the pod workers then do not run it (issue #42). Synchronous; optional.
   */
  plegSyncNeeded?(uid: string): boolean;
  /**
   * syncTerminatingPod stops pod `uid`'s containers within `gracePeriodSeconds` (-1: the grace
   * period recorded on the containers, for a pod whose spec is gone); `remove` also removes them.
   */
  syncTerminatingPod(uid: string, gracePeriodSeconds: number, remove: boolean): Promise<void>;
  /**
   * syncTerminatedPod: pod `uid` left the desired set and its containers are gone; forget what the
   * agent keeps of it. Called after the pod workers forgot `uid`, so it may add a pod of that UID again.
   */
  syncTerminatedPod(uid: string): void;
  /**
   * shortenTermination: a kill of pod `uid` is in flight with a longer grace period than the
   * `gracePeriodSeconds` (seconds, >= 0) just asked. Stops the pod's containers again with the
   * shorter one (no preStop hook, nothing removed), so that the kill in flight ends sooner. The
   * counterpart of the kubelet's cancelling the pod worker's context when a kill shortens the grace
   * period (pod_workers.go UpdatePod): a runtime stop in progress cannot be cancelled, a second stop
   * with a shorter timeout SIGKILLs sooner. Optional: without it the shorter kill waits its turn.
   * May reject; the pod workers log it (the kill in flight goes on either way).
   */
  shortenTermination?(uid: string, gracePeriodSeconds: number): Promise<void>;
}

/** Dependencies of `newPodWorkers`. */
export interface PodWorkersDeps {
  logger: Logger;
  syncer: PodSyncer;
  /** The clock of the requeue and retry timers (epoch ms); default the real clock, whose timeouts wait past 2^31-1 ms. */
  clock?: Clock;
  /** Wraps every piece of work (metrics: kubelet_pod_worker_duration_seconds); default none. */
  instrument?(run: (uid: string, work: PodWork) => Promise<void>): (uid: string, work: PodWork) => Promise<void>;
  /**
   * The lifecycle table the pod workers write (pod-sync-statuses.ts); the agent builds it first and
   * hands its read side to the syncer, the status publisher and eviction. Default: a table of their own.
   */
  statuses?: PodSyncStatuses;
  /** What the start gate (PodWorkers.startGate) reads: the desired pods by full name, the runtime's old copies; default: no pods known (every pod may start). */
  startGate?: Omit<PodStartGateDeps, 'logger'>;
}

/** PodWorkers: the scheduler of per-pod work. */
export interface PodWorkers extends PodLifecycle {
  /**
   * update asks for `work` on pod `uid`; coalesces with work already waiting. A kill marks the pod
   * terminating at once (the queries below answer so before it runs); a sync of a pod whose
   * termination was requested is dropped.
   */
  update(uid: string, work: PodWork): void;
  /** requeue asks for `work` (default a sync) on `uid` after `delayMs` (backoff expiry, retry); replaces an earlier timer. */
  requeue(uid: string, delayMs: number, work?: PodWork): void;
  /** forget drops every waiting piece, timer and the lifecycle of `uid` (after it was removed). */
  forget(uid: string): void;
  /** True while `uid` has work in flight or waiting. */
  busy(uid: string): boolean;
  // isPodTerminationRequested, isPodTerminal, shouldPodContentBeRemoved: PodLifecycle (pod-sync-statuses.ts).
  /**
   * setTerminated marks `uid` terminal and terminated without any work: a pod admission rejected,
   * which never started and has nothing to stop. Later syncs are dropped; a kill still runs.
   */
  setTerminated(uid: string): void;
  /**
   * startGate: allowPodStart and the pods waiting for an older pod of their full name
   * (pod-start-gate.ts); opened for a pod once its removal finished (after syncTerminatedPod).
   */
  readonly startGate: PodStartGate;
  /** Figures for metrics and benches. */
  stats(): { inFlight: number; waiting: number; timers: number; terminating: number; terminated: number };
  /** Resolves once nothing is in flight; new work is refused after stop(). */
  stop(): Promise<void>;
}

interface WorkerState {
  inFlight: PodWork | null;
  pending: PodWork | null;
  /** The ready queue the pod waits in (by the type of its pending work), or null. */
  queued: PodWork['type'] | null;
  /** The requeue timer; its delay may come from a pod field (activeDeadlineSeconds) beyond Node's 2^31-1 ms. */
  timer?: TimerHandle;
  timerWork?: PodWork;
}

/**
 * effectiveGracePeriod: the grace period (seconds) that holds when kills asking `a` and `b` meet —
 * the shorter one, as pod_workers.go calculateEffectiveGracePeriod (a grace period can only ever be
 * shortened while a pod terminates). A negative one ("the one on the containers' labels", for a pod
 * whose spec is gone) is not a number of seconds: any explicit grace period is shorter.
 */
export function effectiveGracePeriod(a: number, b: number): number {
  if (a < 0) return b;
  if (b < 0) return a;
  return Math.min(a, b);
}

/** merge: the piece of work that survives when `next` arrives while `waiting` has not started. */
function merge(waiting: PodWork | null, next: PodWork): PodWork {
  if (!waiting) return next;
  if (waiting.type === 'kill' && next.type === 'sync') return waiting; // kill is never dropped
  if (waiting.type === 'kill' && next.type === 'kill') {
    return {
      type: 'kill',
      gracePeriodSeconds: effectiveGracePeriod(waiting.gracePeriodSeconds, next.gracePeriodSeconds),
      remove: waiting.remove || next.remove,
    };
  }
  // A sync only PLEG events asked for stays one only while every sync merged into it was.
  if (waiting.type === 'sync' && next.type === 'sync' && waiting.cause !== next.cause) return { type: 'sync' };
  return next;
}

class PodWorkersImpl implements PodWorkers {
  readonly #states = new Map<string, WorkerState>();
  /** Pods whose termination was requested; small next to #states' peak (only pods being stopped or finished). */
  readonly #terminations: PodSyncStatuses;
  readonly #execute: (uid: string, work: PodWork) => Promise<void>;
  /** Pods waiting for a slot, by the type of their pending work; entries whose `queued` no longer matches are stale. */
  readonly #ready: Record<PodWork['type'], { uids: string[]; head: number }> = { kill: { uids: [], head: 0 }, sync: { uids: [], head: 0 } };
  readonly #inFlightOf: Record<PodWork['type'], number> = { kill: 0, sync: 0 };
  readonly #limit: Record<PodWork['type'], number>;
  #inFlight = 0;
  #stopped = false;
  #idle: (() => void) | null = null;
  readonly #clock: Clock;
  readonly startGate: PodStartGate;

  constructor(
    private readonly opts: Required<PodWorkersOptions>,
    private readonly deps: PodWorkersDeps,
  ) {
    this.#clock = deps.clock ?? realClock;
    this.#terminations = deps.statuses ?? newPodSyncStatuses();
    this.startGate = newPodStartGate(
      { logger: deps.logger, ...(deps.startGate ?? { podManager: { get: () => undefined, getByFullName: () => undefined } }) },
      {
        shouldPodContentBeRemoved: (uid) => this.shouldPodContentBeRemoved(uid),
        killOldCopy: (uid) => this.update(uid, kKillOldCopyWork),
      },
    );
    this.#limit = { sync: opts.maxInFlight, kill: opts.maxKillsInFlight };
    const run = (uid: string, work: PodWork) => this.#dispatch(uid, work);
    this.#execute = deps.instrument ? deps.instrument(run) : run;
  }

  /** #dispatch runs one piece of work through the syncer and moves the pod's lifecycle on. */
  async #dispatch(uid: string, work: PodWork): Promise<void> {
    const { syncer } = this.deps;
    if (work.type === 'sync') {
      if (this.#terminations.has(uid)) return;
      const outcome = await syncer.syncPod(uid, work.cause);
      // A kill asked while the sync ran wins over what the sync concluded.
      if (this.#terminations.has(uid)) return;
      if (outcome.terminal) this.update(uid, { type: 'kill', gracePeriodSeconds: outcome.terminal.gracePeriodSeconds, remove: false });
      else if (outcome.requeueAfterMs && outcome.requeueAfterMs > 0) this.requeue(uid, outcome.requeueAfterMs);
      return;
    }
    await syncer.syncTerminatingPod(uid, work.gracePeriodSeconds, work.remove);
    const t = this.#terminations.get(uid);
    if (t && !this.#states.get(uid)?.pending) t.state = 'terminated';
    if (!work.remove) return;
    // Forget first: a pod that was waiting for this one may have the same UID and needs its sync.
    this.forget(uid);
    syncer.syncTerminatedPod(uid);
    // Also for a pod known only to the runtime (housekeeping's orphans): one may wait for it.
    this.startGate.podTerminated(uid);
  }

  #state(uid: string): WorkerState {
    let s = this.#states.get(uid);
    if (!s) this.#states.set(uid, (s = { inFlight: null, pending: null, queued: null }));
    return s;
  }

  update(uid: string, work: PodWork): void {
    if (this.#stopped) return;
    if (work.type === 'kill') {
      const t = this.#terminations.get(uid);
      if (t) {
        t.state = 'terminating';
        t.terminal ||= !work.remove;
        t.remove ||= work.remove;
      } else {
        this.#terminations.set(uid, { state: 'terminating', terminal: !work.remove, remove: work.remove });
      }
    } else if (this.#terminations.has(uid)) {
      return;
    }
    const s = this.#state(uid);
    if (work.type === 'kill') this.#shortenInFlightKill(uid, s, work.gracePeriodSeconds);
    s.pending = merge(s.pending, work);
    if (!s.inFlight) this.#enqueue(uid, s);
    this.#pump();
  }

  /** #enqueue puts `uid` in the ready queue of its pending work's type (a sync upgraded to a kill moves). */
  #enqueue(uid: string, s: WorkerState): void {
    const type = s.pending?.type;
    if (!type || s.queued === type) return;
    s.queued = type;
    this.#ready[type].uids.push(uid);
  }

  /**
   * #shortenInFlightKill: a kill asking `gracePeriodSeconds` arrived while a kill with a longer one
   * runs. The kubelet cancels the running termination and starts again with the shorter grace
   * period (pod_workers.go UpdatePod: gracePeriodShortened → cancelFn); here the syncer stops the
   * containers again with it (PodSyncer.shortenTermination), and the kill in flight remembers the
   * shorter grace period so that the same request repeated does not stop them once more.
   */
  #shortenInFlightKill(uid: string, s: WorkerState, gracePeriodSeconds: number): void {
    const running = s.inFlight;
    if (running?.type !== 'kill' || !this.deps.syncer.shortenTermination) return;
    const shorter = effectiveGracePeriod(running.gracePeriodSeconds, gracePeriodSeconds);
    if (shorter === running.gracePeriodSeconds || shorter < 0) return;
    s.inFlight = { ...running, gracePeriodSeconds: shorter };
    this.deps.logger.info({ uid, gracePeriodSeconds: shorter, was: running.gracePeriodSeconds }, 'Pod termination grace period shortened');
    this.deps.syncer.shortenTermination(uid, shorter).catch((err: unknown) => {
      this.deps.logger.warn(
        { uid, err, gracePeriodSeconds: shorter },
        'Failed to stop the containers of a terminating pod with its shortened grace period; the running kill goes on',
      );
    });
  }

  requeue(uid: string, delayMs: number, work: PodWork = { type: 'sync' }): void {
    if (this.#stopped) return;
    const s = this.#state(uid);
    this.#clock.clearTimeout(s.timer);
    const queued = merge(s.timerWork ?? null, work);
    s.timerWork = queued;
    s.timer = this.#clock.setTimeout(
      () => {
        s.timer = undefined;
        s.timerWork = undefined;
        this.update(uid, queued);
      },
      Math.max(0, delayMs),
    );
  }

  forget(uid: string): void {
    this.#terminations.delete(uid);
    const s = this.#states.get(uid);
    if (!s) return;
    this.#clock.clearTimeout(s.timer);
    s.timer = undefined;
    s.pending = null;
    if (!s.inFlight) this.#states.delete(uid);
  }

  busy(uid: string): boolean {
    const s = this.#states.get(uid);
    return !!s && (s.inFlight !== null || s.pending !== null);
  }

  isPodTerminationRequested(uid: string): boolean {
    return this.#terminations.isPodTerminationRequested(uid);
  }

  isPodTerminal(uid: string): boolean {
    return this.#terminations.isPodTerminal(uid);
  }

  shouldPodContentBeRemoved(uid: string): boolean {
    return this.#terminations.shouldPodContentBeRemoved(uid);
  }

  setTerminated(uid: string): void {
    if (!this.#terminations.has(uid)) this.#terminations.set(uid, { state: 'terminated', terminal: true, remove: false });
  }

  #pump(): void {
    for (const type of ['kill', 'sync'] as const) {
      const q = this.#ready[type];
      while (this.#inFlightOf[type] < this.#limit[type] && q.head < q.uids.length) {
        const uid = q.uids[q.head++];
        const s = this.#states.get(uid);
        if (!s || s.queued !== type) continue; // stale: forgotten, or moved to the kill queue
        s.queued = null;
        if (s.pending?.type === type && !s.inFlight) this.#start(uid, s);
      }
      if (q.head > 1024 && q.head * 2 > q.uids.length) {
        q.uids.splice(0, q.head);
        q.head = 0;
      }
    }
  }

  /** #start runs `s.pending` now (the caller checked its type's budget). */
  #start(uid: string, s: WorkerState): void {
    const work = s.pending!;
    s.pending = null;
    if (work.type === 'sync' && work.cause === 'pleg' && this.deps.syncer.plegSyncNeeded?.(uid) === false) {
      this.#forgetIfIdle(uid, s);
      return;
    }
    s.inFlight = work;
    this.#inFlight++;
    this.#inFlightOf[work.type]++;
    void this.#run(uid, s, work);
  }

  /** #forgetIfIdle drops pod `uid`'s state `s` when nothing refers to it any more: no work waiting, running or timed. */
  #forgetIfIdle(uid: string, s: WorkerState): void {
    if (!s.pending && !s.inFlight && !s.timer && this.#states.get(uid) === s) this.#states.delete(uid);
  }

  async #run(uid: string, s: WorkerState, work: PodWork): Promise<void> {
    try {
      await this.#execute(uid, work);
    } catch (err) {
      const delay = Math.round(this.opts.errorBackoffMs * (0.5 + Math.random()));
      this.deps.logger.warn(
        { uid, workType: work.type, err: boundedErr(err), retriable: isRetriable(err), delayMs: delay },
        'Error syncing pod, will retry',
      );
      // A failed kill is retried as a kill (never downgraded to a sync); a waiting kill wins anyway.
      // (With the grace period as shortened meanwhile, see #shortenInFlightKill.)
      if (!this.#stopped) this.requeue(uid, delay, s.inFlight ?? work);
    } finally {
      s.inFlight = null;
      this.#inFlight--;
      this.#inFlightOf[work.type]--;
      if (s.pending && !this.#stopped) {
        // The pod's next work goes on at once when its type has a slot (podWorkerLoop), else queues.
        if (this.#inFlightOf[s.pending.type] < this.#limit[s.pending.type] && this.#states.get(uid) === s) {
          s.queued = null;
          this.#start(uid, s);
        } else {
          this.#enqueue(uid, s);
        }
      } else {
        this.#forgetIfIdle(uid, s);
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
    let terminating = 0;
    for (const t of this.#terminations.values()) if (t.state === 'terminating') terminating++;
    return { inFlight: this.#inFlight, waiting, timers, terminating, terminated: this.#terminations.size - terminating };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const s of this.#states.values()) this.#clock.clearTimeout(s.timer);
    if (this.#inFlight === 0) return;
    await new Promise<void>((resolve) => (this.#idle = resolve));
  }
}

/**
 * newPodWorkers creates the pod workers.
 * @throws InvalidArgumentError for a maxInFlight or maxKillsInFlight below 1 or a negative errorBackoffMs.
 */
export function newPodWorkers(options: PodWorkersOptions, deps: PodWorkersDeps): PodWorkers {
  const base = { ...kDefaultPodWorkersOptions, ...options };
  const opts = { ...base, maxKillsInFlight: options.maxKillsInFlight ?? base.maxInFlight };
  if (!Number.isInteger(opts.maxInFlight) || opts.maxInFlight < 1)
    throw new InvalidArgumentError(`options.maxInFlight must be an integer >= 1, got ${opts.maxInFlight}`);
  if (!Number.isInteger(opts.maxKillsInFlight) || opts.maxKillsInFlight < 1)
    throw new InvalidArgumentError(`options.maxKillsInFlight must be an integer >= 1, got ${opts.maxKillsInFlight}`);
  if (!(opts.errorBackoffMs >= 0)) throw new InvalidArgumentError(`options.errorBackoffMs must be >= 0, got ${opts.errorBackoffMs}`);
  return new PodWorkersImpl(opts, deps);
}
