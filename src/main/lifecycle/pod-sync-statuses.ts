/**
 * The pod workers' lifecycle table, as pod_workers.go's podSyncStatuses (pkg/kubelet/pod_workers.go:
 * podSyncStatus, IsPodTerminationRequested, ShouldPodContainersBeTerminating, ShouldPodContentBeRemoved,
 * IsPodKnownTerminated): for each pod whose kill was asked, whether it is terminating or
 * terminated, whether it finished (terminal) and whether it left the desired set (remove). A pod
 * absent from it is syncing. The pod workers (pod-workers.ts) are its only writer; the pod syncer,
 * the status publisher, eviction and housekeeping read it through {@link PodLifecycle}. Built
 * before them all and handed to each as a constructor argument, so none needs the pod workers
 * themselves (the syncer is what the pod workers run). Main thread only.
 */

/** A pod's lifecycle once a kill was asked (absent while it syncs). */
export interface PodTermination {
  state: 'terminating' | 'terminated';
  /** A kill with remove: false came: the pod finished. */
  terminal: boolean;
  /** A kill with remove: true came: the pod left the desired set. */
  remove: boolean;
}

/** PodLifecycle: the read side of the table, the queries pod_workers.go answers the Kubelet. */
export interface PodLifecycle {
  /** isPodTerminationRequested: a kill was asked for `uid` (it is terminating or terminated). */
  isPodTerminationRequested(uid: string): boolean;
  /** isPodTerminal: `uid` was stopped because it finished (kept listed, never started again). */
  isPodTerminal(uid: string): boolean;
  /** shouldPodContentBeRemoved: `uid` left the desired set; its containers, volumes and record go once it stopped. */
  shouldPodContentBeRemoved(uid: string): boolean;
}

/** PodSyncStatuses: the table (uid → PodTermination) with its queries; the pod workers write it. */
export class PodSyncStatuses implements PodLifecycle {
  readonly #byUid = new Map<string, PodTermination>();

  get(uid: string): PodTermination | undefined {
    return this.#byUid.get(uid);
  }
  has(uid: string): boolean {
    return this.#byUid.has(uid);
  }
  set(uid: string, t: PodTermination): void {
    this.#byUid.set(uid, t);
  }
  delete(uid: string): void {
    this.#byUid.delete(uid);
  }
  values(): IterableIterator<PodTermination> {
    return this.#byUid.values();
  }
  get size(): number {
    return this.#byUid.size;
  }

  isPodTerminationRequested(uid: string): boolean {
    return this.#byUid.has(uid);
  }

  isPodTerminal(uid: string): boolean {
    return this.#byUid.get(uid)?.terminal ?? false;
  }

  shouldPodContentBeRemoved(uid: string): boolean {
    return this.#byUid.get(uid)?.remove ?? false;
  }
}

/** newPodSyncStatuses: an empty table (every pod syncing). */
export function newPodSyncStatuses(): PodSyncStatuses {
  return new PodSyncStatuses();
}
