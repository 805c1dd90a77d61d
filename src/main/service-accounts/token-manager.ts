/**
 * The node's service account tokens, as the kubelet's token manager (pkg/kubelet/token/token_manager.go)
 * over the TokenRequest the apiserver would serve: a token per (pod, service account, audiences,
 * lifetime) is kept and handed out again until 80 % of its life has passed (or 24 h, whichever is
 * first: requiresRefresh), then a new one is issued; tokens of pods that are gone and tokens past
 * their expiry are dropped. Also the signing key (`<root-dir>/pki/service-account.key`, mode 0600,
 * made at first start and kept).
 * Main thread.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { chmod, link, lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock, type Clock } from '../../shared/clock.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import { issueToken, type BoundTokenRequest } from '../../server/auth/service-account-tokens.js';

/** kServiceAccountKeyFile: the signing key's path under --root-dir. */
export const kServiceAccountKeyFile = join('pki', 'service-account.key');
/** kMaxTokenTtlMs: a token older than this is refreshed whatever its lifetime (token_manager.go maxTTL: 24 h), milliseconds. */
export const kMaxTokenTtlMs = 24 * 3600 * 1000;

/**
 * checkKeyFileStat refuses a signing key another user could read or swap, as checkTokenFileStat
 * (admin-token.ts) refuses an admin token: a regular file (not a symlink, FIFO or device), no group
 * or other permission bits, owned by the agent's user (`uid`; undefined = not checked). Whoever
 * can rewrite the key — the owner of a file hard-linked into pki/ from their own directory — mints
 * a token for any service account of any namespace. Pure.
 * @throws InvalidArgumentError naming the file and what is wrong.
 */
export function checkKeyFileStat(
  path: string,
  st: Pick<Stats, 'mode' | 'uid' | 'isFile' | 'isSymbolicLink'>,
  uid: number | undefined,
): void {
  const fix = 'remove it and restart to get a new one (every token the old key signed stops working)';
  if (st.isSymbolicLink() || !st.isFile())
    throw new InvalidArgumentError(
      `${path}: the service account signing key must be a regular file (not a symlink, directory, FIFO or device); ${fix}`,
    );
  if ((st.mode & 0o077) !== 0)
    throw new InvalidArgumentError(
      `${path}: the service account signing key must not be readable by group or others (mode ${(st.mode & 0o777).toString(8)}; want 600)`,
    );
  if (uid !== undefined && st.uid !== uid)
    throw new InvalidArgumentError(
      `${path}: the service account signing key is owned by uid ${st.uid}, not by the agent's uid ${uid}; ${fix}`,
    );
}

/**
 * ensureServiceAccountKey: the node's EC P-256 signing key at `<rootDir>/pki/service-account.key`
 * (PKCS#8 PEM), made at first start (written 0600 under a temp name, then linked into place, never
 * replacing one another start made meanwhile) and read after.
 * @returns the private and public keys and the file's path.
 * @throws InvalidArgumentError naming the file when checkKeyFileStat refuses it, or it is not a P-256 private key.
 */
export async function ensureServiceAccountKey(rootDir: string): Promise<{ privateKey: KeyObject; publicKey: KeyObject; path: string }> {
  const path = join(rootDir, kServiceAccountKeyFile);
  let pem = await readKeyFile(path);
  if (pem === undefined) {
    await mkdir(join(rootDir, 'pki'), { recursive: true, mode: 0o700 });
    const made = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    // A temp name of this start only ('wx': never follows or reuses what is there), linked into place
    // without replacing: an agent starting on the same root dir at the same moment keeps one key for both.
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, made, { mode: 0o600, flag: 'wx' });
      await chmod(tmp, 0o600);
      await link(tmp, path).then(
        () => (pem = made),
        (err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err;
        },
      );
    } finally {
      await rm(tmp, { force: true });
    }
    pem ??= await readKeyFile(path);
    if (pem === undefined) throw new InvalidArgumentError(`${path}: the service account signing key vanished while it was being made`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (err) {
    throw new InvalidArgumentError(`${path}: not a PEM private key: ${(err as Error).message}`);
  }
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new InvalidArgumentError(`${path}: the service account signing key must be an EC P-256 key`);
  }
  return { privateKey, publicKey: createPublicKey(privateKey), path };
}

/** readKeyFile: the key file's text after checkKeyFileStat, undefined when there is none. */
async function readKeyFile(path: string): Promise<string | undefined> {
  try {
    checkKeyFileStat(path, await lstat(path), process.getuid?.());
    // O_NOFOLLOW: the file checked is the file read (a symlink swapped in meanwhile fails).
    return await readFile(path, { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** TokenManager: the node's token cache (token_manager.go Manager). */
export interface TokenManager {
  /** getToken: a token for `req` (a cached one unless it needs a refresh). @throws as issueToken. */
  getToken(req: BoundTokenRequest): string;
  /** deletePodTokens drops every token of pod `uid` (token_manager.go DeleteServiceAccountToken). */
  deletePodTokens(uid: string): void;
  /** The number of cached tokens. */
  readonly size: number;
}

interface Entry {
  token: string;
  podUid: string;
  issuedAtMs: number;
  expiresAtMs: number;
}

/** requiresRefresh, as token_manager.go: past 80 % of the token's life, or older than 24 h. Times in epoch milliseconds. Pure. */
export function requiresRefresh(issuedAtMs: number, expiresAtMs: number, nowMs: number): boolean {
  if (nowMs - issuedAtMs > kMaxTokenTtlMs) return true;
  return nowMs >= issuedAtMs + 0.8 * (expiresAtMs - issuedAtMs);
}

/**
 * newTokenManager: tokens signed by `privateKey`, cached by pod UID, service account, audiences and
 * lifetime. `clock` is the agent's clock (default the real one).
 */
export function newTokenManager(privateKey: KeyObject, clock: Clock = realClock): TokenManager {
  const cache = new Map<string, Entry>();
  const sweep = (t: number): void => {
    for (const [k, e] of cache) if (t >= e.expiresAtMs) cache.delete(k);
  };
  return {
    get size() {
      return cache.size;
    },
    getToken(req) {
      const t = clock.now();
      const key = JSON.stringify([req.namespace, req.serviceAccount.name, req.pod.uid, req.audiences ?? [], req.expirationSeconds ?? 0]);
      const hit = cache.get(key);
      if (hit && !requiresRefresh(hit.issuedAtMs, hit.expiresAtMs, t)) return hit.token;
      sweep(t);
      const issued = issueToken(privateKey, req, t);
      cache.set(key, {
        token: issued.token,
        podUid: req.pod.uid,
        issuedAtMs: issued.issuedAt * 1000,
        expiresAtMs: issued.expiresAt * 1000,
      });
      return issued.token;
    },
    deletePodTokens(uid) {
      for (const [k, e] of cache) if (e.podUid === uid) cache.delete(k);
    },
  };
}
