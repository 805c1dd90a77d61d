/**
 * Counterpart of the runtime side of pkg/kubelet/pleg/generic.go relist (GetPods with all=true):
 * one list call for every container this node owns; the PLEG on the main thread diffs the result.
 */
import type { RelistContainer, RelistResult } from '../shared/messages.js';
import { kContainerNameLabel, kPodNameLabel, kPodNamespaceLabel, kPodUidLabel, ownerLabelFilter } from './labels.js';
import { toRuntimeState } from './runtime-pod.js';
import type { ContainerRuntime } from './runtime/runtime.js';

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
