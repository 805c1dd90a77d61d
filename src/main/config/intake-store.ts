/**
 * The files of the intake store (`{--root-dir}/intake/` for pods, `{--root-dir}/intake-objects/` for
 * ConfigMaps and Secrets): how they are named, written and read back. What a restore trusts
 * (issue #38 finding 9), as the kubelet trusts its own state files only when they are its own:
 *
 * - A special file (FIFO, socket, device, symlink, directory) is never opened: `lstat` first, then
 *   `open(O_RDONLY|O_NOFOLLOW|O_NONBLOCK)` and an `fstat` of what was opened, so a file swapped in
 *   between cannot block the restore.
 * - A regular file not owned by the agent's user, or writable by its group or by others, is refused:
 *   anyone but the agent could have written it. The caller sets it aside (moved to
 *   `{--root-dir}/intake-set-aside/`, never deleted) and says so.
 *
 * Writes are temp file → fsync → rename → fsync of the directory (writeFilesDurably), so a crash
 * leaves the old text or the new one; pods are stored twice (source-intake.ts) so that a file
 * truncated afterwards still has a readable twin. Main thread only.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { realClock, type Clock } from '../../shared/clock.js';
import { syncDir } from '../host/serial-file.js';

/** kIntakeSetAsideDirName: where a restore moves the store files it refuses (under --root-dir). */
export const kIntakeSetAsideDirName = 'intake-set-aside';

/** What readStoredFile found: the text, or why the file was not read. */
export type StoredFileRead =
  | { kind: 'ok'; text: string }
  /** Not a regular file (FIFO, socket, device, symlink, directory): never opened. */
  | { kind: 'special'; reason: string }
  /** A regular file the agent's user does not own, or that its group or others may write. */
  | { kind: 'untrusted'; reason: string }
  /** Gone, or an I/O error (EIO, EACCES…). */
  | { kind: 'error'; reason: string };

function fileTypeOf(st: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isSymbolicLink(): boolean;
  isDirectory(): boolean;
  isBlockDevice(): boolean;
  isCharacterDevice(): boolean;
}): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isBlockDevice() || st.isCharacterDevice()) return 'a device';
  return 'not a regular file';
}

/** trustProblem: why a regular file of `uid` and `mode` may not be trusted, or undefined. */
function trustProblem(st: { uid: number; mode: number }, agentUid: number): string | undefined {
  if (st.uid !== agentUid) return `owned by uid ${st.uid}, not by the agent's uid ${agentUid}`;
  if ((st.mode & 0o022) !== 0) return `mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')} lets its group or others write it`;
  return undefined;
}

/**
 * readStoredFile reads one store file if it can be trusted (see the module's header): never opens
 * a special file, never follows a link, never blocks on a FIFO. `agentUid`: the user the files
 * must belong to (default this process's uid). Never throws.
 */
export async function readStoredFile(file: string, agentUid = process.getuid?.() ?? 0): Promise<StoredFileRead> {
  let fh;
  try {
    const st = await lstat(file);
    if (!st.isFile()) return { kind: 'special', reason: `${fileTypeOf(st)}` };
    fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { kind: 'special', reason: 'a symbolic link' };
    return { kind: 'error', reason: code ?? (err as Error).message };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { kind: 'special', reason: fileTypeOf(st) };
    const problem = trustProblem(st, agentUid);
    if (problem) return { kind: 'untrusted', reason: problem };
    return { kind: 'ok', text: await fh.readFile('utf8') };
  } catch (err) {
    return { kind: 'error', reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
  } finally {
    await fh.close().catch(() => {});
  }
}

/**
 * setAsideStoredFile moves `file` (never opened, never deleted) to
 * `{rootDir}/intake-set-aside/{name}.{epoch ms}.{random}` (`clock`'s time; default the real clock),
 * a directory made 0700. Returns the new path. @throws the fs error of mkdir or rename (the file then stays where it was).
 */
export async function setAsideStoredFile(rootDir: string, file: string, clock: Clock = realClock): Promise<string> {
  const dir = join(rootDir, kIntakeSetAsideDirName);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, `${basename(file)}.${clock.now()}.${randomBytes(3).toString('hex')}`);
  await rename(file, target);
  return target;
}

/**
 * storedJsonFiles: the `*.json` names of a store directory written by {@link writeFilesDurably},
 * in name order, as absolute paths. The directory is created (0700) when missing; temp files of a
 * write that never finished (`.…tmp`: the agent died before its rename) are deleted; other names
 * starting with `.` and non-JSON names are skipped. Listing only: nothing is opened.
 * @throws the fs error of mkdir or readdir.
 */
export async function storedJsonFiles(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const file = join(dir, name);
    if (name.startsWith('.')) {
      if (name.endsWith('.tmp')) await unlink(file).catch(() => {});
    } else if (name.endsWith('.json')) {
      files.push(file);
    }
  }
  return files;
}

/**
 * writeFilesDurably writes several files all or nothing: temp files (same directory, mode 0600)
 * written and fsynced first, then renamed over their targets, then the directory fsynced.
 * @throws the first I/O error; temp files are removed and targets renamed so far are unlinked.
 */
export async function writeFilesDurably(dir: string, files: { name: string; content: string }[]): Promise<void> {
  const temps: { tmp: string; target: string }[] = [];
  try {
    for (const f of files) {
      const tmp = join(dir, `.${f.name}.${randomBytes(4).toString('hex')}.tmp`);
      temps.push({ tmp, target: join(dir, f.name) });
      const fh = await open(tmp, 'w', 0o600);
      try {
        await fh.writeFile(f.content);
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
  } catch (err) {
    await Promise.all(temps.map((t) => unlink(t.tmp).catch(() => {})));
    throw err;
  }
  const renamed: string[] = [];
  try {
    for (const t of temps) {
      await rename(t.tmp, t.target);
      renamed.push(t.target);
    }
  } catch (err) {
    await Promise.all(temps.map((t) => unlink(t.tmp).catch(() => {})));
    await Promise.all(renamed.map((r) => unlink(r).catch(() => {})));
    throw err;
  }
  await syncDir(dir);
}
