/**
 * `kubectl port-forward` (1.31+): the Kubernetes API's pod portforward subresource,
 * `WS /api/v1/namespaces/{ns}/pods/{pod}/portforward` with sub-protocol
 * `SPDY/3.1+portforward.k8s.io`: a SPDY session tunnelled in WebSocket messages (spdy-tunnel.ts),
 * whose streams are the kubelet's SPDY port-forward protocol
 * (pkg/kubelet/cri/streaming/portforward/httpstream.go, protocol `portforward.k8s.io`):
 *
 * - The client opens two streams per forwarded connection, with headers `streamtype` (`error` or
 *   `data`), `port` and `requestid` (the pair's key; a client without it pairs an error stream `n`
 *   with data stream `n+2`, as the kubelet's fallback). A stream with another type, no port or a
 *   port outside 1–65535 is reset (RST_STREAM), as the kubelet rejects it; every other stream is
 *   answered (SYN_REPLY).
 * - Once both streams of a request are there, one connection to the pod's port is opened (the
 *   same one `/portForward` opens: src/main/streams/port-forward.ts), relayed to and from the data
 *   stream. The client's FIN on the data stream half-closes the pod's side; the pod's end ends the
 *   data stream; both streams are then closed (FIN). An error is written on the error stream in
 *   the kubelet's words (`error forwarding port 80 to pod <sandbox>, uid <uid>: <cause>`) before it
 *   closes; kubectl prints it and ends the session.
 * - A request whose second stream has not come within {@link kStreamPairTimeoutMs} gets
 *   `timed out waiting for streams` on its error stream (the kubelet's streamCreationTimeout, 30 s);
 *   a second stream of a type the request already has gets `error processing stream for request
 *   <id>: <type> stream already assigned`.
 *
 * Before the upgrade: the checks of checkPortForwardUpgrade (RBAC `create` on pods/portforward, the
 * running pod), then the sub-protocol (400 naming the one served). Bounds: each forwarded connection
 * counts against the port-forward limiter as on `/portForward` (over it, the request's error
 * stream says so); at most {@link kMaxTunnelStreams} streams are open per session (more are
 * refused with RST_STREAM REFUSED_STREAM); an idle session is closed after
 * `--streaming-connection-idle-timeout`. Main thread only.
 */
import type uWS from 'uWebSockets.js';
import type { Logger } from '../../shared/logging.js';
import type { AgentHost } from '../host/agent-host.js';
import { kBearerProtocolPrefix, type ServerAuth } from '../auth/auth.js';
import { refuseUpgrade } from '../http/reply.js';
import { statusError } from '../http/status.js';
import type { PortForwardSession, PortForwardTarget } from '../host/port-forward-host.js';
import { checkPortForwardUpgrade, newPortForwardBehavior, type PortForwardChannelData } from './port-forward-ws.js';
import { kPortForwardProtocols, negotiatePortForwardProtocol, portForwardError } from './portforward.js';
import { openSpdyTunnel, type SpdyStream, type SpdyTunnel } from './spdy-tunnel.js';
import { kStreamSocketLimits, newIdleTimer, type IdleTimer, type StreamLimiter, type StreamRequester } from './stream-limits.js';

/** kPortForwardTunnelProtocol: the sub-protocol of client-go's SPDY-over-WebSocket port-forward tunnel. */
export const kPortForwardTunnelProtocol = 'SPDY/3.1+portforward.k8s.io';
/** kPortForwardTunnelPath: the uWS pattern of the pod portforward subresource. */
export const kPortForwardTunnelPath = '/api/v1/namespaces/:namespace/pods/:pod/portforward';
/** kStreamPairTimeoutMs: how long the first stream of a request waits for its partner (ms), as the kubelet's streamCreationTimeout. */
export const kStreamPairTimeoutMs = 30_000;
/** kMaxTunnelStreams: open streams per session (kubectl opens 2 per local connection). */
export const kMaxTunnelStreams = 256;

/** One forwarded connection: a request's error and data streams and the pod connection they drive. */
interface StreamPair {
  requestId: string;
  port: number;
  error?: SpdyStream;
  data?: SpdyStream;
  session?: PortForwardSession;
  release?: () => void;
  timer?: NodeJS.Timeout;
  done: boolean;
}

interface TunnelData {
  kind: 'tunnel';
  path: string;
  target: PortForwardTarget;
  /** Who opened it (the per-user bound; undefined without auth). */
  requester: StreamRequester;
  tunnel?: SpdyTunnel;
  pairs: Map<string, StreamPair>;
  streams: number;
  idle?: IdleTimer;
  closed: boolean;
}

type Ws = uWS.WebSocket<TunnelData>;
/** The two kinds of WebSocket the API path serves: the SPDY tunnel, and the channel protocols of port-forward-ws.ts. */
type ApiPortForwardData = TunnelData | PortForwardChannelData;

/** offersChannelProtocol: the upgrade asks for a channel protocol of port-forward-ws.ts and not for the SPDY tunnel. */
function offersChannelProtocol(ureq: uWS.HttpRequest): boolean {
  const offered = ureq
    .getHeader('sec-websocket-protocol')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '' && !p.startsWith(kBearerProtocolPrefix));
  return offered.length > 0 && !offered.includes(kPortForwardTunnelProtocol) && negotiatePortForwardProtocol(offered) !== undefined;
}

/** header: a stream header's value (the last of a repeated one), or ''. */
function header(stream: SpdyStream, name: string): string {
  const v = stream.headers[name];
  return (Array.isArray(v) ? v[v.length - 1] : v) ?? '';
}

/**
 * registerPortForwardTunnel adds `WS /api/v1/namespaces/{ns}/pods/{pod}/portforward` to `app`;
 * each forwarded connection counts once against `limiter` (the limiter of `/portForward`). With a
 * host lacking portForwardTarget/openPortForward the upgrade answers 405. An upgrade that asks for
 * `v4.channel.k8s.io` or `v4.base64.channel.k8s.io` instead (the Python client's `portforward()`,
 * client-go's WebSocket port-forward) is served by port-forward-ws.ts's behavior with the ports in
 * `?ports=`, as the apiserver proxies it to the kubelet's WebSocket port-forward. Main thread only.
 */
export function registerPortForwardTunnel(
  app: uWS.TemplatedApp,
  host: AgentHost,
  logger: Logger,
  limiter: StreamLimiter,
  auth: ServerAuth | undefined,
): void {
  const log = logger.child({ component: 'port-forward' });

  const closeWs = (ws: Ws, code: number, reason: string) => {
    const d = ws.getUserData();
    if (d.closed) return;
    teardown(d);
    ws.cork(() => ws.end(code, reason));
  };
  const teardown = (d: TunnelData) => {
    d.closed = true;
    d.idle?.stop();
    for (const p of d.pairs.values()) endPair(d, p);
    d.tunnel?.close();
  };
  /** endPair: the request is over; its pod connection closed, its streams ended (FIN), its count released. */
  const endPair = (d: TunnelData, p: StreamPair, message?: string) => {
    if (p.done) return;
    p.done = true;
    clearTimeout(p.timer);
    d.pairs.delete(p.requestId);
    p.session?.close();
    p.release?.();
    if (message !== undefined) {
      log.info({ path: d.path, port: p.port, requestId: p.requestId, err: message }, 'Port-forward connection failed');
      if (p.error?.writable) p.error.write(Buffer.from(message));
    }
    if (p.error?.writable) p.error.end();
    if (p.data?.writable) p.data.end();
    p.data?.resume(); // a data stream never forwarded (the pair timed out): drop what still comes
  };
  /** failPair: endPair with `cause` on the error stream in the kubelet's words (portForwardError). */
  const failPair = (d: TunnelData, p: StreamPair, cause: string) =>
    endPair(d, p, new TextDecoder().decode(portForwardError(p.port, d.target.sandboxId, d.target.podUid, cause)));

  /** forward: both streams are there: open the pod connection and relay it to the data stream. */
  const forward = (d: TunnelData, p: StreamPair, data: SpdyStream) => {
    clearTimeout(p.timer);
    const over = limiter.check(d.target.podUid, d.requester);
    if (over) return failPair(d, p, over.message ?? 'too many port-forward connections');
    p.release = limiter.acquire(d.target.podUid, d.requester);
    const s = host.openPortForward!({ reach: d.target.reach, port: p.port });
    p.session = s;
    s.onData((chunk) => {
      if (p.done) return;
      d.idle?.touch();
      data.write(chunk, () => s.ack(chunk.byteLength));
    });
    s.onEnd((error) => {
      if (error !== undefined) failPair(d, p, error);
      else endPair(d, p);
    });
    data.on('data', (chunk: Buffer) => {
      if (p.done) return;
      d.idle?.touch();
      if (!s.write(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))) {
        failPair(d, p, 'the pod does not read its connection as fast as data is sent (8 MiB waiting); connection closed');
      }
    });
    data.on('end', () => {
      if (!p.done) s.closeWrite();
    });
  };

  /** onStream: one SYN_STREAM of the client, checked and paired as the kubelet's httpStreamHandler. */
  const onStream = (ws: Ws, stream: SpdyStream) => {
    const d = ws.getUserData();
    if (d.closed) return stream.abort();
    if (d.streams >= kMaxTunnelStreams) return stream.abort('REFUSED_STREAM');
    const type = header(stream, 'streamtype');
    const portText = header(stream, 'port');
    if ((type !== 'error' && type !== 'data') || !/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      log.info({ path: d.path, streamType: type.slice(0, 64), port: portText.slice(0, 64) }, 'Port-forward stream rejected');
      return stream.abort();
    }
    d.streams++;
    stream.once('close', () => d.streams--);
    stream.respond(200, {});
    d.idle?.touch();
    const requestId = header(stream, 'requestid') || String(type === 'error' ? stream.id : stream.id - 2);
    let p = d.pairs.get(requestId);
    if (!p) {
      p = { requestId, port: Number(portText), done: false };
      const created = p;
      d.pairs.set(requestId, p);
      p.timer = setTimeout(() => endPair(d, created, 'timed out waiting for streams'), kStreamPairTimeoutMs);
    }
    const pair = p;
    if (type === 'error') stream.resume(); // the client writes nothing on it; read its FIN
    if (pair[type]) {
      // The kubelet writes this on the pair's error stream and leaves the pair as it was.
      const msg = `error processing stream for request ${requestId}: ${type} stream already assigned`;
      log.info({ path: d.path, requestId }, msg);
      if (pair.error?.writable) pair.error.write(Buffer.from(msg));
      stream.resume(); // nothing reads it: drop what the client sends on it
      stream.end();
      return;
    }
    pair[type] = stream;
    // The client reset a stream (kubectl's RemoveStreams once it is done): the connection is over.
    stream.once('close', () => endPair(d, pair));
    if (pair.error && pair.data) forward(d, pair, pair.data);
  };

  const channel = newPortForwardBehavior(host, logger, limiter, auth, 'ports');
  const asChannel = (ws: uWS.WebSocket<ApiPortForwardData>) => ws as uWS.WebSocket<PortForwardChannelData>;
  app.ws<ApiPortForwardData>(kPortForwardTunnelPath, {
    ...kStreamSocketLimits,
    upgrade(res, ureq, context) {
      if (offersChannelProtocol(ureq)) return channel.upgrade!(res, ureq, context);
      const checked = checkPortForwardUpgrade(ureq, host, auth, log);
      if (!checked.ok) return refuseUpgrade(res, checked.status);
      if (!checked.offered.includes(kPortForwardTunnelProtocol)) {
        return refuseUpgrade(
          res,
          statusError(
            400,
            'BadRequest',
            `requested protocol(s) are not supported: ${checked.offered.join(', ') || '(none)'}; supports ${[kPortForwardTunnelProtocol, ...kPortForwardProtocols].join(', ')}`,
          ),
        );
      }
      const data: TunnelData = {
        kind: 'tunnel',
        path: checked.path,
        target: checked.target,
        requester: checked.requester,
        pairs: new Map(),
        streams: 0,
        closed: false,
      };
      res.upgrade(data, checked.key, kPortForwardTunnelProtocol, checked.extensions, context);
    },
    open(w) {
      if (w.getUserData().kind === 'channel') return channel.open!(asChannel(w));
      const ws = w as Ws;
      const d = ws.getUserData();
      d.idle = newIdleTimer(limiter.options.idleTimeoutMs, () => {
        log.info({ path: d.path, idleMs: limiter.options.idleTimeoutMs }, 'Closing an idle port-forward');
        closeWs(ws, 1000, `idle for ${limiter.options.idleTimeoutMs} ms (--streaming-connection-idle-timeout)`);
      });
      d.tunnel = openSpdyTunnel(
        {
          send: (bytes) => {
            if (!d.closed) ws.cork(() => ws.send(bytes, true));
          },
          bufferedAmount: () => (d.closed ? 0 : ws.getBufferedAmount()),
        },
        (stream) => onStream(ws, stream),
        (err) => {
          log.info({ path: d.path, err: err.message }, 'Port-forward tunnel: SPDY session error');
          closeWs(ws, 1002, 'SPDY protocol error');
        },
      );
    },
    message(w, message, isBinary) {
      if (w.getUserData().kind === 'channel') return channel.message!(asChannel(w), message, isBinary);
      const ws = w as Ws;
      const d = ws.getUserData();
      if (d.closed) return;
      if (!isBinary) return closeWs(ws, 1003, 'the SPDY tunnel carries binary messages only');
      d.idle?.touch();
      d.tunnel?.receive(message);
    },
    drain(w) {
      const d = w.getUserData();
      if (d.kind === 'channel') return channel.drain!(asChannel(w));
      d.tunnel?.drained();
    },
    close(w, code, message) {
      const d = w.getUserData();
      if (d.kind === 'channel') return channel.close!(asChannel(w), code, message);
      if (!d.closed) teardown(d);
    },
  });
}
