/**
 * Counterpart of pkg/probe/grpc/grpc.go (and the `p.GRPC` branch of pkg/kubelet/prober/prober.go):
 * the gRPC probe, run on a worker thread. One `grpc.health.v1.Health/Check` per probe on a fresh,
 * plaintext connection (no TLS, as the kubelet), the service name sent as given ('' by default),
 * `timeoutSeconds` bounding the connection and the call together. SERVING passes; every other
 * answer or error fails with the kubelet's texts (grpcDialFailure, grpcCheckOutcome).
 *
 * The client is @grpc/grpc-js with the vendored health.proto (./health.proto, loaded by
 * @grpc/proto-loader). As grpc-go's `DialContext(WithBlock)`, the connection is retried (grpc-js's
 * reconnect backoff) until the deadline, so a refused port ends as the kubelet's
 * `timeout: failed to connect service … within 1s: context deadline exceeded`.
 *
 * Pods with network `none` have no address the node reaches: their probe dials inside the
 * sandbox's network namespace through the netns helper's `relay` mode (tools/netns-probe, as the
 * netns httpGet/tcpSocket probes and port-forward use it): grpc-js connects to a unix socket in a
 * private (0700) temporary directory, and each connection to it is relayed by one helper process
 * to 127.0.0.1:port in the pod's namespace. Nothing listens on a TCP port of the node meanwhile.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { realClock, type Clock } from '../../shared/clock.js';
import { serializeError } from '../../shared/errors.js';
import { kProbeUserAgent } from '../../io/http-probe.js';
import type { GrpcProbeTask, ProbeOutcome } from '../../shared/probe-tasks.js';
import { netnsProbeHelperPath, probeNetns } from './net-probe.js';
import type { ContainerRuntime } from '../runtime/container/runtime.js';

/** Go's names of the gRPC status codes (codes.Code.String()), by number. */
const kGoCodeNames = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** goCodeName: a gRPC status code as grpc-go prints it (`Unavailable`; `Code(99)` for an unknown one). */
export function goCodeName(code: number): string {
  return kGoCodeNames[code] ?? `Code(${code})`;
}

/** goDuration: milliseconds as Go's time.Duration.String() writes them (`1s`, `1.5s`, `1m0s`, `500ms`). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = ((ms % 60_000) / 1000).toString();
  if (h) return `${h}h${m}m${s}s`;
  return m ? `${m}m${s}s` : `${s}s`;
}

/** joinHostPort: `host:port`, an IPv6 host in brackets (Go's net.JoinHostPort). */
function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * grpcDialFailure: the kubelet's output when the connection was not ready before the deadline
 * (grpc.go: grpc-go's blocking dial ends with context.DeadlineExceeded): `timeout: failed to
 * connect service "ADDR" within 1s: context deadline exceeded`. `timeoutMs` in milliseconds.
 */
export function grpcDialFailure(addr: string, timeoutMs: number): ProbeOutcome {
  return {
    result: 'failure',
    output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${goDuration(timeoutMs)}: context deadline exceeded`,
  };
}

/** The answer of one Check: a HealthCheckResponse's status name, or a gRPC error (`code`, `details`). */
export type GrpcCheckAnswer = { status: string | number } | { error: { code: number; details: string } };

/**
 * grpcCheckOutcome maps a Check's answer to the kubelet's verdict and output (grpc.go):
 * SERVING → success `service healthy`; another status → failure `service unhealthy (responded
 * with "NOT_SERVING")`; Unimplemented → `error: this server does not implement the grpc health
 * protocol (grpc.health.v1.Health): <message>`; DeadlineExceeded → `timeout: health rpc did not
 * complete within 1s`; any other code → `error: health rpc probe failed: rpc error: code = <Code>
 * desc = <message>`. `timeoutMs` in milliseconds. Pure.
 */
export function grpcCheckOutcome(answer: GrpcCheckAnswer, timeoutMs: number): ProbeOutcome {
  if ('status' in answer) {
    if (answer.status === 'SERVING') return { result: 'success', output: 'service healthy' };
    return { result: 'failure', output: `service unhealthy (responded with ${JSON.stringify(String(answer.status))})` };
  }
  const { code, details } = answer.error;
  if (code === grpc.status.UNIMPLEMENTED) {
    return {
      result: 'failure',
      output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${details}`,
    };
  }
  if (code === grpc.status.DEADLINE_EXCEEDED)
    return { result: 'failure', output: `timeout: health rpc did not complete within ${goDuration(timeoutMs)}` };
  return { result: 'failure', output: `error: health rpc probe failed: rpc error: code = ${goCodeName(code)} desc = ${details}` };
}

/**
 * healthProtoPath: the vendored health.proto beside this module in src/; from dist/ (tsc does not
 * copy .proto files) the one under the project root's src/ (the nearest directory up with a package.json).
 */
function healthProtoPath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  if (existsSync(path.join(dir, 'health.proto'))) return path.join(dir, 'health.proto');
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return path.join(dir, 'src', 'workers', 'probes', 'health.proto');
}

type HealthClient = grpc.Client & {
  Check(
    req: { service: string },
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: { status: string | number }) => void,
  ): grpc.ClientUnaryCall;
};
type HealthClientCtor = new (target: string, creds: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => HealthClient;
let healthClientCtor: HealthClientCtor | undefined;

/** healthClient: the generated `grpc.health.v1.Health` client class (loaded once per thread). */
function healthClient(): HealthClientCtor {
  if (!healthClientCtor) {
    const def = protoLoader.loadSync(healthProtoPath(), { keepCase: true, enums: String, defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as { grpc: { health: { v1: { Health: HealthClientCtor } } } };
    healthClientCtor = pkg.grpc.health.v1.Health;
  }
  return healthClientCtor;
}

/**
 * checkHealth: one Health/Check of `service` at grpc-js `target` on its own channel, bounded by
 * `timeoutMs` (ms) in all; `addr` (`host:port`) names the service in the output and is the
 * `:authority`; the deadline (epoch ms, as grpc-js reads it) is `clock.now()` plus `timeoutMs`. Resolves the kubelet's verdict; never rejects.
 */
async function checkHealth(target: string, addr: string, service: string, timeoutMs: number, clock: Clock): Promise<ProbeOutcome> {
  const deadline = clock.now() + timeoutMs;
  const Client = healthClient();
  const client = new Client(target, grpc.credentials.createInsecure(), {
    'grpc.primary_user_agent': kProbeUserAgent,
    'grpc.default_authority': addr,
    // A probe's own connection, closed after it (as the kubelet dials per probe); never through a proxy.
    'grpc.use_local_subchannel_pool': 1,
    'grpc.enable_http_proxy': 0,
    'grpc.enable_retries': 0,
    'grpc.service_config_disable_resolution': 1,
  });
  try {
    const ready = await new Promise<boolean>((resolve) => client.waitForReady(deadline, (err) => resolve(!err)));
    if (!ready) return grpcDialFailure(addr, timeoutMs);
    const answer = await new Promise<GrpcCheckAnswer>((resolve) => {
      client.Check({ service }, { deadline }, (err, res) => {
        resolve(err ? { error: { code: err.code, details: err.details } } : { status: res?.status ?? 'UNKNOWN' });
      });
    });
    return grpcCheckOutcome(answer, timeoutMs);
  } finally {
    client.close();
  }
}

/**
 * netnsRelay: a unix socket in a fresh 0700 directory whose connections are relayed into the
 * network namespace `netnsPath` to `host:port` by the netns helper (one process per connection).
 * `helperError()` is the helper's complaint when it could not run at all (exit 2: cannot enter the
 * namespace), else ''. `close()` stops the listener, kills the helpers and removes the directory.
 */
async function netnsRelay(netnsPath: string, host: string, port: number, timeoutMs: number) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kubelet-ts-grpc-probe-'));
  const socketPath = path.join(dir, 'relay.sock');
  const children = new Set<ChildProcess>();
  let helperError = '';
  const server = net.createServer((conn) => {
    const child = spawn(netnsProbeHelperPath(), [netnsPath, 'relay', host, String(port), String(Math.max(1, timeoutMs))], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(child);
    const err: Buffer[] = [];
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.on('error', () => conn.destroy());
    child.on('close', (code) => {
      children.delete(child);
      if (code === 2) helperError = Buffer.concat(err).toString('utf8').trim() || 'netns probe helper failed';
      conn.destroy();
    });
    child.stdin!.on('error', () => {});
    conn.on('error', () => {});
    conn.on('close', () => child.kill('SIGKILL'));
    conn.pipe(child.stdin!);
    child.stdout!.pipe(conn);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    target: `unix:${socketPath}`,
    helperError: () => helperError,
    async close(): Promise<void> {
      for (const c of children) c.kill('SIGKILL');
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * runGrpcProbe runs one gRPC probe (see the file comment) and resolves `success`, `failure`
 * (`output` in the kubelet's words), or `unknown` when it could not be run (the sandbox is gone,
 * the netns helper is missing or cannot enter the namespace). With `task.sandboxId` it dials
 * inside that sandbox's network namespace; `clock` (default realClock) gives its deadline. Never rejects. Runs on a worker thread.
 */
export async function runGrpcProbe(runtime: ContainerRuntime, task: GrpcProbeTask, clock: Clock = realClock): Promise<ProbeOutcome> {
  const addr = joinHostPort(task.host, task.port);
  try {
    if (!task.sandboxId) return await checkHealth(addr, addr, task.service, task.timeoutMs, clock);
    const netnsPath = await probeNetns(runtime, task.sandboxId);
    if (typeof netnsPath !== 'string') return netnsPath;
    const relay = await netnsRelay(netnsPath, task.host, task.port, task.timeoutMs);
    try {
      const outcome = await checkHealth(relay.target, addr, task.service, task.timeoutMs, clock);
      return relay.helperError() && outcome.result !== 'success' ? { result: 'unknown', output: relay.helperError() } : outcome;
    } finally {
      await relay.close();
    }
  } catch (err) {
    return { result: 'unknown', output: serializeError(err).message };
  }
}
