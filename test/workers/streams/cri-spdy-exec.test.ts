// The SPDY path of src/workers/streams/cri-exec-transport.ts (openSpdyExec) against a spdy-transport server playing
// a remotecommand streaming server (v4.channel.k8s.io over SPDY/3.1, as containerd 1.6's pkg/cri/streaming): the
// order of client-go's remotecommand (tools/remotecommand/v2.go createStreams): every stream opened and answered
// (SYN_REPLY) before the first byte of stdin.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import transport from 'spdy-transport';
import { afterEach, describe, expect, it } from 'vitest';
import { openSpdyExec, type ExecEvents } from '../../../src/workers/streams/cri-exec-transport.js';

interface ServerStream extends Duplex {
  headers: Record<string, string>;
  respond(status: number, headers: Record<string, string>): void;
}

const servers: http.Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

/**
 * A streaming server that answers the streams of an exec (error, stdin, stdout, stderr) only once all
 * four are open, a while later (as a loaded server may), then echoes stdin on stdout until stdin's FIN
 * and ends with a Success Status. `seen` records whether stdin bytes came before every stream was answered.
 */
async function execServer(): Promise<{ url: string; seen: { stdinBeforeReplies: boolean; stdin: string } }> {
  const seen = { stdinBeforeReplies: false, stdin: '' };
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  servers.push(server);
  server.on('upgrade', (_req, socket: Socket) => {
    sockets.push(socket);
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n',
    );
    const conn = (
      transport as unknown as {
        connection: { create(s: Duplex, o: object): { on(e: 'stream', fn: (s: ServerStream) => void): void; start(v: number): void } };
      }
    ).connection.create(socket, { protocol: 'spdy', isServer: true });
    conn.start(3.1);
    const streams = new Map<string, ServerStream>();
    let replied = false;
    conn.on('stream', (stream) => {
      stream.on('error', () => {});
      const type = stream.headers.streamtype!;
      streams.set(type, stream);
      if (type === 'stdin') {
        stream.on('data', (c: Buffer) => {
          if (!replied) seen.stdinBeforeReplies = true;
          seen.stdin += c.toString();
        });
        stream.on('end', () => {
          streams.get('stdout')!.end(seen.stdin);
          streams.get('stderr')!.end();
          streams.get('error')!.end(JSON.stringify({ metadata: {}, status: 'Success' }), () => setTimeout(() => socket.end(), 50));
        });
      }
      if (streams.size === 4) {
        setTimeout(() => {
          for (const s of streams.values()) s.respond(200, {});
          replied = true;
        }, 200);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/exec/tok`, seen };
}

/**
 * A streaming server for a TTY exec without stdin (error, stdout, resize) that, once all three are open,
 * answers `error` and every stream but `unanswered`, writes `tty-out` and a Success Status, and resets
 * `unanswered` without answering it — as containerd 1.6 did to the resize stream of a command that ended at once.
 */
async function ttyServer(unanswered: string): Promise<string> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  servers.push(server);
  server.on('upgrade', (_req, socket: Socket) => {
    sockets.push(socket);
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n',
    );
    const conn = (
      transport as unknown as {
        connection: { create(s: Duplex, o: object): { on(e: 'stream', fn: (s: ServerStream) => void): void; start(v: number): void } };
      }
    ).connection.create(socket, { protocol: 'spdy', isServer: true });
    conn.start(3.1);
    const streams = new Map<string, ServerStream>();
    conn.on('stream', (stream) => {
      stream.on('error', () => {});
      streams.set(stream.headers.streamtype!, stream);
      if (streams.size < 3) return;
      for (const [type, s] of streams) if (type !== unanswered) s.respond(200, {});
      (streams.get(unanswered) as unknown as { abort(): void }).abort();
      if (unanswered !== 'stdout') streams.get('stdout')!.end('tty-out\r\n');
      streams.get('error')!.end(JSON.stringify({ metadata: {}, status: 'Success' }), () => setTimeout(() => socket.end(), 50));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/exec/tok`;
}

describe('openSpdyExec (client-go remotecommand over SPDY)', () => {
  it('keeps a TTY exec whose resize stream the server reset unanswered: the output and the Status still come', async () => {
    let out = '';
    let status = '';
    let ended!: (err?: Error) => void;
    const end = new Promise<Error | undefined>((resolve) => (ended = resolve));
    const events: ExecEvents = { output: (_fd, c) => (out += c.toString()), status: (t) => (status += t), end: (err) => ended(err) };
    const t = await openSpdyExec(await ttyServer('resize'), { stdin: false, stdout: true, stderr: false, tty: true }, events, 10_000);
    try {
      await t.resize(80, 24); // on a stream that is gone: dropped, no error
      expect(await end).toBeUndefined();
      expect(out).toBe('tty-out\r\n');
      expect(JSON.parse(status)).toEqual({ metadata: {}, status: 'Success' });
    } finally {
      t.close();
    }
  });

  it('refuses an exec whose stdout stream the server reset unanswered (ERR_RUNTIME naming the stream)', async () => {
    const events: ExecEvents = { output: () => {}, status: () => {}, end: () => {} };
    const err = await openSpdyExec(
      await ttyServer('stdout'),
      { stdin: false, stdout: true, stderr: false, tty: true },
      events,
      10_000,
    ).then(
      (t) => (t.close(), null),
      (e: unknown) => e as { code?: string; message: string },
    );
    expect(err?.code).toBe('ERR_RUNTIME');
    expect(err?.message).toMatch(/stdout stream/);
  });

  it('writes nothing on stdin before the server answered every stream, then echoes and exits 0', async () => {
    const { url, seen } = await execServer();
    let out = '';
    let status = '';
    let ended!: (err?: Error) => void;
    const end = new Promise<Error | undefined>((resolve) => (ended = resolve));
    const events: ExecEvents = {
      output: (_fd, c) => (out += c.toString()),
      status: (t) => (status += t),
      end: (err) => ended(err),
    };
    const t = await openSpdyExec(url, { stdin: true, stdout: true, stderr: true, tty: false }, events, 10_000);
    try {
      t.writeStdin(Buffer.from('one\ntwo\n'), () => {});
      t.closeStdin();
      expect(await end).toBeUndefined();
      expect(seen.stdinBeforeReplies).toBe(false);
      expect(out).toBe('one\ntwo\n');
      expect(JSON.parse(status)).toEqual({ metadata: {}, status: 'Success' });
    } finally {
      t.close();
    }
  });
});
