// One forwarded connection in the streams worker (src/workers/streams/port-forward.ts): direct sockets and the netns
// helper's relay mode (entering this process's own network namespace), flow control, ends and errors.
import { existsSync } from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { PortForwardSpec } from '../../../src/shared/port-forward-protocol.js';
import { kPortForwardWindowBytes } from '../../../src/shared/port-forward-protocol.js';
import { netnsProbeHelperPath } from '../../../src/workers/probes/net-probe.js';
import { startPortForward } from '../../../src/workers/streams/port-forward.js';
import type { ContainerRuntime } from '../../../src/workers/runtime/container/runtime.js';
import { waitFor } from '../../support/docker.js';
import { openPortForwardChannel } from '../../support/port-forward-channel.js';

const servers: net.Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** listen: a server on 127.0.0.1 running `onConn` per connection; resolves its port. */
async function listen(onConn: (s: net.Socket) => void): Promise<number> {
  const server = net.createServer({ allowHalfOpen: true }, onConn);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}
const echo = (s: net.Socket) => s.pipe(s);
/** closedPort: a port nothing listens on. */
async function closedPort(): Promise<number> {
  const p = await listen(() => {});
  servers.pop()!.close();
  return p;
}

const owned = { 'io.kubernetes.pod.uid': 'u1', 'kubelet-ts.node-name': 'n1' };
const runtimeWith = (details: Record<string, unknown>) => ({ inspectContainer: async () => details }) as unknown as ContainerRuntime;
const kSandbox = 'a'.repeat(64);

/** open: a connection of `spec` on a MessageChannel; collects what the worker posts. */
function open(spec: PortForwardSpec, runtime: ContainerRuntime = runtimeWith({})) {
  return openPortForwardChannel((port, onDone) => startPortForward(runtime, 'n1', port, spec, onDone));
}

describe('port-forward connection (worker side)', () => {
  it('direct: client bytes reach the pod and come back; each chunk is reported written', async () => {
    const port = await listen(echo);
    const c = open({ reach: { kind: 'direct', host: '127.0.0.1' }, port });
    c.port.postMessage({ t: 'data', data: new TextEncoder().encode('hello ') });
    c.port.postMessage({ t: 'data', data: new TextEncoder().encode('world') });
    await waitFor(() => c.got.data.toString() === 'hello world' && c.got.written === 11, { description: 'echo and written' });
    c.port.postMessage({ t: 'close' });
    await waitFor(() => c.got.done, { description: 'torn down' });
    expect(c.got.end).toBeUndefined(); // the main thread closed: no `end` is posted
    c.port.close();
  });

  it("direct: a refused port ends with the dial error in Go's words", async () => {
    const port = await closedPort();
    const c = open({ reach: { kind: 'direct', host: '127.0.0.1' }, port });
    await waitFor(() => c.got.end, { description: 'end' });
    expect(c.got.end).toEqual({ error: `dial tcp 127.0.0.1:${port}: connect: connection refused` });
    c.port.close();
  });

  it('direct: reading the pod stops at the credit window and goes on as credit returns; the pod closing ends it cleanly', async () => {
    const total = 4 * kPortForwardWindowBytes;
    const port = await listen((s) => s.end(Buffer.alloc(total, 7)));
    const c = open({ reach: { kind: 'direct', host: '127.0.0.1' }, port });
    await waitFor(() => c.got.data.length >= kPortForwardWindowBytes, { description: 'a window of data' });
    await new Promise((r) => setTimeout(r, 200));
    // At most one read past the window arrives without credit.
    expect(c.got.data.length).toBeLessThan(kPortForwardWindowBytes + 256 * 1024);
    expect(c.got.data.length).toBeLessThan(total);
    await waitFor(
      () => {
        c.ackReceived();
        return c.got.end;
      },
      { timeoutMs: 10_000, description: 'all data, then end' },
    );
    expect(c.got.data.length).toBe(total);
    expect(c.got.end).toEqual({ error: undefined });
    c.port.close();
  });

  /** halfCloseServer: reads until the client's FIN, then answers with what it read and closes. */
  const halfCloseServer = () =>
    listen((s) => {
      const got: Buffer[] = [];
      s.on('data', (d: Buffer) => got.push(d));
      s.on('end', () => s.end(Buffer.concat([Buffer.from('after-eof:'), ...got])));
    });

  it('direct: closeWrite half-closes the pod side after the bytes before it; the pod answers and the connection ends cleanly', async () => {
    const c = open({ reach: { kind: 'direct', host: '127.0.0.1' }, port: await halfCloseServer() });
    c.port.postMessage({ t: 'data', data: new TextEncoder().encode('abc') });
    c.port.postMessage({ t: 'closeWrite' });
    await waitFor(() => c.got.end, { timeoutMs: 10_000, description: 'end' });
    expect(c.got.data.toString()).toBe('after-eof:abc');
    expect(c.got.end).toEqual({ error: undefined });
  });

  const helper = existsSync(netnsProbeHelperPath());
  describe.skipIf(!helper)("netns (the helper, entering this process's own namespace)", () => {
    const netns = (port: number, details: Record<string, unknown> = { labels: owned, running: true, pid: process.pid }) =>
      open({ reach: { kind: 'netns', sandboxId: kSandbox }, port }, runtimeWith(details));

    it('relays both ways through the helper; the pod closing ends it without error', async () => {
      const port = await listen((s) => s.once('data', (d) => s.end(Buffer.concat([Buffer.from('got:'), d]))));
      const c = netns(port);
      c.port.postMessage({ t: 'data', data: new TextEncoder().encode('ping') });
      await waitFor(() => c.got.end, { timeoutMs: 10_000, description: 'end' });
      expect(c.got.data.toString()).toBe('got:ping');
      expect(c.got.written).toBe(4);
      expect(c.got.end).toEqual({ error: undefined });
      c.port.close();
    });

    it('closeWrite reaches the pod as EOF through the helper (its stdin closed)', async () => {
      const c = netns(await halfCloseServer());
      c.port.postMessage({ t: 'data', data: new TextEncoder().encode('xyz') });
      c.port.postMessage({ t: 'closeWrite' });
      await waitFor(() => c.got.end, { timeoutMs: 10_000, description: 'end' });
      expect(c.got.data.toString()).toBe('after-eof:xyz');
      expect(c.got.end).toEqual({ error: undefined });
    });

    it("a refused port ends with the helper's dial error", async () => {
      const port = await closedPort();
      const c = netns(port);
      await waitFor(() => c.got.end, { timeoutMs: 10_000, description: 'end' });
      expect(c.got.end?.error).toBe(`dial tcp 127.0.0.1:${port}: connect: connection refused`);
      c.port.close();
    });

    it('refuses a sandbox of another node and one that is not running, without running the helper', async () => {
      const a = netns(1, { labels: { ...owned, 'kubelet-ts.node-name': 'other' }, running: true, pid: process.pid });
      const b = netns(1, { labels: owned, running: false });
      await waitFor(() => a.got.end && b.got.end, { description: 'ends' });
      expect(a.got.end?.error).toContain('is not a sandbox of this node');
      expect(b.got.end?.error).toContain('is not running');
      a.port.close();
      b.port.close();
    });

    it('close kills the helper mid-connection', async () => {
      let peerClosed = false;
      const port = await listen((s) => {
        s.on('end', () => {
          peerClosed = true;
        }); // the helper's socket closed (FIN)
        s.resume();
      });
      const c = netns(port);
      c.port.postMessage({ t: 'data', data: new TextEncoder().encode('x') });
      await waitFor(() => c.got.written === 1, { timeoutMs: 10_000, description: 'written' });
      c.stop();
      await waitFor(() => peerClosed, { timeoutMs: 10_000, description: 'the pod side closed' });
      expect(c.got.done).toBe(true);
      c.port.close();
    });
  });
});
