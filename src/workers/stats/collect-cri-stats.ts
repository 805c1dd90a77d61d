/**
 * Counterpart of the kubelet's CRI stats provider (pkg/kubelet/stats/cri_stats_provider.go
 * ListPodStats / listPodStatsStrictlyFromCRI): one `stats` task on a CRI runtime lists this node's
 * ready sandboxes and running containers, asks the runtime for every container's and sandbox's CPU
 * and memory (ListContainerStats, ListPodSandboxStats: one call each), and answers the same
 * StatsSample as the Docker collector (runtime/docker/collect-stats.ts), so /stats/summary, `kubectl top` and
 * eviction read both alike. As upstream: a container's start time is its `created_at`; a figure
 * the runtime gives none of is read from the cgroups instead (the container's init process's
 * cgroup, the PID from a verbose ContainerStatus, cached per container; the pod cgroup under
 * --cgroup-root); the log usage is the size of the container's CRI log file and its rotated
 * siblings (`<log_path>.*`, ContainerStatus' `log_path`, asked once per container); emptyDir
 * volumes and the node's own figures as collect-stats.ts; imageFs by statfs of ImageFsInfo's
 * mountpoint. Never throws for one container or pod: its error is listed.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../shared/clock.js';
import type { StatsTask } from '../../shared/sync-tasks.js';
import type { CgroupUsage, ContainerSample, PodSample, StatsSample } from '../../shared/stats.js';
import { kContainerNameLabel } from '../kubetypes/label-keys.js';
import type { ImageManagerService, RuntimeService } from '../runtime/cri/services.js';
import type { CpuUsage, MemoryUsage } from '../runtime/cri/types-status.js';
import type { Container, PodSandbox } from '../runtime/cri/types.js';
import { cgroupOfProcess, detectCgroupVersion, findPodCgroup, kCgroupFsRoot, readCgroupUsage, type CgroupRef } from './cgroup.js';
import { emptyDirs, statsSample } from './node.js';

/** Dependencies of collectCriStats. */
export interface CriStatsDeps {
  /** The node-scoped CRI runtime (node-runtime.ts). */
  runtime: Pick<RuntimeService, 'listPodSandbox' | 'listContainers' | 'listContainerStats' | 'listPodSandboxStats' | 'containerStatus'>;
  images: Pick<ImageManagerService, 'imageFsInfo'>;
  /** --root-dir (absolute): nodefs, and where emptyDir volumes live. */
  rootDir: string;
  /** --cgroup-root of the pod cgroups ('' when --cgroups-per-qos is off): the pod cgroup fallback. */
  cgroupRoot: string;
  /** The thread's Clock (shared/clock.ts): when the sample was observed. */
  clock: Clock;
  /** Where the cgroup hierarchies are mounted (tests: a fixture dir). */
  cgroupFsRoot?: string;
  /** Where procfs is (tests: a fixture dir). */
  procRoot?: string;
}

/** What one ContainerStatus told of a container, kept while it lives. */
interface Known {
  logPath: string;
  /** The image as ContainerStatus names it (its first repo tag, as cAdvisor's `image` label); '' when none. */
  image: string;
  /** Its cgroup (null: not found): cAdvisor's `id` label, and the figures when the runtime gives none. */
  cgroup: CgroupRef | null;
}
const known = new Map<string, Known>();

const ns2ms = (ns: number): number => Math.floor(ns / 1e6);
const val = (v: { value: number } | null | undefined): number | undefined => (v ? v.value : undefined);

/**
 * usageFromCri: a CgroupUsage from the CRI's CPU and memory figures, or null when the runtime gave
 * neither. The memory limit is `available_bytes + working_set_bytes` when the runtime reports
 * an available figure (containerd does only under a limit), as it computes available from the limit. Pure.
 */
export function usageFromCri(cpu: CpuUsage | null | undefined, memory: MemoryUsage | null | undefined): CgroupUsage | null {
  const u: CgroupUsage = {};
  const cpuNs = val(cpu?.usage_core_nano_seconds);
  if (cpuNs !== undefined) u.cpuUsageNs = cpuNs;
  if (memory) {
    const usage = val(memory.usage_bytes);
    const ws = val(memory.working_set_bytes);
    const rss = val(memory.rss_bytes);
    const pf = val(memory.page_faults);
    const mpf = val(memory.major_page_faults);
    const avail = val(memory.available_bytes);
    if (usage !== undefined) u.memoryUsageBytes = usage;
    if (ws !== undefined) u.workingSetBytes = ws;
    if (rss !== undefined) u.rssBytes = rss;
    if (pf !== undefined) u.pageFaults = pf;
    if (mpf !== undefined) u.majorPageFaults = mpf;
    if (avail && ws !== undefined) u.memoryLimitBytes = avail + ws;
  }
  return Object.keys(u).length ? u : null;
}

/** Bytes of the CRI log file `logPath` and its rotated siblings (`<name>.<suffix>` in the same directory). Never throws. */
function criLogBytes(logPath: string): number {
  if (!logPath) return 0;
  const dir = path.dirname(logPath);
  const base = path.basename(logPath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let total = 0;
  for (const n of names) {
    if (n !== base && !n.startsWith(`${base}.`)) continue;
    total += statSync(path.join(dir, n), { throwIfNoEntry: false })?.size ?? 0;
  }
  return total;
}

/**
 * collectCriStats runs one `stats` task on a CRI runtime (see file doc). `task.pods` narrows the
 * pods read as for collectStats (an empty list: the node's figures alone, no runtime calls).
 * Resolves with the sample; rejects only when the runtime cannot list sandboxes or containers, or
 * /proc/stat or /proc/meminfo cannot be read.
 */
export async function collectCriStats(deps: CriStatsDeps, task: StatsTask): Promise<StatsSample> {
  const root = deps.cgroupFsRoot ?? kCgroupFsRoot;
  const procRoot = deps.procRoot ?? '/proc';
  const version = await detectCgroupVersion(root);
  const errors: string[] = [];
  const scope = task.pods ?? 'all';
  const out: PodSample[] = [];
  if (scope === 'all' || scope.length > 0) {
    const [sandboxes, containers] = await Promise.all([
      deps.runtime.listPodSandbox({ state: { state: 'SANDBOX_READY' } }),
      deps.runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' } }),
    ]);
    const live = new Set(containers.map((c) => c.id));
    for (const id of known.keys()) if (!live.has(id)) known.delete(id);
    const wanted = scope === 'all' ? null : new Set(scope);
    const mine = sandboxes.filter((s) => s.metadata?.uid && (!wanted || wanted.has(s.metadata.uid)));
    const [cStats, pStats] = await Promise.all([
      deps.runtime.listContainerStats({}).catch((err: Error) => {
        errors.push(`ListContainerStats: ${err.message}`);
        return [];
      }),
      deps.runtime.listPodSandboxStats({}).catch((err: Error) => {
        errors.push(`ListPodSandboxStats: ${err.message}`);
        return [];
      }),
    ]);
    const cById = new Map(cStats.map((s) => [s.attributes?.id ?? '', s]));
    const pById = new Map(pStats.map((s) => [s.attributes?.id ?? '', s]));
    const bySandbox = new Map<string, Container[]>();
    for (const c of containers) {
      const list = bySandbox.get(c.pod_sandbox_id);
      if (list) list.push(c);
      else bySandbox.set(c.pod_sandbox_id, [c]);
    }
    for (const s of mine)
      out.push(
        await podSample(deps, s, bySandbox.get(s.id) ?? [], cById, pById, {
          version,
          root,
          procRoot,
          errors,
          withVolumes: task.withVolumes !== false,
        }),
      );
  }
  const fsInfo = await deps.images.imageFsInfo().catch(() => null);
  const imageFsMount = fsInfo?.image_filesystems[0]?.fs_id?.mountpoint || null;
  return statsSample(
    { cgroupVersion: version, cgroupFsRoot: root, procRoot, rootDir: deps.rootDir, imageFsMount },
    out,
    errors,
    deps.clock,
  );
}

interface PodCtx {
  version: 0 | 1 | 2;
  root: string;
  procRoot: string;
  errors: string[];
  withVolumes: boolean;
}

async function podSample(
  deps: CriStatsDeps,
  s: PodSandbox,
  containers: Container[],
  cById: Map<string, Awaited<ReturnType<RuntimeService['listContainerStats']>>[number]>,
  pById: Map<string, Awaited<ReturnType<RuntimeService['listPodSandboxStats']>>[number]>,
  ctx: PodCtx,
): Promise<PodSample> {
  const uid = s.metadata?.uid ?? '';
  const pod: PodSample = {
    uid,
    name: s.metadata?.name ?? '',
    namespace: s.metadata?.namespace ?? '',
    startedAtMs: ns2ms(s.created_at),
    cgroup: null,
    containers: [],
    volumes: [],
  };
  for (const c of containers) {
    const sample = await containerSample(deps, c, cById.get(c.id), ctx);
    if (sample) pod.containers.push(sample);
  }
  pod.containers.sort((a, b) => a.name.localeCompare(b.name));
  const ps = pById.get(s.id);
  pod.cgroup = usageFromCri(ps?.linux?.cpu, ps?.linux?.memory);
  if (!pod.cgroup && ctx.version !== 0 && deps.cgroupRoot) {
    const ref = await findPodCgroup(uid, deps.cgroupRoot, ctx.version, ctx.root);
    if (ref) pod.cgroup = await readCgroupUsage(ref, ctx.root);
  }
  if (ctx.withVolumes) pod.volumes = await emptyDirs(deps.rootDir, uid);
  return pod;
}

async function containerSample(
  deps: CriStatsDeps,
  c: Container,
  st: Awaited<ReturnType<RuntimeService['listContainerStats']>>[number] | undefined,
  ctx: PodCtx,
): Promise<ContainerSample | null> {
  let info = known.get(c.id);
  let usage = usageFromCri(st?.cpu, st?.memory);
  try {
    if (!info) {
      // Once per container: the log path, the image's name and (from the verbose info's PID) the
      // cgroup — cAdvisor's `id` label even when the runtime gives the figures.
      const status = await deps.runtime.containerStatus(c.id, true);
      const pid = Number((JSON.parse(status.info.info ?? '{}') as { pid?: unknown }).pid);
      info = {
        logPath: status.status?.log_path ?? '',
        image: status.status?.image?.image ?? '',
        cgroup: ctx.version !== 0 && pid > 0 ? await cgroupOfProcess(pid, ctx.version, ctx.procRoot) : null,
      };
      known.set(c.id, info);
    }
  } catch (err) {
    ctx.errors.push(`container ${c.id.slice(0, 12)}: ${(err as Error).message}`);
    return null;
  }
  if (!usage && info.cgroup) {
    usage = await readCgroupUsage(info.cgroup, ctx.root);
    if (!usage) ctx.errors.push(`container ${c.id.slice(0, 12)}: cgroup not readable`);
  }
  const cgroupPath = !info.cgroup ? '' : info.cgroup.version === 1 ? info.cgroup.memory : info.cgroup.path;
  return {
    // cAdvisor names a CRI container by its ID.
    id: c.id,
    metricsName: c.id,
    cgroupPath,
    name: c.metadata?.name || c.labels[kContainerNameLabel] || '',
    image: info.image || c.image?.image || c.image_ref,
    startedAtMs: ns2ms(c.created_at),
    cgroup: usage,
    logsUsedBytes: criLogBytes(info.logPath),
  };
}
