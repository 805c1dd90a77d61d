/**
 * The `persistentVolumeClaim` volume of a lone node: the claim's local-path directory (shared/pvc.ts
 * claimDir, as rancher/local-path-provisioner's hostPath volumes) linked into the pod's volume
 * directory `{rootDir}/pods/{uid}/volumes/kubernetes.io~local-path/{volume}`, the place the
 * kubelet's volume manager mounts a PersistentVolume at (pkg/volume/local, pkg/kubelet/volumemanager
 * reconciler). A claim the pod's sync task does not carry is a FailedMount (`persistentvolumeclaim
 * "x" not found`: the pod waits, as the kubelet's desired-state populator retries a missing claim);
 * so is a claim being deleted (`persistentvolumeclaim "x" is being deleted`) for a pod that has not
 * mounted it yet, and a ReadWriteOncePod claim another pod of the node holds (the message from
 * the main thread: PodConfigObjects.claimsRefused). Worker thread.
 */
import { chmod, lstat, mkdir, readlink, realpath, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import type { Pod, Volume } from '../../shared/api.js';
import { AgentError } from '../../shared/errors.js';
import type { PodConfigObjects } from '../../shared/sync-tasks.js';
import { claimDir } from '../../shared/pvc.js';
import { assertSafeSegment, podVolumePluginDir } from '../kubetypes/pod-dirs.js';

/** kLocalPathPluginDir: the plugin directory of claim volumes under `pods/{uid}/volumes/`. */
const kLocalPathPluginDir = 'kubernetes.io~local-path';

/** claimVolumeLink: `{rootDir}/pods/{uid}/volumes/kubernetes.io~local-path/{name}`, the link to the claim's directory. Pure. */
export function claimVolumeLink(rootDir: string, uid: string, volumeName: string): string {
  return path.join(podVolumePluginDir(rootDir, uid, kLocalPathPluginDir), assertSafeSegment(volumeName, 'volume name'));
}

/**
 * setUpClaimVolume links the claim of `vol` into the pod's volume directory, making the claim's
 * directory (mode 0777, as the local-path provisioner) when missing. Idempotent.
 * @throws AgentError ERR_NOT_FOUND (a FailedMount) for a claim absent, being deleted, or held by another pod.
 */
export async function setUpClaimVolume(pod: Pod, vol: Volume, objects: PodConfigObjects | undefined, rootDir: string): Promise<void> {
  const name = vol.persistentVolumeClaim?.claimName ?? '';
  const link = claimVolumeLink(rootDir, pod.metadata?.uid ?? '', vol.name);
  const refused = objects?.claimsRefused?.[name];
  if (refused) throw new AgentError('ERR_NOT_FOUND', refused);
  const claim = objects?.claims?.[name];
  if (!claim) throw new AgentError('ERR_NOT_FOUND', `persistentvolumeclaim ${JSON.stringify(name)} not found`);
  const target = claimDir(rootDir, claim);
  const current = await readlink(link).catch(() => undefined);
  if (current === target) return;
  if (claim.metadata?.deletionTimestamp)
    throw new AgentError('ERR_NOT_FOUND', `persistentvolumeclaim ${JSON.stringify(name)} is being deleted`);
  await mkdir(target, { recursive: true, mode: 0o777 });
  if (((await lstat(target)).mode & 0o7777) !== 0o777) await chmod(target, 0o777);
  await mkdir(path.dirname(link), { recursive: true, mode: 0o750 });
  if (current !== undefined) await rm(link, { force: true });
  await symlink(target, link);
}

/**
 * claimVolumeHostPath: the host directory a container's bind of the claim volume names (the link
 * resolved: Docker binds the directory itself).
 * @throws AgentError ERR_NOT_FOUND when the volume was not set up.
 */
export async function claimVolumeHostPath(rootDir: string, uid: string, volumeName: string): Promise<string> {
  try {
    return await realpath(claimVolumeLink(rootDir, uid, volumeName));
  } catch {
    throw new AgentError('ERR_NOT_FOUND', `volume ${JSON.stringify(volumeName)}: its persistentVolumeClaim is not mounted`);
  }
}
