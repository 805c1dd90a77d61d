/**
 * PodAbsence: whether the main thread can tell, without asking the runtime, that the runtime holds no
 * container of a pod — so a new pod's first sync starts from nothing without a list call
 * (SyncPodTask.knownAbsent). The kubelet's pod cache does the same for a pod it has no entry of:
 * GetNewerThan answers an empty status once the cache's global timestamp (set after each relist,
 * cache.UpdateTime) is newer than the pod worker's last sync. Here: the PLEG's runtime view shows
 * no container of the pod, and its last relist asked the runtime after every task of the pod this
 * agent ran had ended (only those tasks create a pod's containers). Main thread only.
 */
import { realClock, type Clock } from '../../shared/clock.js';

/** The PLEG's side of it (Pleg.lastRelistObservedAtMs, Pleg.hasContainersOf). */
export interface RuntimeView {
  /** When the last successful relist asked the runtime, epoch ms; 0 before the first. */
  lastRelistObservedAtMs(): number;
  /** True when the runtime view holds a container of pod `uid`. */
  hasContainersOf(uid: string): boolean;
}

/** Entries kept before the ones a later relist covers are first dropped. */
const kPruneAbove = 256;

/** PodAbsence: see the file comment. */
export class PodAbsence {
  /** Pod UID → its tasks in flight, when the last one ended (epoch ms) and whether it failed. */
  readonly #tasks = new Map<string, { inFlight: number; endedAtMs: number; failed: boolean }>();
  /**
   * The size above which a task's end prunes: {@link kPruneAbove}, then twice what the last prune
   * kept. A burst of pods the last relist does not cover yet keeps its entries (a prune drops
   * none of them); pruning again only once the table has doubled makes a task's end O(1)
   * amortized, where pruning at every end past 256 walked every entry once per task (a 4,000-pod
   * burst: about 8 million entries visited on the main thread, issue #42).
   */
  #pruneAbove = kPruneAbove;

  /** `clock`: the clock (epoch ms) of when a task ended; default the real clock. */
  constructor(
    private readonly view: RuntimeView,
    private readonly clock: Clock = realClock,
  ) {}

  /**
   * run runs `task` (a sync or kill task of pod `uid` in the worker pool) and records that it ran.
   * Resolves or rejects as `task` does.
   */
  async run<T>(uid: string, task: () => Promise<T>): Promise<T> {
    let t = this.#tasks.get(uid);
    if (!t) this.#tasks.set(uid, (t = { inFlight: 0, endedAtMs: 0, failed: false }));
    t.inFlight++;
    try {
      const value = await task();
      t.failed = false;
      return value;
    } catch (err) {
      t.failed = true;
      throw err;
    } finally {
      t.inFlight--;
      t.endedAtMs = this.clock.now();
      if (this.#tasks.size > this.#pruneAbove) this.#prune();
    }
  }

  /**
   * isKnownAbsent: true when the runtime has no container of pod `uid` for certain: a relist ran,
   * no task of the pod is in flight or ended at or after that relist asked the runtime, and the
   * runtime view holds none of its containers.
   */
  isKnownAbsent(uid: string): boolean {
    const relistAt = this.view.lastRelistObservedAtMs();
    if (relistAt === 0) return false;
    const t = this.#tasks.get(uid);
    if (t && (t.inFlight > 0 || t.endedAtMs >= relistAt)) return false;
    return !this.view.hasContainersOf(uid);
  }

  /**
   * isSettled: true when no task of pod `uid` is in flight and the last one that ended did not fail,
   * so what that task returned (the pod cache's entry, while no PLEG event came since) is the
   * runtime's state: a task that failed may have made containers its caller never heard of, until
   * a later task of the pod succeeds (KillPodTask.cachedRuntimePod; the kubelet's pod workers wait
   * for a pod cache entry newer than the last sync, pod_workers.go GetNewerThan).
   */
  isSettled(uid: string): boolean {
    const t = this.#tasks.get(uid);
    return !t || (t.inFlight === 0 && !t.failed);
  }

  /** #prune drops the entries the last relist covers (idle, ended before it asked; a failed one is kept for isSettled). */
  #prune(): void {
    const relistAt = this.view.lastRelistObservedAtMs();
    for (const [uid, t] of this.#tasks) if (t.inFlight === 0 && !t.failed && t.endedAtMs < relistAt) this.#tasks.delete(uid);
    this.#pruneAbove = Math.max(kPruneAbove, 2 * this.#tasks.size);
  }
}
