/**
 * Counterpart of pkg/kubelet/kuberuntime/security_context_others.go (verifyRunAsNonRoot) and of
 * pkg/volume/volume_linux.go SetVolumeOwnership for emptyDir volumes under an fsGroup. The CRI
 * security context itself is security-context.ts's. Runs on a worker thread.
 */
import { chmod, chown, lstat, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Container, Pod } from '../../shared/api.js';
import { effectiveSecurityContext } from '../../shared/security-context.js';
import { configError } from '../kubetypes/config-error.js';

/** formatPod: the kubelet's format.Pod, `name_namespace(uid)`. */
function formatPod(pod: Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? 'default'}(${pod.metadata?.uid ?? ''})`;
}

/**
 * imageUid: an image's user as kuberuntime's getImageUser reads it (the part before `:`; a
 * number is a uid, anything else a user name; the CRI answers uid or username, sync-pod.ts
 * passes whichever it got). An unset user is root (uid 0), as
 * kuberuntime's getImageUser ("If none of them is set, treat it as root").
 */
export function imageUid(imageUser: string): { uid?: number; username?: string } {
  const user = imageUser.split(':')[0];
  if (user === '') return { uid: 0 };
  return /^\d+$/.test(user) ? { uid: Number(user) } : { username: user };
}

/**
 * verifyRunAsNonRoot, as the kubelet's: when the effective runAsNonRoot is true, a runAsUser of 0,
 * or no runAsUser and an image that runs as root or as a user name, is refused with the kubelet's
 * messages. `imageUser`: the image's user (ImageStatus `uid` as a number string, or `username`).
 * @throws AgentError with reason `CreateContainerConfigError`.
 */
export function verifyRunAsNonRoot(pod: Pod, container: Container, imageUser: string): void {
  const sc = effectiveSecurityContext(pod, container);
  if (sc.runAsNonRoot !== true) return;
  if (sc.runAsUser !== undefined) {
    if (sc.runAsUser === 0)
      throw configError(`container's runAsUser breaks non-root policy (pod: "${formatPod(pod)}", container: ${container.name})`);
    return;
  }
  const { uid, username } = imageUid(imageUser);
  if (uid === undefined)
    throw configError(
      `container has runAsNonRoot and image has non-numeric user (${username}), cannot verify user is non-root (pod: "${formatPod(pod)}", container: ${container.name})`,
    );
  if (uid === 0)
    throw configError(`container has runAsNonRoot and image will run as root (pod: "${formatPod(pod)}", container: ${container.name})`);
}

/**
 * setVolumeOwnership, as the kubelet's volume.SetVolumeOwnership for an emptyDir under the pod's
 * fsGroup: every file and directory below `dir` gets group `fsGroup`, group read/write (and
 * execute for directories and executables), and directories the setgid bit, so new files inherit
 * the group. With `fsGroupChangePolicy: OnRootMismatch` nothing is walked when `dir` already has
 * the group and setgid. Symlinks are not followed. Idempotent.
 */
export async function setVolumeOwnership(dir: string, fsGroup: number, policy: string | undefined): Promise<void> {
  const root = await stat(dir);
  if (policy === 'OnRootMismatch' && root.gid === fsGroup && (root.mode & 0o2000) !== 0) return;
  const walk = async (p: string): Promise<void> => {
    const st = await lstat(p);
    if (st.isSymbolicLink()) return;
    await chown(p, st.uid, fsGroup);
    let mode = (st.mode & 0o7777) | 0o060;
    if (st.isDirectory()) mode |= 0o2010;
    else if (st.mode & 0o100) mode |= 0o010;
    await chmod(p, mode);
    if (st.isDirectory()) for (const e of await readdir(p)) await walk(path.join(p, e));
  };
  await walk(dir);
}
