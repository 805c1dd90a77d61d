/**
 * The node's service account tokens, as the kubelet's token manager (pkg/kubelet/token/token_manager.go)
 * over the TokenRequest the apiserver would serve: a token per (pod, service account, audiences,
 * lifetime) is kept and handed out again until 80 % of its life has passed (or 24 h, whichever is
 * first: requiresRefresh), then a new one is issued; tokens of pods that are gone and tokens past
 * their expiry are dropped. Also the signing key (`<root-dir>/pki/service-account.key`, mode 0600,
 * made at first start and kept).
 * Main thread.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock, type Clock } from '../../shared/clock.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import { issueToken, type BoundTokenRequest } from '../../server/auth/service-account-tokens.js';

/** kServiceAccountKeyFile: the signing key's path under --root-dir. */
export const kServiceAccountKeyFile = join('pki', 'service-account.key');
/** kMaxTokenTtlMs: a token older than this is refreshed whatever its lifetime (token_manager.go maxTTL: 24 h), milliseconds. */
export const kMaxTokenTtlMs = 24 * 3600 * 1000;

/**
 * ensureServiceAccountKey: the node's EC P-256 signing key at `<rootDir>/pki/service-account.key`
 * (PKCS#8 PEM), made at first start (written 0600 under a temp name, then renamed) and read after.
 * @returns the private and public keys and the file's path.
 * @throws InvalidArgumentError naming the file when it is readable by group or others, or is not a P-256 private key.
 */
export async function ensureServiceAccountKey(rootDir: string): Promise<{ privateKey: KeyObject; publicKey: KeyObject; path: string }> {
  const path = join(rootDir, kServiceAccountKeyFile);
  let pem: string | undefined;
  try {
    const st = await stat(path);
    if ((st.mode & 0o077) !== 0) throw new InvalidArgumentError(`${path}: the service account signing key must not be readable by group or others (mode ${(st.mode & 0o777).toString(8)}; want 600)`);
    pem = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (pem === undefined) {
    await mkdir(join(rootDir, 'pki'), { recursive: true, mode: 0o700 });
    pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await writeFile(`${path}.tmp`, pem, { mode: 0o600 });
    await chmod(`${path}.tmp`, 0o600);
    await rename(`${path}.tmp`, path);
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
    get size() { return cache.size; },
    getToken(req) {
      const t = clock.now();
      const key = JSON.stringify([req.namespace, req.serviceAccount.name, req.pod.uid, req.audiences ?? [], req.expirationSeconds ?? 0]);
      const hit = cache.get(key);
      if (hit && !requiresRefresh(hit.issuedAtMs, hit.expiresAtMs, t)) return hit.token;
      sweep(t);
      const issued = issueToken(privateKey, req, t);
      cache.set(key, { token: issued.token, podUid: req.pod.uid, issuedAtMs: issued.issuedAt * 1000, expiresAtMs: issued.expiresAt * 1000 });
      return issued.token;
    },
    deletePodTokens(uid) {
      for (const [k, e] of cache) if (e.podUid === uid) cache.delete(k);
    },
  };
}
