/**
 * Counterpart of pkg/kubelet/apis/stats/v1alpha1 (the kubelet's Summary API types) and of the raw
 * samples the stats collector (src/workers/stats) hands to the main thread. Plain data only:
 * these cross the worker boundary (STYLE.md C4). Times in the Summary are RFC 3339 strings, as the
 * Summary JSON has them; times in the samples are epoch milliseconds.
 */

/** CgroupUsage: what one cgroup read gave (cAdvisor's ContainerStats, reduced). Absent fields were not readable. */
export interface CgroupUsage {
  /** Cumulative CPU time, nanoseconds (v1 cpuacct.usage, v2 cpu.stat usage_usec × 1000). */
  cpuUsageNs?: number;
  /** memory.usage_in_bytes (v1) / memory.current (v2), bytes. */
  memoryUsageBytes?: number;
  /** usage − inactive_file (floored at 0), bytes: cAdvisor's working set. */
  workingSetBytes?: number;
  /** total_rss (v1) / anon (v2), bytes. */
  rssBytes?: number;
  /** total_pgfault (v1) / pgfault (v2): cumulative count. */
  pageFaults?: number;
  /** total_pgmajfault (v1) / pgmajfault (v2): cumulative count. */
  majorPageFaults?: number;
  /** The cgroup's memory limit, bytes; absent when unlimited. */
  memoryLimitBytes?: number;
}

/** ContainerSample: one running container at one collection. */
export interface ContainerSample {
  /** The runtime's container ID. */
  id: string;
  /** cAdvisor's `name` label: Docker's container name (`k8s_<container>_<pod>_…`), a CRI runtime's container ID. */
  metricsName: string;
  /** The container's cgroup path (the memory controller's in v1): cAdvisor's `id` label; '' when unknown. */
  cgroupPath: string;
  /** `io.kubernetes.container.name`. */
  name: string;
  image: string;
  /** Epoch ms the container started. */
  startedAtMs: number;
  /** The container's cgroup figures; null when its cgroup could not be found or read. */
  cgroup: CgroupUsage | null;
  /** Bytes of the container's log: Docker's json-file (LogPath and its rotated siblings) or the CRI log file and its rotated siblings. */
  logsUsedBytes: number;
}

/** VolumeSample: one emptyDir volume's disk usage. */
export interface VolumeSample {
  name: string;
  /** Bytes on disk (st_blocks × 512, as `du`). */
  usedBytes: number;
  /** Entries (files and directories) counted. */
  inodesUsed: number;
}

/** PodSample: one pod with a running sandbox or container at one collection. */
export interface PodSample {
  uid: string;
  name: string;
  namespace: string;
  /** Epoch ms the sandbox started (else the earliest container). */
  startedAtMs: number;
  /** The pod cgroup's figures when the pod has one (--cgroups-per-qos); else null (summed from the containers). */
  cgroup: CgroupUsage | null;
  containers: ContainerSample[];
  volumes: VolumeSample[];
}

/** FsSample: a filesystem by statfs, bytes and inodes. */
export interface FsSample {
  capacityBytes: number;
  availableBytes: number;
  usedBytes: number;
  inodes: number;
  inodesFree: number;
}

/** NodeSample: the node's own figures at one collection. */
export interface NodeSample {
  /** Cumulative CPU time of the root cgroup (else /proc/stat's non-idle time), nanoseconds. */
  cpuUsageNs: number;
  /** MemTotal, bytes. */
  memoryCapacityBytes: number;
  /** MemAvailable, bytes. */
  memoryAvailableBytes: number;
  /** MemTotal − MemFree, bytes. */
  memoryUsageBytes: number;
  /** usage − Inactive(file), bytes. */
  memoryWorkingSetBytes: number;
  /** AnonPages, bytes. */
  memoryRssBytes: number;
  pageFaults?: number;
  majorPageFaults?: number;
  /** statfs of the root dir (--root-dir): nodefs. */
  fs: FsSample | null;
  /** statfs of the runtime's image filesystem (Docker's root dir; ImageFsInfo's mountpoint): imageFs. */
  imageFs: FsSample | null;
  /** Epoch ms the node booted (/proc/stat btime). */
  bootTimeMs: number;
}

/** StatsSample: what one `stats` task collected. */
export interface StatsSample {
  /** Epoch ms of the collection. */
  observedAtMs: number;
  /** Which cgroup hierarchy the host has: 1 (legacy/hybrid), 2 (unified), 0 (none readable: fake runtime). */
  cgroupVersion: 0 | 1 | 2;
  node: NodeSample;
  pods: PodSample[];
  /** Containers whose figures could not be read this time (scrape errors), with why. */
  errors: string[];
}

// ---- The Summary API (stats/v1alpha1), as GET /stats/summary answers it.

/** CPUStats (v1alpha1): `usageNanoCores` from two samples, `usageCoreNanoSeconds` cumulative. */
export interface CPUStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
}

/** MemoryStats (v1alpha1), bytes. */
export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

/** FsStats (v1alpha1), bytes. */
export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

/** ContainerStats (v1alpha1). */
export interface ContainerStats {
  name: string;
  startTime: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  rootfs?: FsStats;
  logs?: FsStats;
}

/** VolumeStats (v1alpha1): FsStats plus the volume's name. */
export interface VolumeStats extends FsStats {
  name: string;
}

/** PodStats (v1alpha1). */
export interface PodStats {
  podRef: { name: string; namespace: string; uid: string };
  startTime: string;
  containers: ContainerStats[];
  cpu?: CPUStats;
  memory?: MemoryStats;
  volume?: VolumeStats[];
  'ephemeral-storage'?: FsStats;
}

/** NodeStats (v1alpha1). */
export interface NodeStats {
  nodeName: string;
  startTime: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  fs?: FsStats;
  runtime?: { imageFs?: FsStats };
}

/** Summary (v1alpha1): the body of GET /stats/summary. */
export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}
