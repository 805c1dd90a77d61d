/**
 * The agent's own admin credential: `<root-dir>/admin.token`, written at first start and reused
 * after, as kubeadm writes `/etc/kubernetes/admin.conf` once for the cluster's first administrator
 * and the kubelet keeps its credentials under its root dir. With it the agent is secure by default
 * (the kubelet's KubeletConfiguration defaults: anonymous authentication off for anything that
 * writes, authorization required) while the client, run as root on the same machine, finds a
 * token without being told (src/cli/client.ts). Main thread, at start-up only.
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidArgumentError } from '../../shared/errors.js';

/** kAdminTokenFile: the admin token's file name under `--root-dir`. */
export const kAdminTokenFile = 'admin.token';

/** kAdminTokenBytes: random bytes in a new admin token (256 bits; 43 base64url characters). */
export const kAdminTokenBytes = 32;

/** A token read back must look like one we wrote or a user put there: no spaces, 32+ characters. */
const kTokenPattern = /^[\x21-\x7e]{32,}$/;

/** adminTokenPath: `<rootDir>/admin.token`. Pure. */
export function adminTokenPath(rootDir: string): string {
  return join(rootDir, kAdminTokenFile);
}

/** AdminToken: the token and the file it lives in. `created` is true when this start wrote it. */
export interface AdminToken {
  path: string;
  token: string;
  created: boolean;
}

/**
 * checkTokenFileStat refuses a token file another user could read or swap: it must be a regular
 * file (not a symlink, directory or device), owned by the agent's user, with no group or other
 * permission bits (mode 0600 or 0400), as ssh refuses a private key others may read. Pure.
 * @throws InvalidArgumentError naming the file, what is wrong and how to fix it.
 */
export function checkTokenFileStat(
  path: string,
  st: Pick<Stats, 'mode' | 'uid' | 'isFile' | 'isSymbolicLink'>,
  uid: number | undefined,
): void {
  if (st.isSymbolicLink() || !st.isFile()) {
    throw new InvalidArgumentError(
      `${path}: the admin token must be a regular file (not a symlink, directory or device); remove it and restart to get a new one`,
    );
  }
  if ((st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
    throw new InvalidArgumentError(
      `${path}: the admin token has mode ${mode}, readable or writable by group or others; run chmod 600 ${path}, or remove it and restart to get a new one`,
    );
  }
  if (uid !== undefined && st.uid !== uid) {
    throw new InvalidArgumentError(
      `${path}: the admin token is owned by uid ${st.uid}, not by the agent's uid ${uid}; remove it and restart to get a new one`,
    );
  }
}

/** readExisting reads and checks an existing token file; undefined if there is none. */
async function readExisting(path: string): Promise<string | undefined> {
  let st: Stats;
  try {
    st = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new InvalidArgumentError(`${path}: cannot read the admin token: ${(err as Error).message}`);
  }
  checkTokenFileStat(path, st, process.getuid?.());
  let text: string;
  try {
    // O_NOFOLLOW: the file checked above is the file read (a symlink swapped in meanwhile fails).
    text = await readFile(path, { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW });
  } catch (err) {
    throw new InvalidArgumentError(`${path}: cannot read the admin token: ${(err as Error).message}`);
  }
  const token = text.trim();
  if (!kTokenPattern.test(token)) {
    throw new InvalidArgumentError(
      `${path}: the admin token must be one line of at least 32 printable characters without spaces; remove the file and restart to get a new one`,
    );
  }
  return token;
}

/**
 * ensureAdminToken returns the agent's admin token, creating `<rootDir>/admin.token` at first
 * start: 32 random bytes (crypto.randomBytes) as base64url, written with O_CREAT|O_EXCL|O_NOFOLLOW
 * and mode 0600 (so it never replaces or follows a file that appeared meanwhile), fsynced. A
 * later start reuses the file, after checking it ({@link checkTokenFileStat}). The root dir is
 * created (mode 0700) if missing. The token is never logged; errors name only the path.
 * @throws InvalidArgumentError naming the file when it is unsafe (group/other permissions, not a
 *   regular file, another owner), unreadable, not a token, or cannot be created.
 */
export async function ensureAdminToken(rootDir: string): Promise<AdminToken> {
  const path = adminTokenPath(rootDir);
  const existing = await readExisting(path);
  if (existing !== undefined) return { path, token: existing, created: false };
  const token = randomBytes(kAdminTokenBytes).toString('base64url');
  try {
    await mkdir(rootDir, { recursive: true, mode: 0o700 });
    const fh = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await fh.writeFile(`${token}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    // Another agent on the same root dir created it first: use that one (after the same checks).
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      const raced = await readExisting(path);
      if (raced !== undefined) return { path, token: raced, created: false };
    }
    throw new InvalidArgumentError(`${path}: cannot create the admin token (--root-dir): ${(err as Error).message}`);
  }
  return { path, token, created: true };
}
