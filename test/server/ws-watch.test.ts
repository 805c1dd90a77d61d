// Tests of WS /watch/pods (src/server/ws/watch.ts) over a real uWebSockets.js server and `ws` clients.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { newStatusManager, type StatusManager } from '../../src/main/status/status-manager.js';
import { newWatchCache, type WatchCache } from '../../src/main/watch/watch-cache.js';
import type { AgentHost } from '../../src/server/host/agent-host.js';
import { createServer, type AgentServer } from '../../src/server/server.js';
import { coalesce, kCloseTooSlow } from '../../src/server/ws/watch.js';
import type { WatchEvent } from '../../src/server/host/watch-event.js';
import type { Pod } from '../../src/shared/api.js';
import { newLogger } from '../../src/shared/logging.js';

interface Frame {
  type: string;
  object: Pod & { code?: number; reason?: string };
}

function pod(namespace: string, name: string, labels: Record<string, string> = {}, note = ''): Pod {
  return {
    metadata: { namespace, name, uid: `uid-${namespace}-${name}`, labels, annotations: note ? { note } : {} },
    spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
  };
}

let sm: StatusManager;
let cache: WatchCache;
let server: AgentServer;
let base: string;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  sm = newStatusManager();
  cache = newWatchCache(sm, { historySize: 50 });
  const host: AgentHost = {
    listPods: () => [],
    getPod: () => undefined,
    healthz: () => ({ ok: true, checks: [] }),
    watch: (rv, fn) => cache.watch(rv, fn),
  };
  server = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
  base = `ws://127.0.0.1:${server.port}/watch/pods`;
});
afterEach(() => {
  for (const s of sockets.splice(0)) if (s.readyState !== WebSocket.CONNECTING) s.terminate();
});
afterAll(() => server?.close());

/** A watch client that records every frame. */
function watch(query = ''): {
  ws: WebSocket;
  frames: Frame[];
  until(pred: (f: Frame[]) => boolean, what: string): Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
} {
  const ws = new WebSocket(`${base}${query}`);
  sockets.push(ws);
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Frame);
    for (const w of waiters) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  return {
    ws,
    frames,
    closed,
    until(pred, what) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pred(frames)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; got ${frames.map((f) => f.type).join(',')}`));
        }, 20_000);
        waiters.add(check);
        check();
      });
    },
  };
}

const rv = (f: Frame) => Number(f.object.metadata?.resourceVersion);
const hasBookmark = (fs: Frame[]) => fs.some((f) => f.type === 'BOOKMARK');

describe('WS /watch/pods', () => {
  it('sends ADDED per existing pod, a BOOKMARK, then changes in resourceVersion order with metadata.resourceVersion set', async () => {
    sm.setPodStatus(pod('default', 'a', { app: 'web' }), { phase: 'Pending' });
    sm.setPodStatus(pod('default', 'b'), { phase: 'Pending' });
    sm.setPodStatus(pod('default', 'a', { app: 'web' }), { phase: 'Running' });
    const c = watch();
    await c.until(hasBookmark, 'bookmark');
    expect(c.frames.map((f) => `${f.type} ${f.object.metadata?.name ?? ''}`)).toEqual(['ADDED b', 'ADDED a', 'BOOKMARK ']);
    expect(c.frames[1].object.status?.phase).toBe('Running');
    expect(c.frames[1].object.kind).toBe('Pod');
    expect(rv(c.frames[2])).toBe(sm.resourceVersion());
    sm.setPodStatus(pod('default', 'b'), { phase: 'Running' });
    sm.deletePodStatus('uid-default-a');
    sm.setPodStatus(pod('default', 'c'), { phase: 'Pending' });
    await c.until((fs) => fs.length === 6, 'three changes');
    expect(c.frames.slice(3).map((f) => `${f.type} ${f.object.metadata?.name}`)).toEqual(['MODIFIED b', 'DELETED a', 'ADDED c']);
    const versions = c.frames.slice(2).map(rv);
    expect(versions).toEqual([...versions].sort((x, y) => x - y));
    expect(new Set(versions).size).toBe(versions.length);
  });

  it('resumes from a resourceVersion in the history, replaying only the later changes', async () => {
    const from = sm.resourceVersion();
    sm.setPodStatus(pod('default', 'c'), { phase: 'Running' });
    sm.setPodStatus(pod('default', 'd'), { phase: 'Pending' });
    const c = watch(`?resourceVersion=${from}`);
    await c.until(hasBookmark, 'bookmark');
    expect(c.frames.map((f) => `${f.type} ${f.object.metadata?.name ?? ''}`)).toEqual(['MODIFIED c', 'ADDED d', 'BOOKMARK ']);
    expect(rv(c.frames[0])).toBe(from + 1);
  });

  it('answers a resourceVersion older than the history with one ERROR carrying a 410 Status, then closes', async () => {
    for (let i = 0; i < 60; i++) sm.setPodStatus(pod('churn', 'p'), { phase: 'Running', message: `m${i}` });
    const c = watch('?resourceVersion=1');
    const { code } = await c.closed;
    expect(c.frames).toHaveLength(1);
    expect(c.frames[0].type).toBe('ERROR');
    expect(c.frames[0].object).toMatchObject({ kind: 'Status', status: 'Failure', code: 410, reason: 'Expired' });
    expect(code).toBe(1000);
  });

  it('answers a resourceVersion from the future (an earlier agent run) with 410 too', async () => {
    const c = watch(`?resourceVersion=${sm.resourceVersion() + 1000}`);
    await c.closed;
    expect(c.frames.map((f) => f.object.code)).toEqual([410]);
  });

  it('filters by namespace and labelSelector, for the initial list and for changes', async () => {
    sm.setPodStatus(pod('team', 'x', { app: 'web', tier: 'front' }), { phase: 'Pending' });
    sm.setPodStatus(pod('team', 'y', { app: 'db' }), { phase: 'Pending' });
    const c = watch(`?namespace=team&labelSelector=${encodeURIComponent('app=web')}`);
    await c.until(hasBookmark, 'bookmark');
    sm.setPodStatus(pod('team', 'y', { app: 'db' }), { phase: 'Running' });
    sm.setPodStatus(pod('default', 'z', { app: 'web' }), { phase: 'Running' });
    sm.setPodStatus(pod('team', 'x', { app: 'web', tier: 'front' }), { phase: 'Running' });
    await c.until((fs) => fs.length >= 3, 'the change of x');
    expect(c.frames.map((f) => `${f.type} ${f.object.metadata?.name ?? ''}`)).toEqual(['ADDED x', 'BOOKMARK ', 'MODIFIED x']);
  });

  it('turns a pod leaving or entering the selector into DELETED or ADDED for a filtered client', async () => {
    sm.setPodStatus(pod('move', 'm', { app: 'web' }), { phase: 'Running' });
    const c = watch(`?labelSelector=${encodeURIComponent('app=web')}&namespace=move`);
    await c.until(hasBookmark, 'bookmark');
    sm.setPodStatus(pod('move', 'm', { app: 'db' }), { phase: 'Running' });
    sm.setPodStatus(pod('move', 'm', { app: 'db' }), { phase: 'Failed' });
    sm.setPodStatus(pod('move', 'm', { app: 'web' }), { phase: 'Failed' });
    await c.until((fs) => fs.length >= 4, 'two transitions');
    expect(c.frames.map((f) => `${f.type} ${f.object.metadata?.labels?.app ?? ''}`)).toEqual([
      'ADDED web',
      'BOOKMARK ',
      'DELETED db',
      'ADDED web',
    ]);
  });

  it('refuses a bad labelSelector or resourceVersion with HTTP 400 before the upgrade', async () => {
    for (const query of ['?labelSelector=a%3D%3D%3Db', '?resourceVersion=abc']) {
      const ws = new WebSocket(`${base}${query}`);
      sockets.push(ws);
      const status = await new Promise<number>((resolve) => {
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => resolve(101));
      });
      expect(status).toBe(400);
    }
  });

  it.each([
    ['filtered (per-client sends)', '?namespace=slow'],
    ['unfiltered (pub/sub topic)', ''],
  ])('keeps a fast client current while a slow one is coalesced to the latest state per pod: %s', async (_what, query) => {
    const big = 'x'.repeat(100_000);
    const uids = ['s0', 's1', 's2', 's3'];
    for (const u of uids) sm.setPodStatus(pod('slow', u), { phase: 'Pending' });
    const slow = watch(query);
    const fast = watch(query);
    await Promise.all([slow.until(hasBookmark, 'slow bookmark'), fast.until(hasBookmark, 'fast bookmark')]);
    const initial = fast.frames.length;
    // Stop reading on the slow client: the kernel buffers fill, then uWS's.
    (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const changes = 300;
    // The fast client gets each change (100 kB frames, 30 MB in all) while the slow one is not reading.
    for (let i = 1; i <= changes; i++) {
      sm.setPodStatus(pod('slow', uids[i % uids.length], {}, big), { phase: 'Running', message: `v${i}` });
      await fast.until((fs) => fs.length === initial + i, `change ${i} on the fast client`);
    }
    const lastMessage = (fs: Frame[], name: string) =>
      [...fs].reverse().find((f) => f.object.metadata?.name === name)?.object.status?.message;
    const fastVersions = fast.frames.slice(initial).map(rv);
    expect(fastVersions).toEqual([...fastVersions].sort((x, y) => x - y));
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await slow.until((fs) => uids.every((u, i) => lastMessage(fs, u) === lastMessage(fast.frames, uids[i])), 'the slow client to catch up');
    // Coalesced: fewer frames than changes, still in resourceVersion order, ending in the latest state.
    expect(slow.frames.length).toBeLessThan(initial + changes);
    const slowVersions = slow.frames.slice(initial).map(rv);
    expect(slowVersions).toEqual([...slowVersions].sort((x, y) => x - y));
  });
});

describe('coalesce', () => {
  const ev = (type: WatchEvent['type'], uid: string, resourceVersion: number): WatchEvent => ({
    type,
    uid,
    resourceVersion,
    object: { metadata: { name: `${uid}@${resourceVersion}` } },
  });
  it.each([
    [['ADDED', 'MODIFIED'], ['ADDED@2']],
    [['ADDED', 'DELETED'], []],
    [['MODIFIED', 'MODIFIED'], ['MODIFIED@2']],
    [['MODIFIED', 'DELETED'], ['DELETED@2']],
    [['DELETED', 'ADDED'], ['MODIFIED@2']],
  ] as const)('%j for one pod leaves %j', (types, want) => {
    const pending = new Map<string, WatchEvent>();
    types.forEach((t, i) => coalesce(pending, ev(t, 'p', i + 1)));
    expect([...pending.values()].map((e) => `${e.type}@${e.resourceVersion}`)).toEqual(want);
  });
  it('keeps pending events in resourceVersion order when a pod changes again', () => {
    const pending = new Map<string, WatchEvent>();
    coalesce(pending, ev('MODIFIED', 'a', 1));
    coalesce(pending, ev('MODIFIED', 'b', 2));
    coalesce(pending, ev('MODIFIED', 'a', 3));
    expect([...pending.values()].map((e) => e.resourceVersion)).toEqual([2, 3]);
  });
  it('names the close code for a client that does not read at all', () => {
    expect(kCloseTooSlow).toBe(4429);
  });
});

describe('WS /watch/pods with --token-auth-file', () => {
  it('refuses a missing or unknown token with 401 and accepts the Authorization header or the bearer subprotocol', async () => {
    const { parseTokenFile } = await import('../../src/server/auth/auth.js');
    const auth = parseTokenFile('secret-token,alice,1001,system:masters\n', 'tokens.csv');
    const host: AgentHost = {
      listPods: () => [],
      getPod: () => undefined,
      healthz: () => ({ ok: true, checks: [] }),
      watch: (rv, fn) => cache.watch(rv, fn),
    };
    const secured = await createServer(host, {
      address: '127.0.0.1',
      port: 0,
      logger: newLogger('silent'),
      auth: { tokens: auth, anonymous: false },
    });
    const url = `ws://127.0.0.1:${secured.port}/watch/pods`;
    const outcome = (ws: WebSocket) =>
      new Promise<number>((resolve) => {
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => resolve(101));
      });
    try {
      const none = new WebSocket(url);
      expect(await outcome(none)).toBe(401);
      const wrong = new WebSocket(url, { headers: { Authorization: 'Bearer nope' } });
      expect(await outcome(wrong)).toBe(401);
      const header = new WebSocket(url, { headers: { Authorization: 'Bearer secret-token' } });
      sockets.push(header);
      expect(await outcome(header)).toBe(101);
      const token = Buffer.from('secret-token').toString('base64url');
      const proto = new WebSocket(url, [`base64url.bearer.authorization.k8s.io.${token}`, 'watch.kubelet-ts']);
      sockets.push(proto);
      expect(await outcome(proto)).toBe(101);
      expect(proto.protocol).toBe('watch.kubelet-ts');
    } finally {
      secured.close();
    }
  });

  describe('the bearer subprotocol (base64url.bearer.authorization.k8s.io.)', () => {
    let secured: AgentServer;
    let url: string;
    const b64 = (t: string) => Buffer.from(t).toString('base64url');
    beforeAll(async () => {
      const { parseTokenFile } = await import('../../src/server/auth/auth.js');
      const auth = parseTokenFile(
        'secret-token,alice,1001,system:masters\nviewer-token,viewer,1002,"kubelet-ts:read-only"\npad-token-x,carol,1003,system:masters\n',
        'tokens.csv',
      );
      const host: AgentHost = {
        listPods: () => [],
        getPod: () => undefined,
        healthz: () => ({ ok: true, checks: [] }),
        watch: (rv, fn) => cache.watch(rv, fn),
      };
      secured = await createServer(host, {
        address: '127.0.0.1',
        port: 0,
        logger: newLogger('silent'),
        auth: { tokens: auth, anonymous: false },
      });
      url = `ws://127.0.0.1:${secured.port}/watch/pods`;
    });
    afterAll(() => secured?.close());

    /** Opens a watch offering `protocols`: 101 and the selected protocol, or the refusing status and its body. */
    const attempt = (protocols: string[]) =>
      new Promise<{ status: number; protocol?: string; body?: { kind?: string; code?: number; reason?: string } }>((resolve) => {
        const ws = new WebSocket(url, protocols);
        sockets.push(ws);
        ws.on('unexpected-response', (_req, res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += String(c)));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        });
        ws.on('open', () => resolve({ status: 101, protocol: ws.protocol }));
        ws.on('error', () => resolve({ status: -1 })); // e.g. the handshake selected no subprotocol
      });

    it('accepts a valid token and echoes the other subprotocol, never the token one', async () => {
      expect(await attempt([`base64url.bearer.authorization.k8s.io.${b64('secret-token')}`, 'watch.kubelet-ts'])).toEqual({
        status: 101,
        protocol: 'watch.kubelet-ts',
      });
      expect(await attempt(['v1.watch', `base64url.bearer.authorization.k8s.io.${b64('secret-token')}`])).toEqual({
        status: 101,
        protocol: 'v1.watch',
      });
    });

    it('lets a member of the read-only group watch', async () => {
      const res = await attempt([`base64url.bearer.authorization.k8s.io.${b64('viewer-token')}`, 'watch.kubelet-ts']);
      expect(res.status).toBe(101);
    });

    it('decodes unpadded base64url (a padded form is refused: auth.test.ts; `=` is no subprotocol character anyway)', async () => {
      expect(b64('pad-token-x')).not.toContain('=');
      expect((await attempt([`base64url.bearer.authorization.k8s.io.${b64('pad-token-x')}`, 'watch.kubelet-ts'])).status).toBe(101);
    });

    it.each([
      ['an unknown token', [`base64url.bearer.authorization.k8s.io.${b64('nope')}`, 'watch.kubelet-ts']],
      ['a token that is not base64url', ['base64url.bearer.authorization.k8s.io.c2VjcmV0LXRva2Vu!', 'watch.kubelet-ts']],
      [
        'two bearer subprotocols',
        [
          `base64url.bearer.authorization.k8s.io.${b64('other')}`,
          `base64url.bearer.authorization.k8s.io.${b64('secret-token')}`,
          'watch.kubelet-ts',
        ],
      ],
      ['a valid token offered without another subprotocol', [`base64url.bearer.authorization.k8s.io.${b64('secret-token')}`]],
      ['no token at all', ['watch.kubelet-ts']],
    ])('refuses %s with a 401 Status before the upgrade', async (_what, protocols) => {
      const res = await attempt(protocols);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
    });
  });
});
