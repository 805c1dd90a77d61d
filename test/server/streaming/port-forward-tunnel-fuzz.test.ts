// Hostile input to the SPDY-over-WebSocket port-forward tunnel (src/server/streaming/port-forward-tunnel.ts
// and spdy-tunnel.ts), as a client with a valid token could send it: arbitrary bytes and malformed
// SPDY/3.1 frames (bad versions, types and lengths, stream id 0, even and repeated ids, DATA for
// unknown streams, RST/GOAWAY/PING/SETTINGS/WINDOW_UPDATE with odd values, corrupt zlib header
// blocks), text messages, a close mid-frame, and a fast-check property over byte sequences. After
// each, it checks that nothing escaped as an uncaught exception (vitest reports those as Unhandled
// Errors), that every pod connection the tunnel opened is closed once the WebSocket is gone, that
// the port-forward limiter's counts came back (the server runs with maxStreamsPerPod 2, so a fresh
// tunnel still gets two pod connections) and that a fresh tunnel still works. It also checks the
// bounds a hostile client must not get past: the inflated size of a header block, the bytes buffered
// for a stream nobody reads, and the replies queued for a client that does not read.
// The tests marked `// Found:` each failed on a defect this file found first; each names the bound that fixed it.
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';
import fc from 'fast-check';
import transport from 'spdy-transport';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { createServer, type AgentServer } from '../../../src/server/server.js';
import { kPortForwardTunnelProtocol } from '../../../src/server/streaming/port-forward-tunnel.js';
import { kMaxInboundWhileHeldBytes, openSpdyTunnel } from '../../../src/server/streaming/spdy-tunnel.js';
import { newLogger } from '../../../src/shared/logging.js';
import { waitFor } from '../../support/docker.js';
import { fakePortForwardHost, type FakeSession } from '../../support/fake-port-forward.js';
import { fuzzParams } from '../../fuzz/fuzz-config.js';
import { openWs, spdyClient } from '../../support/spdy-tunnel-client.js';

/** The server connection's internals this file looks at. */
interface ServerConnection {
  _spdyState: {
    isServer: boolean;
    stream: { map: Record<string, Duplex & { _readableState: { length: number } }> };
    framer: { sync: { chunks: Buffer[] }[]; list: { queue?: { chunks: Buffer[] }[] }[]; _readableState: { length: number } };
  };
}

// Every server-side spdy-transport connection made in this file (the tunnel's), for the bounds tests.
const created: ServerConnection[] = [];
const realCreate = (transport as unknown as { connection: { create(s: unknown, o: { isServer: boolean }): ServerConnection } }).connection
  .create;
vi.spyOn((transport as unknown as { connection: { create: typeof realCreate } }).connection, 'create').mockImplementation(function (
  this: unknown,
  s,
  o,
) {
  const c = realCreate.call(this, s, o);
  if (o.isServer) created.push(c);
  return c;
});

let server: AgentServer | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

/** kMaxPerPod: the port-forward limiter's bound in these tests, so that a leaked count shows as a refused pair. */
const kMaxPerPod = 2;

async function start() {
  const { host, sessions } = fakePortForwardHost();
  server = await createServer(host, {
    address: '127.0.0.1',
    port: 0,
    logger: newLogger('silent'),
    portForward: { maxStreamsPerPod: kMaxPerPod },
  });
  const url = `ws://127.0.0.1:${server.port}/api/v1/namespaces/default/pods/web/portforward`;
  /** raw: a tunnel WebSocket without a SPDY client; `closed` resolves with the close code. */
  const raw = async () => {
    const ws = await openWs(url, [kPortForwardTunnelProtocol]);
    if (!(ws instanceof WebSocket)) throw new Error(`upgrade refused: ${ws.code}`);
    ws.on('error', () => {});
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    return { ws, closed };
  };
  /** dial: a tunnel with a spdy-transport client session over it (as port-forward-tunnel.test.ts). */
  const dial = async () => {
    const { ws, closed } = await raw();
    return { ws, closed, ...spdyClient(ws, closed) };
  };
  /**
   * healthy: a fresh tunnel still serves kMaxPerPod pairs relayed both ways (so every limiter count
   * of earlier tunnels came back), then every pod connection ever opened is closed once it is gone.
   */
  const healthy = async () => {
    const before = sessions.length;
    const t = await dial();
    const pairs: Awaited<ReturnType<typeof t.pair>>[] = [];
    for (let i = 0; i < kMaxPerPod; i++) pairs.push(await t.pair(`h${i}`));
    await waitFor(() => sessions.length === before + kMaxPerPod || pairs.some((p) => p.error.text() !== ''), {
      description: 'pod connections for the fresh tunnel',
    });
    expect(pairs.map((p) => p.error.text())).toEqual(pairs.map(() => ''));
    const mine = sessions.slice(before);
    mine.forEach((s, i) => s.push(Buffer.from(`pong${i}`)));
    await waitFor(() => pairs.every((p, i) => p.data.text() === `pong${i}`), { description: 'pod bytes at the client' });
    t.ws.close();
    await t.closed;
    await waitFor(() => sessions.every((s) => s.closed), { description: 'every pod connection closed once its WebSocket is gone' });
  };
  return { sessions, raw, dial, healthy };
}

// --- raw SPDY/3.1 frames ---------------------------------------------------------------------------

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
/** control: a control frame of `type` (version 3 unless told) with `body`; `length` overrides the 24-bit length. */
function control(type: number, body: Buffer, opts: { flags?: number; version?: number; length?: number } = {}): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8000 | (opts.version ?? 3));
  h.writeUInt16BE(type, 2);
  h.writeUInt8(opts.flags ?? 0, 4);
  h.writeUIntBE(opts.length ?? body.length, 5, 3);
  return Buffer.concat([h, body]);
}
function dataFrame(id: number, body: Buffer, flags = 0): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(id & 0x7fffffff);
  h.writeUInt8(flags, 4);
  h.writeUIntBE(body.length, 5, 3);
  return Buffer.concat([h, body]);
}
/** kvBlock: an uncompressed SPDY/3 header block. */
function kvBlock(headers: Record<string, string>): Buffer {
  const parts = [u32(Object.keys(headers).length)];
  for (const [k, v] of Object.entries(headers))
    parts.push(u32(Buffer.byteLength(k)), Buffer.from(k), u32(Buffer.byteLength(v)), Buffer.from(v));
  return Buffer.concat(parts);
}
const dictionary = (transport as unknown as { protocol: { spdy: { dictionary: Record<number, Buffer> } } }).protocol.spdy.dictionary[3];
/** compressed: the first header block of a session (its own zlib stream, SPDY's dictionary, sync flush). */
const compressed = (block: Buffer) => zlib.deflateSync(block, { dictionary, finishFlush: zlib.constants.Z_SYNC_FLUSH });
/** synStream: a SYN_STREAM with `block` as its (already compressed) header block. */
const synStream = (id: number, block: Buffer, flags = 0, associated = 0) =>
  control(1, Buffer.concat([u32(id), u32(associated), Buffer.from([0, 0]), block]), { flags });
const firstSyn = (id: number, headers: Record<string, string>, flags = 0) => synStream(id, compressed(kvBlock(headers)), flags);

/** The hand-made inputs: each is a list of WebSocket messages (a string is a text message). */
const cases: [string, (Buffer | string)[]][] = [
  ['a control frame of SPDY version 0', [control(6, u32(1), { version: 0 })]],
  ['a control frame of SPDY version 0x7fff', [control(6, u32(1), { version: 0x7fff })]],
  ['a SPDY/2 session (a PING of version 2)', [control(6, u32(1), { version: 2 }), control(6, u32(3), { version: 2 })]],
  ['an unknown control frame type', [control(0x1234, randomBytes(16))]],
  ['a NOOP and an X-FORWARDED frame', [control(5, Buffer.alloc(0)), control(0xf000, Buffer.concat([u32(3), Buffer.from('1.2')]))]],
  ['an X-FORWARDED frame with a host length past its end', [control(0xf000, u32(0xffffffff))]],
  ['a control frame announcing 16 MiB and sending 8 bytes', [control(6, u32(1), { length: 0xffffff })]],
  ['a frame header cut after 3 bytes', [control(6, u32(1)).subarray(0, 3)]],
  ['a SYN_STREAM too short for its fixed fields', [control(1, Buffer.alloc(4))]],
  ['a SYN_STREAM with an empty header block', [control(1, Buffer.concat([u32(1), u32(0), Buffer.alloc(2)]))]],
  ['a SYN_STREAM whose header block is not zlib', [synStream(1, randomBytes(64))]],
  [
    'a SYN_STREAM whose header block is zlib without the SPDY dictionary',
    [synStream(1, zlib.deflateSync(kvBlock({ streamtype: 'data', port: '80' })))],
  ],
  ['a SYN_STREAM whose header block counts 2^32-1 pairs', [synStream(1, compressed(u32(0xffffffff)))]],
  ['a SYN_STREAM whose header lengths run past the block', [synStream(1, compressed(Buffer.concat([u32(1), u32(0x7fffffff)])))]],
  ['a SYN_STREAM with stream id 0', [firstSyn(0, { streamtype: 'data', port: '80', requestid: '1' })]],
  ['a SYN_STREAM with an even (server) stream id', [firstSyn(2, { streamtype: 'data', port: '80', requestid: '1' })]],
  ['a SYN_STREAM with stream id 2^31-1', [firstSyn(0x7fffffff, { streamtype: 'error', port: '80', requestid: '1' })]],
  ['a SYN_STREAM with FIN and UNIDIRECTIONAL', [firstSyn(1, { streamtype: 'data', port: '80', requestid: '1' }, 0x03)]],
  [
    'a SYN_STREAM with an associated stream (a push) and :status',
    [synStream(1, compressed(kvBlock({ ':status': '200', streamtype: 'data', port: '80' })), 0, 7)],
  ],
  ['a SYN_STREAM with an associated stream and no :status', [synStream(1, compressed(kvBlock({ streamtype: 'data', port: '80' })), 0, 7)]],
  ['a SYN_STREAM with NUL-separated repeated headers', [firstSyn(1, { streamtype: 'data\0error', port: '80\u000081', requestid: 'a\0b' })]],
  ['a SYN_STREAM with odd pseudo-headers only', [firstSyn(1, { ':method': 'GET' })]],
  ['a SYN_STREAM with port 0, -1, 080, 65536 and a huge number', [firstSyn(1, { streamtype: 'data', port: '99999999999999999999' })]],
  ['a SYN_REPLY from the client', [control(2, Buffer.concat([u32(1), compressed(kvBlock({ ':status': '200' }))]))]],
  [
    'a HEADERS frame for a stream never opened',
    [control(8, Buffer.concat([u32(1), compressed(kvBlock({ streamtype: 'data', port: '80', requestid: 'x' }))]))],
  ],
  ['a HEADERS frame too short', [control(8, Buffer.alloc(2))]],
  ['DATA for a stream never opened, and for stream 0', [dataFrame(5, Buffer.from('hi')), dataFrame(0, Buffer.from('hi'))]],
  ['DATA with the COMPRESSED flag', [dataFrame(5, Buffer.from('hi'), 0x02)]],
  ['DATA announcing 16 MiB, then the WebSocket closes', [dataFrame(5, Buffer.alloc(0)).fill(0xff, 5, 8), randomBytes(1000)]],
  ['RST_STREAM for stream 0, and too short', [control(3, Buffer.concat([u32(0), u32(1)])), control(3, Buffer.alloc(3))]],
  ['RST_STREAM with an unknown status and extra bytes', [control(3, Buffer.concat([u32(1), u32(0xdeadbeef), randomBytes(20)]))]],
  ['SETTINGS counting 2^29 entries', [control(4, u32(0x20000000))]],
  [
    'SETTINGS with unknown ids, persisted flags and huge values',
    [control(4, Buffer.concat([u32(3), u32(0x00000007), u32(0xffffffff), u32(0x02000004), u32(0), u32(0x00ffffff), u32(7)]))],
  ],
  ['SETTINGS with initial window size 0 and 2^31', [control(4, Buffer.concat([u32(2), u32(7), u32(0), u32(7), u32(0x80000000)]))]],
  [
    'PING too short, and PINGs of every parity',
    [control(6, Buffer.alloc(2)), control(6, u32(1)), control(6, u32(2)), control(6, Buffer.alloc(1000))],
  ],
  ['GOAWAY too short', [control(7, Buffer.alloc(4))]],
  ['GOAWAY with last id 0 and an unknown code', [control(7, Buffer.concat([u32(0), u32(0xffff)]))]],
  [
    'WINDOW_UPDATE on the session by 2^31-1, twice (overflow)',
    [control(9, Buffer.concat([u32(0), u32(0x7fffffff)])), control(9, Buffer.concat([u32(0), u32(0x7fffffff)]))],
  ],
  [
    'WINDOW_UPDATE with a negative delta, and for unknown streams',
    [control(9, Buffer.concat([u32(0), u32(0x80000000)])), control(9, Buffer.concat([u32(9), u32(1)]))],
  ],
  ['WINDOW_UPDATE too short', [control(9, Buffer.alloc(3))]],
  ['a text message', ['not binary']],
  ['an empty binary message, then a frame split byte by byte', [Buffer.alloc(0), ...[...control(6, u32(1))].map((b) => Buffer.from([b]))]],
  ['random bytes', [randomBytes(4096)]],
];

describe('WS .../pods/{pod}/portforward (SPDY/3.1 tunnel) under hostile input', () => {
  it.each(cases)('survives %s and still serves a fresh tunnel', async (_name, messages) => {
    const { raw, healthy } = await start();
    const t = await raw();
    for (const m of messages) t.ws.send(m, { binary: typeof m !== 'string' });
    // A ping/pong through uWS orders this after the messages; the server then has them all.
    await new Promise<void>((resolve) => {
      t.ws.once('pong', () => resolve());
      t.ws.once('close', () => resolve());
      t.ws.ping();
    });
    t.ws.close();
    await t.closed;
    await healthy();
  });

  it('closes every pod connection when the WebSocket closes mid-frame, with pairs open, half-made and duplicated', async () => {
    const { sessions, dial, healthy } = await start();
    const t = await dial();
    await t.pair('a');
    const half = t.open({ streamtype: 'error', port: '80', requestid: 'half' });
    await half.sent;
    t.open({ streamtype: 'data', port: '80', requestid: 'a' });
    await waitFor(() => sessions.length === 1, { description: 'one pod connection' });
    await t.roundTrip();
    t.ws.send(control(6, u32(1)).subarray(0, 5)); // half a PING
    t.ws.terminate();
    await t.closed;
    await waitFor(() => sessions.every((s) => s.closed), { description: 'pod connections closed' });
    await healthy();
  });

  it('refuses streams past the per-session bound and forgets the pairs of reset streams', async () => {
    const { sessions, dial, healthy } = await start();
    const t = await dial();
    // 300 error streams never paired, each reset by the client once answered or refused.
    const opened = [];
    for (let i = 0; i < 300; i++) opened.push(t.open({ streamtype: 'error', port: '80', requestid: `r${i}` }));
    await Promise.all(opened.map((o) => o.sent));
    await t.roundTrip();
    expect(opened.filter((o) => o.answered()).length).toBeLessThanOrEqual(256);
    for (const o of opened) o.stream.destroy();
    await t.roundTrip();
    // The session takes new pairs again (its stream count came back).
    const p = await t.pair('after');
    await waitFor(() => sessions.length === 1, { description: 'a pair after the reset streams' });
    sessions[0].push(Buffer.from('ok'));
    await waitFor(() => p.data.text() === 'ok', { description: 'bytes' });
    t.ws.close();
    await t.closed;
    await healthy();
  });

  it('sends no stream a pod connection after the client GOAWAYs, and closes the pod connections it had', async () => {
    const { sessions, dial } = await start();
    const t = await dial();
    await t.pair('g');
    await waitFor(() => sessions.length === 1, { description: 'pod connection' });
    await t.roundTrip();
    t.ws.send(control(7, Buffer.concat([u32(0), u32(1)]))); // GOAWAY last 0, PROTOCOL_ERROR
    await waitFor(() => sessions[0].closed, { description: 'the pod connection closed with the SPDY session' });
    t.ws.close();
  });

  it('property: arbitrary bytes (raw, or SPDY-shaped) in arbitrary messages never crash it, leak a pod connection or a limiter count', async () => {
    const { raw, dial, sessions, healthy } = await start();
    const frame = fc.oneof(
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
      fc
        .tuple(
          fc.integer({ min: 0, max: 12 }),
          fc.uint8Array({ maxLength: 40 }),
          fc.integer({ min: 0, max: 255 }),
          fc.option(fc.integer({ min: 0, max: 0xffffff }), { nil: undefined }),
        )
        .map(([type, body, flags, length]) =>
          control(type, Buffer.from(body), { flags, length: length === undefined ? undefined : Math.min(length, body.length + 64) }),
        ),
      fc
        .tuple(fc.integer({ min: 0, max: 9 }), fc.uint8Array({ maxLength: 40 }), fc.integer({ min: 0, max: 255 }))
        .map(([id, body, flags]) => dataFrame(id, Buffer.from(body), flags)),
    );
    const input = fc.record({
      withClient: fc.boolean(),
      frames: fc.array(frame, { maxLength: 12 }),
      cuts: fc.array(fc.integer({ min: 1, max: 80 }), { maxLength: 8 }),
      terminate: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(input, async ({ withClient, frames, cuts, terminate }) => {
        let ws: WebSocket;
        let closed: Promise<number>;
        if (withClient) {
          const t = await dial();
          await t.pair('p');
          await waitFor(() => sessions.some((s) => !s.closed), { description: 'pod connection' });
          await t.roundTrip();
          ({ ws, closed } = t);
        } else ({ ws, closed } = await raw());
        const bytes = Buffer.concat(frames);
        let at = 0;
        for (const c of cuts) {
          if (at >= bytes.length) break;
          ws.send(bytes.subarray(at, at + c));
          at += c;
        }
        if (at < bytes.length) ws.send(bytes.subarray(at));
        await new Promise<void>((resolve) => {
          ws.once('pong', () => resolve());
          ws.once('close', () => resolve());
          if (ws.readyState === WebSocket.OPEN) ws.ping();
          else resolve();
        });
        if (terminate) ws.terminate();
        else ws.close();
        await closed;
        await waitFor(() => sessions.every((s) => s.closed), { description: 'pod connections closed after the WebSocket' });
      }),
      { ...fuzzParams(40), endOnFailure: true },
    );
    await healthy();
  }, 20_000);

  // Found: a header block inflated without bound (zlib, about 1000:1): 8 KiB on the wire kept an 8 MiB requestid. Now kMaxHeaderBlockBytes.
  it('refuses a SYN_STREAM whose header block inflates past a bound (here 8 MiB from about 8 KiB)', async () => {
    created.length = 0;
    const { dial } = await start();
    const t = await dial();
    const big = t.open({ streamtype: 'error', port: '80', requestid: 'x'.repeat(8 << 20) });
    await big.sent;
    const ended = await Promise.race([t.roundTrip().then(() => undefined), t.closed]);
    expect(ended).toBe(1002); // the session fails: the WebSocket closes with a protocol error
    // The server must not keep (answer, pair) a stream with such a block: it resets it or ends the session.
    const srv = created.filter((c) => c._spdyState.isServer).at(-1)!;
    const kept = srv._spdyState.stream.map[big.stream.id] as unknown as { headers: Record<string, string> } | undefined;
    expect(kept?.headers.requestid?.length ?? 0).toBeLessThanOrEqual(1 << 20);
    t.ws.close();
  });

  /** unreadStream: a stream of `headers` after `setup`, sent 4 MiB of DATA past its 1 MiB window; the bytes the server holds for it. */
  const unreadStream = async (
    setup: (t: Awaited<ReturnType<Awaited<ReturnType<typeof start>>['dial']>>) => Promise<void>,
    headers: Record<string, string>,
  ) => {
    created.length = 0;
    const { dial } = await start();
    const t = await dial();
    await setup(t);
    const s = t.open(headers);
    await s.sent;
    // The client ignores the window the server gave it (as spdystream does), 4 times over.
    const cs = s.stream._spdyState as unknown as Record<
      'window' | 'sessionWindow',
      { send: { current: number; max: number; limit: number } }
    >;
    for (const w of [cs.window.send, cs.sessionWindow.send]) w.current = w.max = w.limit = Number.MAX_SAFE_INTEGER;
    for (let i = 0; i < 64; i++) s.stream.write(Buffer.alloc(64 << 10, i));
    await new Promise<void>((resolve) => s.stream.write(Buffer.alloc(1), () => resolve()));
    await t.roundTrip();
    const server = created.find((c) => c._spdyState.isServer)!;
    const held = server._spdyState.stream.map[s.stream.id]?._readableState.length ?? 0;
    t.ws.close();
    return held;
  };

  // Found: DATA on a data stream whose error stream never comes was buffered without bound (spdy-transport does not enforce its receive window). Now kMaxStreamBufferBytes.
  it('holds at most the receive window (1 MiB) for a data stream still waiting for its error stream', async () => {
    const held = await unreadStream(async () => {}, { streamtype: 'data', port: '80', requestid: 'lonely' });
    expect(held).toBeLessThanOrEqual(1 << 20);
  });

  // Found: DATA on a second data stream of a request (answered, ended, never read) was buffered without bound. Now dropped, and bounded as above.
  it('holds at most the receive window (1 MiB) for a duplicate data stream', async () => {
    const held = await unreadStream(
      async (t) => {
        await t.pair('dup');
      },
      { streamtype: 'data', port: '80', requestid: 'dup' },
    );
    expect(held).toBeLessThanOrEqual(1 << 20);
  });
});

describe('openSpdyTunnel with a client that does not read', () => {
  // Found: a PING (or any frame the server answers) queued its reply without bound once the WebSocket was backed up. Now kMaxInboundWhileHeldBytes.
  it('does not queue replies without bound for a client sending PINGs but never reading', async () => {
    created.length = 0;
    let sent = 0;
    const errors: Error[] = [];
    const tunnel = openSpdyTunnel(
      {
        send: (b) => {
          sent += b.byteLength;
        },
        bufferedAmount: () => 1 << 30,
      },
      (s) => s.abort(),
      (e) => errors.push(e),
    );
    const conn = created.find((c) => c._spdyState.isServer)!;
    const queued = () => {
      const f = conn._spdyState.framer;
      const chunks = [...f.sync.flatMap((i) => i.chunks), ...f.list.flatMap((i) => (i.queue ?? []).flatMap((q) => q.chunks))];
      return f._readableState.length + chunks.reduce((n, c) => n + c.length, 0);
    };
    // PINGs in 60 KB messages (uWS takes messages of at most 1 MiB), whose answers the client never reads.
    let id = 1;
    let given = 0;
    while (errors.length === 0 && given < kMaxInboundWhileHeldBytes + (2 << 20)) {
      const pings = Buffer.concat(Array.from({ length: 5000 }, () => control(6, u32((id += 2)))));
      tunnel.receive(pings.buffer.slice(pings.byteOffset, pings.byteOffset + pings.length));
      given += pings.length;
      await new Promise((r) => setImmediate(r)); // let the session answer them
    }
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/without reading the answers/)]);
    expect(queued() + sent).toBeLessThanOrEqual(kMaxInboundWhileHeldBytes + (1 << 20));
    tunnel.close();
  });
});
