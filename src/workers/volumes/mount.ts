/**
 * Counterpart of k8s.io/mount-utils (mount_linux.go Mount/Unmount/List) as the emptyDir plugin
 * (pkg/volume/emptydir/empty_dir.go setupTmpfs) and the subPath bind mounts use them: tmpfs and
 * bind mounts through mount(8)/umount(8), mount points read from /proc/self/mountinfo. The agent
 * runs as root in dockerd's mount namespace, so a mount made here is what Docker binds into a
 * container. Worker thread.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AgentError } from '../../shared/errors.js';

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (err) reject(new AgentError('ERR_RUNTIME', `${cmd} ${args.join(' ')}: ${String(stderr).trim() || err.message}`));
      else resolve();
    });
  });
}

/** One line of /proc/self/mountinfo that matters here. */
export interface MountInfo {
  /** The mount point (octal escapes decoded). */
  mountPoint: string;
  /** The filesystem type, e.g. `tmpfs`. */
  fsType: string;
  /** The superblock options, e.g. `rw,size=1024k`. */
  superOptions: string;
}

function unescapeMountinfo(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** listMounts parses /proc/self/mountinfo (mount-utils ParseMountInfo). Never throws: [] when unreadable. */
export async function listMounts(): Promise<MountInfo[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const out: MountInfo[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [left, right] = line.split(' - ');
    const f = left.split(' ');
    const r = (right ?? '').split(' ');
    out.push({ mountPoint: unescapeMountinfo(f[4] ?? ''), fsType: r[0] ?? '', superOptions: r[2] ?? '' });
  }
  return out;
}

/** mountPointInfo: the topmost mount at exactly `dir`, or null when `dir` is not a mount point. */
export async function mountPointInfo(dir: string): Promise<MountInfo | null> {
  const mounts = (await listMounts()).filter((m) => m.mountPoint === dir);
  return mounts.at(-1) ?? null;
}

/**
 * mountTmpfs mounts a tmpfs of `sizeBytes` bytes (0 = the kernel's default, half of RAM) with
 * `mode` on directory `dir` (which must exist), as setupTmpfs (`mount -t tmpfs -o size=N tmpfs dir`).
 * Does nothing when `dir` is already a tmpfs mount point. Resolves true when it mounted.
 * @throws AgentError ERR_RUNTIME with mount(8)'s message.
 */
export async function mountTmpfs(dir: string, sizeBytes: number, mode = 0o777): Promise<boolean> {
  const cur = await mountPointInfo(dir);
  if (cur?.fsType === 'tmpfs') return false;
  const opts = [`mode=${mode.toString(8).padStart(4, '0')}`, 'nosuid', 'nodev'];
  if (sizeBytes > 0) opts.push(`size=${Math.ceil(sizeBytes)}`);
  await run('mount', ['-t', 'tmpfs', '-o', opts.join(','), 'tmpfs', dir]);
  return true;
}

/**
 * bindMountFd bind-mounts what the open file descriptor `fd` refers to onto `target`
 * (`mount --bind /proc/<agent pid>/fd/<fd> target`), as subpath_linux.go doBindSubPath mounts
 * `/proc/<kubelet pid>/fd/<fd>`: the source is the inode that was checked, not a path that could be
 * swapped for a symlink in between. Read-only binds are remounted `ro`.
 * @throws AgentError ERR_RUNTIME with mount(8)'s message.
 */
export async function bindMountFd(fd: number, target: string, readOnly: boolean): Promise<void> {
  await run('mount', ['--no-canonicalize', '--bind', `/proc/${process.pid}/fd/${fd}`, target]);
  if (readOnly) await run('mount', ['--no-canonicalize', '-o', 'remount,bind,ro', target]);
}

/** unmount: `umount dir`, falling back to a lazy unmount (`umount -l`) when it is busy. */
export async function unmount(dir: string): Promise<void> {
  try {
    await run('umount', [dir]);
  } catch {
    await run('umount', ['-l', dir]);
  }
}

/**
 * unmountUnder unmounts every mount point at or below `dir` (deepest first, each as often as it is
 * stacked), as the kubelet's cleanup unmounts a pod's volumes before removing its directory: a
 * recursive removal must never reach into a mounted tmpfs nor leave it mounted behind.
 * Resolves to the number of unmounts. Throws when a mount point stays mounted.
 */
export async function unmountUnder(dir: string): Promise<number> {
  const root = path.resolve(dir);
  let count = 0;
  for (let round = 0; round < 8; round++) {
    const under = (await listMounts()).map((m) => m.mountPoint).filter((p) => p === root || p.startsWith(`${root}/`));
    if (under.length === 0) return count;
    under.sort((a, b) => b.length - a.length);
    for (const p of new Set(under)) {
      await unmount(p).catch(() => undefined);
      count++;
    }
  }
  const left = (await listMounts()).filter((m) => m.mountPoint === root || m.mountPoint.startsWith(`${root}/`));
  if (left.length) throw new AgentError('ERR_RUNTIME', `cannot unmount ${left.map((m) => m.mountPoint).join(', ')}`);
  return count;
}
