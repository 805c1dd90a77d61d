/**
 * A SPDY/3.1 server session carried in the binary messages of a WebSocket: the far end of
 * client-go's SPDY-over-WebSocket tunnel (k8s.io/client-go/tools/portforward tunneling_dialer.go
 * and tunneling_connection.go; the apiserver's end is apiserver/pkg/util/proxy streamtunnel.go).
 * Each WebSocket binary message is a run of bytes of one SPDY byte stream, in order, with no
 * framing of its own; SPDY frames may span messages. The SPDY framing, header compression, PING,
 * SETTINGS and per-stream and session flow control are spdy-transport's (npm), the library
 * node-spdy is built on; this module only joins it to a WebSocket.
 *
 * One adjustment to the library: spdy-transport reads SPDY as the HTTP layering of the SPDY/3
 * draft and refuses a SYN_STREAM without `:method` and `:path`; Kubernetes' streams (Go's
 * moby/spdystream) are raw SPDY streams whose header block is only their own headers
 * (`streamtype`, `port`, `requestid`). {@link installRawStreamHeaders} gives such a block the two
 * pseudo-headers the library wants (`:method POST`, `:path /`) before the library checks them; a
 * block that has them is untouched. It patches the library's SPDY parser once per process;
 * nothing else in the agent uses spdy-transport.
 *
 * A second one: Kubernetes' SPDY stack implements no flow control. spdystream never sends
 * WINDOW_UPDATE (nor waits for one), so a sender that keeps to SPDY's 64 KiB stream window stalls
 * for good after 64 KiB (kubectl port-forward of a larger answer hung so before this). The
 * tunnel's streams therefore send without a window, as the kubelet's own SPDY server does
 * (shared/spdy-window.ts unlimitSendWindow); the WebSocket's TCP connection is the flow control, as upstream.
 *
 * Bounds against a hostile client (found by test/server/streaming/port-forward-tunnel-fuzz.test.ts):
 * a header block may inflate to {@link kMaxHeaderBlockBytes} (else the session fails), a stream may
 * hold {@link kMaxStreamBufferBytes} unread (else it is reset), and a client may send
 * {@link kMaxInboundWhileHeldBytes} while it leaves the session's answers unread (else the session
 * fails); the caller bounds the number of streams.
 *
 * Backpressure, server → client: a write into the session completes once the WebSocket took the
 * bytes without backpressure (or on its next drain), so a slow client holds back spdy-transport,
 * whose stream writes then hold back their writers. Client → server: the library's receive
 * window (1 MiB) is returned as a stream's data is read; the reader reads at once.
 */
import { Duplex } from 'node:stream';
import transport, { type SpdyConnection, type SpdyStream } from 'spdy-transport';
import { unlimitSendWindow } from '../../shared/spdy-window.js';

export type { SpdyStream } from 'spdy-transport';

/** kTunnelHighWaterBytes: buffered WebSocket bytes above which the session's writes wait for drain. */
const kTunnelHighWaterBytes = 256 * 1024;
/** kMaxHeaderBlockBytes: the most a stream's header block may inflate to (kubectl's are under 100 bytes). */
export const kMaxHeaderBlockBytes = 64 * 1024;
/**
 * kMaxStreamBufferBytes: client bytes a stream may hold unread (its reader not attached yet, or
 * a stream nobody reads); past it the stream is reset with FLOW_CONTROL_ERROR. spdy-transport
 * does not enforce its own receive window (1 MiB), and Kubernetes' clients do not keep to one.
 */
export const kMaxStreamBufferBytes = 1024 * 1024;
/**
 * kMaxInboundWhileHeldBytes: bytes a client may send while the session's output waits for it to
 * read (each PING or bad frame is answered, and the answers queue); past it the session fails.
 */
export const kMaxInboundWhileHeldBytes = 8 * 1024 * 1024;

let patched = false;

/**
 * installRawStreamHeaders patches spdy-transport's SPDY parser (idempotent) so that a header block
 * without `:method` (a raw stream's) reads as one with `:method: POST` and `:path: /`; see the
 * module comment.
 */
function installRawStreamHeaders(): void {
  if (patched) return;
  const proto = Object.getPrototypeOf(transport.protocol.spdy.parser.create({})) as {
    parseKVs: (buffer: unknown, cb: (err: Error | null, h?: Record<string, unknown>) => void) => void;
  };
  const parseKVs = proto.parseKVs;
  proto.parseKVs = function (this: { decompress?: { stream?: NodeJS.EventEmitter & { destroy(): void } } }, buffer, callback) {
    // A header block is zlib-compressed: a few KiB on the wire may inflate to gigabytes. Past
    // kMaxHeaderBlockBytes the inflater is stopped and the session fails (the caller closes it).
    const inflate = this.decompress?.stream;
    let inflated = 0;
    let failed = false;
    const count = (chunk: Buffer) => {
      inflated += chunk.length;
      if (failed || inflated <= kMaxHeaderBlockBytes) return;
      failed = true;
      inflate?.removeListener('data', count);
      inflate?.on('error', () => {}); // destroyed on purpose; the session fails below
      inflate?.destroy();
      callback(new Error(`a SPDY header block inflates past ${kMaxHeaderBlockBytes} bytes`));
    };
    inflate?.on('data', count);
    return parseKVs.call(this, buffer, (err, headers) => {
      inflate?.removeListener('data', count);
      if (failed) return;
      if (!err && headers && headers[':method'] === undefined && headers[':path'] === undefined) {
        headers[':method'] = 'POST';
        headers[':path'] = '/';
      }
      callback(err, headers);
    });
  };
  patched = true;
}

/** boundUnreadBytes: `stream` is reset (FLOW_CONTROL_ERROR) once more than kMaxStreamBufferBytes of its data wait unread. */
function boundUnreadBytes(stream: SpdyStream): void {
  const push = stream.push.bind(stream);
  stream.push = (chunk: unknown, encoding?: BufferEncoding) => {
    const more = push(chunk, encoding);
    if (stream.readableLength > kMaxStreamBufferBytes) stream.abort('FLOW_CONTROL_ERROR');
    return more;
  };
}

/** What a tunnel needs of its WebSocket. */
export interface TunnelSocket {
  /** send writes `bytes` as one binary message (it is called outside uWS callbacks: the implementation corks). */
  send(bytes: Uint8Array): void;
  /** bufferedAmount: bytes the WebSocket holds unsent. */
  bufferedAmount(): number;
}

/** SpdyTunnel: the server end of one tunnel; the caller feeds it the WebSocket's events. */
export interface SpdyTunnel {
  /** receive passes one binary message's bytes (copied: uWS reuses the buffer after the callback); the session reads them on the next turn. */
  receive(message: ArrayBuffer): void;
  /** drained: the WebSocket's buffer went down; held writes go on. */
  drained(): void;
  /** close: the WebSocket is gone; every stream is destroyed. Idempotent. */
  close(): void;
}

/**
 * openSpdyTunnel starts a SPDY/3.1 server session over `socket`. `onStream` gets each stream the
 * client opens (SYN_STREAM), before any reply: it answers with `stream.respond(200, {})` (SYN_REPLY)
 * or `stream.abort()`. `onError` gets a session-level error (a malformed frame, a compression
 * error): the session is then unusable and the caller closes the WebSocket. Never throws.
 */
export function openSpdyTunnel(socket: TunnelSocket, onStream: (stream: SpdyStream) => void, onError: (err: Error) => void): SpdyTunnel {
  installRawStreamHeaders();
  let closed = false;
  const held: (() => void)[] = [];
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      if (closed) return callback();
      socket.send(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      if (socket.bufferedAmount() >= kTunnelHighWaterBytes) held.push(() => callback());
      else callback();
    },
  });
  duplex.on('error', () => {}); // a destroyed duplex's late writes: the session is over anyway
  const connection: SpdyConnection = transport.connection.create(duplex, { protocol: 'spdy', isServer: true });
  connection.on('error', (err: Error) => {
    if (!closed) onError(err);
  });
  connection.on('stream', (stream: SpdyStream) => {
    stream.on('error', () => {}); // a reset stream; its 'close' tells the owner
    unlimitSendWindow(stream);
    boundUnreadBytes(stream);
    onStream(stream);
  });
  let inboundWhileHeld = 0;
  return {
    receive(message) {
      if (closed) return;
      if (held.length > 0) {
        inboundWhileHeld += message.byteLength;
        if (inboundWhileHeld > kMaxInboundWhileHeldBytes)
          return onError(new Error(`the client sent ${inboundWhileHeld} bytes without reading the answers`));
      }
      // The session runs on a later turn, never inside uWS's message callback: run there, its
      // answers (WINDOW_UPDATEs, the pod's bytes) were written from inside uWS's TLS read, and an
      // upload of 1 MiB or more through kubectl over TLS got a TLS alert ("protocol version not
      // supported") from uWS. setImmediate keeps the messages in order.
      const bytes = Buffer.from(message.slice(0));
      setImmediate(() => {
        if (!closed) duplex.push(bytes);
      });
    },
    drained() {
      if (socket.bufferedAmount() >= kTunnelHighWaterBytes) return;
      inboundWhileHeld = 0;
      for (const go of held.splice(0)) go();
    },
    close() {
      if (closed) return;
      closed = true;
      for (const go of held.splice(0)) go();
      connection.destroyStreams(new Error('the tunnel closed'));
      duplex.push(null);
      duplex.destroy();
    },
  };
}
