// One home for the pod rules that both threads apply (issue #41 item 1): the grace period a
// stop gets, and (below) when a container restarts and when a pod is finished. Pure functions
// and constants, safe in any thread; every caller on the main thread and in the workers uses these.
import type { Pod } from './api.js';
import { kDefaultTerminationGracePeriodSeconds } from './defaults.js';

export { kDefaultTerminationGracePeriodSeconds };

/**
 * kGracePeriodFromLabels: the grace period (seconds) of a kill that says "use the one recorded on
 * the containers' `annotation.io.kubernetes.pod.terminationGracePeriod` label", for a pod whose
 * spec is gone (housekeeping's leftovers, an old pod of a replaced UID). Any negative value is read
 * so (isGracePeriodFromLabels); the kubelet's killContainer likewise falls back to the label when it
 * has no spec (pkg/kubelet/kuberuntime/kuberuntime_container.go).
 */
export const kGracePeriodFromLabels = -1;

/** isGracePeriodFromLabels: `gracePeriodSeconds` is the kGracePeriodFromLabels sentinel (any negative number). */
export function isGracePeriodFromLabels(gracePeriodSeconds: number): boolean {
  return gracePeriodSeconds < 0;
}

/**
 * podTerminationGracePeriodSeconds: the pod's `spec.terminationGracePeriodSeconds` in seconds,
 * else the apiserver's default (kDefaultTerminationGracePeriodSeconds, 30 s; a value that is not a
 * number >= 0 counts as unset — validation rejects it on every admitted pod). Follows
 * calculateEffectiveGracePeriod (pkg/kubelet/pod_workers.go) for a pod not being deleted.
 */
export function podTerminationGracePeriodSeconds(pod: Pod | undefined): number {
  const v = pod?.spec?.terminationGracePeriodSeconds;
  return typeof v === 'number' && v >= 0 ? v : kDefaultTerminationGracePeriodSeconds;
}

/**
 * effectiveGracePeriodSeconds: `override` (seconds: a DELETE's gracePeriodSeconds, the pod's
 * `metadata.deletionGracePeriodSeconds`) when given, else podTerminationGracePeriodSeconds(pod).
 * As calculateEffectiveGracePeriod (pkg/kubelet/pod_workers.go), where deletionGracePeriodSeconds
 * overrides the spec's, and the registry's BeforeDelete (pkg/registry/core/pod/strategy.go
 * CheckGracefulDelete) defaulting a DELETE's grace period to the pod's.
 */
export function effectiveGracePeriodSeconds(pod: Pod | undefined, override?: number | null): number {
  return override ?? podTerminationGracePeriodSeconds(pod);
}
