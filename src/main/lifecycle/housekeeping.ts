/**
 * Counterpart of pkg/kubelet/kubelet_pods.go HandlePodCleanups, run from the sync loop's
 * housekeeping tick (kubelet: housekeepingPeriod, 2 s): kills and removes the containers of pods
 * that no source wants any more — e.g. a static pod whose manifest was deleted while the agent was
 * down — using the grace period recorded on their labels (the spec is gone), at most 30 s
 * (workers/kuberuntime/kill-pod.ts kOrphanMaxGracePeriodSeconds).
 *
 * It waits until every source has reported once (PodConfig.seenAllSources, as the kubelet) and
 * while config changes are still queued (a big update handled in chunks: its pods are not in the
 * pod manager yet). What it may touch: the pod workers (a `kill` with remove for each orphan);
 * it reads the pod manager and the PLEG's view of the runtime. Main thread only.
 */
import type { Logger } from '../../shared/logging.js';
import { kGracePeriodFromLabels } from '../../shared/pod-policy.js';

/** kHousekeepingPeriodMs: the kubelet's housekeepingPeriod (milliseconds). */
export const kHousekeepingPeriodMs = 2_000;

/** Dependencies of {@link newHousekeeping}. */
export interface HousekeepingDeps {
  logger: Logger;
  /** True once every source has reported (PodConfig.seenAllSources). */
  seenAllSources(): boolean;
  /** True while config changes wait to be handled (SyncHandler.pending). */
  changesPending(): boolean;
  /** True when the pod manager holds `uid`. */
  isDesired(uid: string): boolean;
  /** Every UID the pod manager holds. */
  desiredPodUids(): Iterable<string>;
  /** Every UID the PodConfig merge holds (PodConfig.pods), some not yet in the pod manager while changes are queued. */
  mergedPodUids(): Iterable<string>;
  /** Every pod UID the runtime has containers of (Pleg.runtimePodUids). */
  runtimePodUids(): Set<string>;
  podWorkers: {
    busy(uid: string): boolean;
    update(uid: string, work: { type: 'kill'; gracePeriodSeconds: number; remove: boolean }): void;
  };
}

/** Housekeeping: HandlePodCleanups. */
export interface Housekeeping {
  /**
   * handlePodCleanups asks a kill (with remove, grace period from the labels) for every pod UID
   * with containers that the pod manager does not hold and no pod worker is busy with. Does nothing
   * before every source has reported or while config changes are queued.
   * @returns the UIDs it asked to kill (for tests and logs).
   */
  handlePodCleanups(): string[];
  /**
   * activePodUids: the UIDs garbage collection must keep (gc-manager.ts): the pod manager's, plus
   * the merge's while changes are queued (their pods are not in the pod manager yet).
   */
  activePodUids(): string[];
}

/** newHousekeeping builds HandlePodCleanups over the agent's parts; the sync loop ticks it. */
export function newHousekeeping(deps: HousekeepingDeps): Housekeeping {
  return {
    handlePodCleanups() {
      if (!deps.seenAllSources() || deps.changesPending()) return [];
      const killed: string[] = [];
      for (const uid of deps.runtimePodUids()) {
        if (!uid || deps.isDesired(uid) || deps.podWorkers.busy(uid)) continue;
        deps.logger.info({ uid }, 'Cleaning up containers of a pod that is no longer desired');
        // The spec is gone: use the grace period recorded on the containers' label.
        deps.podWorkers.update(uid, { type: 'kill', gracePeriodSeconds: kGracePeriodFromLabels, remove: true });
        killed.push(uid);
      }
      return killed;
    },
    activePodUids() {
      const uids = [...deps.desiredPodUids()];
      if (deps.changesPending()) uids.push(...deps.mergedPodUids());
      return uids;
    },
  };
}
