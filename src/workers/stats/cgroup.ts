/**
 * Counterpart of cAdvisor's cgroup readers (container/libcontainer: the cpuacct and memory
 * controllers of cgroup v1, cpu.stat and memory.* of cgroup v2, as runc's cgroups/fs and fs2 parse
 * them): the figures of one cgroup read straight from its files, and the cgroup of a process from
 * /proc/<pid>/cgroup. Working set is usage − inactive_file, as cAdvisor's setMemoryStats does.
 * Pure parsers plus small readers that never throw (a vanished cgroup reads as null).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CgroupUsage } from '../../shared/stats.js';

/** Where the cgroup hierarchies are mounted. */
export const kCgroupFsRoot = '/sys/fs/cgroup';

/** A memory limit at or above this is "unlimited" (v1 writes PAGE_COUNTER_MAX rounded to pages). */
const kUnlimited = 2 ** 62;

/**
 * detectCgroupVersion: 2 when `root` holds the unified hierarchy (cgroup.controllers at its top),
 * 1 when it holds v1 controllers (cpuacct/ and memory/), else 0. Never throws.
 */
export async function detectCgroupVersion(root = kCgroupFsRoot): Promise<0 | 1 | 2> {
  if (
    await readFile(path.join(root, 'cgroup.controllers'), 'utf8').then(
      () => true,
      () => false,
    )
  )
    return 2;
  const v1 = await readFile(path.join(root, 'cpuacct', 'cpuacct.usage'), 'utf8').then(
    () => true,
    () => false,
  );
  if (v1) return 1;
  return (await readFile(path.join(root, 'memory', 'memory.usage_in_bytes'), 'utf8').then(
    () => true,
    () => false,
  ))
    ? 1
    : 0;
}

/**
 * parseProcCgroup reads the text of /proc/<pid>/cgroup (lines `id:controllers:path`, as
 * cgroups.ParseCgroupFile): v2 → the path of the `0::` line; v1 → the paths of the `cpuacct` and
 * `memory` controllers. Returns undefined fields when a line is missing. Pure.
 */
export function parseProcCgroup(text: string): { unified?: string; cpuacct?: string; memory?: string } {
  const out: { unified?: string; cpuacct?: string; memory?: string } = {};
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const id = line.slice(0, first);
    const controllers = line.slice(first + 1, second).split(',');
    const p = line.slice(second + 1);
    if (id === '0' && controllers.length === 1 && controllers[0] === '') out.unified = p;
    if (controllers.includes('cpuacct')) out.cpuacct = p;
    if (controllers.includes('memory')) out.memory = p;
  }
  return out;
}

/**
 * parseFlatKeyed parses a flat-keyed file (`key value` per line: memory.stat, cpu.stat) into a
 * map; with `keys`, only those keys are kept (and only their values converted: memory.stat has
 * ~70 lines of which the figures need 4, read for every cgroup at every collection).
 * Non-numeric values are skipped. Pure.
 */
export function parseFlatKeyed(text: string, keys?: ReadonlySet<string>): Map<string, number> {
  const m = new Map<string, number>();
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    const sp = line.search(/\s/);
    if (sp <= 0) continue;
    const k = line.slice(0, sp);
    if (keys && !keys.has(k)) continue;
    const v = line
      .slice(sp + 1)
      .trim()
      .split(/\s+/)[0];
    const n = Number(v);
    if (v !== '' && Number.isFinite(n)) m.set(k, n);
  }
  return m;
}

/** The memory.stat keys usageFromV1 and usageFromV2 read. */
const kV1MemStatKeys: ReadonlySet<string> = new Set(['total_inactive_file', 'total_rss', 'total_pgfault', 'total_pgmajfault']);
const kV2MemStatKeys: ReadonlySet<string> = new Set(['inactive_file', 'anon', 'pgfault', 'pgmajfault']);
const kCpuStatKeys: ReadonlySet<string> = new Set(['usage_usec']);

function num(text: string | null): number | undefined {
  if (text === null) return undefined;
  const t = text.trim();
  if (t === '' || t === 'max') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * read: a small pseudo-file's text, or null. Synchronous on purpose: a cgroup or procfs file is
 * answered by the kernel from memory, and a blocking read costs ~10 µs where fs/promises' readFile
 * (open, fstat, read, close on libuv's pool, four promises) costs ~10× that in CPU — at 300 pods × ~10
 * files per collection that was most of the collector's cost (bench stats). Runs on a worker thread.
 */
const read = async (p: string): Promise<string | null> => {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return null;
  }
};

/**
 * usageFromV1 assembles the figures of a v1 cgroup from its files' texts (null = missing):
 * cpuacct.usage (ns), memory.usage_in_bytes, memory.limit_in_bytes and memory.stat (total_rss,
 * total_inactive_file, total_pgfault, total_pgmajfault: the hierarchical totals). Pure.
 */
export function usageFromV1(files: {
  cpuacctUsage: string | null;
  memUsage: string | null;
  memLimit: string | null;
  memStat: string | null;
}): CgroupUsage | null {
  const cpu = num(files.cpuacctUsage);
  const usage = num(files.memUsage);
  if (cpu === undefined && usage === undefined) return null;
  const stat = parseFlatKeyed(files.memStat ?? '', kV1MemStatKeys);
  const out: CgroupUsage = {};
  if (cpu !== undefined) out.cpuUsageNs = cpu;
  if (usage !== undefined) {
    out.memoryUsageBytes = usage;
    out.workingSetBytes = Math.max(0, usage - (stat.get('total_inactive_file') ?? 0));
  }
  if (stat.has('total_rss')) out.rssBytes = stat.get('total_rss');
  if (stat.has('total_pgfault')) out.pageFaults = stat.get('total_pgfault');
  if (stat.has('total_pgmajfault')) out.majorPageFaults = stat.get('total_pgmajfault');
  const limit = num(files.memLimit);
  if (limit !== undefined && limit < kUnlimited) out.memoryLimitBytes = limit;
  return out;
}

/**
 * usageFromV2 assembles the figures of a v2 cgroup from its files' texts (null = missing):
 * cpu.stat usage_usec (→ ns), memory.current, memory.max (`max` = unlimited) and memory.stat
 * (anon, inactive_file, pgfault, pgmajfault). Pure.
 */
export function usageFromV2(files: {
  cpuStat: string | null;
  memCurrent: string | null;
  memMax: string | null;
  memStat: string | null;
}): CgroupUsage | null {
  const cpuStat = files.cpuStat === null ? undefined : parseFlatKeyed(files.cpuStat, kCpuStatKeys);
  const usage = num(files.memCurrent);
  const usec = cpuStat?.get('usage_usec');
  if (usec === undefined && usage === undefined) return null;
  const stat = parseFlatKeyed(files.memStat ?? '', kV2MemStatKeys);
  const out: CgroupUsage = {};
  if (usec !== undefined) out.cpuUsageNs = usec * 1000;
  if (usage !== undefined) {
    out.memoryUsageBytes = usage;
    out.workingSetBytes = Math.max(0, usage - (stat.get('inactive_file') ?? 0));
  }
  if (stat.has('anon')) out.rssBytes = stat.get('anon');
  if (stat.has('pgfault')) out.pageFaults = stat.get('pgfault');
  if (stat.has('pgmajfault')) out.majorPageFaults = stat.get('pgmajfault');
  const limit = num(files.memMax);
  if (limit !== undefined && limit < kUnlimited) out.memoryLimitBytes = limit;
  return out;
}

/** CgroupRef: where one cgroup lives — its path in the v1 cpuacct and memory hierarchies, or in the unified one. */
export type CgroupRef = { version: 1; cpuacct: string; memory: string } | { version: 2; path: string };

/**
 * cgroupOfProcess reads /proc/<pid>/cgroup under `procRoot` and returns the process's cgroup for
 * `version`, or null (no such process, or the line is missing). Never throws.
 */
export async function cgroupOfProcess(pid: number, version: 1 | 2, procRoot = '/proc'): Promise<CgroupRef | null> {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const text = await read(path.join(procRoot, String(pid), 'cgroup'));
  if (text === null) return null;
  const p = parseProcCgroup(text);
  if (version === 2) return p.unified !== undefined ? { version: 2, path: p.unified } : null;
  return p.cpuacct !== undefined && p.memory !== undefined ? { version: 1, cpuacct: p.cpuacct, memory: p.memory } : null;
}

/**
 * readCgroupUsage reads the figures of cgroup `ref` under the mount `root` (v1: `root/cpuacct/…`,
 * `root/memory/…`; v2: `root/…`). `knownLimit`: the cgroup's memory limit as an earlier read gave
 * it (bytes, undefined = unlimited); when given, the limit file is not read and this is reported
 * (a container's limit is fixed at its create: the agent never updates it). Null when nothing was
 * readable (the cgroup is gone). Never throws.
 */
export async function readCgroupUsage(
  ref: CgroupRef,
  root = kCgroupFsRoot,
  knownLimit?: { memoryLimitBytes: number | undefined },
): Promise<CgroupUsage | null> {
  let usage: CgroupUsage | null;
  if (ref.version === 1) {
    const c = path.join(root, 'cpuacct', ref.cpuacct);
    const m = path.join(root, 'memory', ref.memory);
    const [cpuacctUsage, memUsage, memLimit, memStat] = await Promise.all([
      read(path.join(c, 'cpuacct.usage')),
      read(path.join(m, 'memory.usage_in_bytes')),
      knownLimit ? null : read(path.join(m, 'memory.limit_in_bytes')),
      read(path.join(m, 'memory.stat')),
    ]);
    usage = usageFromV1({ cpuacctUsage, memUsage, memLimit, memStat });
  } else {
    const d = path.join(root, ref.path);
    const [cpuStat, memCurrent, memMax, memStat] = await Promise.all([
      read(path.join(d, 'cpu.stat')),
      read(path.join(d, 'memory.current')),
      knownLimit ? null : read(path.join(d, 'memory.max')),
      read(path.join(d, 'memory.stat')),
    ]);
    usage = usageFromV2({ cpuStat, memCurrent, memMax, memStat });
  }
  if (usage && knownLimit?.memoryLimitBytes !== undefined) usage.memoryLimitBytes = knownLimit.memoryLimitBytes;
  return usage;
}

/**
 * podCgroupRef: the ref of the pod cgroup `pod<uid>` under `{cgroupRoot}/kubepods[/burstable|/besteffort]`
 * (pod-cgroup.ts podCgroupName's layout) when one exists for `version`, else null. Never throws.
 */
export async function findPodCgroup(uid: string, cgroupRoot: string, version: 1 | 2, root = kCgroupFsRoot): Promise<CgroupRef | null> {
  if (!/^[A-Za-z0-9-]+$/.test(uid)) return null;
  for (const tier of ['', 'burstable/', 'besteffort/']) {
    const rel = path.posix.join(cgroupRoot, 'kubepods', `${tier}pod${uid}`);
    if (version === 1) {
      const ok = await read(path.join(root, 'cpuacct', rel, 'cpuacct.usage'));
      if (ok !== null) return { version: 1, cpuacct: rel, memory: rel };
    } else if ((await read(path.join(root, rel, 'cgroup.procs'))) !== null) {
      return { version: 2, path: rel };
    }
  }
  return null;
}
