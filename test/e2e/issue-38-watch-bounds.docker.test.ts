// Regression tests of issue 38, finding 6 (unbounded watchers), against the real agent: the watches of
// one user are bounded (the N+1-th is 429 TooManyRequests with Retry-After, while another user still
// gets one), over WS /watch/pods and the API's ?watch=true together; and a watcher that does not read
// is closed once what it has pending passes the bound, and resumes from its last resourceVersion
// (or gets 410 and lists again) instead of the agent holding a growing copy for it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import type { Status } from '../../src/shared/api.js';
import { useTestNodes, type TestNode } from '../support/agent.js';
import { waitFor } from '../support/docker.js';

const kImage = 'kubelet-ts/busybox:1.35';

interface Frame {
  type: string;
  object: { metadata?: { name?: string; resourceVersion?: string }; code?: number };
}

/** A WS watch client that records its frames; `pause()` stops reading from the socket. */
function wsWatch(node: TestNode, token: string, query = '') {
  const ws = new WebSocket(`ws://127.0.0.1:${node.agent.port}/watch/pods${query}`, { headers: { Authorization: `Bearer ${token}` } });
  const frames: Frame[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
  const opened = new Promise<{ status: number; body: string; retryAfter?: string }>((resolve) => {
    ws.on('open', () => resolve({ status: 101, body: '' }));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res
        .on('data', (c: Buffer) => (body += String(c)))
        .on('end', () => resolve({ status: res.statusCode ?? 0, body, retryAfter: String(res.headers['retry-after'] ?? '') }));
    });
    ws.on('error', () => undefined);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const socket = () => (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  return { ws, frames, opened, closed, pause: () => socket().pause(), resume: () => socket().resume() };
}

/** GET of the API's chunked watch; the response is handed over unread. */
function httpWatch(node: TestNode, token: string, query = ''): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: node.agent.port,
        path: `/api/v1/pods?watch=true&allowWatchBookmarks=true${query}`,
        headers: { Authorization: `Bearer ${token}` },
      },
      resolve,
    );
    req.on('error', reject).end();
  });
}

const bigPod = (name: string, note: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { test: 'issue-38-watch-bounds' }, annotations: { note } },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: kImage, command: ['sleep', '3600'] }] },
  });

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 6: bounded watchers', () => {
  const start = useTestNodes();
  let dir: string | undefined;
  const clients: WebSocket[] = [];
  const responses: IncomingMessage[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.terminate();
    for (const r of responses.splice(0)) r.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function nodeWithUsers(overrides: Parameters<typeof start>[0] = {}) {
    dir = await mkdtemp(join(tmpdir(), 'kts-watch-bounds-'));
    const tokens = join(dir, 'tokens.csv');
    // Both users may read (the built-in binding of the group kubelet-ts:read-only: view and the kubelet's read paths).
    await writeFile(
      tokens,
      'alice-token-0123456789,alice,1001,kubelet-ts:read-only\nbob-token-0123456789,bob,1002,kubelet-ts:read-only\n',
      { mode: 0o600 },
    );
    return start({ tokenAuthFile: tokens, ...overrides });
  }

  it('the N+1-th watch of one user is refused with 429 TooManyRequests and Retry-After, WS and HTTP alike, while another user still gets one; a closed watch gives its place back', async () => {
    const node = await nodeWithUsers({ maxWatchesPerUser: 3 });
    const alice = [wsWatch(node, 'alice-token-0123456789'), wsWatch(node, 'alice-token-0123456789')];
    clients.push(...alice.map((c) => c.ws));
    for (const c of alice) expect((await c.opened).status).toBe(101);
    const third = await httpWatch(node, 'alice-token-0123456789');
    responses.push(third);
    expect(third.statusCode).toBe(200);

    const refused = wsWatch(node, 'alice-token-0123456789');
    clients.push(refused.ws);
    const answer = await refused.opened;
    expect(answer.status).toBe(429);
    expect(answer.retryAfter).toBe('1');
    const status = JSON.parse(answer.body) as Status;
    expect(status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'TooManyRequests',
      code: 429,
      details: { retryAfterSeconds: 1 },
    });
    expect(status.message).toContain('"alice"');
    const refusedHttp = await httpWatch(node, 'alice-token-0123456789');
    responses.push(refusedHttp);
    expect(refusedHttp.statusCode).toBe(429);
    expect(refusedHttp.headers['retry-after']).toBe('1');

    const bob = wsWatch(node, 'bob-token-0123456789');
    clients.push(bob.ws);
    expect((await bob.opened).status).toBe(101);
    const bobHttp = await httpWatch(node, 'bob-token-0123456789');
    responses.push(bobHttp);
    expect(bobHttp.statusCode).toBe(200);

    // A plain list is no watch: never refused for it.
    expect((await node.api('/api/v1/pods', { headers: { Authorization: 'Bearer alice-token-0123456789' } })).status).toBe(200);

    alice[0].ws.close();
    await alice[0].closed;
    const again = await waitFor(
      async () => {
        const c = wsWatch(node, 'alice-token-0123456789');
        clients.push(c.ws);
        const a = await c.opened;
        return a.status === 101 ? a : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, description: 'a watch of alice after one closed' },
    );
    expect(again.status).toBe(101);
    expect((await node.api('/healthz')).status).toBe(200);
  });

  it('the node-wide bound refuses a watch of any user once it is reached', async () => {
    const node = await nodeWithUsers({ maxWatchesPerUser: 5, maxWatches: 2 });
    const a = wsWatch(node, 'alice-token-0123456789');
    const b = wsWatch(node, 'bob-token-0123456789');
    clients.push(a.ws, b.ws);
    expect((await a.opened).status).toBe(101);
    expect((await b.opened).status).toBe(101);
    const c = wsWatch(node, 'bob-token-0123456789');
    clients.push(c.ws);
    expect((await c.opened).status).toBe(429);
  });

  // 20 pods of 200 kB each, every change a 200 kB frame: some 12 MB of changes while the watcher does
  // not read, past the loopback socket's buffers and the 2 MiB bound, below the former 16 MiB one.
  const postBigPods = async (node: TestNode, prefix: string, n: number) => {
    const note = 'n'.repeat(200_000);
    for (let i = 0; i < n; i++) {
      const res = await node.api('/pods', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: bigPod(`${prefix}-${i}`, note),
      });
      expect(res.status).toBe(201);
    }
  };

  it('WS: a watcher that does not read is closed with 4429 once its pending data passes the bound, and resumes from its last resourceVersion', async () => {
    const node = await nodeWithUsers({ runtime: 'fake' });
    const slow = wsWatch(node, node.adminToken());
    clients.push(slow.ws);
    await waitFor(async () => (slow.frames.some((f) => f.type === 'BOOKMARK') ? true : undefined), {
      timeoutMs: 10_000,
      description: 'BOOKMARK',
    });
    slow.pause();
    const n = 20;
    await postBigPods(node, 'ws', n);
    await waitFor(async () => (node.warnings.some((w) => w.msg === 'Closing a watch client that does not read') ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: 'the agent closing the watcher',
    });
    slow.resume();
    const closed = await slow.closed;
    // 4429 with its reason when the client takes the close frame within the agent's grace (5 s),
    // else its socket was dropped (1006): either way the watch is over and it resumes.
    expect([4429, 1006]).toContain(closed.code);
    if (closed.code === 4429) expect(closed.reason).toContain('resourceVersion');
    const seen = new Set(slow.frames.map((f) => f.object.metadata?.name));
    const lastRv = [...slow.frames].reverse().find((f) => f.object.metadata?.resourceVersion)?.object.metadata?.resourceVersion;
    expect(lastRv).toBeDefined();
    // Resume: every pod appears (the changes after lastRv), or the watch says 410 and the client lists again.
    const resumed = wsWatch(node, node.adminToken(), `?resourceVersion=${lastRv}`);
    clients.push(resumed.ws);
    expect((await resumed.opened).status).toBe(101);
    const outcome = await waitFor(
      async () => {
        if (resumed.frames.some((f) => f.type === 'ERROR' && f.object.code === 410)) return 'gone';
        for (const f of resumed.frames) seen.add(f.object.metadata?.name);
        return Array.from({ length: n }, (_, i) => `ws-${i}`).every((p) => seen.has(p)) ? 'resumed' : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, description: 'every pod after the resume' },
    );
    if (outcome === 'gone') expect((await node.pods()).filter((p) => p.metadata?.name?.startsWith('ws-'))).toHaveLength(n);
    expect((await node.api('/healthz')).status).toBe(200);
  });

  it('HTTP ?watch=true: a watcher that does not read is ended once its pending data passes the bound', async () => {
    const node = await nodeWithUsers({ runtime: 'fake' });
    const res = await httpWatch(node, node.adminToken());
    responses.push(res);
    expect(res.statusCode).toBe(200);
    res.pause();
    await postBigPods(node, 'http', 20);
    // Let the agent see the pods run (more changes), then read: the stream ends on its own.
    await waitFor(
      async () =>
        (await node.pods()).filter((p) => p.metadata?.name?.startsWith('http-') && p.status?.phase === 'Running').length === 20
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 250, description: 'pods running' },
    );
    let bytes = 0;
    res.on('data', (c: Buffer) => (bytes += c.length));
    res.resume();
    await new Promise<void>((resolve) => res.on('end', resolve));
    expect(bytes).toBeGreaterThan(0);
    expect((await node.api('/healthz')).status).toBe(200);
  });
});
