/**
 * Counterpart of the kubelet server's getExec/getAttach (pkg/kubelet/server/server.go) with the CRI
 * streaming server's WebSocket half (pkg/kubelet/cri/streaming/remotecommand/websocket.go), on
 * uWebSockets.js: `WS /exec/{namespace}/{pod}/{container}?command=…&stdin=1&stdout=1&stderr=1&tty=1`
 * and `WS /attach/…` (same query without command).
 *
 * Before the upgrade, as the kubelet: authentication and authorization (auth.ts: RBAC `create` on
 * nodes/proxy, or on pods/exec|attach in the pod's namespace for the API's paths), the query (400 naming the parameter), the sub-protocol (400 when
 * none offered is served), the pod and container (404; 400 when not running), and the bounds (429).
 * After it: an empty frame on the lowest writable channel tells the client the stream is up; the
 * channels are relayed to the streams worker; the end is a Status on channel 3 (remotecommand.ts),
 * then a normal close. Closing either side tears the other down; an idle stream is closed after
 * `--streaming-connection-idle-timeout`. Output is acked to the worker only once the socket took it
 * without backpressure (or on drain), so a slow client pauses dockerd's socket, not memory.
 */
import type uWS from 'uWebSockets.js';
import type { Status } from '../../shared/api.js';
import type { Logger } from '../../shared/logging.js';
import type { ContainerStreamSession, AgentHost } from '../host/agent-host.js';
import { checkUpgradeAccess, kBearerProtocolPrefix, type ServerAuth } from '../auth/auth.js';
import { refuseUpgrade } from '../http/reply.js';
import { checkPathParams } from '../http/request-limits.js';
import { hostErrorStatus } from '../routes/intake.js';
import { statusError } from '../http/status.js';
import {
  decodeFrame,
  encodeFrame,
  kCloseChannel,
  kErrorChannel,
  kResizeChannel,
  kStdinChannel,
  kStdoutChannel,
  kStderrChannel,
  kStreamProtocols,
  negotiateProtocol,
  parseResize,
  parseStreamQuery,
  statusPayload,
  streamResultStatus,
  type NegotiatedProtocol,
  type StreamRequest,
} from './remotecommand.js';
import { kStreamSocketLimits, newIdleTimer, type IdleTimer, type StreamLimiter, type StreamRequester } from './stream-limits.js';
import { isKubeStreamPattern, kStreamPatterns, kubeStreamContainer } from './stream-paths.js';

/** Above this many buffered bytes output credit is held back until the socket drains. */
const kHighWaterBytes = 256 * 1024;

interface StreamData {
  kind: 'exec' | 'attach';
  path: string;
  req: StreamRequest;
  protocol: NegotiatedProtocol;
  containerId: string;
  podUid: string;
  /** Who opened it (the per-user bound; undefined without auth). */
  requester: StreamRequester;
  session?: ContainerStreamSession;
  release?: () => void;
  idle?: IdleTimer;
  heldAck: number;
  closed: boolean;
}

type Ws = uWS.WebSocket<StreamData>;

/**
 * registerStreaming adds `WS /exec/…` and `WS /attach/…` to `app`. With a host lacking
 * streamTarget/openContainerStream the upgrade answers 405. Main thread only.
 */
export function registerStreaming(
  app: uWS.TemplatedApp,
  host: AgentHost,
  logger: Logger,
  limiter: StreamLimiter,
  auth: ServerAuth | undefined,
): void {
  const log = logger.child({ component: 'streaming' });
  const send = (ws: Ws, channel: number, data: Uint8Array): void => {
    const d = ws.getUserData();
    if (d.closed) return;
    const frame = encodeFrame(d.protocol, channel, data);
    ws.send(frame, typeof frame !== 'string');
  };
  const finish = (ws: Ws, status: Status) => {
    const d = ws.getUserData();
    if (d.closed) return;
    const payload = statusPayload(d.protocol, status);
    ws.cork(() => {
      if (payload) send(ws, kErrorChannel, payload);
      d.closed = true;
      ws.end(1000, status.status === 'Success' ? '' : 'stream ended');
    });
  };

  // The kubelet's paths, then the Kubernetes API's (kubectl 1.32: `…/pods/{pod}/exec?container=…`; stream-paths.ts).
  for (const [kind, pattern] of kStreamPatterns) {
    app.ws<StreamData>(pattern, {
      ...kStreamSocketLimits,
      upgrade(res, ureq, context) {
        const path = ureq.getUrl();
        const query = new URLSearchParams(ureq.getQuery() ?? '');
        const raw = [ureq.getParameter(0) ?? '', ureq.getParameter(1) ?? '', ureq.getParameter(2) ?? ''];
        if (isKubeStreamPattern(pattern)) raw[2] = kubeStreamContainer(host, raw[0], raw[1], query);
        const key = ureq.getHeader('sec-websocket-key');
        const extensions = ureq.getHeader('sec-websocket-extensions');
        const protocolHeader = ureq.getHeader('sec-websocket-protocol');
        const { access } = checkUpgradeAccess(auth, path, ureq);
        if (!access.ok) {
          log.warn({ method: 'GET', path, code: access.status.code, reason: access.reason }, 'Refused stream request');
          return refuseUpgrade(res, access.status);
        }
        if (!host.streamTarget || !host.openContainerStream)
          return refuseUpgrade(res, statusError(405, 'MethodNotAllowed', `this agent does not serve ${kind}`));
        let params: Record<string, string>;
        try {
          params = { namespace: decodeURIComponent(raw[0]), pod: decodeURIComponent(raw[1]), container: decodeURIComponent(raw[2]) };
        } catch {
          return refuseUpgrade(res, statusError(400, 'BadRequest', `malformed percent-encoding in path ${JSON.stringify(path)}`));
        }
        const bad = checkPathParams(params);
        if (bad) return refuseUpgrade(res, bad);
        const parsed = parseStreamQuery(kind, query);
        if ('kind' in parsed) return refuseUpgrade(res, parsed as Status);
        const req = parsed as StreamRequest;
        const offered = protocolHeader
          .split(',')
          .map((p) => p.trim())
          .filter((p) => p !== '' && !p.startsWith(kBearerProtocolPrefix));
        const protocol = negotiateProtocol(offered);
        if (!protocol) {
          return refuseUpgrade(
            res,
            statusError(
              400,
              'BadRequest',
              `requested protocol(s) are not supported: ${offered.join(', ')}; supports ${kStreamProtocols.join(', ')}`,
            ),
          );
        }
        let target;
        try {
          target = host.streamTarget(params.namespace, params.pod, params.container);
        } catch (err) {
          return refuseUpgrade(res, hostErrorStatus(err, params.pod));
        }
        const requester = access.user;
        const over = limiter.check(target.podUid, requester);
        if (over) return refuseUpgrade(res, over);
        const data: StreamData = {
          kind,
          path,
          req,
          protocol,
          containerId: target.containerId,
          podUid: target.podUid,
          requester,
          heldAck: 0,
          closed: false,
        };
        res.upgrade(data, key, protocol.name, extensions, context);
      },
      open(ws) {
        const d = ws.getUserData();
        const over = limiter.check(d.podUid, d.requester);
        if (over) return finish(ws, over);
        d.release = limiter.acquire(d.podUid, d.requester);
        d.idle = newIdleTimer(limiter.options.idleTimeoutMs, () => {
          log.info({ path: d.path, idleMs: limiter.options.idleTimeoutMs }, 'Closing an idle stream');
          d.session?.close();
          finish(
            ws,
            statusError(408, 'Timeout', `stream idle for ${limiter.options.idleTimeoutMs} ms (--streaming-connection-idle-timeout)`),
          );
        });
        // The kubelet's "connection established" signal: an empty frame on the lowest writable channel.
        send(ws, d.req.stdout ? kStdoutChannel : d.req.stderr ? kStderrChannel : kErrorChannel, new Uint8Array(0));
        const s = host.openContainerStream!({
          kind: d.kind,
          containerId: d.containerId,
          command: d.req.command,
          stdin: d.req.stdin,
          stdout: d.req.stdout,
          stderr: d.req.stderr,
          tty: d.req.tty,
        });
        d.session = s;
        s.onStarted(() => {});
        s.onOutput((fd, chunk) => {
          if (d.closed) return;
          d.idle?.touch();
          const channel = d.req.tty || fd === 1 ? kStdoutChannel : kStderrChannel;
          // Output arrives from the worker's port, outside any uWS callback: cork the send.
          if ((channel === kStdoutChannel && d.req.stdout) || (channel === kStderrChannel && d.req.stderr))
            ws.cork(() => send(ws, channel, chunk));
          if (d.heldAck > 0 || ws.getBufferedAmount() >= kHighWaterBytes) d.heldAck += chunk.byteLength;
          else s.ack(chunk.byteLength);
        });
        s.onExit((e) => {
          d.idle?.stop();
          if (d.closed) return;
          if (e.error) log.info({ path: d.path, err: e.error.message }, 'Stream failed');
          finish(ws, streamResultStatus(d.kind, d.req.command, e.exitCode, e.error));
        });
      },
      message(ws, message) {
        const d = ws.getUserData();
        if (d.closed || !d.session) return;
        const frame = decodeFrame(d.protocol, message);
        if (!frame) return;
        d.idle?.touch();
        if (frame.channel === kStdinChannel) {
          if (!d.req.stdin || frame.data.byteLength === 0) return;
          if (!d.session.writeStdin(frame.data)) {
            d.session.close();
            finish(
              ws,
              statusError(
                429,
                'TooManyRequests',
                'stdin: the container does not read its input as fast as it is sent (8 MiB waiting); stream closed',
              ),
            );
          }
        } else if (frame.channel === kResizeChannel) {
          const size = parseResize(frame.data);
          if (size && d.req.tty) d.session.resize(size);
        } else if (frame.channel === kCloseChannel && d.protocol.closeSignal) {
          if (frame.data[0] === kStdinChannel && d.req.stdin) d.session.endStdin();
        }
      },
      drain(ws) {
        const d = ws.getUserData();
        if (d.heldAck > 0 && ws.getBufferedAmount() < kHighWaterBytes) {
          const n = d.heldAck;
          d.heldAck = 0;
          d.session?.ack(n);
        }
      },
      close(ws) {
        const d = ws.getUserData();
        d.closed = true;
        d.idle?.stop();
        d.session?.close();
        d.release?.();
      },
    });
  }
}
