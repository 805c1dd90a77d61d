/**
 * Counterpart of the ephemeral-container parts of pkg/kubelet/kuberuntime: computePodActions'
 * EphemeralContainersToStart (kuberuntime_manager.go) and startContainer's namespace choice for them
 * (kuberuntime_container.go, with the target's PID namespace of util.go namespacesForPod /
 * NamespaceMode_TARGET). An ephemeral container (`kubectl debug POD --image … --target C`) is started
 * once, in the running sandbox's network and IPC namespaces, never restarted, and never holds the
 * pod alive; with `targetContainerName` it joins that container's PID namespace (the CRI's
 * NamespaceMode TARGET with target_id, set by sync-pod.ts).
 */
import type { Pod } from '../../shared/api.js';
import { ephemeralContainerAsContainer } from '../../shared/ephemeral-containers.js';
import { hashContainer } from '../../shared/hash.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import type { ContainerToStart } from './pod-actions.js';

/** ephemeralContainerNames: the names of the pod's ephemeral containers (computePodActions keeps their containers running). */
export function ephemeralContainerNames(pod: Pod): string[] {
  return (pod.spec?.ephemeralContainers ?? []).map((c) => c.name);
}

/**
 * ephemeralContainersToStart: the ephemeral containers of `pod` that have no container in the
 * runtime at all (any state: one that ran and exited is never started again), in spec order, as
 * ContainerToStart with `ephemeral: true` and `index` into `spec.ephemeralContainers`. Pure.
 * The caller plans them only when the sandbox stays (no killPod or createSandbox), as upstream.
 */
export function ephemeralContainersToStart(pod: Pod, runtimePod: RuntimePod | null): ContainerToStart[] {
  if (pod.metadata?.deletionTimestamp) return [];
  const present = new Set((runtimePod?.containers ?? []).map((c) => c.name));
  return (pod.spec?.ephemeralContainers ?? []).flatMap((ec, index) =>
    present.has(ec.name)
      ? []
      : [
          {
            index,
            ephemeral: true,
            name: ec.name,
            reason: 'NotPresent' as const,
            hash: hashContainer(ephemeralContainerAsContainer(ec)),
            restartCount: 0,
          },
        ],
  );
}
