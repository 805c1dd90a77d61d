import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExecProbe } from '../../../src/workers/probes/exec-probe.js';
import { runNetProbe } from '../../../src/workers/probes/net-probe.js';
import { parseHttpReply } from '../../../src/io/http-probe.js';
import { newFakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import { PROTOCOL_VERSION } from '../../../src/shared/thread-wire.js';
import type { NetProbeTask } from '../../../src/shared/probe-tasks.js';
import { netProbeTarget, resolveContainerPort } from '../../../src/shared/probe-target.js';
import type { Pod } from '../../../src/shared/api.js';

describe('httpGet and tcpSocket probes dialled from the node', () => {
  let server: http.Server;
  let port: number;
  /** The headers of each request, by path (a timed-out /slow request may still arrive during a later test). */
  const seen: { url: string; headers: http.IncomingHttpHeaders }[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      if (req.url === '/slow') {
        setTimeout(() => res.end('body of /slow'), 100);
        return;
      }
      const routes: Record<string, [number, Record<string, string>?]> = {
        '/ok': [200],
        '/missing': [404],
        '/err': [500],
        '/moved': [302, { location: '/missing' }],
        '/away': [301, { location: 'http://example.invalid/x' }],
        '/found': [302, { location: '/ok' }],
      };
      const [code, headers] = routes[req.url ?? ''] ?? [404];
      res.writeHead(code, headers);
      res.end(`body of ${req.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const task = (path: string, extra: Partial<NetProbeTask> = {}): NetProbeTask => ({
    kind: 'netProbe',
    protocol: PROTOCOL_VERSION,
    mode: 'http',
    host: '127.0.0.1',
    port,
    scheme: 'HTTP',
    path,
    timeoutMs: 2000,
    ...extra,
  });
  const rt = newFakeRuntime();

  it.each([
    ['/ok', 'success', 'body of /ok'],
    ['/missing', 'failure', 'HTTP probe failed with statuscode: 404'],
    ['/err', 'failure', 'HTTP probe failed with statuscode: 500'],
    ['/found', 'success', 'body of /ok'],
    ['/moved', 'failure', 'HTTP probe failed with statuscode: 404'],
    ['/away', 'success', 'Probe terminated redirects, Response body: body of /away'],
  ])('GET %s → %s (200–399 succeed; same-host redirects are followed, others end the probe)', async (path, result, output) => {
    expect(await runNetProbe(rt, task(path))).toEqual({ result, output });
  });

  // Node's timers hold at most 2^31-1 ms; a longer timeout fired after 1 ms before the fix.
  it('a timeoutSeconds past 2^31-1 ms (2147484 s) waits for a slow answer; a short one still times out', async () => {
    expect(await runNetProbe(rt, task('/slow', { timeoutMs: 2_147_484_000 }))).toEqual({ result: 'success', output: 'body of /slow' });
    expect(await runNetProbe(rt, { ...task(''), mode: 'tcp', timeoutMs: 2_147_484_000 })).toEqual({ result: 'success', output: '' });
    expect(await runNetProbe(rt, task('/slow', { timeoutMs: 20 }))).toMatchObject({
      result: 'failure',
      output: expect.stringContaining('context deadline exceeded'),
    });
  });

  it('sends the kubelet User-Agent and httpHeaders, a Host header overriding the target', async () => {
    seen.length = 0;
    await runNetProbe(
      rt,
      task('/ok', {
        headers: [
          { name: 'X-Probe', value: 'yes' },
          { name: 'Host', value: 'web.local' },
        ],
      }),
    );
    expect(seen.filter((r) => r.url === '/ok').map((r) => r.headers)).toHaveLength(1);
    expect(seen.find((r) => r.url === '/ok')!.headers).toMatchObject({
      'user-agent': 'kube-probe/1.30',
      'x-probe': 'yes',
      host: 'web.local',
    });
  });

  it('tcpSocket: an open port succeeds, a closed one fails with the dial error', async () => {
    expect(await runNetProbe(rt, { ...task(''), mode: 'tcp' })).toEqual({ result: 'success', output: '' });
    const closed = await new Promise<number>((resolve) => {
      const s = http.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    expect(await runNetProbe(rt, { ...task(''), mode: 'tcp', port: closed })).toEqual({
      result: 'failure',
      output: `dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    });
  });

  it('an unreachable sandbox makes the probe unknown, not failed', async () => {
    expect((await runNetProbe(rt, task('/ok', { sandboxId: 'gone' }))).result).toBe('unknown');
  });
});

describe('parseHttpReply', () => {
  it('reads the status, the Location header and the body of a raw reply', () => {
    const raw = Buffer.from('HTTP/1.0 302 Found\r\nContent-Type: text/plain\r\nLocation: /next\r\n\r\nhello');
    expect(parseHttpReply(raw)).toEqual({ status: 302, location: '/next', body: 'hello' });
    expect(parseHttpReply(Buffer.from('garbage'))).toBeNull();
  });
});

describe('exec probes', () => {
  it('maps exit codes, timeouts and errors to success, failure and unknown', async () => {
    const rt = newFakeRuntime();
    const id = await rt.createContainer({ name: 'c', image: 'i', labels: {}, hostConfig: {} });
    expect((await runExecProbe(rt, { containerId: id, command: ['true'], timeoutMs: 1000 })).result).toBe('unknown'); // not running
    await rt.startContainer(id);
    expect(await runExecProbe(rt, { containerId: id, command: ['true'], timeoutMs: 1000 })).toEqual({ result: 'success', output: '' });
    rt.setExecResult(id, { exitCode: 1, output: 'not ready\n', timedOut: false });
    expect(await runExecProbe(rt, { containerId: id, command: ['cat', '/ready'], timeoutMs: 1000 })).toEqual({
      result: 'failure',
      output: 'not ready\n',
    });
    rt.setExecResult(id, { exitCode: -1, output: '', timedOut: true });
    expect(await runExecProbe(rt, { containerId: id, command: ['sleep', '9'], timeoutMs: 1000 })).toEqual({
      result: 'failure',
      output: 'command "sleep 9" timed out',
    });
    expect((await runExecProbe(rt, { containerId: 'nope', command: ['true'], timeoutMs: 1000 })).result).toBe('unknown');
  });
});

describe('probe targets', () => {
  const pod = (spec: Partial<Pod['spec']> = {}) => ({ metadata: { uid: 'u' }, spec: { containers: [], ...spec } }) as Pod;
  const c = { name: 'web', ports: [{ name: 'http', containerPort: 8080 }] };
  it('resolves ports by number, numeric string or name, and names a missing one', () => {
    expect(resolveContainerPort(80, c)).toBe(80);
    expect(resolveContainerPort('81', c)).toBe(81);
    expect(resolveContainerPort('http', c)).toBe(8080);
    expect(() => resolveContainerPort('metrics', c)).toThrow('port "metrics" not found in container "web"');
  });
  it('uses an explicit host first, then the node for hostNetwork, the pod IP, or the sandbox netns', () => {
    const net = { hostIp: '127.0.0.1', podIp: '', sandboxId: 'sb' };
    expect(netProbeTarget(pod(), c, 'tcp', { port: 'http', host: '127.0.0.2' }, net)).toEqual({
      mode: 'tcp',
      host: '127.0.0.2',
      port: 8080,
    });
    expect(netProbeTarget(pod({ hostNetwork: true }), c, 'tcp', { port: 1 }, net)).toEqual({ mode: 'tcp', host: '127.0.0.1', port: 1 });
    expect(netProbeTarget(pod(), c, 'tcp', { port: 1 }, { ...net, podIp: '10.1.1.1' })).toEqual({ mode: 'tcp', host: '10.1.1.1', port: 1 });
    expect(netProbeTarget(pod(), c, 'http', { port: 1, path: 'healthz', scheme: 'https' }, net)).toEqual({
      mode: 'http',
      host: '127.0.0.1',
      port: 1,
      sandboxId: 'sb',
      scheme: 'HTTPS',
      path: '/healthz',
    });
    expect(() => netProbeTarget(pod(), c, 'tcp', { port: 1 }, { ...net, sandboxId: '' })).toThrow(/no IP address and no running sandbox/);
  });
});
