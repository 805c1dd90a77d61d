/**
 * A SPDY/3.1 client session on a CRI runtime's streaming server: the transport client-go used for
 * exec, attach and port-forward before WebSockets (k8s.io/apimachinery/pkg/util/httpstream/spdy
 * roundtripper.go: an HTTP request with `Connection: Upgrade`, `Upgrade: SPDY/3.1` and the
 * `X-Stream-Protocol-Version`s offered, answered 101 with the chosen one; then streams opened by
 * the client, each a SYN_STREAM whose headers name its role — `streamtype: error|stdin|stdout|
 * stderr|resize`, or `data`/`error` with `port` and `requestid` for port-forward). Used where the
 * WebSocket protocols a server speaks cannot do what is asked: closing stdin alone on a server
 * without `v5.channel.k8s.io` (containerd 1.6), half-closing a forwarded connection.
 *
 * The SPDY framing, header compression and flow control are spdy-transport's (npm). Two
 * adjustments for Go's spdystream, which is the server: its SYN_REPLY carries an empty header
 * block, where spdy-transport wants `:status` (else it resets the stream) — {@link installBareReplies}
 * reads such a reply as 200; and it neither sends WINDOW_UPDATE nor waits for one, so streams here
 * send without a window (shared/spdy-window.ts, as src/server/streaming/spdy-tunnel.ts does) and
 * send none ({@link noWindowUpdates}). Backpressure: pause()
 * stops reading the connection (every stream of the session; see {@link gated}).
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import transport from 'spdy-transport';
import { AgentError } from '../../shared/errors.js';
import { unlimitSendWindow } from '../../shared/spdy-window.js';
import { realClock } from '../../shared/clock.js';

/** One client stream: a Duplex of its DATA frames; `end()` sends FIN (the half-close), `destroy()` resets it. */
export type SpdyClientStream = Duplex;

/** An open SPDY session on the streaming server. */
export interface SpdySession {
  /** The `X-Stream-Protocol-Version` the server chose (e.g. `v4.channel.k8s.io`, `portforward.k8s.io`). */
  readonly protocol: string;
  /** openStream sends a SYN_STREAM with `headers` (names lower-case) and resolves once it is sent. */
  openStream(headers: Record<string, string>): Promise<SpdyClientStream>;
  /**
   * replied resolves once the server answered `stream` (of this session) with its SYN_REPLY, as
   * client-go's CreateStream waits for the reply (apimachinery httpstream/spdy connection.go,
   * spdystream Stream.WaitTimeout). Rejects with ERR_RUNTIME when the stream is reset, the session
   * ends, or no reply comes within the handshake timeout (milliseconds, openSpdySession's); `name`
   * (e.g. `stdin`) is for the error message. With `resetIsEnd`, a reset before the reply resolves
   * instead (the stream is simply gone; writes to it are dropped): for the resize stream, which
   * containerd 1.6 may reset unanswered once a TTY command that ends at once is over.
   */
  replied(stream: SpdyClientStream, name: string, options?: { resetIsEnd?: boolean }): Promise<void>;
  pause(): void;
  resume(): void;
  /** close ends the session and its connection; `onClose` does not run afterwards. Idempotent. */
  close(): void;
}

interface ClientConnection {
  start(version: number): void;
  request(options: { method: string; path: string; headers: Record<string, string> }, cb: (err: Error | null) => void): SpdyClientStream;
  on(event: string, fn: (...args: unknown[]) => void): void;
  end(): void;
  destroyStreams(err?: Error): void;
}

let patched = false;

/** installBareReplies: a SYN_REPLY header block without `:status` (spdystream's) reads as `:status: 200`. Idempotent, once per thread. */
function installBareReplies(): void {
  if (patched) return;
  type Cb = (err: Error | null, frame?: { headers?: Record<string, unknown> }) => void;
  const proto = Object.getPrototypeOf(transport.protocol.spdy.parser.create({})) as {
    onSynHeadFrame: (type: number, flags: number, body: unknown, cb: Cb) => unknown;
  };
  const onSynHeadFrame = proto.onSynHeadFrame;
  proto.onSynHeadFrame = function (type, flags, body, cb) {
    if (type !== 0x02) return onSynHeadFrame.call(this, type, flags, body, cb);
    return onSynHeadFrame.call(this, type, flags, body, (err, frame) => {
      if (!err && frame?.headers && frame.headers[':status'] === undefined) frame.headers[':status'] = '200';
      cb(err, frame);
    });
  };
  patched = true;
}

/**
 * noWindowUpdates: the receive window of `target` (a spdy-transport stream, or the connection for
 * the session window) never asks for a WINDOW_UPDATE. spdystream does not wait for them, and one
 * in flight when the server closes the connection at the end of an exec (it does so at once, with
 * our frames unread) makes its kernel answer with a reset, which drops the output and the Status
 * still on their way to us. Reaches into the library's state (`_spdyState.window.recv`).
 */
function noWindowUpdates(target: object): void {
  const recv = (target as { _spdyState?: { window?: { recv?: { isDraining(): boolean } } } })._spdyState?.window?.recv;
  if (recv) recv.isDraining = () => false;
}

/**
 * gated: a Duplex over `socket` for spdy-transport, with a pause of our own. spdy-transport pipes
 * its socket into its parser, and the pipe resumes a paused source whenever the parser drains: a
 * plain socket.pause() does not hold. Reading the socket here stops while `pause()` holds (and
 * while the library does not read), whatever the pipe does to the gate.
 */
function gated(socket: Socket): { gate: Duplex; pause(): void; resume(): void } {
  let paused = false;
  const gate = new Duplex({
    read() {
      if (!paused) socket.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      if (socket.destroyed) return callback();
      socket.write(chunk, () => callback());
    },
    final(callback) {
      socket.end();
      callback();
    },
  });
  socket.on('data', (chunk: Buffer) => {
    if (!gate.push(chunk)) socket.pause();
  });
  socket.on('end', () => gate.push(null));
  socket.on('close', () => gate.destroy());
  gate.on('error', () => {}); // the socket's own 'error' reports it
  return {
    gate,
    pause() {
      paused = true;
      socket.pause();
    },
    resume() {
      paused = false;
      socket.resume();
    },
  };
}

/**
 * openSpdySession upgrades a POST to `url` (the streaming server's one-use URL) to SPDY/3.1,
 * offering `protocols` (best first), and resolves with the session. `onClose` runs once when the
 * connection ends (with the error if it failed). Rejects with `ERR_PROTOCOL` when the server
 * answers another status than 101 (its body in the message), `ERR_RUNTIME_UNAVAILABLE` when it
 * cannot be reached. `handshakeTimeoutMs`: milliseconds for the upgrade.
 */
export function openSpdySession(
  url: string,
  protocols: string[],
  onClose: (err?: Error) => void,
  handshakeTimeoutMs = 30_000,
): Promise<SpdySession> {
  installBareReplies();
  const host = new URL(url).host;
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': protocols },
      timeout: handshakeTimeoutMs,
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${handshakeTimeoutMs} ms`)));
    req.on('error', (e) =>
      reject(new AgentError('ERR_RUNTIME_UNAVAILABLE', `cannot reach the streaming server ${host}: ${e.message}`, { cause: e })),
    );
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (body.length < 4096) body += c;
      });
      res.on('end', () =>
        reject(
          new AgentError(
            'ERR_PROTOCOL',
            `the streaming server ${host} refused SPDY (${protocols.join(', ')}): HTTP ${res.statusCode}${body.trim() ? `: ${body.trim()}` : ''}`,
          ),
        ),
      );
    });
    req.on('upgrade', (res, socket: Socket, head: Buffer) => {
      socket.setTimeout(0);
      const protocol = String(res.headers['x-stream-protocol-version'] ?? '');
      if (!protocols.includes(protocol)) {
        socket.destroy();
        reject(
          new AgentError(
            'ERR_PROTOCOL',
            `the streaming server ${host} chose an unknown protocol ${JSON.stringify(protocol)} (offered ${protocols.join(', ')})`,
          ),
        );
        return;
      }
      if (head.length) socket.unshift(head);
      let closed = false;
      const endListeners = new Set<() => void>();
      const end = (err?: Error) => {
        if (closed) return;
        closed = true;
        for (const fn of [...endListeners]) fn();
        onClose(err);
      };
      const { gate, pause, resume } = gated(socket);
      const conn = (transport as unknown as { connection: { create(s: Duplex, o: object): ClientConnection } }).connection.create(gate, {
        protocol: 'spdy',
        isServer: false,
      });
      conn.on('error', (e) => end(new AgentError('ERR_RUNTIME', `the streaming connection failed: ${(e as Error).message}`, { cause: e })));
      socket.on('error', (e) => end(new AgentError('ERR_RUNTIME', `the streaming connection failed: ${e.message}`, { cause: e })));
      socket.on('close', () => end());
      noWindowUpdates(conn);
      conn.start(3.1);
      resolve({
        protocol,
        openStream(headers) {
          return new Promise((resolveStream, rejectStream) => {
            if (closed) return rejectStream(new AgentError('ERR_RUNTIME', 'the streaming connection is closed'));
            const stream = conn.request({ method: 'POST', path: '/', headers }, (err) => {
              if (err)
                rejectStream(
                  new AgentError('ERR_RUNTIME', `cannot open the ${headers.streamtype ?? ''} stream: ${err.message}`, { cause: err }),
                );
              else resolveStream(stream);
            });
            stream.on('error', () => {}); // a reset stream: the session's end says why
            unlimitSendWindow(stream);
            noWindowUpdates(stream);
          });
        },
        replied(stream, name, options) {
          return new Promise((resolveReply, rejectReply) => {
            // Answered already, or reset already (spdy-transport's state: the reply has been read; the stream aborted).
            const state = (stream as { _spdyState?: { needResponse?: boolean; aborted?: boolean } })._spdyState;
            if (state?.needResponse === false) return resolveReply();
            const what = `the ${name} stream`;
            let settled = false;
            const settle = (err?: Error) => {
              if (settled) return;
              settled = true;
              realClock.clearTimeout(timer);
              endListeners.delete(onEnd);
              stream.off('response', onResponse);
              stream.off('close', onReset);
              if (err) rejectReply(err);
              else resolveReply();
            };
            const onResponse = () => settle();
            const onReset = () =>
              settle(
                options?.resetIsEnd ? undefined : new AgentError('ERR_RUNTIME', `the streaming server reset ${what} before answering it`),
              );
            const onEnd = () => settle(new AgentError('ERR_RUNTIME', `the streaming connection closed before ${what} was answered`));
            const timer = realClock.setTimeout(
              () => settle(new AgentError('ERR_RUNTIME', `no answer to ${what} from the streaming server in ${handshakeTimeoutMs} ms`)),
              handshakeTimeoutMs,
            );
            if (closed) return onEnd();
            if (state?.aborted) return onReset();
            endListeners.add(onEnd);
            stream.once('response', onResponse);
            stream.once('close', onReset);
          });
        },
        pause,
        resume,
        close() {
          if (closed) return;
          closed = true;
          for (const fn of [...endListeners]) fn();
          conn.destroyStreams();
          socket.destroy();
        },
      });
    });
    req.end();
  });
}
