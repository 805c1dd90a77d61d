// gRPC probes (issue 43 item 2) against real grpc-js health servers: the status mapping and the
// kubelet's texts (pkg/probe/grpc/grpc.go), dialled from the node and, through the netns helper,
// inside a network namespace of its own (unshare -n; no Docker needed).
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../../src/shared/thread-wire.js';
import type { GrpcProbeTask } from '../../../src/shared/probe-tasks.js';
import { goCodeName, goDuration, grpcCheckOutcome, grpcDialFailure, runGrpcProbe } from '../../../src/workers/probes/grpc-probe.js';
import { newFakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import type { ContainerRuntime } from '../../../src/workers/runtime/container/runtime.js';
import { spawnHealthServer, startHealthServer, type HealthServer, type SpawnedHealthServer } from '../../support/grpc-health.js';

const task = (port: number, extra: Partial<GrpcProbeTask> = {}): GrpcProbeTask => ({
  kind: 'grpcProbe',
  protocol: PROTOCOL_VERSION,
  host: '127.0.0.1',
  port,
  service: '',
  timeoutMs: 2000,
  ...extra,
});
const rt = newFakeRuntime();

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

describe('the kubelet texts of a gRPC probe (grpcCheckOutcome, grpcDialFailure)', () => {
  it.each([
    [{ status: 'SERVING' }, 'success', 'service healthy'],
    [{ status: 'NOT_SERVING' }, 'failure', 'service unhealthy (responded with "NOT_SERVING")'],
    [{ status: 'UNKNOWN' }, 'failure', 'service unhealthy (responded with "UNKNOWN")'],
    [{ status: 'SERVICE_UNKNOWN' }, 'failure', 'service unhealthy (responded with "SERVICE_UNKNOWN")'],
    [{ status: 7 }, 'failure', 'service unhealthy (responded with "7")'],
    [
      { error: { code: 12, details: 'nope' } },
      'failure',
      'error: this server does not implement the grpc health protocol (grpc.health.v1.Health): nope',
    ],
    [{ error: { code: 4, details: 'Deadline exceeded' } }, 'failure', 'timeout: health rpc did not complete within 1s'],
    [
      { error: { code: 5, details: 'unknown service' } },
      'failure',
      'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service',
    ],
    [
      { error: { code: 14, details: 'Connection dropped' } },
      'failure',
      'error: health rpc probe failed: rpc error: code = Unavailable desc = Connection dropped',
    ],
  ] as const)('%j → %s %s', (answer, result, output) => {
    expect(grpcCheckOutcome(answer, 1000)).toEqual({ result, output });
  });

  it('names the address and the timeout as Go prints them', () => {
    expect(grpcDialFailure('10.1.0.4:2379', 1000).output).toBe(
      'timeout: failed to connect service "10.1.0.4:2379" within 1s: context deadline exceeded',
    );
    expect([500, 1000, 1500, 60_000, 90_000, 3_600_000].map(goDuration)).toEqual(['500ms', '1s', '1.5s', '1m0s', '1m30s', '1h0m0s']);
    expect([0, 1, 16, 99].map(goCodeName)).toEqual(['OK', 'Canceled', 'Unauthenticated', 'Code(99)']);
  });
});

describe('gRPC probes dialled from the node (a real grpc-js health server)', () => {
  let server: HealthServer;
  let bare: HealthServer;
  beforeAll(async () => {
    server = await startHealthServer({ statuses: { '': 'SERVING', 'db.v1.Store': 'NOT_SERVING' } });
    bare = await startHealthServer({ health: false });
  });
  afterAll(async () => {
    await server?.stop();
    await bare?.stop();
  });

  it('SERVING passes; the service name is sent as given, empty by default; the kubelet user agent', async () => {
    server.seen.length = 0;
    expect(await runGrpcProbe(rt, task(server.port))).toEqual({ result: 'success', output: 'service healthy' });
    expect(await runGrpcProbe(rt, task(server.port, { service: 'db.v1.Store' }))).toEqual({
      result: 'failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
    expect(server.seen.map((s) => s.service)).toEqual(['', 'db.v1.Store']);
    expect(server.seen[0]!.userAgent).toMatch(/^kube-probe\/1\.\d+ /);
  });

  it('a status flip is seen by the next probe (a fresh connection each time)', async () => {
    server.statuses.set('', 'NOT_SERVING');
    expect(await runGrpcProbe(rt, task(server.port))).toEqual({
      result: 'failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
    server.statuses.set('', 'SERVING');
    expect(await runGrpcProbe(rt, task(server.port))).toEqual({ result: 'success', output: 'service healthy' });
  });

  it('an unknown service fails with NotFound; a server without the health service with the kubelet\'s "does not implement" text', async () => {
    expect(await runGrpcProbe(rt, task(server.port, { service: 'nope' }))).toEqual({
      result: 'failure',
      output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service',
    });
    expect(await runGrpcProbe(rt, task(bare.port))).toMatchObject({
      result: 'failure',
      output: expect.stringMatching(/^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): .+/),
    });
  });

  it("a slow answer and a closed port fail with the kubelet's timeout texts", async () => {
    server.delayMs = 1500;
    try {
      expect(await runGrpcProbe(rt, task(server.port, { timeoutMs: 500 }))).toEqual({
        result: 'failure',
        output: 'timeout: health rpc did not complete within 500ms',
      });
    } finally {
      server.delayMs = 0;
    }
    const port = await closedPort();
    expect(await runGrpcProbe(rt, task(port, { timeoutMs: 500 }))).toEqual({
      result: 'failure',
      output: `timeout: failed to connect service "127.0.0.1:${port}" within 500ms: context deadline exceeded`,
    });
  });

  it('never goes through a proxy from the environment (grpc_proxy / http_proxy)', async () => {
    const saved = { grpc_proxy: process.env.grpc_proxy, http_proxy: process.env.http_proxy };
    const proxy = `http://127.0.0.1:${await closedPort()}`;
    process.env.grpc_proxy = proxy;
    process.env.http_proxy = proxy;
    try {
      expect(await runGrpcProbe(rt, task(server.port))).toEqual({ result: 'success', output: 'service healthy' });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('a sandbox that is not there makes the probe unknown, not failed', async () => {
    expect(await runGrpcProbe(rt, task(server.port, { sandboxId: 'gone' }))).toMatchObject({ result: 'unknown' });
  });
});

describe('gRPC probes inside a network namespace, through the netns helper', () => {
  let server: SpawnedHealthServer;
  /** A runtime whose one sandbox is the server's process: its netns is the one to enter. */
  let inNetns: ContainerRuntime;
  beforeAll(async () => {
    // The netns helper is built by tools/test; build it here too for a bare `vitest run`.
    execFileSync('bash', ['-c', 'set -e; . tools/lib/common.sh; . tools/lib/netns-probe.sh; ensure_netns_probe'], { stdio: 'ignore' });
    server = await spawnHealthServer(['unshare', '-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"'], '127.0.0.1', 0);
    const pid = server.child.pid!;
    inNetns = {
      inspectContainer: async (id: string) =>
        id === 'sb' ? { running: true, pid } : Promise.reject(new Error(`no such container: ${id}`)),
    } as unknown as ContainerRuntime;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("reaches a server that listens only on the namespace's loopback, and follows its status", async () => {
    // Not reachable from the node: the port is inside the other namespace.
    expect((await runGrpcProbe(rt, task(server.port, { timeoutMs: 300 }))).result).toBe('failure');
    expect(await runGrpcProbe(inNetns, task(server.port, { sandboxId: 'sb' }))).toEqual({ result: 'success', output: 'service healthy' });
    await server.set('', 'NOT_SERVING');
    expect(await runGrpcProbe(inNetns, task(server.port, { sandboxId: 'sb' }))).toEqual({
      result: 'failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
    await server.set('', 'SERVING');
    expect(await runGrpcProbe(inNetns, task(server.port, { sandboxId: 'sb' }))).toEqual({ result: 'success', output: 'service healthy' });
  }, 60_000);

  it('a closed port in the namespace fails with the dial timeout text; the helper processes are gone after the probe', async () => {
    const out = await runGrpcProbe(inNetns, task(1, { sandboxId: 'sb', timeoutMs: 700 }));
    expect(out).toEqual({
      result: 'failure',
      output: 'timeout: failed to connect service "127.0.0.1:1" within 700ms: context deadline exceeded',
    });
    const helpers = execFileSync('ps', ['-eo', 'args'])
      .toString()
      .split('\n')
      .filter((l) => l.includes('kubelet-ts-netns-probe') && l.includes(` ${server.child.pid}/`));
    expect(helpers).toEqual([]);
  }, 60_000);
});
