/**
 * Counterpart of the kubelet's cadvisor-backed stats provider (pkg/kubelet/stats
 * cadvisor_stats_provider.go ListPodStats, with cAdvisor's housekeeping reading each container's
 * cgroup): one `stats` task lists this node's running containers (one Docker list call), finds each
 * one's cgroup from its init process's /proc/<pid>/cgroup (the PID from one inspect, cached per
 * container ID on this thread), reads the cgroup files directly (v1 or v2, detected; a container's
 * memory limit only at its first read: Docker sets it at create and the agent never updates it), the pod
 * cgroup when the pod has one, the json-file log's size, the emptyDir volumes' usage (the volume
 * code's diskUsageBytes), the node's /proc/stat and /proc/meminfo, and statfs of the root dir and of
 * Docker's root dir. No Docker stats stream. Never throws for one container: its error is listed.
 * The task's `pods` narrows the pods read: a list of UIDs reads those only, an empty one the
 * node's figures alone, without the Docker list (what the stats provider sends while nobody reads
 * per-pod figures). It reads the engine's own labels, json-file logs and root dir: it lives with
 * the Docker runtime (nothing outside workers/runtime/ knows Docker, issue #40); a CRI runtime's
 * stats are ../../stats/collect-cri-stats.ts.
 */
import { statSync } from 'node:fs';
import type { Clock } from '../../../shared/clock.js';
import type { StatsTask } from '../../../shared/sync-tasks.js';
import type { ContainerSample, PodSample, StatsSample } from '../../../shared/stats.js';
import { kContainerNameLabel, kPodNameLabel, kPodNamespaceLabel, kPodUidLabel } from '../../kubetypes/label-keys.js';
import { kDockerTypeLabel as kContainerTypeLabel, kDockerTypeSandbox as kContainerTypeSandbox } from './docker-cri-labels.js';
import type { ContainerRuntime, ContainerSummary } from '../container/runtime.js';
import { cgroupOfProcess, detectCgroupVersion, findPodCgroup, kCgroupFsRoot, readCgroupUsage, type CgroupRef } from '../../stats/cgroup.js';
import { emptyDirs, statsSample } from '../../stats/node.js';

/** Dependencies of collectStats. */
export interface StatsDeps {
  runtime: ContainerRuntime;
  /** --root-dir (absolute): nodefs, and where emptyDir volumes live (`pods/{uid}/volumes/kubernetes.io~empty-dir`). */
  rootDir: string;
  /** --cgroup-root of the pod cgroups ('' when --cgroups-per-qos is off). */
  cgroupRoot: string;
  /** The thread's Clock (shared/clock.ts): when the sample was observed. */
  clock: Clock;
  /** Where the cgroup hierarchies are mounted (tests: a fixture dir). */
  cgroupFsRoot?: string;
  /** Where procfs is (tests: a fixture dir). */
  procRoot?: string;
}

/** What one inspect told of a container, kept while the container lives (its ID never changes meaning). */
interface CachedContainer {
  startedAtMs: number;
  image: string;
  logPath: string;
  cgroup: CgroupRef | null;
  /** The cgroup's memory limit from its first read (bytes; undefined = unlimited), unset until one succeeded. */
  limit?: { memoryLimitBytes: number | undefined };
}

/** Per-thread cache: container ID → what its inspect and /proc/<pid>/cgroup said. Pruned at each collection. */
const inspected = new Map<string, CachedContainer>();
let cgroupVersion: Promise<0 | 1 | 2> | undefined;
/** Per-thread cache: pod UID → its pod cgroup (found once; pruned with the pod). */
const podCgroups = new Map<string, CgroupRef>();
let imageFsMount: string | null | undefined;

/** Docker's json-file rotation keeps at most this many files (--container-log-max-files is validated lower). */
const kMaxLogFiles = 64;

/**
 * Bytes of a json-file log and its rotated siblings (`<LogPath>.1`, `.2`, … up to the first
 * missing one; Docker compresses none by default). Synchronous stats: see cgroup.ts `read`. Never throws.
 */
function logBytes(logPath: string): number {
  if (!logPath) return 0;
  let total = 0;
  for (let i = 0; i < kMaxLogFiles; i++) {
    const st = statSync(i === 0 ? logPath : `${logPath}.${i}`, { throwIfNoEntry: false });
    if (!st) break;
    total += st.size;
  }
  return total;
}

/**
 * collectStats runs one `stats` task (see file doc). Resolves with the sample; rejects only when
 * the runtime cannot list containers or /proc/stat or /proc/meminfo cannot be read.
 */
export async function collectStats(deps: StatsDeps, task: StatsTask): Promise<StatsSample> {
  const root = deps.cgroupFsRoot ?? kCgroupFsRoot;
  const procRoot = deps.procRoot ?? '/proc';
  const version = await (deps.cgroupFsRoot ? detectCgroupVersion(root) : (cgroupVersion ??= detectCgroupVersion(root)));
  const errors: string[] = [];
  const scope = task.pods ?? 'all';
  let list: ContainerSummary[] = [];
  if (scope === 'all' || scope.length > 0) {
    list = (await deps.runtime.listContainers({ labels: [kPodUidLabel] })).filter((c) => c.state === 'running');
    // The list is the node's every container: prune the caches by it before narrowing it to the scope.
    const live = new Set(list.map((c) => c.id));
    for (const id of inspected.keys()) if (!live.has(id)) inspected.delete(id);
    const livePods = new Set(list.map((c) => c.labels[kPodUidLabel] ?? ''));
    for (const uid of podCgroups.keys()) if (!livePods.has(uid)) podCgroups.delete(uid);
    if (scope !== 'all') {
      const wanted = new Set(scope);
      list = list.filter((c) => wanted.has(c.labels[kPodUidLabel] ?? ''));
    }
  }
  const pods = new Map<string, PodSample>();
  await Promise.all(
    list.map(async (c) => {
      const uid = c.labels[kPodUidLabel] ?? '';
      if (!uid) return;
      let pod = pods.get(uid);
      if (!pod) {
        pod = {
          uid,
          name: c.labels[kPodNameLabel] ?? '',
          namespace: c.labels[kPodNamespaceLabel] ?? '',
          startedAtMs: 0,
          cgroup: null,
          containers: [],
          volumes: [],
        };
        pods.set(uid, pod);
      }
      let info = inspected.get(c.id);
      if (!info) {
        try {
          const d = await deps.runtime.inspectContainer(c.id);
          const cg = version === 0 || !d.pid ? null : await cgroupOfProcess(d.pid, version, procRoot);
          info = { startedAtMs: d.startedAtMs, image: d.image, logPath: d.logPath ?? '', cgroup: cg };
          // Listed as running, so it has its PID: its cgroup (named by the container ID) stays the same for its life.
          inspected.set(c.id, info);
        } catch (err) {
          errors.push(`container ${c.id.slice(0, 12)}: ${(err as Error).message}`);
          return;
        }
      }
      const sandbox = c.labels[kContainerTypeLabel] === kContainerTypeSandbox;
      if (sandbox) {
        pod.startedAtMs = info.startedAtMs;
        return;
      }
      const usage = info.cgroup ? await readCgroupUsage(info.cgroup, root, info.limit) : null;
      if (usage && !info.limit) info.limit = { memoryLimitBytes: usage.memoryLimitBytes };
      if (info.cgroup && !usage) errors.push(`container ${c.id.slice(0, 12)}: cgroup not readable`);
      const sample: ContainerSample = {
        id: c.id,
        metricsName: c.name,
        cgroupPath: !info.cgroup ? '' : info.cgroup.version === 1 ? info.cgroup.memory : info.cgroup.path,
        name: c.labels[kContainerNameLabel] ?? '',
        image: info.image,
        startedAtMs: info.startedAtMs,
        cgroup: usage,
        logsUsedBytes: logBytes(info.logPath),
      };
      pod.containers.push(sample);
    }),
  );
  const out: PodSample[] = [];
  for (const pod of pods.values()) {
    pod.containers.sort((a, b) => a.name.localeCompare(b.name));
    if (!pod.startedAtMs) pod.startedAtMs = Math.min(...pod.containers.map((c) => c.startedAtMs).filter((t) => t > 0), deps.clock.now());
    if (version !== 0 && deps.cgroupRoot) {
      let ref = deps.cgroupFsRoot ? undefined : podCgroups.get(pod.uid);
      if (!ref) {
        const found = await findPodCgroup(pod.uid, deps.cgroupRoot, version, root);
        if (found && !deps.cgroupFsRoot) podCgroups.set(pod.uid, found);
        ref = found ?? undefined;
      }
      if (ref) pod.cgroup = await readCgroupUsage(ref, root);
      if (ref && !pod.cgroup) podCgroups.delete(pod.uid);
    }
    if (task.withVolumes !== false) pod.volumes = await emptyDirs(deps.rootDir, pod.uid);
    out.push(pod);
  }
  if (imageFsMount === undefined || deps.cgroupFsRoot)
    imageFsMount = (await deps.runtime.imageFsInfo().catch(() => null))?.mountpoint ?? null;
  return statsSample(
    { cgroupVersion: version, cgroupFsRoot: root, procRoot, rootDir: deps.rootDir, imageFsMount },
    out,
    errors,
    deps.clock,
  );
}
