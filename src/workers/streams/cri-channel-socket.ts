/**
 * A client of the Kubernetes channel WebSocket protocols on a CRI runtime's streaming server (the
 * one-use URL that Exec and Attach answer): what client-go's `tools/remotecommand/websocket.go`
 * speaks, as the server side of
 * `staging/src/k8s.io/apimachinery/pkg/util/httpstream/wsstream/conn.go` reads it. Every binary
 * message is one channel's bytes: its first byte is the channel number, the rest the payload
 * (`*.channel.k8s.io`; the base64 variants are never offered). Used by cri-exec-transport.ts.
 *
 * Backpressure: `pause()`/`resume()` stop and restart reading the socket (ws's own pause); a
 * `send` calls back once the bytes went to the socket.
 */
import WebSocket from 'ws';
import { realClock, type Clock } from '../../shared/clock.js';
import { AgentError } from '../../shared/errors.js';

/** The wsstream close channel of `v5.channel.k8s.io`: `[255, n]` closes the client's channel n (stdin). */
export const kCloseChannel = 255;

/** Callbacks of a {@link ChannelSocket}; none runs after `close()`. */
export interface ChannelSocketHandlers {
  /** One message of channel `channel` (its payload, the channel byte removed; may be empty). */
  onMessage(channel: number, payload: Buffer): void;
  /** The socket closed (once): `err` when it failed rather than closed. */
  onClose(err?: Error): void;
}

/** An open channel WebSocket. */
export interface ChannelSocket {
  /** The sub-protocol the server chose (e.g. `v4.channel.k8s.io`). */
  readonly protocol: string;
  /** send writes `payload` on `channel`; `done` runs once the socket took it (or it was dropped: the socket is gone). */
  send(channel: number, payload: Buffer, done?: () => void): void;
  pause(): void;
  resume(): void;
  /** close ends the socket (a normal closure); no handler runs afterwards. Idempotent. */
  close(): void;
}

/** toWebSocketUrl: `http://host:port/exec/<token>` → `ws://…` (and https → wss), keeping the path and query. */
export function toWebSocketUrl(url: string): string {
  return url.replace(/^http(s?):\/\//, 'ws$1://');
}

/**
 * openChannelSocket connects to `url` (http or ws scheme) offering `protocols` (the server's
 * preference order is irrelevant: wsstream takes the first offered one it supports) and resolves
 * once the server accepted one. Rejects with `ERR_PROTOCOL` when the server answers the upgrade
 * with an HTTP status (`statusCode` on the error: wsstream answers 400 when it supports none of
 * the protocols), `ERR_RUNTIME_UNAVAILABLE` when the connection fails. The URL is one-use: a
 * refused handshake has spent it. `handshakeTimeoutMs`: milliseconds for the upgrade (ws's own timer);
 * `clock` (default realClock) bounds the wait for the server's answer to our close (5 s).
 */
export function openChannelSocket(
  url: string,
  protocols: string[],
  handlers: ChannelSocketHandlers,
  handshakeTimeoutMs = 30_000,
  clock: Clock = realClock,
): Promise<ChannelSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(toWebSocketUrl(url), protocols, {
      perMessageDeflate: false,
      handshakeTimeout: handshakeTimeoutMs,
      maxPayload: 0,
    });
    let open = false;
    let closed = false;
    let failure: Error | undefined;
    let refused = false;
    ws.on('unexpected-response', (_req, res) => {
      refused = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (body.length < 4096) body += c;
      });
      res.on('end', () => {
        const err = new AgentError(
          'ERR_PROTOCOL',
          `the streaming server ${new URL(url).host} refused the WebSocket (${protocols.join(', ')}): HTTP ${res.statusCode}${body.trim() ? `: ${body.trim()}` : ''}`,
        );
        reject(Object.assign(err, { statusCode: res.statusCode }));
        ws.terminate();
      });
      res.on('error', (e) =>
        reject(new AgentError('ERR_PROTOCOL', `the streaming server ${new URL(url).host}: ${e.message}`, { cause: e })),
      );
    });
    ws.on('error', (e) => {
      if (refused) return; // the refusal's status rejects
      if (!open)
        reject(
          new AgentError('ERR_RUNTIME_UNAVAILABLE', `cannot reach the streaming server ${new URL(url).host}: ${e.message}`, { cause: e }),
        );
      else failure ??= e;
    });
    ws.on('open', () => {
      open = true;
      resolve(socket);
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (closed || !isBinary || data.length === 0) return;
      handlers.onMessage(data[0]!, data.subarray(1));
    });
    ws.on('close', (code, reason) => {
      if (closed || !open) return;
      closed = true;
      const abnormal = code !== 1000 && code !== 1005 && code !== 1006;
      if (failure)
        handlers.onClose(new AgentError('ERR_RUNTIME', `the streaming connection failed: ${failure.message}`, { cause: failure }));
      else if (abnormal)
        handlers.onClose(
          new AgentError(
            'ERR_RUNTIME',
            `the streaming server closed the connection: ${code}${reason.length ? ` ${reason.toString()}` : ''}`,
          ),
        );
      else handlers.onClose();
    });
    const socket: ChannelSocket = {
      get protocol() {
        return ws.protocol;
      },
      send(channel, payload, done) {
        if (closed || ws.readyState !== WebSocket.OPEN) {
          done?.();
          return;
        }
        const frame = Buffer.allocUnsafe(payload.length + 1);
        frame[0] = channel;
        payload.copy(frame, 1);
        ws.send(frame, { binary: true }, () => done?.());
      },
      pause: () => {
        if (!closed && ws.readyState === WebSocket.OPEN) ws.pause();
      },
      resume: () => {
        if (!closed && ws.readyState === WebSocket.OPEN) ws.resume();
      },
      close() {
        if (closed) return;
        closed = true;
        if (ws.readyState === WebSocket.OPEN) {
          ws.close(1000);
          // A server that never answers the close: do not keep the socket past a short while.
          clock.setTimeout(() => ws.terminate(), 5000);
        } else ws.terminate();
      },
    };
  });
}
