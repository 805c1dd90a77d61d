/**
 * Counterpart of dockershim's sandbox network steps (pkg/kubelet/dockershim/docker_sandbox.go
 * RunPodSandbox → network.SetUpPod, StopPodSandbox → TearDownPod, PodSandboxStatus → the pod IP;
 * the port mappings of kuberuntime's generatePodSandboxConfig): what a sync, a kill and GC ask of
 * the PodNetwork (network/pod-network.ts) for ONE sandbox container.
 */
import type { Pod } from '../../shared/api.js';
import { AgentError, serializeError } from '../../shared/errors.js';
import { inspectIfPresent } from './runtime-pod.js';
import type { RuntimeContainer } from '../../shared/messages.js';
import type { PodNetwork, PodNetworkTarget, PortMapping } from '../network/pod-network.js';
import type { ContainerRuntime } from '../runtime/runtime.js';

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
      out.push({ hostPort: p.hostPort, containerPort: p.containerPort, protocol: protocol === 'udp' || protocol === 'sctp' ? protocol : 'tcp', hostIP: p.hostIP || defaultHostIp });
    }
  }
  return out;
}

/** networkTargetOf: the PodNetworkTarget of sandbox `sandboxId` of a pod (CNI_ARGS K8S_POD_*). */
export function networkTargetOf(sandboxId: string, pod: { uid: string; name: string; namespace: string }): PodNetworkTarget {
  return { sandboxId, podUid: pod.uid, podName: pod.name, podNamespace: pod.namespace };
}

/**
 * sandboxNetnsPath: `/proc/<pid>/ns/net` of the sandbox's (pause) process, from an inspect; ''
 * when the sandbox is not running (pid 0) or gone — dockershim's GetNetNS, whose '' TearDownPod
 * accepts. Runs on a worker thread.
 * @throws AgentError from the runtime other than not-found (e.g. ERR_RUNTIME_UNAVAILABLE).
 */
export async function sandboxNetnsPath(runtime: ContainerRuntime, sandboxId: string): Promise<string> {
  const d = await inspectIfPresent(runtime, sandboxId);
  return d?.pid && d.pid > 0 ? `/proc/${d.pid}/ns/net` : '';
}

/**
 * setUpFailureMessage: the kubelet's wording of a failed SetUpPod inside RunPodSandbox, after the
 * `Failed to create pod sandbox: ` of the FailedCreatePodSandBox event (dockershim's
 * `failed to set up sandbox container %q network for pod %q: %v` wrapping the CNI plugin's
 * `networkPlugin cni failed to set up pod "<name>_<ns>" network: <msg>`). Pure.
 */
export function setUpFailureMessage(sandboxId: string, podName: string, podNamespace: string, err: unknown): string {
  const msg = serializeError(err).message;
  return `failed to set up sandbox container "${sandboxId}" network for pod "${podName}": networkPlugin cni failed to set up pod "${podName}_${podNamespace}" network: ${msg}`;
}

/**
 * tearDownFailureMessage: the kubelet's wording of a failed TearDownPod inside StopPodSandbox
 * (`networkPlugin cni failed to teardown pod "<name>_<ns>" network: <msg>`). Pure.
 */
export function tearDownFailureMessage(podName: string, podNamespace: string, err: unknown): string {
  return `networkPlugin cni failed to teardown pod "${podName}_${podNamespace}" network: ${serializeError(err).message}`;
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
  runtime: ContainerRuntime, network: PodNetwork, sandbox: Pick<RuntimeContainer, 'id' | 'state'>, pod: { uid: string; name: string; namespace: string },
): Promise<void> {
  if (!network.enabled) return;
  const netns = sandbox.state === 'running' ? await sandboxNetnsPath(runtime, sandbox.id) : '';
  try {
    await network.tearDownPod(networkTargetOf(sandbox.id, pod), netns);
  } catch (err) {
    throw new AgentError('ERR_NETWORK', tearDownFailureMessage(pod.name, pod.namespace, err), { cause: err, retriable: true });
  }
}
