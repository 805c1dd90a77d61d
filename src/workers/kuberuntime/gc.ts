/**
 * Counterpart of pkg/kubelet/kuberuntime/kuberuntime_gc.go (evictContainers, evictSandboxes,
 * evictPodLogsDirectories) and pkg/kubelet/images/image_gc_manager.go over the CRI: the `gc` task
 * on a CRI runtime. Containers and sandboxes come from ListContainers / ListPodSandbox filtered on
 * this node's label; the decisions are gc-policy.ts's selectContainersToRemove and ../images/image-gc.ts's
 * selectImagesToRemove;
 * removal is RemoveContainer, then StopPodSandbox + RemovePodSandbox (the runtime tears the
 * network down), then the log directories of pods that are gone (containerd leaves them). Image
 * GC lists every container of the runtime (an image any owner uses is kept) and removes by image
 * ID (the CRI's RemoveImage removes every reference of the ID). Orphaned pod cgroups go as
 * kubelet_pods.go cleanupOrphanedPodCgroups removes them (cleanupOrphanedPodCgroups below).
 */
import { readdir, rm, statfs } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../shared/clock.js';
import { isNotFound, serializeError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { GcResult, GcTask } from '../../shared/sync-tasks.js';
import type { NodeSandboxSettings } from '../../shared/node-settings.js';
import { removeOrphanPodCgroups } from '../cm/pod-cgroup.js';
import type { ImageManagerService, RuntimeService } from '../runtime/cri/services.js';
import { nodeSelector } from './labels.js';
import { removeCriContainer } from './remove-container.js';
import { criToRuntimeState, nsToMs } from './runtime-pod.js';
import { readPulledImages, selectImagesToRemove, writePulledImages } from '../images/image-gc.js';
import { selectContainersToRemove, type GcContainer } from './gc-policy.js';
import { kPodInfraContainerName, kPodUidLabel } from '../kubetypes/label-keys.js';

/** Dependencies of runCriGc. */
export interface CriGcDeps {
  runtime: RuntimeService;
  images: ImageManagerService;
  nodeName: string;
  /** --root-dir (the record of pulled images, `images/pulled.json`). */
  rootDir: string;
  /** The root of the pods' log directories; every `<ns>_<name>_<uid>` in it belongs to this node. */
  podLogsDir: string;
  /** The pod infra (sandbox) image, never removed by image GC ('' = none named). */
  podInfraContainerImage: string;
  /** The thread's Clock (shared/clock.ts): when images in use were last used. */
  clock: Clock;
  /** The image IDs every container of the runtime uses, any owner's; absent = this node's ListContainers (image GC keeps them). */
  imagesInUse?: () => Promise<ReadonlySet<string>>;
  /** The node's pod cgroup settings (--cgroups-per-qos, --cgroup-root); absent or off = the agent makes no pod cgroups. */
  sandbox?: Pick<NodeSandboxSettings, 'cgroupsPerQOS' | 'cgroupRoot'>;
  /**
   * The pod UIDs of every sandbox and container in the runtime, any owner's (agents that share a
   * runtime share the cgroup root too); absent = unknown: an orphaned pod cgroup is then removed
   * only when no process is left in it, never killed.
   */
  podUidsInRuntime?: () => Promise<ReadonlySet<string>>;
  logger?: Logger;
}

/**
 * runCriGc: container GC (kuberuntime_gc.go, MinAge 0: the newest `maximumDeadContainersPerContainer`
 * dead containers per pod and name kept, every dead one of a pod not in `activePodUids`; dead
 * sandboxes without containers but the newest of a known pod), the log directories of pods not
 * active and without a sandbox left and the orphaned pod cgroups (cleanupOrphanedPodCgroups; both
 * only when `activePodUids` is given), then image GC when
 * `task.imageGc` is set. Failed removals are listed in `errors`; the rest goes on.
 * @throws AgentError from the list calls (e.g. ERR_RUNTIME_UNAVAILABLE).
 */
export async function runCriGc(deps: CriGcDeps, task: GcTask): Promise<GcResult> {
  const result: GcResult = { removedContainers: [], removedSandboxes: [], removedImages: [], errors: [] };
  const selector = nodeSelector(deps.nodeName);
  const [sandboxes, containers] = await Promise.all([
    deps.runtime.listPodSandbox({ label_selector: selector }),
    deps.runtime.listContainers({ label_selector: selector }),
  ]);
  const all: GcContainer[] = [
    ...containers.map((c) => ({
      id: c.id,
      podUid: c.labels[kPodUidLabel] ?? '',
      name: c.metadata?.name ?? '',
      sandbox: false,
      sandboxId: c.pod_sandbox_id,
      state: criToRuntimeState(c.state),
      createdAtMs: nsToMs(c.created_at),
      attempt: c.metadata?.attempt ?? 0,
    })),
    ...sandboxes.map((s) => ({
      id: s.id,
      podUid: s.labels[kPodUidLabel] ?? '',
      name: kPodInfraContainerName,
      sandbox: true,
      sandboxId: '',
      state: s.state === 'SANDBOX_READY' ? ('running' as const) : ('exited' as const),
      createdAtMs: nsToMs(s.created_at),
      attempt: s.metadata?.attempt ?? 0,
    })),
  ];
  const active = task.activePodUids ? new Set(task.activePodUids) : undefined;
  const plan = selectContainersToRemove(all, {
    maxPerPodContainer: task.maximumDeadContainersPerContainer,
    ...(active ? { activePodUids: active } : {}),
  });
  const remove = async (id: string, into: string[], call: () => Promise<void>, what: string) => {
    try {
      await call();
      into.push(id);
    } catch (err) {
      if (isNotFound(err)) into.push(id);
      else result.errors.push(`remove ${what} ${id}: ${serializeError(err).message}`);
    }
  };
  for (const id of plan.containers) await remove(id, result.removedContainers, () => removeCriContainer(deps.runtime, id), 'container');
  for (const id of plan.sandboxes) {
    await remove(
      id,
      result.removedSandboxes,
      async () => {
        await deps.runtime.stopPodSandbox(id);
        await deps.runtime.removePodSandbox(id);
      },
      'sandbox',
    );
  }
  if (active) {
    const removed = new Set(result.removedSandboxes);
    const left = new Set(sandboxes.filter((s) => !removed.has(s.id)).map((s) => s.labels[kPodUidLabel]));
    await evictPodLogsDirectories(deps.podLogsDir, (uid) => active.has(uid) || left.has(uid), result);
    const removedIds = new Set([...result.removedContainers, ...result.removedSandboxes]);
    for (const c of containers) if (!removedIds.has(c.id)) left.add(c.labels[kPodUidLabel]);
    if (deps.sandbox?.cgroupsPerQOS) await cleanupOrphanedPodCgroups(deps, deps.sandbox.cgroupRoot, new Set([...active, ...left]), result);
  }
  if (task.imageGc) {
    try {
      await criImageGc(deps, task.imageGc, result);
    } catch (err) {
      result.errors.push(`image gc: ${serializeError(err).message}`);
    }
  }
  return result;
}

/**
 * cleanupOrphanedPodCgroups, as kubelet_pods.go cleanupOrphanedPodCgroups with
 * pod_container_manager_linux.go Destroy: every pod cgroup the agent names
 * (`{cgroupRoot}/kubepods[/burstable|/besteffort]/pod<uid>`, what it gives the runtime as the
 * sandbox's cgroup_parent on every runtime) whose pod is not active, has no sandbox or container of
 * this node left, none of any owner (`podUidsInRuntime`), and is older than
 * kOrphanPodCgroupMinAgeMs, has its processes killed and is removed. Without `podUidsInRuntime`
 * nothing is killed: a cgroup still holding a process stays. A failure goes into `result.errors`.
 */
async function cleanupOrphanedPodCgroups(deps: CriGcDeps, cgroupRoot: string, live: Set<string>, result: GcResult): Promise<void> {
  try {
    if (deps.podUidsInRuntime) for (const uid of await deps.podUidsInRuntime()) live.add(uid);
    const removed = await removeOrphanPodCgroups(
      cgroupRoot,
      live,
      deps.clock.now(),
      undefined,
      undefined,
      deps.podUidsInRuntime !== undefined,
    );
    if (removed.length > 0) deps.logger?.info({ uids: removed.slice(0, 10), removed: removed.length }, 'Removed orphaned pod cgroups');
  } catch (err) {
    result.errors.push(`pod cgroups: ${serializeError(err).message}`);
  }
}

/**
 * evictPodLogsDirectories, as kuberuntime_gc.go: removes every `<ns>_<name>_<uid>` directory of
 * `podLogsDir` whose UID `keep` does not keep. A missing root is nothing to do.
 */
async function evictPodLogsDirectories(podLogsDir: string, keep: (uid: string) => boolean, result: GcResult): Promise<void> {
  const names = await readdir(podLogsDir).catch(() => [] as string[]);
  for (const name of names) {
    const uid = name.split('_')[2];
    if (!uid || keep(uid)) continue;
    await rm(path.join(podLogsDir, name), { recursive: true, force: true }).catch((err: Error) =>
      result.errors.push(`remove pod log directory ${name}: ${err.message}`),
    );
  }
}

/**
 * criImageGc, as image_gc_manager.go: the image filesystem's capacity and availability (statfs of
 * ImageFsInfo's mountpoint, as the kubelet's cadvisor), every container of the runtime (images in
 * use), ListImages; the images this agent pulled (pulled.json) chosen by selectImagesToRemove are
 * removed by ID.
 */
async function criImageGc(deps: CriGcDeps, policy: NonNullable<GcTask['imageGc']>, result: GcResult): Promise<void> {
  const mountpoint = (await deps.images.imageFsInfo()).image_filesystems[0]?.fs_id?.mountpoint;
  if (!mountpoint) return;
  const fs = await statfs(mountpoint);
  const inUse = new Set(
    deps.imagesInUse ? await deps.imagesInUse() : (await deps.runtime.listContainers()).map((c) => c.image_id || c.image_ref),
  );
  const pulled = await readPulledImages(deps.rootDir);
  const now = deps.clock.now();
  for (const id of inUse) if (pulled[id]) pulled[id].lastUsedMs = now;
  const images = (await deps.images.listImages()).map((i) => ({ id: i.id, repoTags: i.repo_tags, sizeBytes: i.size, createdAtMs: 0 }));
  const infra = deps.podInfraContainerImage;
  const protectedIds = new Set(
    images.filter((i) => infra && (i.id === infra || i.repoTags.some((t) => t === infra || t.endsWith(`/${infra}`)))).map((i) => i.id),
  );
  const plan = selectImagesToRemove({
    capacityBytes: fs.blocks * fs.bsize,
    availableBytes: fs.bavail * fs.bsize,
    highThresholdPercent: policy.highThresholdPercent,
    lowThresholdPercent: policy.lowThresholdPercent,
    images,
    pulled,
    inUseImageIds: inUse,
    protectedImageIds: protectedIds,
  });
  result.diskUsagePercent = plan.usagePercent;
  for (const img of plan.images) {
    try {
      await deps.images.removeImage({ image: img.id });
      result.removedImages.push(img.id);
      delete pulled[img.id];
    } catch (err) {
      result.errors.push(`remove image ${img.id}: ${serializeError(err).message}`);
    }
  }
  await writePulledImages(deps.rootDir, pulled);
}
