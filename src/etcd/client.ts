// Counterpart of staging/src/k8s.io/apiserver/pkg/storage/storagebackend/factory/etcd3.go (newETCD3Client) and the key layout of docs/contracts.md "etcd keys".
/**
 * The one place that constructs an etcd3 client. The etcd source, the status writer and the node
 * lease get their client from here, so TLS, auth and fault handling are set once.
 *
 * Fault handling (etcd3 1.1.2 defaults are a 5 s per-host circuit breaker after three failures and
 * a watch reconnect backoff of up to 30 s): after an outage the breaker would refuse every call for
 * ~5 s and the watch might wait half a minute. We replace them: no per-host breaker (each call goes
 * straight to a host), a global retry that tries each configured host once, and a constant 500 ms
 * watch reconnect delay. Callers keep their own retry loops (status writer, node lease, source), so
 * no work is lost when a call fails.
 */
import { readFileSync } from 'node:fs';
import { Etcd3, EtcdLeaseInvalidError, isRecoverableError, type IOptions } from 'etcd3';
import { InvalidArgumentError } from '../shared/errors.js';
import { realClock } from '../shared/clock.js';

export { Etcd3, EtcdLeaseInvalidError };
export type { IKeyValue, Watcher, Lease } from 'etcd3';

/** EtcdClientOptions: how to reach etcd (the `--etcd-*` flags). */
export interface EtcdClientOptions {
  /** Client URLs, `http://` or `https://` (all the same scheme), e.g. `http://127.0.0.1:2379`. */
  servers: string[];
  /** PEM CA bundle file (`--etcd-cafile`); needed for https. */
  caFile?: string;
  /** PEM client certificate file (`--etcd-certfile`); with `keyFile`. */
  certFile?: string;
  /** PEM client key file (`--etcd-keyfile`); with `certFile`. */
  keyFile?: string;
  /** User name for etcd's password auth (`--etcd-username`); with `password`. */
  username?: string;
  /** Password (`--etcd-password`). */
  password?: string;
  /** Per-call deadline in milliseconds for unary calls (default 5000). Streams (watch) have none. */
  callTimeoutMs?: number;
}

/** kEtcdWatchReconnectMs: delay before a broken watch stream is re-established, in milliseconds. */
export const kEtcdWatchReconnectMs = 500;

interface PolicyLike {
  execute<T>(fn: (ctx: { signal: AbortSignal; attempt: number }) => PromiseLike<T> | T): Promise<T>;
}

/** A policy that just runs the call (no circuit breaker): the host policy. */
function passThroughPolicy(): PolicyLike {
  const signal = new AbortController().signal;
  return { execute: async (fn) => fn({ signal, attempt: 0 }) };
}

/** A policy that retries a recoverable failure up to `attempts` times in all (each retry picks another host). */
function retryPolicy(attempts: number): PolicyLike {
  const signal = new AbortController().signal;
  return {
    async execute(fn) {
      let last: unknown;
      for (let attempt = 0; attempt < attempts; attempt++) {
        try {
          return await fn({ signal, attempt });
        } catch (err) {
          last = err;
          if (!(err instanceof Error) || !isRecoverableError(err)) throw err;
        }
      }
      throw last;
    },
  };
}

/** A constant backoff (cockatiel's IBackoff shape) for the watch reconnects. */
function constantBackoff(ms: number): { duration: number; next(): unknown } {
  const b = { duration: ms, next: () => b };
  return b;
}

function readPem(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new InvalidArgumentError(`${flag}: cannot read ${file}: ${(err as Error).message}`);
  }
}

/**
 * newEtcdClient builds an etcd3 client for `options` (no connection is made until the first call).
 * @throws InvalidArgumentError when `servers` is empty or mixes http and https, when only one of
 *   certFile/keyFile or username/password is given, or when a PEM file cannot be read (the error
 *   names the flag, e.g. `--etcd-cafile: cannot read /x: ENOENT…`).
 */
export function newEtcdClient(options: EtcdClientOptions): Etcd3 {
  const servers = options.servers.map((s) => s.trim()).filter((s) => s !== '');
  if (servers.length === 0) throw new InvalidArgumentError('--etcd-servers must list at least one URL');
  const secure = servers.filter((s) => s.startsWith('https://')).length;
  if (secure !== 0 && secure !== servers.length) throw new InvalidArgumentError('--etcd-servers must not mix http:// and https:// URLs');
  if (Boolean(options.certFile) !== Boolean(options.keyFile))
    throw new InvalidArgumentError('--etcd-certfile and --etcd-keyfile must be given together');
  if (Boolean(options.username) !== Boolean(options.password))
    throw new InvalidArgumentError('--etcd-username and --etcd-password must be given together');
  const callTimeoutMs = options.callTimeoutMs ?? 5_000;
  const opts: IOptions = {
    hosts: servers,
    dialTimeout: 3_000,
    // A gRPC deadline is a wall-clock date: the real clock.
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: realClock.now() + callTimeoutMs }),
    faultHandling: {
      host: () => passThroughPolicy() as never,
      global: retryPolicy(servers.length + 1) as never,
      watchBackoff: constantBackoff(kEtcdWatchReconnectMs) as never,
    },
  };
  if (options.caFile || options.certFile) {
    opts.credentials = {
      rootCertificate: options.caFile ? readPem('--etcd-cafile', options.caFile) : Buffer.alloc(0),
      ...(options.certFile
        ? { certChain: readPem('--etcd-certfile', options.certFile), privateKey: readPem('--etcd-keyfile', options.keyFile!) }
        : {}),
    };
  }
  if (options.username) opts.auth = { username: options.username, password: options.password! };
  return new Etcd3(opts);
}

/** EtcdKeys: the keys of docs/contracts.md "etcd keys" under one prefix (no trailing slash), e.g. `/registry`. */
export interface EtcdKeys {
  /** `{prefix}/pods/{node}/` — every desired pod of `node`. */
  podsPrefix(node: string): string;
  /** `{prefix}/pods/` — every desired pod of every node. */
  allPodsPrefix(): string;
  /** `{prefix}/pods/{node}/{namespace}/{name}` — one desired Pod (JSON). */
  pod(node: string, namespace: string, name: string): string;
  /** `{prefix}/podstatus/{node}/` — every written-back status of `node`. */
  podStatusPrefix(node: string): string;
  /** `{prefix}/podstatus/` — every written-back status. */
  allPodStatusPrefix(): string;
  /** `{prefix}/podstatus/{node}/{namespace}/{name}` — one PodStatus (JSON). */
  podStatus(node: string, namespace: string, name: string): string;
  /** `{prefix}/nodes/` — every registered node. */
  nodesPrefix(): string;
  /** `{prefix}/nodes/{node}` — one Node (JSON), on a lease. */
  node(node: string): string;
  /**
   * parsePodKey splits `{prefix}/pods/{node}/{namespace}/{name}` (or the podstatus form with
   * `kind` `podstatus`); undefined when `key` has another shape.
   */
  parsePodKey(key: string, kind?: 'pods' | 'podstatus'): { node: string; namespace: string; name: string } | undefined;
}

/** etcdKeys returns the key builders for `prefix` (a trailing `/` is dropped; `''` means the root). */
export function etcdKeys(prefix: string): EtcdKeys {
  const p = prefix.replace(/\/+$/, '');
  return {
    podsPrefix: (node) => `${p}/pods/${node}/`,
    allPodsPrefix: () => `${p}/pods/`,
    pod: (node, ns, name) => `${p}/pods/${node}/${ns}/${name}`,
    podStatusPrefix: (node) => `${p}/podstatus/${node}/`,
    allPodStatusPrefix: () => `${p}/podstatus/`,
    podStatus: (node, ns, name) => `${p}/podstatus/${node}/${ns}/${name}`,
    nodesPrefix: () => `${p}/nodes/`,
    node: (node) => `${p}/nodes/${node}`,
    parsePodKey(key, kind = 'pods') {
      const head = `${p}/${kind}/`;
      if (!key.startsWith(head)) return undefined;
      const parts = key.slice(head.length).split('/');
      if (parts.length !== 3 || parts.some((x) => x === '')) return undefined;
      return { node: parts[0]!, namespace: parts[1]!, name: parts[2]! };
    },
  };
}

/** isEtcdUnavailable: the error means etcd could not be reached (retry later), not a bad request. */
export function isEtcdUnavailable(err: unknown): boolean {
  return (
    err instanceof Error && (isRecoverableError(err) || /unavailable|deadline|ECONNREFUSED|No connection|timed out/i.test(err.message))
  );
}
