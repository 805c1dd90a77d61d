/**
 * Counterpart of pkg/kubelet/active_deadline.go (activeDeadlineHandler): a pod whose
 * spec.activeDeadlineSeconds have passed since status.startTime is failed by the kubelet with
 * reason DeadlineExceeded and its containers are killed. Pure functions; main thread.
 */
import type { Pod } from '../../shared/api.js';

/** PodStatus.reason of a pod past its active deadline (kubelet's reason constant). */
export const kDeadlineExceededReason = 'DeadlineExceeded';
/** PodStatus.message of a pod past its active deadline (kubelet's wording). */
export const kDeadlineExceededMessage = 'Pod was active on the node longer than the specified deadline';

/**
 * activeDeadlineRemainingMs: milliseconds left before `pod` passes its active deadline, counted
 * from `startTimeMs` (status.startTime, epoch ms) at `nowMs`; 0 once passed; null when the pod
 * has no spec.activeDeadlineSeconds (seconds).
 */
export function activeDeadlineRemainingMs(pod: Pod, startTimeMs: number, nowMs: number): number | null {
  const s = pod.spec?.activeDeadlineSeconds;
  if (typeof s !== 'number' || !(s > 0)) return null;
  return Math.max(0, startTimeMs + s * 1000 - nowMs);
}
