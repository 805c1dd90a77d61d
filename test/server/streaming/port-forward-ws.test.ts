// The port-forward WebSocket endpoint (src/server/streaming/port-forward-ws.ts) on a real uWebSockets.js server
// with a fake host: bounds per forwarded port, the idle timeout, output credit held while the client does not
// read, invalid channels, a client running past the pending bound, and errors on the error channel.
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createServer, type AgentServer } from '../../../src/server/server.js';
import { newLogger } from '../../../src/shared/logging.js';
import { waitFor } from '../../support/docker.js';
import { fakePortForwardHost } from '../../support/fake-port-forward.js';

let server: AgentServer | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

async function start(opts: { idleTimeoutMs?: number; maxStreamsPerPod?: number } = {}) {
  const { host, sessions } = fakePortForwardHost();
  server = await createServer(host, {
    address: '127.0.0.1',
    port: 0,
    logger: newLogger('silent'),
    streaming: { idleTimeoutMs: opts.idleTimeoutMs },
    portForward: { maxStreamsPerPod: opts.maxStreamsPerPod },
  });
  const open = (query: string, pod = 'web') => {
    const ws = new WebSocket(`ws://127.0.0.1:${server!.port}/portForward/default/${pod}?${query}`, ['v4.channel.k8s.io']);
    const frames: Buffer[] = [];
    ws.on('message', (m: Buffer) => frames.push(Buffer.from(m)));
    const opened = new Promise<void>((resolve, reject) => {
      ws.on('open', () => resolve());
      ws.on('unexpected-response', (_r, res) => {
        reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { code: res.statusCode }));
        ws.terminate();
      });
      ws.on('error', reject);
    });
    opened.catch(() => {});
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    return { ws, frames, opened, closed };
  };
  return { sessions, open };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 101,
    (e: { code: number }) => e.code,
  );

describe('WS /portForward', () => {
  it('counts every forwarded port against the per-pod bound, and gives the room back on close', async () => {
    const { open } = await start({ maxStreamsPerPod: 3 });
    expect(await codeOf(open('port=1&port=2&port=3&port=4').opened)).toBe(429);
    const a = open('port=1&port=2');
    await a.opened;
    expect(await codeOf(open('port=3&port=4').opened)).toBe(429);
    const b = open('port=3');
    await b.opened;
    expect(await codeOf(open('port=5').opened)).toBe(429);
    a.ws.close();
    await a.closed;
    const c = open('port=6&port=7');
    expect(await codeOf(c.opened)).toBe(101);
    expect(await codeOf(open('port=1', 'other').opened)).toBe(404);
  });

  it('closes an idle connection and tears its sessions down', async () => {
    const { open, sessions } = await start({ idleTimeoutMs: 300 });
    const a = open('port=80');
    await a.opened;
    const closed = await a.closed;
    expect(closed.code).toBe(1000);
    expect(closed.reason).toContain('streaming-connection-idle-timeout');
    expect(sessions[0].closed).toBe(true);
  });

  it('holds output credit while the client does not read, and returns it once it does', async () => {
    const { open, sessions } = await start();
    const a = open('port=80');
    await a.opened;
    await waitFor(() => sessions.length === 1 && a.frames.length >= 2, { description: 'prefix frames' });
    a.ws.pause(); // stop reading the socket
    const chunk = Buffer.alloc(64 * 1024, 1);
    const total = 128;
    for (let i = 0; i < total; i++) sessions[0].push(chunk);
    await new Promise((r) => setTimeout(r, 200));
    expect(sessions[0].acked).toBeLessThan(total * chunk.length); // some credit held back
    a.ws.resume();
    await waitFor(() => sessions[0].acked === total * chunk.length, { timeoutMs: 20_000, description: 'all credit returned' });
    await waitFor(() => a.frames.length === 2 + total, { timeoutMs: 20_000, description: 'all frames' });
    a.ws.close();
  });

  it('relays client frames to their port, ignores error-channel frames, closes on a channel past the last', async () => {
    const { open, sessions } = await start();
    const a = open('port=80&port=81');
    await a.opened;
    await waitFor(() => sessions.length === 2, { description: 'two sessions' });
    a.ws.send(Buffer.from('\x00to-80'));
    a.ws.send(Buffer.from('\x02to-81'));
    a.ws.send(Buffer.from('\x01ignored'));
    await waitFor(() => sessions[1].written.length === 1, { description: 'write to 81' });
    expect(sessions.map((s) => Buffer.concat(s.written).toString())).toEqual(['to-80', 'to-81']);
    expect(sessions.map((s) => s.spec.port)).toEqual([80, 81]);
    a.ws.send(Buffer.from('\x04nope'));
    expect((await a.closed).code).toBe(1002);
    expect(sessions.every((s) => s.closed)).toBe(true);
  });

  it('an error ends its port on the error channel; the WebSocket closes once every port ended; a client past the pending bound is cut off', async () => {
    const { open, sessions } = await start();
    const a = open('port=80&port=81');
    await a.opened;
    await waitFor(() => sessions.length === 2, { description: 'two sessions' });
    sessions[1].end('dial tcp 127.0.0.1:81: connect: connection refused');
    await waitFor(() => a.frames.some((f) => f[0] === 3 && f.length > 3), { description: 'error frame' });
    expect(
      a.frames
        .find((f) => f[0] === 3 && f.length > 3)!
        .subarray(1)
        .toString(),
    ).toBe('error forwarding port 81 to pod sb1, uid uid-1: dial tcp 127.0.0.1:81: connect: connection refused');
    sessions[0].refuseWrites = true;
    a.ws.send(Buffer.from('\x00too much'));
    expect((await a.closed).code).toBe(1000);
    expect(
      a.frames
        .find((f) => f[0] === 1 && f.length > 3)!
        .subarray(1)
        .toString(),
    ).toContain('8 MiB waiting');
    expect(sessions[0].closed).toBe(true);
  });
});
