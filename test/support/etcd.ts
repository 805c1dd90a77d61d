// Test helpers for etcd-backed suites: the etcd servers tools/lib/etcd.sh runs, one fixture (admin client, unique key prefixes, clients and proxies cleaned up after use) and a cuttable TCP proxy; the role of Kubernetes' integration framework etcd helpers (test/integration/framework/etcd.go).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { newEtcdClient, type Etcd3 } from '../../src/etcd/client.js';
import { waitFor, type Ready } from './docker.js';

const kRoot = join(import.meta.dirname, '../..');
const kEnvFile = join(kRoot, '.run/etcd.env');
const kScript = join(kRoot, 'tools/lib/etcd.sh');
/** Every prefix handed out starts with this, so a cleanup can never delete anything but test keys. */
const kTestPrefixRoot = '/kts-test/';

/** EtcdEndpoints: the client URLs of the single member and of the three-member cluster. */
export interface EtcdEndpoints {
  /** The single member s1 (`KUBELET_TS_ETCD_SINGLE`, http://127.0.0.1:23790). */
  single: string;
  /** The cluster members c1, c2, c3 (`KUBELET_TS_ETCD_CLUSTER`, ports 23791–23793). */
  cluster: string[];
}

function readEnv(): EtcdEndpoints | undefined {
  if (!existsSync(kEnvFile)) return undefined;
  const env = Object.fromEntries(
    readFileSync(kEnvFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  if (!env.KUBELET_TS_ETCD_SINGLE || !env.KUBELET_TS_ETCD_CLUSTER) return undefined;
  return { single: env.KUBELET_TS_ETCD_SINGLE, cluster: env.KUBELET_TS_ETCD_CLUSTER.split(',') };
}

/**
 * etcdEndpoints runs `tools/lib/etcd.sh up` (idempotent: it starts the members only when they do not
 * answer, installing etcd-server if missing; up to 120 s) and returns the endpoints it wrote to
 * `.run/etcd.env`. Throws when the script fails or writes no endpoints.
 */
export function etcdEndpoints(): EtcdEndpoints {
  execFileSync('bash', [kScript, 'up'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
  const env = readEnv();
  if (!env) throw new Error(`tools/lib/etcd.sh up wrote no ${kEnvFile}`);
  return env;
}

/**
 * stopMember stops one member tools/ started (`s1`, `c1`, `c2`, `c3`) by its PID file: SIGTERM, or
 * SIGKILL when `kill` is true. Throws when tools/lib/etcd.sh fails (an unknown name, for one).
 */
export function stopMember(name: string, kill = false): void {
  execFileSync('bash', [kScript, 'stop-member', name, ...(kill ? ['--kill'] : [])], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 30_000,
  });
}

/** startMember starts a member stopped by {@link stopMember} again on its data directory; throws as stopMember does. */
export function startMember(name: string): void {
  execFileSync('bash', [kScript, 'start-member', name], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 30_000 });
}

/** TcpProxy: a loopback TCP proxy to one etcd member that a test can cut (every connection dropped, new ones refused) and restore. */
export interface TcpProxy {
  /** Where clients connect: `http://127.0.0.1:<port>`; the port stays the same across cut and restore. */
  url: string;
  /** Drops every connection and stops listening. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /** Same as cut; idempotent. */
  close(): Promise<void>;
}

/** startProxy forwards 127.0.0.1:<free port> to `target` (`http://127.0.0.1:PORT`) and resolves once it listens. */
export async function startProxy(target: string): Promise<TcpProxy> {
  const t = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(Number(t.port), t.hostname);
        sockets.add(client).add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        client.pipe(upstream).pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        server = s;
        port = (s.address() as { port: number }).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await listen();
  return { url: `http://127.0.0.1:${port}`, cut: stop, restore: listen, close: stop };
}

/** EtcdFixtureOptions tunes {@link useEtcd}. */
export interface EtcdFixtureOptions {
  /** Use the three-member cluster instead of the single member (default false). */
  cluster?: boolean;
}

/**
 * EtcdFixture: what {@link useEtcd} gives a suite. Everything it creates is cleaned up by the scope it
 * was created in: inside a test (or a beforeEach) after that test, elsewhere (the describe body,
 * beforeAll) after the suite. Cleanups run last-created first, so a prefix taken first is deleted
 * after the clients and sources that use it have stopped.
 */
export interface EtcdFixture {
  /** The endpoints tools/lib/etcd.sh reported; read it in or after beforeAll, else it throws. */
  readonly endpoints: EtcdEndpoints;
  /** The suite's servers: `[endpoints.single]`, or `endpoints.cluster` with `cluster: true`; from beforeAll on. */
  readonly servers: string[];
  /** A client on {@link servers} for setting up and checking keys; open from beforeAll to the end of the suite. */
  readonly admin: Etcd3;
  /** prefix returns a fresh key prefix `/kts-test/<what>-<random>`; only the keys under it are deleted when its scope ends. */
  prefix(what: string): string;
  /** client opens an etcd client on `servers` (default {@link servers}), closed when its scope ends. */
  client(servers?: string[]): Etcd3;
  /** proxy starts a {@link TcpProxy} to `target` (default the first of {@link servers}), closed when its scope ends. */
  proxy(target?: string): Promise<TcpProxy>;
  /** defer runs `cleanup` when the current scope ends (before what was created earlier in it). */
  defer(cleanup: () => unknown): void;
}

/**
 * useEtcd registers, in the calling describe block, the hooks of one etcd fixture: beforeAll finds
 * the servers ({@link etcdEndpoints}) and opens the admin client; afterEach runs the cleanups of the
 * test that just ended; afterAll runs the suite's cleanups and closes the admin client. Call it
 * before the suite's own hooks, so that (vitest runs after-hooks in reverse order) its cleanups run
 * after theirs. Every cleanup runs even when one fails; the hook then rejects with the first failure
 * (an AggregateError when several failed), which fails the test.
 */
export function useEtcd(options: EtcdFixtureOptions = {}): EtcdFixture {
  let endpoints: EtcdEndpoints | undefined;
  let admin: Etcd3 | undefined;
  let inTest = false;
  const suiteCleanups: (() => unknown)[] = [];
  const testCleanups: (() => unknown)[] = [];
  const scope = () => (inTest ? testCleanups : suiteCleanups);

  const ready = (what: string): EtcdEndpoints => {
    if (!endpoints) throw new Error(`useEtcd: ${what} is available from beforeAll on`);
    return endpoints;
  };
  const servers = (): string[] => {
    const e = ready('servers');
    return options.cluster ? e.cluster : [e.single];
  };

  beforeAll(() => {
    endpoints = etcdEndpoints();
    admin = newEtcdClient({ servers: servers() });
  });
  beforeEach(() => {
    inTest = true;
  });
  afterEach(async () => {
    inTest = false;
    await runCleanups(testCleanups);
  });
  afterAll(async () => {
    try {
      await runCleanups(suiteCleanups);
    } finally {
      admin?.close();
    }
  });

  return {
    get endpoints() {
      return ready('endpoints');
    },
    get servers() {
      return servers();
    },
    get admin() {
      if (!admin) throw new Error('useEtcd: admin is available from beforeAll on');
      return admin;
    },
    prefix(what) {
      const prefix = `${kTestPrefixRoot}${what}-${randomBytes(4).toString('hex')}`;
      scope().push(async () => {
        if (admin) await admin.delete().prefix(prefix).exec();
      });
      return prefix;
    },
    client(list) {
      const client = newEtcdClient({ servers: list ?? servers() });
      scope().push(() => client.close());
      return client;
    },
    async proxy(target) {
      const cleanups = scope();
      const proxy = await startProxy(target ?? servers()[0]!);
      cleanups.push(() => proxy.close());
      return proxy;
    },
    defer(cleanup) {
      scope().push(cleanup);
    },
  };
}

/**
 * waitForEtcd is {@link waitFor} with the patience of the etcd suites: it polls `fn` every 100 ms
 * for up to 30 s (room for a client reconnecting, a 5 s call deadline, a lease expiring, on a loaded
 * machine) and resolves its first value other than `false`, `null` or `undefined`; otherwise rejects
 * with an Error naming `description`.
 */
export function waitForEtcd<T>(fn: () => T | Promise<T>, description: string): Promise<Ready<T>> {
  return waitFor(fn, { timeoutMs: 30_000, description });
}

/** runCleanups empties `cleanups`, running them last-first; rejects once all ran if any failed. */
async function runCleanups(cleanups: (() => unknown)[]): Promise<void> {
  const errors: unknown[] = [];
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()!();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `useEtcd: ${errors.length} cleanups failed`);
}
