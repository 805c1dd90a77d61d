/**
 * Counterpart of pkg/kubelet/types/pod_update.go: the updates sources send to the PodConfig merge.
 */
import type { Pod, PodSourceName } from './api.js';
import { effectiveGracePeriodSeconds } from './pod-policy.js';
import { rfc3339Seconds } from './rfc3339.js';

/**
 * PodOperation, as kubetypes.PodOperation:
 * - SET: the source's complete current set of pods (anything not in it is removed);
 * - ADD / UPDATE: pods new or changed in the source; REMOVE: pods gone from the source.
 */
export type PodOperation = 'SET' | 'ADD' | 'UPDATE' | 'REMOVE';

/** PodUpdate: one change from one source. Pods are defaulted, validated and carry metadata.uid. */
export interface PodUpdate {
  op: PodOperation;
  source: PodSourceName;
  pods: Pod[];
}

/**
 * markPodDeleted: `pod` as the apiserver marks a deleted one (and as the intake's REMOVE carries
 * it): `metadata.deletionTimestamp` at `nowMs` (RFC 3339, seconds) and `deletionGracePeriodSeconds`
 * = `gracePeriodSeconds` (seconds), else the pod's terminationGracePeriodSeconds, else 30. A pod
 * already marked is returned as it is. Pure.
 */
export function markPodDeleted(pod: Pod, gracePeriodSeconds: number | undefined, nowMs: number): Pod {
  if (pod.metadata?.deletionTimestamp) return pod;
  const grace = effectiveGracePeriodSeconds(pod, gracePeriodSeconds);
  const deletionTimestamp = rfc3339Seconds(nowMs);
  return { ...pod, metadata: { ...pod.metadata, deletionTimestamp, deletionGracePeriodSeconds: grace } };
}

/**
 * SourceError: a source could not read (part of) its input. The pods it last read from that
 * place stay as they were; the error is reported (log, event, API) and never read as "removed".
 */
export interface SourceError {
  source: PodSourceName;
  /** File path, URL or key that failed. */
  origin: string;
  message: string;
}
