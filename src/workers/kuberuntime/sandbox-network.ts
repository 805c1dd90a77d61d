/**
 * Counterpart of dockershim's sandbox network steps (pkg/kubelet/dockershim/docker_sandbox.go
 * RunPodSandbox → network.SetUpPod, StopPodSandbox → TearDownPod, PodSandboxStatus → the pod IP;
 * the port mappings of kuberuntime's generatePodSandboxConfig): what a sync, a kill and GC ask of
 * the PodNetwork (network/pod-network.ts) for ONE sandbox container.
 */
import type { Pod } from '../../shared/api.js';
import { networkTargetOf, sandboxNetnsPath, tearDownNetwork } from '../runtime/docker/docker-sandbox-network.js';
import type { RuntimeContainer } from '../../shared/messages.js';
import type { PodNetwork, PortMapping } from '../network/pod-network.js';
import type { ContainerRuntime } from '../runtime/runtime.js';

// Moved to runtime/docker/ (RunPodSandbox's side, #40); re-exported while kuberuntime still calls them.
export {
  networkTargetOf,
  sandboxNetnsPath,
  setUpFailureMessage,
  tearDownFailureMessage,
} from '../runtime/docker/docker-sandbox-network.js';

/**
 * usesPodNetwork: true when the pod's sandbox joins the pod network — the network is enabled and
 * the pod is not `hostNetwork: true` (dockershim skips SetUpPod for host-network sandboxes).
 */
export function usesPodNetwork(pod: Pod | undefined, network: PodNetwork): boolean {
  return network.enabled && pod?.spec?.hostNetwork !== true;
}

/**
 * podPortMappings: the pod's hostPorts for portmap, as kuberuntime's generatePodSandboxConfig
 * collects them: every port of every container (init containers too) with a `hostPort`; hostIP =
 * the port's `hostIP` or `defaultHostIp` (--node-ip); protocol lower-cased (default tcp). Pure.
 */
export function podPortMappings(pod: Pod, defaultHostIp: string): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      const protocol = String(p.protocol ?? 'TCP').toLowerCase();
      out.push({
        hostPort: p.hostPort,
        containerPort: p.containerPort,
        protocol: protocol === 'udp' || protocol === 'sctp' ? protocol : 'tcp',
        hostIP: p.hostIP || defaultHostIp,
      });
    }
  }
  return out;
}

/**
 * tearDownSandboxNetwork: TearDownPod of one sandbox container BEFORE it is stopped or removed
 * (StopPodSandbox's order: the netns is then still there for the plugins' DEL). The netns is that
 * of its pid while it runs, '' otherwise (DEL then only releases IPAM and host-side state). A
 * sandbox with no cached result is a no-op for the CNI network (idempotent). Runs on a worker thread.
 * @throws AgentError ERR_NETWORK with the kubelet's teardown wording when a plugin's DEL fails
 * (the caller fails its step; the next sync or GC retries); runtime errors as sandboxNetnsPath.
 */
export async function tearDownSandboxNetwork(
  runtime: ContainerRuntime,
  network: PodNetwork,
  sandbox: Pick<RuntimeContainer, 'id' | 'state'>,
  pod: { uid: string; name: string; namespace: string },
): Promise<void> {
  if (!network.enabled) return;
  const netns = sandbox.state === 'running' ? await sandboxNetnsPath(runtime, sandbox.id) : '';
  await tearDownNetwork(network, networkTargetOf(sandbox.id, pod), netns);
}
