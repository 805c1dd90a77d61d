/**
 * Counterpart of cAdvisor's machine and root-container figures as the kubelet's summary provider
 * uses them (pkg/kubelet/stats: node CPU and memory from the root cgroup, nodefs by statfs of the
 * kubelet's root dir, imageFs by the runtime's image filesystem): /proc/stat, /proc/meminfo and
 * statfs. Pure parsers plus readers that never throw.
 */
import { readFile, statfs } from 'node:fs/promises';
import type { FsSample } from '../../shared/stats.js';

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
export function parseMeminfo(text: string): { capacityBytes: number; availableBytes: number; usageBytes: number; workingSetBytes: number; rssBytes: number } {
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
      capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize, usedBytes: (s.blocks - s.bfree) * s.bsize,
      inodes: s.files, inodesFree: s.ffree,
    };
  } catch {
    return null;
  }
}

/** readProcFile: the text of `/proc/<name>` (under `procRoot`). @throws the fs error. */
export function readProcFile(name: string, procRoot = '/proc'): Promise<string> {
  return readFile(`${procRoot}/${name}`, 'utf8');
}
