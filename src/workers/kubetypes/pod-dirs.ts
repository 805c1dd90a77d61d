/**
 * Where kubelet-ts keeps a pod's files under --root-dir, as the kubelet's kubelet_getters.go
 * (getPodDir, getPodVolumeDir, getPodContainerDir): the pod directory, an emptyDir's directory and
 * each container attempt's termination-message file. A leaf: the volumes, the DNS files, the
 * container config and the kill all join their paths here.
 */
import { createHash } from 'node:crypto';
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

/**
 * podVolumePluginDir: `{rootDir}/pods/{uid}/volumes/{plugin}` — the directory of one volume
 * plugin's volumes of the pod (`plugin` as the kubelet's escaped plugin name, `kubernetes.io~empty-dir`;
 * without `plugin`, the `volumes` directory itself), as getPodVolumeDir/getPodVolumesDir.
 * @throws AgentError ERR_INVALID_ARGUMENT for an unsafe UID or plugin name.
 */
export function podVolumePluginDir(rootDir: string, uid: string, plugin?: string): string {
  const volumes = path.join(podDir(rootDir, uid), 'volumes');
  return plugin === undefined ? volumes : path.join(volumes, assertSafeSegment(plugin, 'volume plugin'));
}

/** kEmptyDirPluginDir: the emptyDir plugin's directory name under `pods/{uid}/volumes/`. */
export const kEmptyDirPluginDir = 'kubernetes.io~empty-dir';

/** emptyDirPath: `{rootDir}/pods/{uid}/volumes/kubernetes.io~empty-dir/{name}` (as the kubelet's emptyDir plugin). */
export function emptyDirPath(rootDir: string, uid: string, volumeName: string): string {
  return path.join(podVolumePluginDir(rootDir, uid, kEmptyDirPluginDir), assertSafeSegment(volumeName, 'volume name'));
}

/**
 * terminationMessageFile: `{rootDir}/pods/{uid}/containers/{name}/{restartCount}` — the host file
 * bind-mounted at the container's terminationMessagePath (as the kubelet's
 * `pods/{uid}/containers/{name}/{id}`), one per attempt so a restart never sees the old message.
 */
export function terminationMessageFile(rootDir: string, uid: string, containerName: string, restartCount: number): string {
  return path.join(podDir(rootDir, uid), 'containers', assertSafeSegment(containerName, 'container name'), String(restartCount));
}

/** The longest name of one directory entry on Linux filesystems, bytes (NAME_MAX). */
const kNameMaxBytes = 255;

/**
 * podLogsDirectory: `{podLogsDir}/{namespace}_{name}_{uid}` — the pod's CRI log directory
 * (PodSandboxConfig.log_directory), as pkg/kubelet/kuberuntime/helpers.go BuildPodLogsDirectory;
 * `podLogsDir` is the kubelet's podLogsDir (`/var/log/pods` upstream), absolute. Unlike upstream,
 * an entry that would pass NAME_MAX (255 bytes: a 253-character pod name with its namespace and UID
 * makes up to 354) keeps the start of the name and ends it with `-` and 10 hex digits of the name's
 * SHA-256, so every valid pod gets a log directory (upstream's mkdir fails with ENAMETOOLONG).
 * Pure and stable: every caller (sandbox config, kill, GC) computes the same path.
 * @throws AgentError ERR_INVALID_ARGUMENT when a part is not a safe path segment.
 */
export function podLogsDirectory(podLogsDir: string, namespace: string, name: string, uid: string): string {
  const ns = assertSafeSegment(namespace, 'metadata.namespace');
  const id = assertSafeSegment(uid, 'metadata.uid');
  let n = assertSafeSegment(name, 'metadata.name');
  const room = kNameMaxBytes - Buffer.byteLength(`${ns}__${id}`);
  if (Buffer.byteLength(n) > room) n = `${n.slice(0, Math.max(0, room - 11))}-${createHash('sha256').update(n).digest('hex').slice(0, 10)}`;
  return path.join(podLogsDir, `${ns}_${n}_${id}`);
}

/** containerLogPath: `<container>/<restartCount>.log`, relative to the pod's log directory (helpers.go BuildContainerLogsDirectory + `<attempt>.log`). */
export function containerLogPath(containerName: string, restartCount: number): string {
  return path.posix.join(assertSafeSegment(containerName, 'container name'), `${restartCount}.log`);
}

/**
 * podLogsRoot: `{rootDir}/pod-logs` — where kubelet-ts keeps the pods' CRI log directories (the
 * kubelet's podLogsDir, `/var/log/pods` upstream): under --root-dir, so that every agent sharing a
 * runtime has its own and container GC may evict the directories of its pods that are gone.
 */
export function podLogsRoot(rootDir: string): string {
  return path.join(rootDir, 'pod-logs');
}
