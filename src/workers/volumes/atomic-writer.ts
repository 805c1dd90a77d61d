/**
 * Counterpart of pkg/volume/util/atomic_writer.go (AtomicWriter.Write): the files of a configMap,
 * secret, downwardAPI or projected volume, replaced all at once so that a reader never sees a mix of
 * the old and the new payload.
 *
 * Layout of a volume directory (as upstream):
 *   ..2026_12_02_01_30_00.123456789/   the payload of one write (a timestamped directory)
 *   ..data -> ..2026_12_02_01_30_00.123456789   swapped by rename(2) of a new link over it
 *   key -> ..data/key                  one link per top-level name the user sees
 * Runs on a worker thread; plain node:fs calls.
 */
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { realClock, type Clock } from '../../shared/clock.js';
import { AgentError } from '../../shared/errors.js';

/** One file of a payload: its bytes and its mode (permission bits, e.g. 0o644). */
export interface PayloadFile {
  data: Buffer;
  mode: number;
}

/** A payload: relative paths (as `items[].path`) to files. */
export type Payload = Record<string, PayloadFile>;

/** Options of writePayload. */
export interface AtomicWriteOptions {
  /** Group id every file and directory gets (pod securityContext.fsGroup, as SetVolumeOwnership); absent = no chown. */
  fsGroup?: number;
}

const kDataDirName = '..data';
const kDataDirTmpName = '..data_tmp';

/**
 * validatePayloadPath, as upstream validatePath: a relative path, not empty, with no `..` component
 * and no component starting with `..` (the writer's own names).
 * @throws AgentError ERR_INVALID_ARGUMENT naming the path.
 */
export function validatePayloadPath(p: string): void {
  if (!p) throw new AgentError('ERR_INVALID_ARGUMENT', 'invalid path: must not be empty');
  if (path.isAbsolute(p)) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid path: must be relative path: ${p}`);
  if (p.length > 4096) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid path: must be less than or equal to 4096 characters`);
  for (const part of p.split('/')) {
    if (part === '..') throw new AgentError('ERR_INVALID_ARGUMENT', `invalid path: must not contain '..': ${p}`);
    if (part.startsWith('..')) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid path: must not start with '..': ${p}`);
  }
  if (p.includes('\0')) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid path: must not contain NUL`);
}

/** Go's time layout of the timestamped directory's prefix, `..2006_01_02_15_04_05.` (UTC). */
function tsDirPrefix(now: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `..${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}.`;
}

/** The payload currently visible through `..data`, or null when there is none (never written). */
async function readCurrent(dir: string): Promise<{ tsDir: string; files: Map<string, PayloadFile> } | null> {
  const target = await readlink(path.join(dir, kDataDirName)).catch(() => null);
  if (!target) return null;
  const tsDir = path.join(dir, target);
  const files = new Map<string, PayloadFile>();
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(path.join(tsDir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(r);
      else if (e.isFile()) {
        const full = path.join(tsDir, r);
        files.set(r, { data: await readFile(full), mode: (await stat(full)).mode & 0o7777 });
      }
    }
  };
  try {
    await walk('');
  } catch {
    return { tsDir, files: new Map() }; // unreadable: rewrite
  }
  return { tsDir, files };
}

function samePayload(a: Map<string, PayloadFile>, b: Payload, fsGroup?: number): boolean {
  const keys = Object.keys(b);
  if (a.size !== keys.length) return false;
  return keys.every((k) => {
    const cur = a.get(k);
    const want = b[k];
    return cur !== undefined && cur.data.equals(want.data) && cur.mode === fileMode(want.mode, fsGroup);
  });
}

/** The mode a file ends with: its own, plus group read when an fsGroup owns it (SetVolumeOwnership's read-only mask 0440). */
function fileMode(mode: number, fsGroup?: number): number {
  return fsGroup === undefined ? mode & 0o777 : (mode & 0o777) | 0o440;
}

/** Top-level names of a set of payload paths (`a/b` → `a`). */
function topNames(paths: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const p of paths) out.add(p.split('/')[0]);
  return out;
}

/**
 * hasPayload: whether `dir` holds a written payload (its `..data` link exists): the volume was set
 * up once. Never throws.
 */
export async function hasPayload(dir: string): Promise<boolean> {
  return (await lstat(path.join(dir, kDataDirName)).catch(() => null))?.isSymbolicLink() === true;
}

/**
 * writePayload writes `payload` into volume directory `dir` as upstream's AtomicWriter.Write:
 * (1) validates every path; (2) if what `..data` shows equals the payload (bytes and modes), does
 * nothing and resolves false; (3) writes the payload into a new timestamped directory (files with
 * their modes, group `fsGroup` when given); (4) points `..data_tmp` at it and renames it over
 * `..data` — the one atomic step; (5) creates a `name -> ..data/name` link for each new top-level
 * name and removes the links of names no longer in the payload; (6) removes the old timestamped
 * directory. A reader following the user-visible links sees either the whole old payload or the
 * whole new one. Creates `dir` if missing. Resolves true when it wrote. The timestamped directory
 * is named after `clock.now()` (default realClock).
 * @throws AgentError ERR_INVALID_ARGUMENT for a bad path; fs errors otherwise.
 */
export async function writePayload(
  dir: string,
  payload: Payload,
  opts: AtomicWriteOptions = {},
  clock: Clock = realClock,
): Promise<boolean> {
  for (const p of Object.keys(payload)) validatePayloadPath(p);
  const current = await readCurrent(dir);
  if (current && samePayload(current.files, payload, opts.fsGroup)) return false;
  // A payload shown through `..data` means the directory is there: it is made only before the first.
  if (!current) await mkdir(dir, { recursive: true, mode: 0o755 });

  const tsDir = await mkdtemp(path.join(dir, tsDirPrefix(new Date(clock.now()))));
  await chmod(tsDir, 0o755);
  for (const [rel, f] of Object.entries(payload)) {
    const full = path.join(tsDir, rel);
    await mkdir(path.dirname(full), { recursive: true, mode: 0o755 });
    await writeFile(full, f.data, { mode: 0o600 });
    if (opts.fsGroup !== undefined) await chown(full, -1, opts.fsGroup);
    await chmod(full, fileMode(f.mode, opts.fsGroup));
  }
  if (opts.fsGroup !== undefined) await chownDirs(tsDir, opts.fsGroup);

  const tmpLink = path.join(dir, kDataDirTmpName);
  await unlink(tmpLink).catch(() => undefined);
  await symlink(path.basename(tsDir), tmpLink);
  await rename(tmpLink, path.join(dir, kDataDirName));

  const wanted = topNames(Object.keys(payload));
  for (const name of wanted) {
    const link = path.join(dir, name);
    const st = await lstat(link).catch(() => null);
    if (st?.isSymbolicLink()) continue;
    if (st) await rm(link, { recursive: true, force: true }); // not ours: a leftover of another layout
    await symlink(path.join(kDataDirName, name), link);
  }
  if (current) {
    for (const name of topNames(current.files.keys())) {
      if (wanted.has(name)) continue;
      await unlink(path.join(dir, name)).catch(() => undefined);
    }
    if (path.dirname(current.tsDir) === dir && path.basename(current.tsDir).startsWith('..'))
      await rm(current.tsDir, { recursive: true, force: true });
  }
  if (opts.fsGroup !== undefined) await chown(dir, -1, opts.fsGroup);
  return true;
}

/** Directories below (and including) `root` get group `gid`, setgid and group r-x (SetVolumeOwnership for directories). */
async function chownDirs(root: string, gid: number): Promise<void> {
  await chown(root, -1, gid);
  await chmod(root, 0o2755);
  for (const e of await readdir(root, { withFileTypes: true })) if (e.isDirectory()) await chownDirs(path.join(root, e.name), gid);
}
