/**
 * Counterpart of pkg/kubelet/server/stats/summary.go (summaryProviderImpl.Get) and of the CPU rate
 * the kubelet's cadvisor stats provider derives (cadvisorInfoToCPUandMemoryStats: usageNanoCores
 * from the last two samples): the Summary (stats/v1alpha1) assembled from the collector's latest
 * StatsSample and the one before it. Pure.
 */
import type {
  CgroupUsage,
  ContainerStats,
  CPUStats,
  FsSample,
  FsStats,
  MemoryStats,
  PodStats,
  StatsSample,
  Summary,
} from '../../shared/stats.js';
import { rfc3339Seconds } from '../../shared/rfc3339.js';

/** rfc3339: an epoch-ms time as the Summary writes times (RFC 3339 seconds). */
const rfc3339 = rfc3339Seconds;

/**
 * cpuRate: nanocores (CPU nanoseconds per second) between two cumulative readings `prevNs` at
 * `prevMs` and `curNs` at `curMs` (epoch ms); undefined without a previous reading, when time did
 * not advance or the counter went back (a new cgroup under the same name).
 */
export function cpuRate(
  prevNs: number | undefined,
  prevMs: number | undefined,
  curNs: number | undefined,
  curMs: number,
): number | undefined {
  if (prevNs === undefined || prevMs === undefined || curNs === undefined) return undefined;
  const dtMs = curMs - prevMs;
  if (dtMs <= 0 || curNs < prevNs) return undefined;
  return Math.round(((curNs - prevNs) * 1000) / dtMs);
}

function cpuStats(time: string, u: CgroupUsage, rate: number | undefined): CPUStats | undefined {
  if (u.cpuUsageNs === undefined) return undefined;
  const c: CPUStats = { time, usageCoreNanoSeconds: u.cpuUsageNs };
  if (rate !== undefined) c.usageNanoCores = rate;
  return c;
}

function memoryStats(time: string, u: CgroupUsage): MemoryStats | undefined {
  if (u.memoryUsageBytes === undefined) return undefined;
  const m: MemoryStats = {
    time,
    usageBytes: u.memoryUsageBytes,
    workingSetBytes: u.workingSetBytes,
    rssBytes: u.rssBytes,
    pageFaults: u.pageFaults,
    majorPageFaults: u.majorPageFaults,
  };
  // As the kubelet: available = limit − working set, only when the cgroup has a limit.
  if (u.memoryLimitBytes !== undefined && u.workingSetBytes !== undefined)
    m.availableBytes = Math.max(0, u.memoryLimitBytes - u.workingSetBytes);
  return m;
}

function fsStats(time: string, fs: FsSample | null, usedBytes?: number, inodesUsed?: number): FsStats {
  const s: FsStats = { time };
  if (fs)
    Object.assign(s, { availableBytes: fs.availableBytes, capacityBytes: fs.capacityBytes, inodes: fs.inodes, inodesFree: fs.inodesFree });
  if (usedBytes !== undefined) s.usedBytes = usedBytes;
  if (inodesUsed !== undefined) s.inodesUsed = inodesUsed;
  return s;
}

/** sumUsage: the figures of several cgroups added (the pod's when it has no pod cgroup); a field absent from all stays absent. */
export function sumUsage(list: (CgroupUsage | null)[]): CgroupUsage | null {
  const present = list.filter((u): u is CgroupUsage => u !== null);
  if (present.length === 0) return null;
  const out: CgroupUsage = {};
  for (const k of ['cpuUsageNs', 'memoryUsageBytes', 'workingSetBytes', 'rssBytes', 'pageFaults', 'majorPageFaults'] as const) {
    const vals = present.map((u) => u[k]).filter((v): v is number => v !== undefined);
    if (vals.length) out[k] = vals.reduce((a, b) => a + b, 0);
  }
  return out;
}

/**
 * buildSummary: the Summary of `cur`, with usageNanoCores wherever `prev` (the sample before)
 * holds the same container ID, pod UID or the node. `nodeName` is the node's name. Pod figures
 * come from the pod cgroup when the sample has one, else summed over the containers (a pod CPU
 * rate then only when every container has one). Volumes are the emptyDir volumes; ephemeral
 * storage is the logs plus those volumes (the rootfs writable layers are not measured: the runtime's
 * SizeRw walks each layer). Pure.
 */
export function buildSummary(nodeName: string, cur: StatsSample, prev?: StatsSample): Summary {
  const time = rfc3339(cur.observedAtMs);
  const prevMs = prev?.observedAtMs;
  const prevContainers = new Map<string, number | undefined>();
  const prevPods = new Map<string, number | undefined>();
  for (const p of prev?.pods ?? []) {
    const own = p.cgroup ?? sumUsage(p.containers.map((c) => c.cgroup));
    prevPods.set(p.uid, own?.cpuUsageNs);
    for (const c of p.containers) prevContainers.set(c.id, c.cgroup?.cpuUsageNs);
  }
  const pods: PodStats[] = cur.pods.map((p) => {
    const containers: ContainerStats[] = p.containers.map((c) => {
      const s: ContainerStats = { name: c.name, startTime: rfc3339(c.startedAtMs) };
      if (c.cgroup) {
        const cpu = cpuStats(
          time,
          c.cgroup,
          cpuRate(prevContainers.get(c.id), prevContainers.has(c.id) ? prevMs : undefined, c.cgroup.cpuUsageNs, cur.observedAtMs),
        );
        const mem = memoryStats(time, c.cgroup);
        if (cpu) s.cpu = cpu;
        if (mem) s.memory = mem;
      }
      s.rootfs = fsStats(time, cur.node.imageFs);
      s.logs = fsStats(time, cur.node.fs, c.logsUsedBytes);
      return s;
    });
    const ps: PodStats = { podRef: { name: p.name, namespace: p.namespace, uid: p.uid }, startTime: rfc3339(p.startedAtMs), containers };
    const own = p.cgroup ?? sumUsage(p.containers.map((c) => c.cgroup));
    if (own) {
      const cpu = cpuStats(
        time,
        own,
        cpuRate(prevPods.get(p.uid), prevPods.has(p.uid) ? prevMs : undefined, own.cpuUsageNs, cur.observedAtMs),
      );
      const mem = memoryStats(time, own);
      if (cpu) ps.cpu = cpu;
      if (mem) ps.memory = mem;
    }
    if (p.volumes.length) ps.volume = p.volumes.map((v) => ({ name: v.name, ...fsStats(time, cur.node.fs, v.usedBytes, v.inodesUsed) }));
    const ephemeral = p.containers.reduce((n, c) => n + c.logsUsedBytes, 0) + p.volumes.reduce((n, v) => n + v.usedBytes, 0);
    ps['ephemeral-storage'] = fsStats(
      time,
      cur.node.fs,
      ephemeral,
      p.volumes.reduce((n, v) => n + v.inodesUsed, 0),
    );
    return ps;
  });
  const n = cur.node;
  return {
    node: {
      nodeName,
      startTime: rfc3339(n.bootTimeMs),
      cpu: {
        time,
        usageCoreNanoSeconds: n.cpuUsageNs,
        ...(prev ? numberField('usageNanoCores', cpuRate(prev.node.cpuUsageNs, prevMs, n.cpuUsageNs, cur.observedAtMs)) : {}),
      },
      memory: {
        time,
        availableBytes: n.memoryAvailableBytes,
        usageBytes: n.memoryUsageBytes,
        workingSetBytes: n.memoryWorkingSetBytes,
        rssBytes: n.memoryRssBytes,
        pageFaults: n.pageFaults,
        majorPageFaults: n.majorPageFaults,
      },
      fs: fsStats(time, n.fs, n.fs?.usedBytes, n.fs ? n.fs.inodes - n.fs.inodesFree : undefined),
      runtime: { imageFs: fsStats(time, n.imageFs, n.imageFs?.usedBytes, n.imageFs ? n.imageFs.inodes - n.imageFs.inodesFree : undefined) },
    },
    pods,
  };
}

function numberField(key: string, v: number | undefined): Record<string, number> {
  return v === undefined ? {} : { [key]: v };
}
