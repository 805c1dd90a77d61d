/**
 * The API side of a repeated graceful delete: the apiserver's rest.BeforeDelete
 * (staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go) for a pod that already has a
 * deletionTimestamp may only shorten its grace period, and the kubelet's pod workers then stop
 * the containers again with the shorter one (pod_workers.go calculateEffectiveGracePeriod). The
 * intake's DELETE (intake-api.ts) calls {@link shortenDeletion}; the sync handler uses
 * {@link removalGracePeriodSeconds} for a REMOVE. Main thread only.
 */
import type { Pod } from '../../shared/api.js';
import { podFields, type Logger } from '../../shared/logging.js';
import { effectiveGracePeriodSeconds } from '../../shared/pod-policy.js';
import type { PodManager } from './pod-manager.js';

/**
 * What {@link shortenDeletion} reads and writes. The status manager and the pod workers are
 * declared by what is asked of them (status/status-manager.ts and lifecycle/pod-workers.ts satisfy
 * them), so that pod/ does not import the lifecycle and status folders built above it.
 */
export interface GracefulDeletionDeps {
  logger: Logger;
  podManager: Pick<PodManager, 'get'>;
  /** The pods' watch gets the shortened pod object (StatusManager.updatePod). */
  statusManager: { updatePod(pod: Pod): unknown };
  /** Asked whether the pod is being removed; given the kill with the shorter grace period (`gracePeriodSeconds` in seconds). */
  podWorkers: {
    shouldPodContentBeRemoved(uid: string): boolean;
    update(uid: string, work: { type: 'kill'; gracePeriodSeconds: number; remove: boolean }): void;
  };
}

/** removalGracePeriodSeconds: a REMOVE's grace period in seconds — the DELETE's (metadata.deletionGracePeriodSeconds), else the pod's, else 30. */
export function removalGracePeriodSeconds(pod: Pod): number {
  return effectiveGracePeriodSeconds(pod, pod.metadata?.deletionGracePeriodSeconds);
}

/**
 * shortenDeletion: another DELETE of pod `uid`, which a DELETE already removed and which is still
 * terminating (its record is kept until its containers are gone). The grace period may only be
 * shortened: when `gracePeriodSeconds` (seconds; undefined = the pod's own) is below the pod's
 * current one ({@link removalGracePeriodSeconds}), the record's pod shows the shorter
 * `deletionGracePeriodSeconds` (a new object, on the pods' watch at once) and the pod workers get
 * a kill with it (they take the minimum and stop the containers again at once). Otherwise nothing
 * changes.
 * @returns the pod as now listed, or undefined when `uid` is not a pod being deleted (not known,
 *   never deleted, or stopped because it finished).
 */
export function shortenDeletion(deps: GracefulDeletionDeps, uid: string, gracePeriodSeconds: number | undefined): Pod | undefined {
  const record = deps.podManager.get(uid);
  if (!record?.pod.metadata?.deletionTimestamp || !deps.podWorkers.shouldPodContentBeRemoved(uid)) return undefined;
  const current = removalGracePeriodSeconds(record.pod);
  if (gracePeriodSeconds === undefined || gracePeriodSeconds >= current) return record.pod;
  // A new object: the pod list cache (server/routes/pods.ts) compares pod fields by identity.
  record.pod = { ...record.pod, metadata: { ...record.pod.metadata, deletionGracePeriodSeconds: gracePeriodSeconds } };
  deps.statusManager.updatePod(record.pod);
  deps.logger.info({ ...podFields(record.pod), gracePeriodSeconds, was: current }, 'SyncLoop DELETE shortens the grace period');
  deps.podWorkers.update(uid, { type: 'kill', gracePeriodSeconds, remove: true });
  return record.pod;
}
