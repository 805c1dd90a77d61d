/**
 * Counterpart of the kubelet's network plugin seam (pkg/kubelet/dockershim/network/plugins.go:
 * NetworkPlugin SetUpPod / TearDownPod / GetPodNetworkStatus, and the CRI runtime's
 * PodSandboxStatus.Network): what a sync, a kill, GC and relist ask of the pod network. The ONE
 * way worker code reaches the network, as runtime/container/runtime.ts is the one way to the engine.
 * `newPodNetwork` picks the implementation from the worker's bootstrap: `cni-pod-network.ts`
 * (CNI ADD/DEL/CHECK of the node's plugin chain) or {@link kNoopPodNetwork} (no pod network).
 *
 * Errors: AgentError `ERR_NETWORK` with the plugin's own message (CNI's error `msg` and
 * `details`) when a plugin fails; `ERR_INVALID_ARGUMENT` for a bad settings value.
 */
import type { NodeNetworkSettings } from '../../shared/node-settings.js';

/** Which pod a sandbox belongs to (CNI_ARGS K8S_POD_NAMESPACE, K8S_POD_NAME, K8S_POD_UID). */
export interface PodNetworkTarget {
  /** The sandbox container's full ID: CNI_CONTAINERID. */
  sandboxId: string;
  podUid: string;
  podName: string;
  podNamespace: string;
}

/** One hostPort of the pod (portmap's `runtimeConfig.portMappings` entry). */
export interface PortMapping {
  hostPort: number;
  containerPort: number;
  /** Lower-case, as portmap wants it. */
  protocol: 'tcp' | 'udp' | 'sctp';
  /** The host address to publish on ('' = every address). */
  hostIP: string;
}

/** What SetUpPod needs besides the pod: where the sandbox's network namespace is. */
export interface PodNetworkSetUp extends PodNetworkTarget {
  /** `/proc/<pid>/ns/net` of the sandbox's (pause) process: CNI_NETNS. */
  netnsPath: string;
  /** The pod's hostPorts, from every container's ports (may be empty). */
  portMappings: PortMapping[];
}

/** A set-up sandbox's network, as PodSandboxStatus.Network reports it. */
export interface PodNetworkStatus {
  /** The pod's IPs, primary first, without prefix length (e.g. `10.85.0.7`). */
  ips: string[];
}

/** The pod network, one per worker thread. */
export interface PodNetwork {
  /** False for the no-op network: sandboxes stay `none`, no IP, no ADD/DEL. */
  readonly enabled: boolean;
  /**
   * setUpPod: CNI ADD of the whole plugin chain into `netnsPath`; the result is kept in the cache
   * dir (so podNetworkStatus and tearDownPod work after an agent restart). Resolves to the IPs.
   * @throws AgentError ERR_NETWORK with the plugin's message (the ADD is undone by a DEL first).
   */
  setUpPod(t: PodNetworkSetUp): Promise<PodNetworkStatus>;
  /**
   * tearDownPod: CNI DEL of the chain (reverse order), then the cached result is removed.
   * Idempotent: a sandbox never set up, already torn down, or whose netns is gone ('' or a dead
   * pid's path) is not an error; host-local releases its IP by container ID either way.
   * @throws AgentError ERR_NETWORK when a plugin's DEL fails (the cache entry is kept for a retry).
   */
  tearDownPod(t: PodNetworkTarget, netnsPath: string): Promise<void>;
  /**
   * podNetworkStatus: the sandbox's IPs from the cached ADD result, or null when it was never set
   * up or has been torn down. Cheap (one small file read): getRuntimePod calls it on every read.
   */
  podNetworkStatus(sandboxId: string): Promise<PodNetworkStatus | null>;
  /**
   * checkPod: false when a set-up sandbox has lost its network; the sync then recreates the
   * sandbox (`SandboxChanged`). `quick`: the cached result is there and its host-side interface
   * still exists (a stat, no plugin run: for every periodic sync); `full`: also CNI CHECK of the
   * chain (for a sandbox adopted after an agent restart). True when the network is disabled.
   */
  checkPod(t: PodNetworkTarget, netnsPath: string, mode: 'quick' | 'full'): Promise<boolean>;
  /**
   * reconcile: every cached result and every IPAM lease whose sandbox is not live is released by
   * DEL (an agent killed mid-ADD or mid-DEL leaks nothing). The cache entries and leases are read
   * FIRST, then `liveSandboxIds()` is called: a sandbox container exists before its ADD starts, so
   * every entry or lease read belongs to a sandbox the later list sees (an ADD under way is never
   * released). A set is taken as it is (tests, cleanup). Resolves to the sandbox IDs released.
   * Never rejects for one failed DEL (it is logged and retried at the next call).
   */
  reconcile(liveSandboxIds: ReadonlySet<string> | (() => Promise<ReadonlySet<string>>)): Promise<{ released: string[] }>;
}

/** kNoopPodNetwork: no pod network (kNoPodNetwork settings, the fake runtime). */
export const kNoopPodNetwork: PodNetwork = Object.freeze({
  enabled: false,
  setUpPod: async () => ({ ips: [] }),
  tearDownPod: async () => {},
  podNetworkStatus: async () => null,
  checkPod: async () => true,
  reconcile: async () => ({ released: [] }),
});
