/**
 * Counterpart of pkg/kubelet/types/pod_update.go: the annotations every source sets on a pod,
 * and the helpers that read them.
 */
import type { Pod, PodSourceName } from './api.js';

/** `kubernetes.io/config.source`: which source a pod came from (file, http, api, etcd). */
export const ConfigSourceAnnotationKey = 'kubernetes.io/config.source';
/** `kubernetes.io/config.hash`: the hash of the pod as the source read it (the static pod's UID). */
export const ConfigHashAnnotationKey = 'kubernetes.io/config.hash';
/** `kubernetes.io/config.seen`: RFC 3339 time the source first saw this version of the pod. */
export const ConfigSeenAnnotationKey = 'kubernetes.io/config.seen';

/** podFullName returns `namespace/name`, the key sources dedupe on (docs/contracts.md "Pod sources and pod identity"). */
export function podFullName(pod: Pod): string {
  return `${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? ''}`;
}

/** podSource returns the pod's `kubernetes.io/config.source`, or undefined when it has none. */
export function podSource(pod: Pod): PodSourceName | undefined {
  return pod.metadata?.annotations?.[ConfigSourceAnnotationKey] as PodSourceName | undefined;
}

/**
 * isStaticPod is true for pods from the file and http sources, as kubetypes.IsStaticPod:
 * those are the sources the apiserver does not know about.
 */
export function isStaticPod(pod: Pod): boolean {
  const source = podSource(pod);
  return source === 'file' || source === 'http';
}
