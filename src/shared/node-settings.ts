/**
 * The node's settings a sync needs, resolved by the main thread at start and handed to every pool
 * thread (the KubeletConfiguration fields and network plugin flags of the same names), with the
 * kubelet's defaults.
 */

/**
 * kDefaultRuntimeRequestTimeoutMs: `--runtime-request-timeout`'s default, 2 minutes in
 * milliseconds, as the kubelet's (KubeletConfiguration runtimeRequestTimeout).
 */
export const kDefaultRuntimeRequestTimeoutMs = 120_000;

/**
 * NodeNetworkSettings: how sandboxes get their network, as the kubelet's network plugin flags
 * (`--network-plugin`, `--cni-bin-dir`, `--cni-conf-dir`, `--cni-cache-dir`) resolved by the main
 * thread at start. With `plugin: 'cni'` every sandbox that is not hostNetwork is created with
 * network `none` and then joined to the network of `confFile` by CNI ADD (dockershim's
 * SetUpPod), before any container of the pod starts.
 */
export interface NodeNetworkSettings {
  /** 'cni': the CNI plugin chain of `confFile`; 'none': no pod network (sandbox `none`, podIP ''). */
  plugin: 'cni' | 'none';
  /** --cni-bin-dir split on `:` (CNI_PATH), absolute directories searched in order. */
  binDirs: string[];
  /** The network configuration in use, absolute: a `.conflist`, `.conf` or `.json` (the first by name in --cni-conf-dir, or the agent's own default under `<root-dir>/cni/net.d`). */
  confFile: string;
  /** Where the CNI results of set-up sandboxes are kept (libcni's cache dir): `<root-dir>/cni/cache`. */
  cacheDir: string;
  /** The address hostPorts are published on (portmap's hostIP): --node-ip, e.g. `127.0.0.1`. */
  hostPortIp: string;
}

/** kNoPodNetwork: no pod network (the fake runtime; `--network-plugin none`). */
export const kNoPodNetwork: Readonly<NodeNetworkSettings> = { plugin: 'none', binDirs: [], confFile: '', cacheDir: '', hostPortIp: '' };

/**
 * NodeSandboxSettings: the node flags a sync needs to build a pod's sandbox and containers
 * (issue 12 items 6 and 7), as the kubelet's KubeletConfiguration fields of the same names.
 */
export interface NodeSandboxSettings {
  /** --cluster-dns: cluster DNS server IPs; [] = none (ClusterFirst falls back to Default). */
  clusterDNS: string[];
  /** --cluster-domain: e.g. `cluster.local`; '' = none. */
  clusterDomain: string;
  /** --resolv-conf: the node's resolver file, the base of Default and ClusterFirst; '' = none. */
  resolvConf: string;
  /** --cgroups-per-qos: give each pod its own cgroup (kubepods/…/pod<uid>) as the containers' CgroupParent. */
  cgroupsPerQOS: boolean;
  /** --cgroup-root: the absolute cgroup path the kubepods tree goes under. */
  cgroupRoot: string;
  /** --pod-max-pids: pids.max of each pod; -1 = unlimited. */
  podPidsLimit: number;
  /** --container-log-max-size, bytes: Docker json-file `max-size` of every container. */
  containerLogMaxSizeBytes: number;
  /** --container-log-max-files: Docker json-file `max-file` of every container. */
  containerLogMaxFiles: number;
}

/** kDefaultNodeSandboxSettings: the kubelet's defaults (cgroup root ours: `/kubelet-ts`). */
export const kDefaultNodeSandboxSettings: Readonly<NodeSandboxSettings> = {
  clusterDNS: [],
  clusterDomain: '',
  resolvConf: '/etc/resolv.conf',
  cgroupsPerQOS: true,
  cgroupRoot: '/kubelet-ts',
  podPidsLimit: -1,
  containerLogMaxSizeBytes: 10 * 1024 * 1024,
  containerLogMaxFiles: 5,
};
