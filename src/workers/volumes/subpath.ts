/**
 * Counterpart of pkg/volume/util/subpath/subpath_linux.go (PrepareSafeSubpath, doBindSubPath,
 * SafeMakeDir, doSafeOpen) and kubelet_pods.go makeMounts' subPath handling: a volumeMount's
 * subPath (or expanded subPathExpr) is resolved inside its volume without ever following a link out
 * of it — the fixes of CVE-2017-1002101 and CVE-2021-25741 — and bind-mounted, from the checked
 * file descriptor, to `{podDir}/volume-subpaths/{volume}/{container}/{index}`, the path given to
 * Docker. Worker thread; the agent runs as root.
 */
import { constants as fsConstants } from 'node:fs';
import { chmod, mkdir, open, realpath, stat, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AgentError } from '../../shared/errors.js';
import { bindMountFd, mountPointInfo, unmount } from './mount.js';

/** Linux's O_PATH (same value on x86_64 and arm64): an fd naming an inode, for fstat and /proc/self/fd only. */
const kOPath = 0o10000000;

function configError(message: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', message, { reason: 'CreateContainerConfigError' });
}

/** within: `p` is `base` or below it (both absolute, resolved). */
function within(p: string, base: string): boolean {
  return p === base || p.startsWith(base.endsWith('/') ? base : `${base}/`);
}

/**
 * checkSubPath, as makeMounts: a subPath must not be absolute (`error SubPath \`x\` must not be an
 * absolute path`) nor contain a `..` component (`unable to provision SubPath \`x\`: must not
 * contain '..'`). Pure.
 * @throws AgentError with reason CreateContainerConfigError.
 */
export function checkSubPath(subPath: string): void {
  if (path.isAbsolute(subPath)) throw configError(`error SubPath \`${subPath}\` must not be an absolute path`);
  if (subPath.split(/[/\\]/).includes('..')) throw configError(`unable to provision SubPath \`${subPath}\`: must not contain '..'`);
}

/** openNoFollow opens `name` below the directory open as `parent` (openat(parent, name, O_NOFOLLOW|O_PATH)) and refuses a symlink. */
async function openNoFollow(parent: FileHandle, name: string, display: string): Promise<FileHandle> {
  const fh = await open(`/proc/self/fd/${parent.fd}/${name}`, kOPath | fsConstants.O_NOFOLLOW);
  const st = await fh.stat().catch(async (err: unknown) => {
    await fh.close();
    throw err;
  });
  if (st.isSymbolicLink()) {
    await fh.close();
    throw configError(`subpath ${JSON.stringify(display)}: a path component is a symlink (changed while it was checked)`);
  }
  return fh;
}

/**
 * resolveSubPath resolves `subPath` inside `volumeRoot` as PrepareSafeSubpath does: links are
 * evaluated, and a result outside the volume is refused (`subpath "…" not within volume path "…"`);
 * a missing subPath is created as a directory (mode `dirMode`, default the volume root's) component by component, as
 * SafeMakeDir, never through a link. Then each component of the resolved path is opened with
 * O_NOFOLLOW from the volume's root (doSafeOpen), so a component swapped for a link in between is
 * refused. Resolves to an open O_PATH handle of the final inode (the caller closes it) and whether
 * it is a directory.
 * @throws AgentError with reason CreateContainerConfigError.
 */
export async function resolveSubPath(
  volumeRoot: string,
  subPath: string,
  dirMode?: number,
): Promise<{ handle: FileHandle; isDir: boolean }> {
  checkSubPath(subPath);
  const root = await realpath(volumeRoot);
  // As makeMounts: a created subPath directory gets the volume root's permissions.
  const mode = dirMode ?? (await stat(root)).mode & 0o7777;
  const comps = subPath.split('/').filter((c) => c !== '' && c !== '.');
  // The longest prefix that exists, links evaluated.
  let k = comps.length;
  let resolved = '';
  for (; k >= 0; k--) {
    const r = await realpath(path.join(root, ...comps.slice(0, k))).catch(() => null);
    if (r !== null) {
      resolved = r;
      break;
    }
  }
  if (!within(resolved, root))
    throw configError(`subpath ${JSON.stringify(path.join(volumeRoot, subPath))} not within volume path ${JSON.stringify(volumeRoot)}`);
  const rel = path.relative(root, resolved).split('/').filter(Boolean);
  let handle = await open(root, kOPath | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW);
  try {
    for (const c of rel) {
      const next = await openNoFollow(handle, c, subPath);
      await handle.close();
      handle = next;
    }
    for (const c of comps.slice(k)) {
      // SafeMakeDir: the missing rest, created below the checked fd; EEXIST (a dangling link) is refused.
      try {
        await mkdir(`/proc/self/fd/${handle.fd}/${c}`, { mode });
        await chmod(`/proc/self/fd/${handle.fd}/${c}`, mode); // past the umask
      } catch (err) {
        throw configError(`error creating subPath directory ${JSON.stringify(subPath)}: ${(err as Error).message}`);
      }
      const next = await openNoFollow(handle, c, subPath);
      await handle.close();
      handle = next;
    }
    const st = await handle.stat();
    return { handle, isDir: st.isDirectory() };
  } catch (err) {
    await handle.close().catch(() => undefined);
    if ((err as NodeJS.ErrnoException).code === 'ELOOP' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw configError(`subpath ${JSON.stringify(subPath)}: a path component is a symlink or not a directory`);
    }
    throw err;
  }
}

/**
 * subPathMountPath: `{podDir}/volume-subpaths/{volume}/{container}/{index}` — where a subPath is
 * bind-mounted for the runtime (the kubelet's layout). Pure.
 */
export function subPathMountPath(podDir: string, volumeName: string, containerName: string, index: number): string {
  return path.join(podDir, 'volume-subpaths', volumeName, containerName, String(index));
}

/**
 * prepareSubPath resolves `subPath` safely in `volumeRoot` (resolveSubPath) and bind-mounts the
 * checked inode onto `target` (created as a directory or an empty file, as the source is; an old
 * mount there is unmounted first), as doBindSubPath. Resolves to `target`, the bind source Docker
 * gets. Idempotent.
 * @throws AgentError with reason CreateContainerConfigError (escape, bad path), ERR_RUNTIME (mount).
 */
export async function prepareSubPath(volumeRoot: string, subPath: string, target: string, dirMode?: number): Promise<string> {
  const { handle, isDir } = await resolveSubPath(volumeRoot, subPath, dirMode);
  try {
    while (await mountPointInfo(target)) await unmount(target);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o750 });
    if (isDir) await mkdir(target, { recursive: true, mode: 0o750 });
    else await writeFile(target, '', { flag: 'a', mode: 0o640 });
    await bindMountFd(handle.fd, target, false);
    return target;
  } finally {
    await handle.close().catch(() => undefined);
  }
}
