/**
 * Counterpart of pkg/kubelet/images (puller.go serialized puller, the pull backoff; its
 * image_manager.go EnsureImageExists is image-manager.ts, which calls this) and
 * pkg/credentialprovider's Docker config keyring: pulls an image at
 * most once at a time however many pods want it, with the kubelet's pull backoff, using node-level
 * registry credentials from a Docker `config.json` (`--image-pull-credentials`).
 *
 * Deduplication is two-level: within a worker thread, concurrent callers share one pull promise;
 * across the agent's worker threads (and agents sharing a --root-dir), a lock file
 * `{rootDir}/image-locks/<sha256(ref)>` created with O_EXCL is held for the pull, and a waiter
 * re-checks the image once the lock is gone instead of pulling again.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { realClock, type Clock } from '../../shared/clock.js';
import { recordPulledImage } from './image-gc.js';
import type { BackoffEntry, PodConfigObjects } from '../../shared/sync-tasks.js';
import type { Pod } from '../../shared/api.js';
import type { ContainerRuntime, RegistryAuth } from '../runtime/container/runtime.js';

/** Initial image pull backoff, milliseconds (kubelet: 10 s). */
export const kInitialPullBackoffMs = 10_000;
/** Maximum image pull backoff, milliseconds (kubelet: MaxContainerBackOff-style 300 s). */
export const kMaxPullBackoffMs = 300_000;
/** A lock file older than this is stale (its holder died), milliseconds. */
export const kStaleLockMs = 10 * 60_000;
/** Poll period while another thread holds an image's pull lock, milliseconds. */
export const kLockPollMs = 200;

/** pullBackoffKey: the key of an image's pull backoff entry for one pod (kubelet: `<podUID>_<image>`). */
export function pullBackoffKey(podUid: string, image: string): string {
  return `pull:${podUid}_${image}`;
}

/** isInPullBackoff: true while `entry` was bumped less than its backoff ago (IsInBackOffSinceUpdate). */
export function isInPullBackoff(entry: BackoffEntry | undefined, nowMs: number): boolean {
  return entry !== undefined && nowMs - entry.lastUpdateMs < entry.backoffMs;
}

/** nextPullBackoff: the entry after one more failed pull at `nowMs`: 10 s, doubling to 300 s; reset after 2×max idle. */
export function nextPullBackoff(entry: BackoffEntry | undefined, nowMs: number): BackoffEntry {
  if (!entry || nowMs - entry.lastUpdateMs > 2 * kMaxPullBackoffMs) return { backoffMs: kInitialPullBackoffMs, lastUpdateMs: nowMs };
  return { backoffMs: Math.min(entry.backoffMs * 2, kMaxPullBackoffMs), lastUpdateMs: nowMs };
}

/**
 * registryHost: the registry part of an image reference, as the Docker reference grammar says:
 * the first path component when it has a `.` or `:` or is `localhost`; else Docker Hub
 * (`docker.io`).
 */
export function registryHost(ref: string): string {
  const slash = ref.indexOf('/');
  if (slash === -1) return 'docker.io';
  const first = ref.slice(0, slash);
  return first.includes('.') || first.includes(':') || first === 'localhost' ? first : 'docker.io';
}

function normalizeRegistryKey(key: string): string {
  let k = key.replace(/^https?:\/\//, '');
  k = k.split('/')[0];
  if (k === 'index.docker.io' || k === 'registry-1.docker.io') return 'docker.io';
  return k;
}

/**
 * parseDockerConfig reads the `auths` map of a Docker `config.json` (also accepts the old
 * `.dockercfg` shape: the map at top level). Each entry has `auth` (base64 `user:password`) or
 * `username` + `password`. Keys are registry hosts, optionally with a scheme and path.
 * @throws Error naming `file` when it is not JSON or an entry is malformed.
 */
export function parseDockerConfig(text: string, file: string): Map<string, RegistryAuth> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON: ${(err as Error).message}`);
  }
  const obj = doc as { auths?: unknown } | null;
  const auths = (obj && typeof obj === 'object' && obj.auths && typeof obj.auths === 'object' ? obj.auths : obj) as Record<
    string,
    unknown
  > | null;
  const out = new Map<string, RegistryAuth>();
  if (!auths || typeof auths !== 'object') throw new Error(`${file}: expected an object with an "auths" map`);
  for (const [key, v] of Object.entries(auths)) {
    const e = v as { auth?: unknown; username?: unknown; password?: unknown } | null;
    if (!e || typeof e !== 'object') throw new Error(`${file}: auths[${JSON.stringify(key)}] must be an object`);
    let username = typeof e.username === 'string' ? e.username : '';
    let password = typeof e.password === 'string' ? e.password : '';
    if (typeof e.auth === 'string' && e.auth) {
      const plain = Buffer.from(e.auth, 'base64').toString('utf8');
      const colon = plain.indexOf(':');
      if (colon === -1) throw new Error(`${file}: auths[${JSON.stringify(key)}].auth must be base64 of "user:password"`);
      username = plain.slice(0, colon);
      password = plain.slice(colon + 1);
    }
    if (!username) continue;
    out.set(normalizeRegistryKey(key), { username, password, serveraddress: normalizeRegistryKey(key) });
  }
  return out;
}

/** NodeKeyring: the node's credentials for an image reference's registry (undefined = none). */
export type NodeKeyring = (ref: string) => Promise<RegistryAuth | undefined>;

/**
 * newNodeKeyring: the node's Docker config keyring (pkg/credentialprovider keyring.go, the
 * kubelet's config.json): the `auths` of `file` (`--image-pull-credentials`; '' = none), read again
 * whenever its mtime changes, looked up by the reference's registry host.
 * @throws (from the lookup) the file's read error, or an Error naming `file` and the bad entry.
 */
export function newNodeKeyring(file: string): NodeKeyring {
  let cached: { mtimeMs: number; map: Map<string, RegistryAuth> } | null = null;
  return async (ref) => {
    if (!file) return undefined;
    const st = await stat(file);
    if (!cached || cached.mtimeMs !== st.mtimeMs)
      cached = { mtimeMs: st.mtimeMs, map: parseDockerConfig(await readFile(file, 'utf8'), file) };
    return cached.map.get(registryHost(ref));
  };
}

/** Options of newImagePuller. */
export interface ImagePullerOptions {
  /** --root-dir (absolute): the cross-thread pull locks live in `{rootDir}/image-locks/`. */
  rootDir: string;
  /** A Docker config.json with registry credentials (`--image-pull-credentials`); '' = none. */
  credentialsFile?: string;
}

/** ImagePuller: the per-thread serialized puller. */
export interface ImagePuller {
  /**
   * pull makes `ref` present: joins a pull of `ref` already running in this thread, or waits for
   * one running in another thread (then returns if the image is there), else pulls it under the
   * lock, with the credentials of its registry if the credentials file has some. With
   * `ifNotPresent` (imagePullPolicy IfNotPresent), the image is checked again once the lock is held,
   * so a pull that finished meanwhile is not repeated.
   * @throws the runtime's error (AgentError, reason ErrImagePull) when the pull fails.
   */
  pull(ref: string, opts?: { ifNotPresent?: boolean; pullSecrets?: RegistryAuth[] }): Promise<void>;
}

/**
 * pullSecretAuths: the credentials the pod's `imagePullSecrets` give for `ref`'s registry, as the
 * kubelet's getPullSecretsForPod and its secret keyring (credentialprovider/secrets): each Secret of
 * type `kubernetes.io/dockerconfigjson` (`.dockerconfigjson`) or `kubernetes.io/dockercfg`
 * (`.dockercfg`) that has an entry for the registry, in the pod's order. `missing`: the names
 * referenced but absent (the kubelet warns `FailedToRetrieveImagePullSecret` and pulls without
 * them); `invalid`: names of Secrets of another type or with unreadable content. Never throws;
 * never puts a credential in a message.
 */
export function pullSecretAuths(
  pod: Pod,
  objects: PodConfigObjects | undefined,
  ref: string,
): { auths: RegistryAuth[]; missing: string[]; invalid: string[] } {
  const out = { auths: [] as RegistryAuth[], missing: [] as string[], invalid: [] as string[] };
  const host = registryHost(ref);
  for (const s of pod.spec?.imagePullSecrets ?? []) {
    const name = s?.name ?? '';
    const secret = objects?.secrets[name];
    if (!secret) {
      out.missing.push(name);
      continue;
    }
    const key = secret.type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
    const raw = secret.data?.[key];
    if ((secret.type !== 'kubernetes.io/dockerconfigjson' && secret.type !== 'kubernetes.io/dockercfg') || !raw) {
      out.invalid.push(name);
      continue;
    }
    try {
      const auth = parseDockerConfig(Buffer.from(raw, 'base64').toString('utf8'), `secret ${name}`).get(host);
      if (auth) out.auths.push(auth);
    } catch {
      out.invalid.push(name);
    }
  }
  return out;
}

class ImagePullerImpl implements ImagePuller {
  readonly #inFlight = new Map<string, Promise<void>>();
  #keyring: NodeKeyring | undefined;
  constructor(
    private readonly runtime: ContainerRuntime,
    private readonly opts: ImagePullerOptions,
    private readonly clock: Clock,
  ) {}

  pull(ref: string, opts: { ifNotPresent?: boolean; pullSecrets?: RegistryAuth[] } = {}): Promise<void> {
    // A pull with a pod's own credentials joins only a pull with the same ones.
    const key = opts.pullSecrets?.length ? `${ref}\0${JSON.stringify(opts.pullSecrets)}` : ref;
    let p = this.#inFlight.get(key);
    if (!p) {
      p = this.#pullLocked(ref, opts.ifNotPresent === true, opts.pullSecrets ?? []).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, p);
    }
    return p;
  }

  #auth(ref: string): Promise<RegistryAuth | undefined> {
    return (this.#keyring ??= newNodeKeyring(this.opts.credentialsFile ?? ''))(ref);
  }

  async #pullLocked(ref: string, ifNotPresent: boolean, pullSecrets: RegistryAuth[]): Promise<void> {
    await pullUnderLock(
      this.opts.rootDir,
      ref,
      ifNotPresent,
      async () => Boolean(await this.runtime.imageExists(ref)),
      async () => {
        // As the kubelet's puller: each of the pod's pull secrets' credentials in turn, then the node's
        // (or none); the last error when every one fails.
        let lastErr: unknown;
        let pulledOk = false;
        for (const auth of [...pullSecrets, await this.#auth(ref)]) {
          try {
            await this.runtime.pullImage(ref, auth);
            pulledOk = true;
            break;
          } catch (err) {
            lastErr = err;
          }
        }
        if (!pulledOk) throw lastErr;
        // Image GC removes only images this agent pulled (image-gc.ts): remember this one.
        const pulled = await this.runtime.imageExists(ref).catch(() => null);
        if (pulled) await recordPulledImage(this.opts.rootDir, ref, pulled.id, this.clock.now()).catch(() => undefined);
      },
      this.clock,
    );
  }
}

/** newImagePuller builds one thread's puller over its (node-scoped) runtime; its lock waits and records on `deps.clock` (default realClock). */
export function newImagePuller(runtime: ContainerRuntime, opts: ImagePullerOptions, deps: { clock?: Clock } = {}): ImagePuller {
  return new ImagePullerImpl(runtime, opts, deps.clock ?? realClock);
}

/**
 * pullUnderLock runs `pull` for `ref` under the cross-thread pull lock `{rootDir}/image-locks/<sha256(ref)>`
 * (created with O_EXCL; one older than kStaleLockMs is stale): a caller that finds the lock held waits
 * for it to go and returns once `present()` says the image is there, so threads and agents sharing a
 * root dir pull one image once (the kubelet's serialized puller, pkg/kubelet/images/puller.go). With
 * `ifNotPresent`, `present()` is asked again once the lock is held. Shared by the Docker puller above
 * and the CRI image port (kuberuntime/cri-images.ts). The poll and the lock's age are on `clock` (default realClock;
 * a lock file's mtime is wall time). @throws what `pull` throws; file errors other than EEXIST.
 */
export async function pullUnderLock(
  rootDir: string,
  ref: string,
  ifNotPresent: boolean,
  present: () => Promise<boolean>,
  pull: () => Promise<void>,
  clock: Clock = realClock,
): Promise<void> {
  const dir = path.join(rootDir, 'image-locks');
  const lock = path.join(dir, createHash('sha256').update(ref).digest('hex'));
  await mkdir(dir, { recursive: true });
  for (;;) {
    try {
      const fh = await open(lock, 'wx');
      await fh.writeFile(`${process.pid} ${clock.now()} ${ref}\n`);
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // Another thread pulls it: wait for its lock to go (or to go stale), then re-check.
    const st = await stat(lock).catch(() => null);
    if (st && clock.now() - st.mtimeMs > kStaleLockMs) {
      await rm(lock, { force: true });
      continue;
    }
    await new Promise<void>((r) => clock.setTimeout(r, kLockPollMs));
    if (!(await stat(lock).catch(() => null)) && (await present())) return;
  }
  try {
    if (ifNotPresent && (await present())) return;
    await pull();
  } finally {
    await rm(lock, { force: true });
  }
}
