/**
 * Counterpart of kuberuntime's GetPodStatus (kuberuntime_manager.go) with dockershim's
 * ListContainers/ContainerStatus: everything of one pod UID found in the runtime, as a
 * RuntimePod (the kubecontainer.PodStatus).
 */
import { isNotFound } from '../../shared/errors.js';
import type { RuntimeContainer, RuntimeContainerState, RuntimePod } from '../../shared/messages.js';
import { kDefaultTerminationGracePeriodSeconds } from '../../shared/pod-policy.js';
import {
  kContainerHashLabel,
  kContainerNameLabel,
  kContainerTypeLabel,
  kContainerTypeSandbox,
  kPodNameLabel,
  kPodNamespaceLabel,
  kPodUidLabel,
  kRestartCountLabel,
  kSandboxIdLabel,
  kTerminationGracePeriodLabel,
  parseContainerName,
} from './labels.js';
import type { ContainerDetails, ContainerRuntime } from '../runtime/runtime.js';
import { ownerLabelFilter } from './labels.js';
import { kNoopPodNetwork, type PodNetwork } from '../network/pod-network.js';

/** toRuntimeState maps Docker's state word to a RuntimeContainerState (dockershim toRuntimeAPIContainerState). */
export function toRuntimeState(dockerState: string): RuntimeContainerState {
  switch (dockerState) {
    case 'running':
    case 'paused':
    case 'restarting':
      return 'running';
    case 'created':
      return 'created';
    case 'exited':
    case 'dead':
      return 'exited';
    default:
      return 'unknown';
  }
}

function intLabel(v: string | undefined, fallback: number): number {
  const n = Number(v);
  return v !== undefined && v !== '' && Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

/**
 * toRuntimeContainer maps an inspected container to a RuntimeContainer. Reason: `OOMKilled` if
 * the kernel OOM-killed it, `Completed` on exit 0, `Error` otherwise (only once exited; '' before),
 * `StartError` for a container whose start failed (exit code as Docker reports it, else 128).
 */
export function toRuntimeContainer(c: ContainerDetails): RuntimeContainer {
  // A container whose start failed stays `created` in Docker with State.Error set; containerd
  // reports it exited with reason StartError (exit 128), and so do we, so that restart backoff
  // (CrashLoopBackOff) applies to it instead of a new attempt on every sync.
  const startFailed = c.status === 'created' && c.error !== '';
  const state = startFailed ? 'exited' : toRuntimeState(c.status);
  const parsed = parseContainerName(c.name);
  const sandbox = c.labels[kContainerTypeLabel] === kContainerTypeSandbox;
  let reason = '';
  if (startFailed) reason = 'StartError';
  else if (state === 'exited') reason = c.oomKilled ? 'OOMKilled' : c.exitCode === 0 ? 'Completed' : 'Error';
  const restartCount = intLabel(c.labels[kRestartCountLabel], parsed?.attempt ?? 0);
  return {
    id: c.id,
    name: c.labels[kContainerNameLabel] ?? parsed?.containerName ?? '',
    sandbox,
    attempt: parsed?.attempt ?? restartCount,
    state,
    hash: c.labels[kContainerHashLabel] ?? '',
    restartCount,
    image: c.image,
    imageId: c.imageId,
    createdAtMs: c.createdAtMs,
    startedAtMs: c.startedAtMs,
    finishedAtMs: state === 'running' ? 0 : startFailed ? c.finishedAtMs || c.createdAtMs : c.finishedAtMs,
    exitCode: startFailed ? c.exitCode || 128 : state === 'exited' ? c.exitCode : 0,
    reason,
    message: c.error,
    sandboxId: sandbox ? '' : (c.labels[kSandboxIdLabel] ?? ''),
  };
}

/** Newest first by createdAt; ties broken by attempt (higher first), then ID for stability. */
function newestFirst(a: RuntimeContainer, b: RuntimeContainer): number {
  return b.createdAtMs - a.createdAtMs || b.attempt - a.attempt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * getRuntimePod lists the containers of pod `uid` owned by `nodeName` (one list call), inspects
 * each (in parallel) and returns them as a RuntimePod (assembleRuntimePod); null when nothing of
 * the pod exists. A container removed between list and inspect is skipped.
 * @throws AgentError from the runtime (e.g. ERR_RUNTIME_UNAVAILABLE); the network's read errors.
 */
export async function getRuntimePod(
  runtime: ContainerRuntime,
  nodeName: string,
  uid: string,
  network: PodNetwork = kNoopPodNetwork,
): Promise<RuntimePod | null> {
  return assembleRuntimePod(uid, await readPodDetails(runtime, nodeName, uid), network);
}

/**
 * readPodDetails: the inspect of every container of pod `uid` owned by `nodeName` — one list call,
 * then one inspect per container in parallel; a container removed between the two is skipped.
 * @throws AgentError from the runtime (e.g. ERR_RUNTIME_UNAVAILABLE).
 */
export async function readPodDetails(runtime: ContainerRuntime, nodeName: string, uid: string): Promise<ContainerDetails[]> {
  const list = await runtime.listContainers({ labels: ownerLabelFilter(nodeName, uid) });
  const details = await Promise.all(list.map((s) => inspectIfPresent(runtime, s.id)));
  return details.filter((d): d is ContainerDetails => d !== null);
}

/** inspectIfPresent: the inspect of container `id`, null when it is gone. @throws AgentError from the runtime but not-found. */
export async function inspectIfPresent(runtime: ContainerRuntime, id: string): Promise<ContainerDetails | null> {
  try {
    return await runtime.inspectContainer(id);
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

/**
 * assembleRuntimePod: the RuntimePod of pod `uid` from the inspects of its containers (others'
 * are ignored), sandboxes and app containers newest first; null when none is of the pod. Name,
 * namespace and grace period come from the newest container's labels. `podIp`: with an enabled
 * `network`, the first IP of the newest sandbox's network status when that sandbox is running
 * (kuberuntime GetPodStatus: determinePodSandboxIPs of the newest sandbox, only when
 * SANDBOX_READY), else '' (no network, hostNetwork — main reports the host's).
 * @throws the network's read errors.
 */
export async function assembleRuntimePod(
  uid: string,
  details: ContainerDetails[],
  network: PodNetwork = kNoopPodNetwork,
): Promise<RuntimePod | null> {
  const found = details.filter((d) => d.labels[kPodUidLabel] === uid);
  if (found.length === 0) return null;
  const all = found.map(toRuntimeContainer).sort(newestFirst);
  const newest = found.slice().sort((a, b) => b.createdAtMs - a.createdAtMs)[0];
  const sandboxes = all.filter((c) => c.sandbox);
  let podIp = '';
  if (network.enabled && sandboxes[0]?.state === 'running') podIp = (await network.podNetworkStatus(sandboxes[0].id))?.ips[0] ?? '';
  return {
    uid,
    name: newest.labels[kPodNameLabel] ?? '',
    namespace: newest.labels[kPodNamespaceLabel] ?? '',
    sandboxes,
    containers: all.filter((c) => !c.sandbox),
    podIp,
    terminationGracePeriodSeconds: intLabel(newest.labels[kTerminationGracePeriodLabel], kDefaultTerminationGracePeriodSeconds),
  };
}
