/**
 * Counterpart of pkg/kubelet/cm/pod_container_manager_linux.go (EnsureExists, GetPodContainerName,
 * Destroy), pkg/kubelet/cm/helpers_linux.go ResourceConfigForPod and pkg/kubelet/cm/qos_container_manager
 * (the kubepods / burstable / besteffort layout), for cgroup v1 with Docker's cgroupfs driver:
 * one cgroup per pod, `{cgroupRoot}/kubepods[/burstable|/besteffort]/pod<uid>`, given to every
 * container of the pod as Docker's `CgroupParent`, so that the pod's containers share its limits
 * (memory, CPU quota and shares the sums of the containers', pids.max = --pod-max-pids).
 *
 * cgroup v2 (a unified hierarchy) is not handled yet: there `podCgroupSupported` is false and the
 * pods run without a pod cgroup (--pod-max-pids then limits each container, Docker's PidsLimit).
 */
import { mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Container, Pod } from '../../shared/api.js';
import { AgentError } from '../../shared/errors.js';
import { isRestartableInitContainer } from '../../shared/pod-policy.js';
import { parseQuantity } from '../../shared/quantity.js';
import { getPodQOS } from '../../shared/qos.js';
import { cpuQuotaFromLimit, cpuSharesFromRequest, kCpuPeriodUs } from './cpu-quota.js';
import { realClock, type Clock } from '../../shared/clock.js';

/** Where the cgroup v1 hierarchies are mounted. */
export const kCgroupMount = '/sys/fs/cgroup';

/** The pod-level resources the kubelet puts on a pod's cgroup (ResourceConfig). Absent = unlimited. */
export interface PodResourceConfig {
  cpuShares: number;
  /** CFS quota, microseconds per period. */
  cpuQuotaUs?: number;
  /** CFS period, microseconds. */
  cpuPeriodUs?: number;
  /** Memory limit, bytes. */
  memoryBytes?: number;
  /** pids.max. */
  pidsLimit?: number;
}

function q(v: unknown, field: string): number {
  if (v === undefined || v === null) return 0;
  return parseQuantity(v as string | number, field);
}

/**
 * podResource: what the pod as a whole requests or limits of `res` (resource.PodRequests /
 * PodLimits): the sum over app containers and sidecars, or the largest single init container
 * (plus the sidecars started before it) when that is more. `declared`: every container (app and
 * init) sets it — only then is a limit enforced on the pod.
 */
function podResource(pod: Pod, which: 'requests' | 'limits', res: 'cpu' | 'memory'): { value: number; declared: boolean } {
  const get = (c: Container, i: number, init: boolean) =>
    q(c.resources?.[which]?.[res], `spec.${init ? 'initContainers' : 'containers'}[${i}].resources.${which}.${res}`);
  const has = (c: Container) => c.resources?.[which]?.[res] !== undefined;
  const apps = pod.spec?.containers ?? [];
  const inits = pod.spec?.initContainers ?? [];
  let sum = apps.reduce((n, c, i) => n + get(c, i, false), 0);
  let sidecars = 0;
  let initMax = 0;
  inits.forEach((c, i) => {
    if (isRestartableInitContainer(c)) {
      sidecars += get(c, i, true);
      sum += get(c, i, true);
    } else initMax = Math.max(initMax, sidecars + get(c, i, true));
  });
  return { value: Math.max(sum, initMax), declared: [...apps, ...inits].every(has) };
}

/**
 * resourceConfigForPod, as ResourceConfigForPod (cgroup v1): cpu.shares from the summed cpu
 * requests (2 for BestEffort); a CFS quota from the summed cpu limits when every container has
 * one (always for Guaranteed); memory.limit_in_bytes from the summed memory limits when every
 * container has one; pids.max = `podPidsLimit` when > 0.
 * @throws AgentError ERR_INVALID_ARGUMENT for an unparsable quantity.
 */
export function resourceConfigForPod(pod: Pod, podPidsLimit: number): PodResourceConfig {
  const qos = getPodQOS(pod);
  const cpuReq = podResource(pod, 'requests', 'cpu');
  const cpuLim = podResource(pod, 'limits', 'cpu');
  const memLim = podResource(pod, 'limits', 'memory');
  const milli = (cores: number) => Math.ceil(cores * 1000);
  const out: PodResourceConfig = { cpuShares: qos === 'BestEffort' ? 2 : cpuSharesFromRequest(milli(cpuReq.value)) };
  if (qos !== 'BestEffort' && cpuLim.declared && cpuLim.value > 0) {
    out.cpuQuotaUs = cpuQuotaFromLimit(milli(cpuLim.value));
    out.cpuPeriodUs = kCpuPeriodUs;
  }
  if (qos !== 'BestEffort' && memLim.declared && memLim.value > 0) out.memoryBytes = Math.ceil(memLim.value);
  if (podPidsLimit > 0) out.pidsLimit = podPidsLimit;
  return out;
}

/**
 * podCgroupName, as GetPodContainerName with the cgroupfs driver: `{cgroupRoot}/kubepods/pod<uid>`
 * for Guaranteed pods, `…/kubepods/burstable/pod<uid>`, `…/kubepods/besteffort/pod<uid>` — the
 * path given to Docker as CgroupParent. `cgroupRoot` is absolute (`/kubelet-ts`).
 */
export function podCgroupName(pod: Pod, cgroupRoot: string): string {
  const qos = getPodQOS(pod);
  const uid = pod.metadata?.uid ?? '';
  if (!/^[A-Za-z0-9-]+$/.test(uid))
    throw new AgentError('ERR_INVALID_ARGUMENT', `metadata.uid: ${JSON.stringify(uid)} cannot name a cgroup`);
  const tier = qos === 'Guaranteed' ? '' : qos === 'Burstable' ? 'burstable/' : 'besteffort/';
  return path.posix.join(cgroupRoot, 'kubepods', `${tier}pod${uid}`);
}

const supported = new Map<string, boolean>();

/** podCgroupSupported: true on a cgroup v1 host (the memory, cpu and pids hierarchies are mounted under `mount`). Cached per thread and mount. */
export async function podCgroupSupported(mount = kCgroupMount): Promise<boolean> {
  const known = supported.get(mount);
  if (known !== undefined) return known;
  const ok = (
    await Promise.all(
      ['memory', 'cpu', 'pids'].map((c) =>
        stat(path.join(mount, c, 'tasks')).then(
          () => true,
          () => false,
        ),
      ),
    )
  ).every(Boolean);
  supported.set(mount, ok);
  return ok;
}

/** The value a cgroup v1 file holds in a cgroup just made (the kernel's defaults), by file name. */
const kFreshCgroupValues: Readonly<Record<string, string>> = {
  'cpu.shares': '1024',
  'cpu.cfs_period_us': String(kCpuPeriodUs),
  'cpu.cfs_quota_us': '-1',
  'memory.limit_in_bytes': '-1',
  'pids.max': 'max',
};

/**
 * ensurePodCgroup, as EnsureExists + Update: creates the pod's cgroup in the memory, cpu and
 * pids hierarchies and writes its limits (resourceConfigForPod); resolves to the CgroupParent to
 * give Docker. Idempotent: in a cgroup that was already there every limit is rewritten (a changed
 * pod changes them); in one it just made, only the limits that differ from the kernel's defaults
 * (cpu.shares 1024, no CFS quota on a 100 ms period, no memory limit, pids.max `max`), as runc's
 * libcontainer/cgroups/fs (cpu.go, memory.go, pids.go Set) writes only the resources the kubelet
 * set — for a BestEffort pod without --pod-max-pids one write, cpu.shares.
 * The calls are synchronous: it runs on a worker thread of the sync pool only (never on the main
 * thread), and cgroupfs is an in-memory file system whose mkdir and small writes do not block — a
 * promise call would cost a FileHandle and a libuv threadpool hop per operation.
 * @throws AgentError ERR_RUNTIME naming the file that could not be written.
 */
export async function ensurePodCgroup(pod: Pod, cgroupRoot: string, podPidsLimit: number, mount = kCgroupMount): Promise<string> {
  const name = podCgroupName(pod, cgroupRoot);
  const rc = resourceConfigForPod(pod, podPidsLimit);
  const files: Array<[string, string, string]> = [
    ['cpu', 'cpu.shares', String(rc.cpuShares)],
    ['cpu', 'cpu.cfs_period_us', String(rc.cpuPeriodUs ?? kCpuPeriodUs)],
    ['cpu', 'cpu.cfs_quota_us', String(rc.cpuQuotaUs ?? -1)],
    ['memory', 'memory.limit_in_bytes', String(rc.memoryBytes ?? -1)],
    ['pids', 'pids.max', rc.pidsLimit ? String(rc.pidsLimit) : 'max'],
  ];
  // A recursive mkdirSync returns the first directory it made: set for a new pod cgroup, undefined for one that was there.
  const fresh = new Set(
    ['cpu', 'memory', 'pids'].filter((ctl) => mkdirSync(path.join(mount, ctl, name), { recursive: true }) !== undefined),
  );
  for (const [ctl, file, value] of files) {
    if (fresh.has(ctl) && kFreshCgroupValues[file] === value) continue;
    const p = path.join(mount, ctl, name, file);
    try {
      writeFileSync(p, value);
    } catch (err) {
      throw new AgentError('ERR_RUNTIME', `pod cgroup: cannot write ${value} to ${p}: ${(err as Error).message}`, { cause: err });
    }
  }
  return name;
}

/**
 * rmdirCgroup removes the cgroup `dir`: one rmdir when it has no child cgroup (the common case),
 * else its child cgroups first, deepest first (a cgroup's files cannot be removed, only its empty
 * child cgroups). Gone already is fine. Synchronous (see ensurePodCgroup).
 * @throws the fs error (EBUSY: a process is still in it).
 */
function rmdirCgroup(dir: string): void {
  try {
    rmdirSync(dir);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code !== 'EBUSY' && code !== 'ENOTEMPTY') throw err;
  }
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) rmdirCgroup(path.join(dir, e.name));
  try {
    rmdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * removePodCgroup, as Destroy: removes the cgroup `pod<uid>` (with any empty child cgroups left
 * by its containers) from every hierarchy under /sys/fs/cgroup, whichever QoS tier it is in.
 * Called once the pod's containers are removed. Idempotent; resolves to the errors met (a cgroup
 * still holding a process stays and is retried by the next removal), never rejects. One rmdir per
 * hierarchy and tier, synchronous on the worker thread (see ensurePodCgroup).
 */
export async function removePodCgroup(uid: string, cgroupRoot: string, mount = kCgroupMount): Promise<string[]> {
  if (!/^[A-Za-z0-9-]+$/.test(uid)) return [`metadata.uid: ${JSON.stringify(uid)} cannot name a cgroup`];
  const errors: string[] = [];
  let hierarchies: string[];
  try {
    hierarchies = readdirSync(mount, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return errors;
  }
  for (const h of hierarchies) {
    for (const tier of ['', 'burstable/', 'besteffort/']) {
      const dir = path.join(mount, h, cgroupRoot, 'kubepods', `${tier}pod${uid}`);
      try {
        rmdirCgroup(dir);
      } catch (err) {
        errors.push(`${dir}: ${(err as Error).message}`);
      }
    }
  }
  return errors;
}

/** How old an orphan pod cgroup must be before GC removes it, milliseconds (a pod being started has its cgroup before its sandbox). */
export const kOrphanPodCgroupMinAgeMs = 60_000;

/** How long removeOrphanPodCgroups waits for the processes it killed to leave a cgroup, milliseconds. */
const kKillWaitMs = 2_000;

/** cgroupProcs: the PIDs in `dir` and in every cgroup below it (`cgroup.procs`); [] when it is gone. */
async function cgroupProcs(dir: string): Promise<number[]> {
  const own = await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  const pids = own
    .split('\n')
    .filter((l) => /^\d+$/.test(l))
    .map(Number);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) pids.push(...(await cgroupProcs(path.join(dir, e.name))));
  return pids;
}

/**
 * killPodCgroupProcesses, as pod_container_manager_linux.go Destroy (tryKillingCgroupProcesses):
 * sends SIGKILL to every process in the pod cgroup `pod<uid>` (any QoS tier, any hierarchy, child
 * cgroups included) and waits up to 2 s for them to leave it. Resolves to the number of processes
 * signalled; never rejects (a process gone meanwhile is skipped; one that stays keeps the cgroup
 * busy, and the next GC tries again).
 */
export async function killPodCgroupProcesses(
  uid: string,
  cgroupRoot: string,
  mount = kCgroupMount,
  clock: Clock = realClock,
): Promise<number> {
  if (!/^[A-Za-z0-9-]+$/.test(uid)) return 0;
  const dirs: string[] = [];
  const hierarchies = await readdir(mount, { withFileTypes: true }).catch(() => []);
  for (const h of hierarchies)
    if (h.isDirectory())
      for (const tier of ['', 'burstable/', 'besteffort/']) dirs.push(path.join(mount, h.name, cgroupRoot, 'kubepods', `${tier}pod${uid}`));
  const all = async () => [...new Set((await Promise.all(dirs.map(cgroupProcs))).flat())];
  const pids = await all();
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ESRCH: already gone.
    }
  }
  for (let waited = 0; pids.length > 0 && waited < kKillWaitMs; waited += 50) {
    if ((await all()).length === 0) break;
    await new Promise<void>((r) => clock.setTimeout(r, 50));
  }
  return pids.length;
}

/**
 * removeOrphanPodCgroups, as the kubelet's cleanupOrphanedPodCgroups (housekeeping): removes the
 * pod cgroups under `{cgroupRoot}/kubepods` (every QoS tier, every hierarchy: only the names the
 * agent gives, `pod<uid>`) whose UID is not in `liveUids` and that are older than `minAgeMs`
 * (several agents may share one cgroup root: `liveUids` must hold every pod any of them may still
 * run, and the age covers a pod another agent is starting, whose cgroup comes before its sandbox).
 * With `kill`, the processes still in such a cgroup are killed first (Destroy); without it, a
 * cgroup still holding a process stays. Resolves to the UIDs removed; never rejects.
 * Runs on a worker thread, from the periodic GC (`nowMs`: epoch milliseconds).
 */
export async function removeOrphanPodCgroups(
  cgroupRoot: string,
  liveUids: ReadonlySet<string>,
  nowMs: number,
  minAgeMs = kOrphanPodCgroupMinAgeMs,
  mount = kCgroupMount,
  kill = false,
): Promise<string[]> {
  const removed: string[] = [];
  for (const tier of ['', 'burstable', 'besteffort']) {
    const dir = path.join(mount, 'pids', cgroupRoot, 'kubepods', tier);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (!e.isDirectory() || !e.name.startsWith('pod')) continue;
      const uid = e.name.slice(3);
      if (liveUids.has(uid)) continue;
      const st = await stat(path.join(dir, e.name)).catch(() => null);
      if (!st || nowMs - st.mtimeMs < minAgeMs) continue;
      if (kill) await killPodCgroupProcesses(uid, cgroupRoot, mount);
      if ((await removePodCgroup(uid, cgroupRoot, mount)).length === 0) removed.push(uid);
    }
  }
  return removed;
}
