// The SPDY path of src/workers/streams/cri-exec-transport.ts (openSpdyExec) against a spdy-transport server playing
// a remotecommand streaming server (v4.channel.k8s.io over SPDY/3.1, as containerd 1.6's pkg/cri/streaming): the
// order of client-go's remotecommand (tools/remotecommand/v2.go createStreams): every stream opened and answered
// (SYN_REPLY) before the first byte of stdin.
import { afterEach, describe, expect, it } from 'vitest';
import { openSpdyExec, type ExecEvents } from '../../../src/workers/streams/cri-exec-transport.js';
import { startSpdyServer, type SpdyServerStream } from '../../support/spdy-server.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** serve: a v4.channel.k8s.io streaming server (test/support/spdy-server.ts) closed after the test; resolves its exec URL. */
async function serve(onStream: Parameters<typeof startSpdyServer>[1]): Promise<string> {
  const { url, close } = await startSpdyServer('v4.channel.k8s.io', onStream);
  closers.push(close);
  return `${url}/exec/tok`;
}

/**
 * A streaming server that answers the streams of an exec (error, stdin, stdout, stderr) only once all
 * four are open, a while later (as a loaded server may), then echoes stdin on stdout until stdin's FIN
 * and ends with a Success Status. `seen` records whether stdin bytes came before every stream was answered.
 */
async function execServer(): Promise<{ url: string; seen: { stdinBeforeReplies: boolean; stdin: string } }> {
  const seen = { stdinBeforeReplies: false, stdin: '' };
  const streams = new Map<string, SpdyServerStream>();
  let replied = false;
  const url = await serve((stream, { socket }) => {
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
  return { url, seen };
}

/**
 * A streaming server for a TTY exec without stdin (error, stdout, resize) that, once all three are open,
 * answers every stream but `unanswered`, writes `tty-out` (unless stdout is the one) and a Success Status,
 * and resets `unanswered` without answering it — as containerd 1.6 did to the resize stream of a command
 * that ended at once.
 */
function ttyServer(unanswered: string): Promise<string> {
  const streams = new Map<string, SpdyServerStream>();
  return serve((stream, { socket }) => {
    streams.set(stream.headers.streamtype!, stream);
    if (streams.size < 3) return;
    for (const [type, s] of streams) if (type !== unanswered) s.respond(200, {});
    streams.get(unanswered)!.abort();
    if (unanswered !== 'stdout') streams.get('stdout')!.end('tty-out\r\n');
    streams.get('error')!.end(JSON.stringify({ metadata: {}, status: 'Success' }), () => setTimeout(() => socket.end(), 50));
  });
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
