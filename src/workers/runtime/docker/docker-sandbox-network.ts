// Counterpart of dockershim's sandbox network steps (pkg/kubelet/dockershim/docker_sandbox.go RunPodSandbox → network.SetUpPod, StopPodSandbox → TearDownPod, PodSandboxStatus → the pod IP and the plugin's status), kubernetes ≤1.23; cri-dockerd core/sandbox_*.go.
/**
 * What the Docker implementation of the CRI asks of the agent's own pod network (network/) for ONE
 * sandbox (pause) container: the CNI target, its network namespace, the hostPorts of the
 * PodSandboxConfig for portmap, the kubelet's wording of a failed SetUpPod / TearDownPod, and the
 * per-thread memory of which sandboxes were fully checked (CNI CHECK) already.
 */
import { AgentError, isNotFound, serializeError } from '../../../shared/errors.js';
import type { PodNetwork, PodNetworkTarget, PortMapping } from '../../network/pod-network.js';
import type { CriInput, PortMapping as CriPortMapping } from '../cri/types.js';
import type { ContainerRuntime } from '../container/runtime.js';

/** networkTargetOf: the PodNetworkTarget of sandbox `sandboxId` of a pod (CNI_ARGS K8S_POD_*). */
export function networkTargetOf(sandboxId: string, pod: { uid: string; name: string; namespace: string }): PodNetworkTarget {
  return { sandboxId, podUid: pod.uid, podName: pod.name, podNamespace: pod.namespace };
}

/**
 * criPortMappings: a PodSandboxConfig's `port_mappings` for portmap — those with a `host_port`;
 * protocol lower-cased (TCP when unset); `host_ip` or else `defaultHostIp` (--node-ip, as today's
 * agent publishes hostPorts on the node's address). Pure.
 */
export function criPortMappings(mappings: readonly CriInput<CriPortMapping>[] | null | undefined, defaultHostIp: string): PortMapping[] {
  const out: PortMapping[] = [];
  for (const p of mappings ?? []) {
    if (!p.host_port) continue;
    const protocol = String(p.protocol ?? 'TCP').toLowerCase();
    out.push({
      hostPort: p.host_port,
      containerPort: p.container_port ?? 0,
      protocol: protocol === 'udp' || protocol === 'sctp' ? protocol : 'tcp',
      hostIP: p.host_ip || defaultHostIp,
    });
  }
  return out;
}

/**
 * sandboxNetnsPath: `/proc/<pid>/ns/net` of the sandbox's (pause) process, from an inspect; ''
 * when the sandbox is not running (pid 0) or gone — dockershim's GetNetNS, whose '' TearDownPod
 * accepts. Runs on a worker thread.
 * @throws AgentError from the runtime other than not-found (e.g. ERR_RUNTIME_UNAVAILABLE).
 */
export async function sandboxNetnsPath(runtime: ContainerRuntime, sandboxId: string): Promise<string> {
  try {
    const d = await runtime.inspectContainer(sandboxId);
    return d.pid && d.pid > 0 ? `/proc/${d.pid}/ns/net` : '';
  } catch (err) {
    if (isNotFound(err)) return '';
    throw err;
  }
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
 * tearDownNetwork: TearDownPod of sandbox `t` with `netnsPath` ('' once it stopped: DEL then only
 * releases IPAM and host-side state). A no-op when the network is disabled or the sandbox has no
 * cached result (idempotent). @throws AgentError ERR_NETWORK with the kubelet's teardown wording.
 */
export async function tearDownNetwork(network: PodNetwork, t: PodNetworkTarget, netnsPath: string): Promise<void> {
  if (!network.enabled) return;
  try {
    await network.tearDownPod(t, netnsPath);
  } catch (err) {
    throw new AgentError('ERR_NETWORK', tearDownFailureMessage(t.podName, t.podNamespace, err), { cause: err, retriable: true });
  }
}

/** kMaxCheckedSandboxes: the bound of a CheckedSandboxes set (cleared when full: the next checks are full ones again). */
const kMaxCheckedSandboxes = 20_000;

/**
 * CheckedSandboxes: the sandboxes of one service whose network was set up or fully checked (CNI
 * CHECK) by it; the others get a full check first (a sandbox adopted after an agent restart), as
 * dockershim's plugin status of an unknown sandbox.
 */
export class CheckedSandboxes {
  readonly #ids = new Set<string>();
  /** mark: `id` needs only quick checks from now on. */
  mark(id: string): void {
    if (this.#ids.size >= kMaxCheckedSandboxes) this.#ids.clear();
    this.#ids.add(id);
  }
  /** forget: `id` was torn down. */
  forget(id: string): void {
    this.#ids.delete(id);
  }
  /** mode: 'quick' for a marked sandbox, else 'full'. */
  mode(id: string): 'quick' | 'full' {
    return this.#ids.has(id) ? 'quick' : 'full';
  }
}
