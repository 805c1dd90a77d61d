/**
 * The small files and directories of a pod under --root-dir (the kubelet's kubelet_pods.go
 * makePodDataDirs, ensureHostsFile's writes, makeMounts' termination-message file): how a pod start
 * makes them with the fewest file-system calls.
 *
 * The calls are synchronous, on purpose: this module runs on the sync pool's worker threads only
 * (never on the main thread, whose event loop serves the API), and each call is a mkdir, an open or
 * a write of a few hundred bytes on the local file system under --root-dir (local, as the kubelet's
 * /var/lib/kubelet): tens of microseconds on a quiet machine (up to about a millisecond of wall time
 * measured on this project's 2-core host under a load of 40, during which the thread's other syncs
 * wait — the kernel's work the threadpool did before, without the hops). A promise call of
 * node:fs/promises costs far more CPU for the same work: a FileHandle, a libuv threadpool hop and a
 * wake-up of the thread per operation (a readFile is four of them). Nothing of unbounded size and
 * nothing on a network file system goes through here.
 */
import { closeSync, fchmodSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync, constants } from 'node:fs';
import path from 'node:path';

/** The mode of the pod's directory and of pods/ above it, as the kubelet's makePodDataDirs (0750). */
export const kPodDirMode = 0o750;

const kCreateExclusive = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;

/**
 * openCreating: openSync(`file`, `flags`, `mode`); when its directory is missing (ENOENT), makes it
 * (recursively, `dirMode`) and opens again — the directory is made only when the open says so.
 * @throws the fs error of the open or the mkdir (EEXIST for an O_EXCL open of a file already there).
 */
export function openCreating(file: string, flags: number, mode: number, dirMode?: number): number {
  try {
    return openSync(file, flags, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: dirMode });
  return openSync(file, flags, mode);
}

/** removeQuietly unlinks `file`, ignoring a failure (the error that made it go is the one reported). */
function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already, or the next write replaces it.
  }
}

/** writeAll writes `data` at offset 0 of `fd`, then sets its mode to `mode` (whatever the umask). */
function writeAll(fd: number, data: Buffer, mode: number): void {
  for (let off = 0; off < data.length;) off += writeSync(fd, data, off, data.length - off, off);
  fchmodSync(fd, mode);
}

/**
 * createFileExclusive: creates `file` with `data` and `mode` (O_EXCL; the directory made 0750 when
 * missing); false when `file` is already there (nothing written). A failed write removes the file.
 * @throws the fs error.
 */
function createFileExclusive(file: string, data: Buffer, mode: number): boolean {
  let fd: number;
  try {
    fd = openCreating(file, kCreateExclusive, mode, kPodDirMode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeAll(fd, data, mode);
  } catch (err) {
    closeSync(fd);
    removeQuietly(file);
    throw err;
  }
  closeSync(fd);
  return true;
}

/**
 * writePodFileSync writes `content` to `file` (mode 0644; its directory, and pods/ above it, made
 * 0750 when missing, as makePodDataDirs). A file not there yet is created in place (no container
 * mounts it before this write returns: a pod's syncs never overlap); a file that holds other bytes
 * is replaced through a temporary file and a rename, so that a container reading it never sees a
 * half-written file; a file that already holds `content` is not touched (a running container's bind
 * mount holds the file's inode, which a rename would replace). Idempotent.
 * @throws the fs error when the file cannot be written.
 */
export function writePodFileSync(file: string, content: string): void {
  const data = Buffer.from(content, 'utf8');
  if (createFileExclusive(file, data, 0o644)) return;
  if (readFileSync(file).equals(data)) return;
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  if (!createFileExclusive(tmp, data, 0o644)) throw Object.assign(new Error(`EEXIST: ${tmp} exists`), { code: 'EEXIST' });
  try {
    renameSync(tmp, file);
  } catch (err) {
    removeQuietly(tmp);
    throw err;
  }
}

/**
 * writePodFile: writePodFileSync behind the promise signature its callers await (the Docker
 * sandbox's resolv.conf, the hosts file).
 * @throws (rejects with) the fs error when the file cannot be written.
 */
export async function writePodFile(file: string, content: string): Promise<void> {
  writePodFileSync(file, content);
}

/**
 * createEmptyPodFile: `file` made empty (created or truncated) with `mode` whatever the umask, its
 * directory made (recursively, the default mode) when missing, as the kubelet's makeMounts creates
 * a container attempt's termination-message file. One open, one fchmod and one close when the
 * directory is there.
 * @throws the fs error.
 */
export function createEmptyPodFile(file: string, mode: number): void {
  const fd = openCreating(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, mode);
  try {
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/**
 * ensureDir makes the directory `dir` with `mode` (its missing parents too, with the same mode) and
 * returns true when it made `dir` itself, false when it was there already — one mkdir call either
 * way when the parent is there (a recursive mkdirSync adds a stat for a directory already there).
 * Synchronous (see the module's docstring).
 * @throws the fs error (not EEXIST).
 */
export function ensureDir(dir: string, mode?: number): boolean {
  try {
    mkdirSync(dir, { mode });
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'ENOENT') throw err;
  }
  mkdirSync(path.dirname(dir), { recursive: true, mode });
  try {
    mkdirSync(dir, { mode });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * mkdirPodDir: mkdir -p `dir` with `mode` for the directories it makes (a pod's log directories),
 * synchronously (see the module's docstring): one mkdir call when the parent is there.
 * @throws the fs error (not EEXIST).
 */
export function mkdirPodDir(dir: string, mode: number): void {
  mkdirSync(dir, { recursive: true, mode });
}
