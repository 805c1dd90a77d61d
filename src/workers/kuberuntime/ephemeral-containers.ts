/**
 * Counterpart of the ephemeral-container parts of pkg/kubelet/kuberuntime: computePodActions'
 * EphemeralContainersToStart (kuberuntime_manager.go) and startContainer's namespace choice for them
 * (kuberuntime_container.go, with the target's PID namespace of util.go namespacesForPod /
 * NamespaceMode_TARGET). An ephemeral container (`kubectl debug POD --image … --target C`) is started
 * once, in the running sandbox's network and IPC namespaces, never restarted, and never holds the
 * pod alive; with `targetContainerName` it joins that container's PID namespace
 * (Docker `--pid container:<id>`).
 */
import type { Pod } from '../../shared/api.js';
import { ephemeralContainerAsContainer } from '../../shared/ephemeral-containers.js';
import { hashContainer } from '../../shared/hash.js';
import type { RuntimePod } from '../../shared/messages.js';
import type { ContainerToStart } from './compute-pod-actions.js';
import { buildContainerSpec, type ContainerConfigContext } from './container-config.js';
import type { ContainerCreateSpec } from '../runtime/runtime.js';

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

/**
 * buildEphemeralContainerSpec: the create spec of `spec.ephemeralContainers[index]`, as an app
 * container's (buildContainerSpec: the sandbox's network and IPC namespaces, mounts, env,
 * security context), but with `targetContainerName` set (and no hostPID or shareProcessNamespace)
 * in the PID namespace of the target's running container (`container:<id>`).
 * @throws the errors of buildContainerSpec (CreateContainerConfigError), and when the target has
 *   no running container (the ephemeral container then waits and the pod is synced again).
 */
export async function buildEphemeralContainerSpec(
  pod: Pod,
  runtimePod: RuntimePod | null,
  index: number,
  hash: string,
  image: string,
  ctx: ContainerConfigContext,
): Promise<ContainerCreateSpec> {
  const ec = pod.spec!.ephemeralContainers![index];
  const asApp: Pod = { ...pod, spec: { ...pod.spec!, containers: [ephemeralContainerAsContainer(ec)] } };
  const spec = await buildContainerSpec(asApp, 0, hash, 0, image, ctx);
  const target = ec.targetContainerName ?? '';
  if (target === '' || pod.spec?.hostPID === true || pod.spec?.shareProcessNamespace === true) return spec;
  const running = (runtimePod?.containers ?? []).find((c) => c.name === target && c.state === 'running' && !c.sandbox);
  if (!running)
    throw new Error(`the target container ${JSON.stringify(target)} of ephemeral container ${JSON.stringify(ec.name)} is not running`);
  return { ...spec, hostConfig: { ...spec.hostConfig, pidMode: `container:${running.id}` } };
}
