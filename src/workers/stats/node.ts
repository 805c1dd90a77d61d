/**
 * Counterpart of cAdvisor's machine and root-container figures as the kubelet's summary provider
 * uses them (pkg/kubelet/stats: node CPU and memory from the root cgroup, nodefs by statfs of the
 * kubelet's root dir, imageFs by the runtime's image filesystem): /proc/stat, /proc/meminfo and
 * statfs), and the pod's emptyDir volumes (the kubelet's volume stats). Pure parsers plus readers
 * that never throw, and {@link nodeSample}, which both stats collectors (Docker's cgroups,
 * runtime/docker/collect-stats.ts; the CRI's, collect-cri-stats.ts) share.
 */
import { readdirSync } from 'node:fs';
import { readFile, statfs } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../shared/clock.js';
import type { FsSample, NodeSample, PodSample, StatsSample, VolumeSample } from '../../shared/stats.js';
import { kEmptyDirPluginDir, podVolumePluginDir } from '../kubetypes/pod-dirs.js';
import { diskUsageBytes } from '../volumes/pod-volumes.js';
import { readCgroupUsage } from './cgroup.js';

/** USER_HZ: the unit of /proc/stat's times (100 on every Linux ABI Node runs on). */
const kUserHz = 100;

/**
 * parseProcStat: from /proc/stat's text, the node's non-idle CPU time in nanoseconds (the `cpu`
 * line's user+nice+system+irq+softirq+steal, in USER_HZ ticks) and the boot time (btime, epoch ms).
 * @throws Error `/proc/stat: no cpu line` when the text has none.
 */
export function parseProcStat(text: string): { cpuUsageNs: number; bootTimeMs: number } {
  let cpuUsageNs: number | undefined;
  let bootTimeMs = 0;
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] === 'cpu') {
      const v = f.slice(1).map(Number);
      const busy = (v[0] ?? 0) + (v[1] ?? 0) + (v[2] ?? 0) + (v[5] ?? 0) + (v[6] ?? 0) + (v[7] ?? 0);
      cpuUsageNs = (busy * 1e9) / kUserHz;
    } else if (f[0] === 'btime') bootTimeMs = Number(f[1]) * 1000;
  }
  if (cpuUsageNs === undefined) throw new Error('/proc/stat: no cpu line');
  return { cpuUsageNs, bootTimeMs };
}

/**
 * parseMeminfo: from /proc/meminfo's text (`Key:   N kB`), the figures in bytes: capacity
 * (MemTotal), available (MemAvailable), usage (MemTotal − MemFree), working set (usage −
 * Inactive(file), as cAdvisor's root working set) and rss (AnonPages).
 * @throws Error `/proc/meminfo: no MemTotal` when it is missing.
 */
export function parseMeminfo(text: string): {
  capacityBytes: number;
  availableBytes: number;
  usageBytes: number;
  workingSetBytes: number;
  rssBytes: number;
} {
  const kb = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([^:]+):\s+(\d+)/.exec(line);
    if (m) kb.set(m[1], Number(m[2]) * 1024);
  }
  const total = kb.get('MemTotal');
  if (total === undefined) throw new Error('/proc/meminfo: no MemTotal');
  const free = kb.get('MemFree') ?? 0;
  const usage = total - free;
  return {
    capacityBytes: total,
    availableBytes: kb.get('MemAvailable') ?? free,
    usageBytes: usage,
    workingSetBytes: Math.max(0, usage - (kb.get('Inactive(file)') ?? 0)),
    rssBytes: kb.get('AnonPages') ?? 0,
  };
}

/** fsSample: statfs of `dir` as an FsSample (bytes, inodes), or null when it cannot be read. Never throws. */
export async function fsSample(dir: string): Promise<FsSample | null> {
  try {
    const s = await statfs(dir);
    return {
      capacityBytes: s.blocks * s.bsize,
      availableBytes: s.bavail * s.bsize,
      usedBytes: (s.blocks - s.bfree) * s.bsize,
      inodes: s.files,
      inodesFree: s.ffree,
    };
  } catch {
    return null;
  }
}

/** readProcFile: the text of `/proc/<name>` (under `procRoot`). @throws the fs error. */
export function readProcFile(name: string, procRoot = '/proc'): Promise<string> {
  return readFile(`${procRoot}/${name}`, 'utf8');
}

/** Where nodeSample reads: the cgroup version and mount, procfs, --root-dir, and the runtime's image filesystem mountpoint (null: unknown). */
export interface NodeSampleSource {
  cgroupVersion: 0 | 1 | 2;
  cgroupFsRoot: string;
  procRoot: string;
  rootDir: string;
  imageFsMount: string | null;
}

/**
 * nodeSample: the node's own figures — CPU from the root cgroup where readable (else /proc/stat's
 * non-idle time), memory from /proc/meminfo, nodefs by statfs of the root dir, imageFs by statfs of
 * the runtime's image filesystem, boot time.
 * @throws the fs error when /proc/stat or /proc/meminfo cannot be read.
 */
export async function nodeSample(src: NodeSampleSource): Promise<NodeSample> {
  const [procStat, meminfo] = await Promise.all([readProcFile('stat', src.procRoot), readProcFile('meminfo', src.procRoot)]);
  const ps = parseProcStat(procStat);
  const mi = parseMeminfo(meminfo);
  const rootUsage =
    src.cgroupVersion === 0
      ? null
      : await readCgroupUsage(
          src.cgroupVersion === 1 ? { version: 1, cpuacct: '/', memory: '/' } : { version: 2, path: '/' },
          src.cgroupFsRoot,
        );
  return {
    cpuUsageNs: rootUsage?.cpuUsageNs ?? ps.cpuUsageNs,
    memoryCapacityBytes: mi.capacityBytes,
    memoryAvailableBytes: mi.availableBytes,
    memoryUsageBytes: mi.usageBytes,
    memoryWorkingSetBytes: mi.workingSetBytes,
    memoryRssBytes: mi.rssBytes,
    pageFaults: rootUsage?.pageFaults,
    majorPageFaults: rootUsage?.majorPageFaults,
    fs: await fsSample(src.rootDir),
    imageFs: src.imageFsMount ? await fsSample(src.imageFsMount) : null,
    bootTimeMs: ps.bootTimeMs,
  };
}

/**
 * statsSample: the StatsSample of one collection — `pods` sorted by namespace and name, the node's
 * figures read now (nodeSample), `errors` as given; `observedAtMs` from `now()` after the reads.
 * @throws as nodeSample.
 */
export async function statsSample(src: NodeSampleSource, pods: PodSample[], errors: string[], clock: Clock): Promise<StatsSample> {
  pods.sort((a, b) => (a.namespace === b.namespace ? a.name.localeCompare(b.name) : a.namespace.localeCompare(b.namespace)));
  const node = await nodeSample(src);
  return { observedAtMs: clock.now(), cgroupVersion: src.cgroupVersion, node, pods, errors };
}

/** emptyDirs: the emptyDir volumes of pod `uid` under `rootDir` with their usage. Never throws. */
export async function emptyDirs(rootDir: string, uid: string): Promise<VolumeSample[]> {
  let dir: string;
  let names: string[] = [];
  try {
    dir = podVolumePluginDir(rootDir, uid, kEmptyDirPluginDir); // throws for a UID that is not a safe path segment
    names = readdirSync(dir); // most pods have none: one failing syscall, not a promise chain
  } catch {
    return [];
  }
  const out: VolumeSample[] = [];
  for (const name of names) {
    const usedBytes = await diskUsageBytes(path.join(dir, name));
    // diskUsageBytes counts blocks only; the top-level entry count stands in as a floor of inodes used.
    let inodes = 0;
    try {
      inodes = readdirSync(path.join(dir, name)).length;
    } catch {
      /* gone */
    }
    out.push({ name, usedBytes, inodesUsed: inodes });
  }
  return out;
}
