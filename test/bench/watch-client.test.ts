// bench/watch-client.ts: the density benches' watch client decodes the agent's watch frames on a
// thread of its own, so the agent's main-thread and process CPU figures leave the bench's own
// decoding out (2026-12-08: it was about 0.2 ms of the main thread's 2.6–3.2 ms per pod start). It
// must still give the bench every time it read before: accepted (first ADDED), first Running,
// removed (DELETED), the name → UID map, and whole frames to an onFrame listener.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { BroadcastChannel } from 'node:worker_threads';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { startWatchClient, type WatchClient } from '../../bench/watch-client.js';
import { agentCpuMs, formatThreadCpu } from '../../bench/thread-cpu.js';
import { kBenchWatchRole, type WatchFrame } from '../../bench/watch-frames.js';
import { kThreadRolesChannel } from '../../src/workers/thread-roles.js';

const pod = (uid: string, phase: string, ready: boolean) => ({
  metadata: { uid, name: `p-${uid}` },
  status: { phase, containerStatuses: [{ name: 'main', ready }] },
});

let server: WebSocketServer | undefined;
let client: WatchClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A loopback `/watch/pods` server; resolves with its port and the first connection. */
async function serve(): Promise<{ port: number; conn: Promise<WebSocket> }> {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  const conn = once(server, 'connection').then(([ws]) => ws as WebSocket);
  return { port: (server.address() as AddressInfo).port, conn };
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(ok()).toBe(true);
};

describe('startWatchClient', () => {
  it("records accepted, first Running and removed from the frames, and announces its thread as the bench's", async () => {
    const roles: { role: string; tid: number }[] = [];
    const channel = new BroadcastChannel(kThreadRolesChannel);
    channel.onmessage = (e) => roles.push((e as { data: { role: string; tid: number } }).data);
    try {
      const { port, conn } = await serve();
      client = await startWatchClient(port);
      const ws = await conn;
      const send = (type: string, object: unknown) => ws.send(JSON.stringify({ type, object }));
      send('ADDED', pod('a', 'Pending', false));
      send('MODIFIED', pod('a', 'Running', false));
      send('MODIFIED', pod('a', 'Running', true));
      send('ADDED', pod('b', 'Pending', false));
      send('DELETED', pod('a', 'Running', true));
      const { times } = client;
      await until(() => times.removed.has('a') && times.accepted.has('b'));
      expect([...times.accepted.keys()]).toEqual(['a', 'b']);
      expect([...times.running.keys()]).toEqual(['a']); // Running only once every container is ready
      expect(times.byName.get('p-a')).toBe('a');
      expect(times.running.get('a')!).toBeGreaterThanOrEqual(times.accepted.get('a')!);
      // In this thread's performance.now() terms: not in the future.
      expect(times.running.get('a')!).toBeLessThanOrEqual(performance.now());
      await until(() => roles.some((r) => r.role === kBenchWatchRole));
      const announced = roles.find((r) => r.role === kBenchWatchRole)!;
      expect(announced.tid).not.toBe(process.pid);
    } finally {
      channel.close();
    }
  });

  it('hands whole frames to onFrame listeners only while one is subscribed', async () => {
    const { port, conn } = await serve();
    client = await startWatchClient(port);
    const ws = await conn;
    const seen: WatchFrame[] = [];
    const off = client.onFrame((frame) => seen.push(frame));
    ws.send(JSON.stringify({ type: 'ADDED', object: pod('c', 'Pending', false) }));
    await until(() => seen.length === 1);
    expect(seen[0]).toEqual({ type: 'ADDED', object: pod('c', 'Pending', false) });
    off();
    ws.send(JSON.stringify({ type: 'ADDED', object: pod('d', 'Pending', false) }));
    await until(() => client!.times.accepted.has('d'));
    expect(seen).toHaveLength(1);
  });
});

describe('agentCpuMs', () => {
  it("leaves the bench's watch client out of the process's CPU, and formatThreadCpu says it is not counted", () => {
    const byKind = { main: 3, sync: 7, [kBenchWatchRole]: 0.5 };
    expect(agentCpuMs(12, byKind)).toBe(11.5);
    expect(agentCpuMs(12, { main: 3 })).toBe(12);
    expect(formatThreadCpu(byKind)).toBe("main 3.0 · sync 7.0 · bench-watch 0.5 (the bench's, not counted)");
  });
});
