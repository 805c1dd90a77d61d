/**
 * Counterpart of the network part of kuberuntime's podSandboxChanged and dockershim's
 * PodSandboxStatus network check (the CNI plugin's status of a sandbox; CNI CHECK since spec 0.4):
 * whether the newest sandbox of a pod still has its network, for computePodActions'
 * SandboxNetworkState. Per worker thread: the first check of a sandbox on this thread is a full
 * one (CNI CHECK: an adopted sandbox after an agent restart), the later ones quick (no plugin run).
 */
import type { Pod } from '../../shared/api.js';
import type { Logger } from '../../shared/logging.js';
import type { RuntimePod } from '../../shared/messages.js';
import type { SandboxNetworkState } from './compute-pod-actions.js';
import type { PodNetwork } from '../network/pod-network.js';
import type { ContainerRuntime } from '../runtime/runtime.js';
import { networkTargetOf, sandboxNetnsPath, usesPodNetwork } from './sandbox-network.js';

/** Sandbox IDs fully checked (CNI CHECK) on this thread, by PodNetwork. */
const fullyChecked = new WeakMap<PodNetwork, Set<string>>();

/** kMaxCheckedSandboxes: the bound of the per-thread set (cleared when full: the next checks are full ones again). */
const kMaxCheckedSandboxes = 20_000;

/**
 * markSandboxChecked: `sandboxId` (set up by this thread, or fully checked) needs only quick
 * checks from now on. Called after a successful ADD.
 */
export function markSandboxChecked(network: PodNetwork, sandboxId: string): void {
  let set = fullyChecked.get(network);
  if (!set) fullyChecked.set(network, (set = new Set()));
  if (set.size >= kMaxCheckedSandboxes) set.clear();
  set.add(sandboxId);
}

/** forgetCheckedSandbox: drops `sandboxId` from the set (after its teardown). */
export function forgetCheckedSandbox(network: PodNetwork, sandboxId: string): void {
  fullyChecked.get(network)?.delete(sandboxId);
}

/** checkMode: 'full' for a sandbox this thread has not checked or set up yet, else 'quick'. */
export function checkMode(network: PodNetwork, sandboxId: string): 'quick' | 'full' {
  return fullyChecked.get(network)?.has(sandboxId) ? 'quick' : 'full';
}

/**
 * sandboxNetworkState reads the network state of `runtimePod`'s newest sandbox for computePodActions:
 * `{enabled: false}` for a pod that does not use the pod network (hostNetwork, network disabled);
 * `lost: true` when checkPod fails. Only a running newest sandbox with a pod IP is checked (one
 * without an IP is changed anyway). A quick check is a file read and stats (`netns` '' — no
 * inspect); a full check inspects the sandbox for its netns and runs CNI CHECK, then marks it
 * checked. A check that throws counts as passed (logged): a broken plugin must not recreate every
 * sandbox of the node on each sync. Runs on a worker thread. Never rejects but for runtime errors
 * of the inspect (e.g. ERR_RUNTIME_UNAVAILABLE).
 */
export async function sandboxNetworkState(
  runtime: ContainerRuntime | null, network: PodNetwork, pod: Pod, runtimePod: RuntimePod | null, logger?: Logger,
): Promise<SandboxNetworkState> {
  if (!usesPodNetwork(pod, network)) return { enabled: false };
  const newest = runtimePod?.sandboxes[0];
  if (!runtimePod || !newest || newest.state !== 'running' || runtimePod.podIp === '') return { enabled: true };
  const mode = runtime ? checkMode(network, newest.id) : 'quick';
  const netns = mode === 'full' && runtime ? await sandboxNetnsPath(runtime, newest.id) : '';
  try {
    const ok = await network.checkPod(networkTargetOf(newest.id, runtimePod), netns, mode);
    if (ok && mode === 'full') markSandboxChecked(network, newest.id);
    if (!ok) logger?.info({ podUID: runtimePod.uid, containerID: newest.id, mode }, 'Pod sandbox lost its network');
    return { enabled: true, lost: !ok };
  } catch (err) {
    logger?.warn({ podUID: runtimePod.uid, containerID: newest.id, mode, err }, 'Pod network check failed');
    return { enabled: true };
  }
}
