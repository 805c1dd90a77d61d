// Counterpart of pkg/kubelet/dockershim/helpers.go recoverFromCreationConflictIfNeeded.
/**
 * createWithConflictRecovery: the Docker create of a sandbox or a container, with dockershim's
 * recovery when its name is taken (e.g. by a create that timed out but happened). Used by
 * docker-sandbox.ts (the pause container) and docker-cri-service.ts (app containers). Worker threads.
 */
import { AgentError, isAlreadyExists, serializeError } from '../../../shared/errors.js';
import type { ContainerCreateSpec, ContainerRuntime } from '../container/runtime.js';
import { kPodUidLabel } from './docker-cri-labels.js';

/**
 * createWithConflictRecovery creates `spec`; when its name is taken, a dead container of the same
 * pod (same `io.kubernetes.pod.uid` label) is removed and the create made once more, a running one
 * keeps the conflict, and a container kubelet-ts did not create is never touched (DESIGN.md §4): the
 * error then says so, naming the container. Resolves the new container's ID.
 * @throws AgentError ERR_ALREADY_EXISTS (a foreign or running holder); the runtime's other errors.
 */
export async function createWithConflictRecovery(runtime: ContainerRuntime, spec: ContainerCreateSpec): Promise<string> {
  try {
    return await runtime.createContainer(spec);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const uid = spec.labels[kPodUidLabel] ?? '';
    const taken = uid
      ? (await runtime.listContainers({ labels: [`${kPodUidLabel}=${uid}`] })).find((c) => c.name === spec.name)
      : undefined;
    if (!taken) {
      throw new AgentError(
        'ERR_ALREADY_EXISTS',
        `the container name "${spec.name}" is taken by a container that kubelet-ts did not create (it has no ${kPodUidLabel}=${uid} label); kubelet-ts leaves it alone: remove or rename it (${serializeError(err).message})`,
      );
    }
    if (taken.state === 'running') throw err;
    await runtime.removeContainer(taken.id);
    return runtime.createContainer(spec);
  }
}
