/**
 * Where kubelet-ts keeps a pod's files under --root-dir, as the kubelet's kubelet_getters.go
 * (getPodDir, getPodVolumeDir, getPodContainerDir): the pod directory, an emptyDir's directory and
 * each container attempt's termination-message file. A leaf: the volumes, the DNS files, the
 * container config and the kill all join their paths here.
 */
import path from 'node:path';
import { AgentError } from '../../shared/errors.js';

/**
 * assertSafeSegment: `s` itself when it is safe to join under --root-dir (no separators, not
 * `.`/`..`, no NUL).
 * @throws AgentError ERR_INVALID_ARGUMENT naming `what` otherwise.
 */
export function assertSafeSegment(s: string, what: string): string {
  if (!s || s === '.' || s === '..' || s.includes('/') || s.includes('\\') || s.includes('\0')) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `${what}: ${JSON.stringify(s)} is not a valid path segment`);
  }
  return s;
}

/** podDir: `{rootDir}/pods/{uid}` — everything kubelet-ts keeps on disk for one pod. */
export function podDir(rootDir: string, uid: string): string {
  return path.join(rootDir, 'pods', assertSafeSegment(uid, 'metadata.uid'));
}

/** emptyDirPath: `{rootDir}/pods/{uid}/volumes/kubernetes.io~empty-dir/{name}` (as the kubelet's emptyDir plugin). */
export function emptyDirPath(rootDir: string, uid: string, volumeName: string): string {
  return path.join(podDir(rootDir, uid), 'volumes', 'kubernetes.io~empty-dir', assertSafeSegment(volumeName, 'volume name'));
}

/**
 * terminationMessageFile: `{rootDir}/pods/{uid}/containers/{name}/{restartCount}` — the host file
 * bind-mounted at the container's terminationMessagePath (as the kubelet's
 * `pods/{uid}/containers/{name}/{id}`), one per attempt so a restart never sees the old message.
 */
export function terminationMessageFile(rootDir: string, uid: string, containerName: string, restartCount: number): string {
  return path.join(podDir(rootDir, uid), 'containers', assertSafeSegment(containerName, 'container name'), String(restartCount));
}
