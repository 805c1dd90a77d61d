/**
 * Counterpart of the runtime side of pkg/kubelet/pleg/generic.go relist (GetPods with all=true):
 * one list call for every container this node owns; the PLEG on the main thread diffs the result.
 */
import type { RelistContainer, RelistResult, RuntimePod } from '../../shared/messages.js';
import { kContainerNameLabel, kPodNameLabel, kPodNamespaceLabel, kPodUidLabel, ownerLabelFilter } from './labels.js';
import { assembleRuntimePod, inspectIfPresent, toRuntimeState } from './runtime-pod.js';
import type { ContainerRuntime } from '../runtime/runtime.js';
import { kNoopPodNetwork, type PodNetwork } from '../network/pod-network.js';

/**
 * relist lists every container (running or not) labelled `kubelet-ts.node-name=<nodeName>` with
 * an `io.kubernetes.pod.uid` — ONE Docker list call, no inspects — and returns them with the time
 * of the call (`now()`, epoch ms, taken before the call so no change after it is missed).
 * @throws AgentError from the runtime (ERR_RUNTIME_UNAVAILABLE when Docker is down).
 */
export async function relist(runtime: ContainerRuntime, nodeName: string, now: () => number = Date.now, withPodNames = false): Promise<RelistResult> {
  const observedAtMs = now();
  const list = await runtime.listContainers({ labels: ownerLabelFilter(nodeName) });
  return {
    observedAtMs,
    containers: list.map((c) => {
      const container: RelistContainer = { id: c.id, podUid: c.labels[kPodUidLabel] ?? '', name: c.labels[kContainerNameLabel] ?? '', state: toRuntimeState(c.state) };
      if (withPodNames) {
        container.podNamespace = c.labels[kPodNamespaceLabel] ?? '';
        container.podName = c.labels[kPodNameLabel] ?? '';
      }
      return container;
    }),
  };
}

/**
 * readRuntimePods: the RuntimePod of every pod in `containers` (a relist's), as a sync would read
 * it (runtime-pod.ts: one inspect per container, in parallel; the pod IP from `network`) — the
 * first relist's RelistTask.withRuntimePods. A pod whose read fails is left out (its first sync
 * reads it again); a container removed since the list is skipped.
 */
export async function readRuntimePods(runtime: ContainerRuntime, containers: RelistContainer[], network: PodNetwork = kNoopPodNetwork): Promise<RuntimePod[]> {
  const byPod = new Map<string, string[]>();
  for (const c of containers) {
    if (!c.podUid) continue;
    const ids = byPod.get(c.podUid);
    if (ids) ids.push(c.id);
    else byPod.set(c.podUid, [c.id]);
  }
  const pods = await Promise.all([...byPod].map(async ([uid, ids]) => {
    try {
      const details = (await Promise.all(ids.map((id) => inspectIfPresent(runtime, id)))).filter((d) => d !== null);
      return await assembleRuntimePod(uid, details, network);
    } catch {
      return null;
    }
  }));
  return pods.filter((p): p is RuntimePod => p !== null);
}
