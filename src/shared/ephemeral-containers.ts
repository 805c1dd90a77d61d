/**
 * Counterpart of the ephemeral-container helpers of k8s.io/kubernetes pkg/api/v1/pod (util.go
 * VisitContainers with AllContainers) and of `(*v1.Container)(&ec.EphemeralContainerCommon)`: an
 * ephemeral container seen as a Container, and the names a pod's streams and logs may name.
 * Pure; safe in any thread.
 */
import type { Container, Pod } from './api.js';

/** EphemeralContainer: core/v1 EphemeralContainer (a Container's fields, plus targetContainerName). */
export type EphemeralContainer = NonNullable<NonNullable<Pod['spec']>['ephemeralContainers']>[number];

/** ephemeralContainerAsContainer: `ec` as a Container (its EphemeralContainerCommon: every field but targetContainerName). */
export function ephemeralContainerAsContainer(ec: EphemeralContainer): Container {
  const { targetContainerName: _target, ...common } = ec;
  return common as Container;
}

/**
 * isPodContainerName: `name` is one of the pod's init, app or ephemeral containers (what exec,
 * attach and logs accept, as the kubelet's findContainer over all containers).
 */
export function isPodContainerName(pod: Pod, name: string): boolean {
  return [pod.spec?.initContainers, pod.spec?.containers, pod.spec?.ephemeralContainers].some((list) =>
    (list ?? []).some((c) => c.name === name),
  );
}
