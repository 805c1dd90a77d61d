// A small gRPC health server (grpc.health.v1.Health/Check, the project's vendored health.proto)
// for the gRPC probe tests: served in-process (startHealthServer), or as a child process that a test
// can start inside a pod's network namespace (spawnHealthServer with an `nsenter … -n` prefix):
// `node --import tsx test/support/grpc-health.ts HOST PORT [--no-health]` prints `listening PORT`,
// then takes commands on stdin, one a line — `set SERVICE STATUS` (SERVICE `-` is ''), `delay MS` —
// and exits when stdin closes (so a test that dies takes its server with it).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const kRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const kProto = path.join(kRoot, 'src', 'workers', 'probes', 'health.proto');

/** What a health server tells each Check, and what it saw. */
export interface HealthState {
  /** ServingStatus name by service ('' is the server's overall health); a service not here is NOT_FOUND. */
  statuses: Map<string, string>;
  /** Milliseconds to wait before answering. */
  delayMs: number;
  /** Each request: the service asked for and the user-agent it came with. */
  seen: Array<{ service: string; userAgent: string }>;
}

/** A running in-process health server on 127.0.0.1 (or `host`). */
export interface HealthServer extends HealthState {
  port: number;
  stop(): Promise<void>;
}

function healthService(): grpc.ServiceDefinition {
  const def = protoLoader.loadSync(kProto, { keepCase: true, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { grpc: { health: { v1: { Health: { service: grpc.ServiceDefinition } } } } };
  return pkg.grpc.health.v1.Health.service;
}

/**
 * startHealthServer serves Health/Check on `host`:`port` (0: any free port) with `state`'s
 * statuses; `health: false` serves no service at all (every call is UNIMPLEMENTED).
 */
export async function startHealthServer(
  opts: { host?: string; port?: number; health?: boolean; statuses?: Record<string, string> } = {},
): Promise<HealthServer> {
  const state: HealthState = { statuses: new Map(Object.entries(opts.statuses ?? { '': 'SERVING' })), delayMs: 0, seen: [] };
  const server = new grpc.Server();
  if (opts.health !== false) {
    server.addService(healthService(), {
      Check(call: grpc.ServerUnaryCall<{ service: string }, unknown>, cb: grpc.sendUnaryData<unknown>) {
        const service = call.request.service;
        state.seen.push({ service, userAgent: String(call.metadata.get('user-agent')[0] ?? '') });
        const answer = () => {
          const status = state.statuses.get(service);
          if (status === undefined) cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
          else cb(null, { status });
        };
        if (state.delayMs > 0) setTimeout(answer, state.delayMs);
        else answer();
      },
      Watch(call: grpc.ServerWritableStream<unknown, unknown>) {
        call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'Watch is not served here' });
      },
    });
  }
  const host = opts.host ?? '127.0.0.1';
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${opts.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    );
  });
  return Object.assign(state, {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  });
}

/** A health server running as a child process (see the file comment). */
export interface SpawnedHealthServer {
  port: number;
  child: ChildProcess;
  /** Sets the status of `service` ('' the overall health); resolves once the server has read it. */
  set(service: string, status: string): Promise<void>;
  /** Stops the server (closes its stdin, then SIGKILL if it lingers) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * spawnHealthServer starts this file as a server on `host`:`port`, run under `prefix` (e.g.
 * `['nsenter', '-t', PID, '-n']` to serve inside a pod's network namespace). Resolves once it listens.
 * @throws when it exits or does not listen within 30 s.
 */
export async function spawnHealthServer(prefix: string[], host: string, port: number): Promise<SpawnedHealthServer> {
  const argv = [...prefix, process.execPath, '--import', 'tsx', fileURLToPath(import.meta.url), host, String(port)];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: kRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = createInterface({ input: child.stdout! });
  const waiters: Array<(line: string) => void> = [];
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  lines.on('line', (l) => waiters.shift()?.(l));
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`health server did not answer; stderr: ${stderr}`)), 30_000);
      waiters.push((l) => {
        clearTimeout(t);
        resolve(l);
      });
      child.once('exit', (code) => reject(new Error(`health server exited ${code}; stderr: ${stderr}`)));
    });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin!.end();
    const t = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(t);
  };
  try {
    const first = await next();
    const m = /^listening (\d+)$/.exec(first);
    if (!m) throw new Error(`health server said ${JSON.stringify(first)}; stderr: ${stderr}`);
    return {
      port: Number(m[1]),
      child,
      stop,
      async set(service, status) {
        const ok = next();
        child.stdin!.write(`set ${service || '-'} ${status}\n`);
        await ok;
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

// Run as a program: serve until stdin closes.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [host = '127.0.0.1', port = '0', flag] = process.argv.slice(2);
  const s = await startHealthServer({ host, port: Number(port), health: flag !== '--no-health' });
  process.stdout.write(`listening ${s.port}\n`);
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (l) => {
    const [cmd, a = '', b = ''] = l.trim().split(/\s+/);
    if (cmd === 'set') s.statuses.set(a === '-' ? '' : a, b);
    else if (cmd === 'delay') s.delayMs = Number(a);
    process.stdout.write(`ok ${l}\n`);
  });
  rl.on('close', () => void s.stop().then(() => process.exit(0)));
}
