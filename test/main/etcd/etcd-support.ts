// Test helpers for the etcd suites: the etcd servers tools/lib/etcd.sh runs, a cuttable TCP proxy, unique key prefixes (the role of Kubernetes' integration framework etcd helpers, test/integration/framework/etcd.go).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

const kRoot = join(import.meta.dirname, '../../..');
const kEnvFile = join(kRoot, '.run/etcd.env');
const kScript = join(kRoot, 'tools/lib/etcd.sh');

/** EtcdEndpoints: the single member and the three-member cluster's client URLs. */
export interface EtcdEndpoints {
  single: string;
  cluster: string[];
}

function readEnv(): EtcdEndpoints | undefined {
  if (!existsSync(kEnvFile)) return undefined;
  const env = Object.fromEntries(readFileSync(kEnvFile, 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  if (!env.KUBELET_TS_ETCD_SINGLE || !env.KUBELET_TS_ETCD_CLUSTER) return undefined;
  return { single: env.KUBELET_TS_ETCD_SINGLE, cluster: env.KUBELET_TS_ETCD_CLUSTER.split(',') };
}

/**
 * etcdEndpoints: the servers tools/lib/etcd.sh started (it is run with `up` first — idempotent: it
 * starts them only when they do not answer, installing etcd-server if missing).
 */
export function etcdEndpoints(): EtcdEndpoints {
  execFileSync('bash', [kScript, 'up'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
  const env = readEnv();
  if (!env) throw new Error(`tools/lib/etcd.sh up wrote no ${kEnvFile}`);
  return env;
}

/** stopMember / startMember: stop (SIGTERM, or SIGKILL) or restart one member tools/ started (s1, c1, c2, c3), by its PID file. */
export function stopMember(name: string, kill = false): void {
  execFileSync('bash', [kScript, 'stop-member', name, ...(kill ? ['--kill'] : [])], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 30_000 });
}
export function startMember(name: string): void {
  execFileSync('bash', [kScript, 'start-member', name], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 30_000 });
}

/** uniquePrefix: a key prefix of our own, so suites never see each other's keys. */
export function uniquePrefix(what: string): string {
  return `/kts-test/${what}-${randomBytes(4).toString('hex')}`;
}

/** TcpProxy: a loopback TCP proxy to one etcd member that a test can cut (every connection dropped, new ones refused) and restore. */
export interface TcpProxy {
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** startProxy forwards 127.0.0.1:<free port> to `target` (http://127.0.0.1:PORT). */
export async function startProxy(target: string): Promise<TcpProxy> {
  const t = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () => new Promise<void>((resolve, reject) => {
    const s = createServer((client) => {
      const upstream = connect(Number(t.port), t.hostname);
      sockets.add(client).add(upstream);
      const drop = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream).pipe(client);
    });
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => { server = s; port = (s.address() as { port: number }).port; resolve(); });
  });
  const stop = () => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    if (!server) return resolve();
    server.close(() => resolve());
    server = undefined;
  });
  await listen();
  return { url: `http://127.0.0.1:${port}`, cut: stop, restore: listen, close: stop };
}
