/**
 * Counterpart of the kubelet's volume manager as syncPod uses it (pkg/kubelet/volumemanager
 * WaitForAttachAndMount, the reconciler's periodic remount of configMap/secret/downwardAPI/projected
 * volumes) with the emptyDir plugin (pkg/volume/emptydir: tmpfs for `medium: Memory`, sized as
 * calculateEmptyDirMemorySize). An emptyDir's usage is reported by the stats worker (workers/stats),
 * and only the main thread's eviction manager decides that it is over its `sizeLimit`
 * (pkg/kubelet/eviction emptyDirLimitEviction; main/eviction/local-storage.ts): the volume manager
 * sets volumes up and never judges their usage. Runs at every sync of a pod, also the
 * periodic one, so a changed ConfigMap, Secret or label reaches the files of a running container
 * without a restart. Worker thread.
 */
import { chmodSync, lstatSync } from 'node:fs';
import { lstat, mkdir, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Container, Pod, Volume } from '../../shared/api.js';
import { serializeError } from '../../shared/errors.js';
import type { PodConfigObjects, PodEventRecord } from '../../shared/sync-tasks.js';
import { emptyDirSizeLimitBytes, isRestartableInitContainer } from '../../shared/pod-policy.js';
import { parseQuantity } from '../../shared/quantity.js';
import { assertSafeSegment, emptyDirPath, podVolumePluginDir } from '../kubetypes/pod-dirs.js';
import type { DownwardAPIContext } from '../kubetypes/downward-api.js';
import { ensureDir } from '../kubetypes/pod-files.js';
import { hasPayload, writePayload } from './atomic-writer.js';
import { claimVolumeHostPath, setUpClaimVolume } from './local-path.js';
import { mountTmpfs } from './mount.js';
import { volumePayload } from './payloads.js';

/** The plugin directory names under `pods/{uid}/volumes/` (the kubelet's `kubernetes.io~…`). */
const kPluginDirs = {
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
} as const;

/**
 * apiVolumePath: the host directory of a configMap, secret, downwardAPI or projected volume,
 * `{rootDir}/pods/{uid}/volumes/kubernetes.io~{plugin}/{name}`; null for other kinds. Pure.
 */
export function apiVolumePath(rootDir: string, uid: string, vol: Volume): string | null {
  const kind = (Object.keys(kPluginDirs) as Array<keyof typeof kPluginDirs>).find((k) => vol[k]);
  if (!kind) return null;
  return path.join(podVolumePluginDir(rootDir, uid, kPluginDirs[kind]), assertSafeSegment(vol.name, 'volume name'));
}

/** isMemoryBacked: the volume lives on a tmpfs — emptyDir `medium: Memory`, secret and projected (as the kubelet's wrappers). */
export function isMemoryBacked(vol: Volume): boolean {
  return vol.emptyDir?.medium === 'Memory' || vol.secret !== undefined || vol.projected !== undefined;
}

function memoryLimit(c: Container): number | undefined {
  const q = (c.resources?.limits as Record<string, string | number> | undefined)?.memory;
  if (q === undefined) return undefined;
  try {
    const n = parseQuantity(q, 'memory');
    return n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * podMemoryLimitBytes: the pod's memory limit when every container has one (as resourcehelper
 * PodLimits: the sum of the app containers' and sidecars' limits, at least the largest regular init
 * container's); undefined when one container is unbounded. Pure.
 */
export function podMemoryLimitBytes(pod: Pod): number | undefined {
  let sum = 0;
  for (const c of pod.spec?.containers ?? []) {
    const l = memoryLimit(c);
    if (l === undefined) return undefined;
    sum += l;
  }
  let initMax = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    const l = memoryLimit(c);
    if (l === undefined) return undefined;
    if (isRestartableInitContainer(c)) sum += l;
    else initMax = Math.max(initMax, l);
  }
  return Math.max(sum, initMax);
}

/**
 * memoryVolumeSizeBytes, as emptydir calculateEmptyDirMemorySize (SizeMemoryBackedVolumes): the
 * node's memory, lowered to the pod's memory limit when it has one, lowered to the volume's
 * `emptyDir.sizeLimit` when set and positive (shared/pod-policy.ts emptyDirSizeLimitBytes). Bytes. Pure apart from os.totalmem().
 */
export function memoryVolumeSizeBytes(pod: Pod, vol: Volume, nodeMemoryBytes = os.totalmem()): number {
  let size = nodeMemoryBytes;
  const podLimit = podMemoryLimitBytes(pod);
  if (podLimit !== undefined && podLimit < size) size = podLimit;
  const limit = emptyDirSizeLimitBytes(vol);
  if (limit !== undefined && limit < size) size = limit;
  return size;
}

/**
 * diskUsageBytes: the bytes the files below `dir` take on disk (st_blocks × 512, as `du`), links
 * not followed, other filesystems not entered; stops counting after `maxEntries` entries. Never throws.
 */
export async function diskUsageBytes(dir: string, maxEntries = 100_000): Promise<number> {
  let total = 0;
  let seen = 0;
  const root = await lstat(dir).catch(() => null);
  if (!root) return 0;
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (++seen > maxEntries) return;
      const p = path.join(d, e.name);
      const st = await lstat(p).catch(() => null);
      if (!st) continue;
      total += st.blocks * 512;
      if (st.isDirectory() && st.dev === root.dev) await walk(p);
    }
  };
  await walk(dir);
  return total;
}

/**
 * setEmptyDirMode gives a disk emptyDir's directory the permissions 0777 whatever the umask, as
 * pkg/volume/emptydir setupDir: a container of any user may write it (the 0750 directories above
 * keep other local users out). Like setupDir it changes the permission bits only when they differ
 * and keeps the other bits — the setgid bit SetVolumeOwnership gives it under an fsGroup stays, so
 * that files made later still get the group. `made`: the directory was just made (its mode is
 * 0777 less the umask: one chmod, no stat). Synchronous (pod-files.ts says why).
 */
function setEmptyDirMode(dir: string, made: boolean): void {
  if (made) return chmodSync(dir, 0o777);
  const mode = lstatSync(dir).mode;
  if ((mode & 0o777) !== 0o777) chmodSync(dir, (mode & 0o7777) | 0o777);
}

/** What setUpPodVolumes did. */
export interface PodVolumesResult {
  /** Volumes not set up yet, by name, with the FailedMount message: no container may start. */
  unmounted: Record<string, string>;
  /** FailedMount events (also for a remount that failed on a volume that was set up before). */
  events: PodEventRecord[];
}

/**
 * setUpPodVolumes sets up and refreshes the pod's volumes, as the volume manager before syncPod
 * starts containers and its reconciler afterwards: emptyDir directories (tmpfs of
 * memoryVolumeSizeBytes for `medium: Memory`); configMap, secret, downwardAPI and projected
 * volumes written by the AtomicWriter; persistentVolumeClaim volumes linked to the claim's directory (local-path.ts) (secret and projected on a tmpfs, never on disk), rewritten
 * when their content changed. (An emptyDir over its `sizeLimit` is the eviction manager's verdict,
 * from the stats worker's figures: main/eviction/local-storage.ts.)
 * A volume that fails is reported with `MountVolume.SetUp failed for volume "x" : …` (a FailedMount
 * event); it blocks the pod's containers only when it was never set up (a running container keeps
 * the last good files). Idempotent. Never throws for a volume's failure.
 */
export async function setUpPodVolumes(
  pod: Pod,
  objects: PodConfigObjects | undefined,
  ctx: DownwardAPIContext & { rootDir: string },
): Promise<PodVolumesResult> {
  const uid = pod.metadata?.uid ?? '';
  const out: PodVolumesResult = { unmounted: {}, events: [] };
  const fsGroup = (pod.spec?.securityContext as { fsGroup?: number } | undefined)?.fsGroup;
  const volumes = pod.spec?.volumes ?? [];
  // The pod's directory and its volumes/ 0750, as the kubelet's makePodDataDirs (kubelet_pods.go):
  // only root and the agent reach the volumes (issue #38 finding 4).
  if (volumes.length > 0) ensureDir(podVolumePluginDir(ctx.rootDir, uid), 0o750);
  for (const [i, vol] of volumes.entries()) {
    const field = `spec.volumes[${i}]`;
    let dir: string | null = null;
    try {
      if (vol.emptyDir) {
        dir = emptyDirPath(ctx.rootDir, uid, vol.name);
        const made = ensureDir(dir, 0o777);
        if (vol.emptyDir.medium === 'Memory') await mountTmpfs(dir, memoryVolumeSizeBytes(pod, vol), 0o777);
        else setEmptyDirMode(dir, made);
        continue;
      }
      if (vol.persistentVolumeClaim) {
        await setUpClaimVolume(pod, vol, objects, ctx.rootDir);
        continue;
      }
      dir = apiVolumePath(ctx.rootDir, uid, vol);
      if (!dir) continue;
      const payload = volumePayload(vol, pod, objects, ctx, field);
      if (!payload) continue;
      // A tmpfs needs its mount point; a disk volume's directory is writePayload's to make, once.
      if (isMemoryBacked(vol)) {
        await mkdir(dir, { recursive: true, mode: 0o755 });
        await mountTmpfs(dir, memoryVolumeSizeBytes(pod, vol), 0o755);
      }
      await writePayload(dir, payload, fsGroup === undefined ? {} : { fsGroup });
    } catch (err) {
      const message = `MountVolume.SetUp failed for volume ${JSON.stringify(vol.name)} : ${serializeError(err).message}`;
      out.events.push({ type: 'Warning', reason: 'FailedMount', message });
      // A claim volume set up before (its claim since gone) stays mounted, as the kubelet's actual state of world.
      const setUp = vol.persistentVolumeClaim
        ? await claimVolumeHostPath(ctx.rootDir, uid, vol.name).then(
            () => true,
            () => false,
          )
        : !vol.emptyDir && dir !== null && (await hasPayload(dir));
      if (!setUp) out.unmounted[vol.name] = message;
    }
  }
  return out;
}
