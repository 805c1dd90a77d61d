/**
 * Counterpart of the kubelet server's getPortForward (pkg/kubelet/server/server.go) with the CRI
 * streaming server's WebSocket port-forward (pkg/kubelet/cri/streaming/portforward/websocket.go),
 * on uWebSockets.js: `WS /portForward/{namespace}/{pod}[/{uid}]?port=N[&port=M…]`. kubectl's own
 * port-forward (the Kubernetes API path, SPDY in WebSocket messages) is port-forward-tunnel.ts;
 * both share {@link checkPortForwardUpgrade}, the plain-HTTP answers and the port-forward limiter.
 *
 * Before the upgrade, as the kubelet: authentication and authorization (auth.ts: RBAC `create` on
 * nodes/proxy, or on pods/portforward in the pod's namespace for the API's path), the `port` query (400), the sub-protocol (400 when none offered is
 * served; portforward.ts), the pod (404 `pod does not exist`, or `pod not found` when the uid does
 * not match; 400 when its sandbox is not running) and the bounds (429). After it: per port, the
 * port number as the first frame of its data and error channels, then one connection to the pod's
 * port (src/main/streams/port-forward.ts picks how it is reached), relayed both ways; an error
 * ends that port with its text on the error channel. Once every port's connection has ended the
 * WebSocket is closed (1000), as the kubelet's handler returns; closing the WebSocket tears every
 * connection down; an idle one is closed after `--streaming-connection-idle-timeout`.
 *
 * Backpressure: pod → client, output is acked to the worker only once the socket took it without
 * backpressure (or on drain), so a slow client stops the reading of the pod's socket, not memory;
 * client → pod, bytes the pod has not taken are counted and a client past 8 MiB is cut off
 * (uWebSockets.js cannot pause reading a WebSocket).
 *
 * Bounds: every forwarded connection (one per port of a request) counts against its own limiter,
 * apart from exec/attach: {@link kDefaultPortForwardLimits}. The kubelet bounds only the idle time;
 * the caps are ours (a connection holds the client's socket and, for a pod network namespace, a
 * helper process with three pipes).
 */
import type uWS from 'uWebSockets.js';
import type { Status } from '../../shared/api.js';
import type { Logger } from '../../shared/logging.js';
import type { AgentHost } from '../host/agent-host.js';
import { checkUpgradeAccess, kBearerProtocolPrefix, type ServerAuth } from '../auth/auth.js';
import { refuseUpgrade, statusReply } from '../http/reply.js';
import { checkPathParams } from '../http/request-limits.js';
import { hostErrorStatus } from '../routes/intake.js';
import type { Route } from '../routes/router.js';
import { statusError } from '../http/status.js';
import type { PortForwardSession, PortForwardTarget } from '../host/port-forward-host.js';
import { kPortForwardProtocols, negotiatePortForwardProtocol, parsePortForwardQuery, portForwardError, portPrefix } from './portforward.js';
import { decodeFrame, encodeFrame, type NegotiatedProtocol } from './remotecommand.js';
import {
  kStreamSocketLimits,
  newIdleTimer,
  type IdleTimer,
  type StreamingOptions,
  type StreamLimiter,
  type StreamRequester,
} from './stream-limits.js';

/** Above this many buffered bytes output credit is held back until the socket drains. */
const kHighWaterBytes = 256 * 1024;

/**
 * kDefaultPortForwardLimits: 64 forwarded connections per pod (a browser opens 6 per origin, a
 * load test dozens), 512 per node (about 2,000 fds at ~4 each, of the agent's 20,000), 128 per
 * user (a quarter of the node; `--max-port-forwards-per-user`; `system:masters` not bounded per user).
 */
export const kDefaultPortForwardLimits: Required<Pick<StreamingOptions, 'maxStreamsPerPod' | 'maxStreamsPerNode' | 'maxStreamsPerUser'>> = {
  maxStreamsPerPod: 64,
  maxStreamsPerNode: 512,
  maxStreamsPerUser: 128,
};

interface PortState {
  port: number;
  session?: PortForwardSession;
  heldAck: number;
  done: boolean;
}

interface PfData {
  kind: 'channel';
  path: string;
  protocol: NegotiatedProtocol;
  target: PortForwardTarget;
  /** Who opened it (the per-user bound; undefined without auth). */
  requester: StreamRequester;
  ports: PortState[];
  releases: (() => void)[];
  idle?: IdleTimer;
  closed: boolean;
}

type Ws = uWS.WebSocket<PfData>;

/** portForwardRoutes: the plain-HTTP answers of /portForward and of pods/portforward (400: upgrade required; a SPDY upgrade is not served). */
export function portForwardRoutes(): Route[] {
  const tunnelRequired = () =>
    statusReply(
      statusError(
        400,
        'BadRequest',
        `Upgrade request required: open pods/portforward as a WebSocket with sub-protocol SPDY/3.1+portforward.k8s.io (kubectl 1.31 and later), or ${kPortForwardProtocols.join(' or ')} with the ports in ?ports=; a SPDY upgrade is not served`,
      ),
    );
  const upgradeRequired = () =>
    statusReply(
      statusError(
        400,
        'BadRequest',
        `Upgrade request required: open /portForward as a WebSocket (sub-protocol ${kPortForwardProtocols.join(' or ')}); SPDY is not served`,
      ),
    );
  return [
    { path: '/portForward/:namespace/:pod', methods: { get: upgradeRequired, post: upgradeRequired } },
    { path: '/portForward/:namespace/:pod/:uid', methods: { get: upgradeRequired, post: upgradeRequired } },
    { path: '/api/v1/namespaces/:namespace/pods/:pod/portforward', methods: { get: tunnelRequired, post: tunnelRequired } },
  ];
}

/**
 * registerPortForward adds `WS /portForward/…` to `app`, bounded by `limiter` (one count per
 * forwarded port). With a host lacking portForwardTarget/openPortForward the upgrade answers 405.
 * Main thread only.
 */
export function registerPortForward(
  app: uWS.TemplatedApp,
  host: AgentHost,
  logger: Logger,
  limiter: StreamLimiter,
  auth: ServerAuth | undefined,
): void {
  const behavior = newPortForwardBehavior(host, logger, limiter, auth, 'port');
  app.ws<PortForwardChannelData>('/portForward/:namespace/:pod', behavior);
  app.ws<PortForwardChannelData>('/portForward/:namespace/:pod/:uid', behavior);
}

/** PortForwardChannelData: the user data of a channel-protocol port-forward WebSocket (`kind: 'channel'`). */
export type PortForwardChannelData = PfData;

/**
 * newPortForwardBehavior: the uWS behavior of the channel protocols (`v4.channel.k8s.io`,
 * `v4.base64.channel.k8s.io`, or none offered), for the kubelet's `/portForward` (ports in `?port=`)
 * and for the Kubernetes API's pods/portforward (`?ports=`; port-forward-tunnel.ts hands it the
 * upgrades that do not ask for the SPDY tunnel, as the apiserver proxies both to the kubelet).
 * Main thread only.
 */
export function newPortForwardBehavior(
  host: AgentHost,
  logger: Logger,
  limiter: StreamLimiter,
  auth: ServerAuth | undefined,
  portParam: 'port' | 'ports',
): uWS.WebSocketBehavior<PortForwardChannelData> {
  const log = logger.child({ component: 'port-forward' });
  const send = (ws: Ws, channel: number, data: Uint8Array): void => {
    const d = ws.getUserData();
    if (d.closed) return;
    const frame = encodeFrame(d.protocol, channel, data);
    ws.send(frame, typeof frame !== 'string');
  };
  const teardown = (d: PfData) => {
    d.closed = true;
    d.idle?.stop();
    for (const p of d.ports) p.session?.close();
    for (const release of d.releases.splice(0)) release();
  };
  /** end closes the WebSocket (not corked: callers outside a uWS callback cork around it). */
  const end = (ws: Ws, code: number, reason: string) => {
    const d = ws.getUserData();
    if (d.closed) return;
    teardown(d);
    ws.end(code, reason);
  };
  /** portEnded: the port's forwarding ended with `cause`; the WebSocket closes once every port has ended. */
  const portEnded = (ws: Ws, i: number, cause: string | undefined) => {
    const d = ws.getUserData();
    const p = d.ports[i];
    if (d.closed || p.done) return;
    p.done = true;
    ws.cork(() => {
      if (cause !== undefined) {
        log.info({ path: d.path, port: p.port, err: cause }, 'Port-forward connection failed');
        send(ws, 2 * i + 1, portForwardError(p.port, d.target.sandboxId, d.target.podUid, cause));
      }
      if (d.ports.every((x) => x.done)) end(ws, 1000, '');
    });
  };

  const behavior: uWS.WebSocketBehavior<PfData> = {
    ...kStreamSocketLimits,
    upgrade(res, ureq, context) {
      const checked = checkPortForwardUpgrade(ureq, host, auth, log);
      if (!checked.ok) return refuseUpgrade(res, checked.status);
      const { path, query, offered, target, key, extensions, requester } = checked;
      const ports = parsePortForwardQuery(query, portParam);
      if (!Array.isArray(ports)) return refuseUpgrade(res, ports);
      const protocol = negotiatePortForwardProtocol(offered);
      if (!protocol) {
        return refuseUpgrade(
          res,
          statusError(
            400,
            'BadRequest',
            `requested protocol(s) are not supported: ${offered.join(', ')}; supports ${kPortForwardProtocols.join(', ')}`,
          ),
        );
      }
      const over = overBound(limiter, target.podUid, requester, ports.length);
      if (over) return refuseUpgrade(res, over);
      const data: PfData = {
        kind: 'channel',
        path,
        protocol,
        target,
        requester,
        ports: ports.map((port) => ({ port, heldAck: 0, done: false })),
        releases: [],
        closed: false,
      };
      res.upgrade(data, key, protocol.name, extensions, context);
    },
    open(ws) {
      const d = ws.getUserData();
      // Counted at open (the upgrade only checked): another request may have taken the room since.
      for (let i = 0; i < d.ports.length; i++) {
        const over = limiter.check(d.target.podUid, d.requester);
        if (over) {
          ws.cork(() => {
            send(ws, 1, portForwardError(d.ports[0].port, d.target.sandboxId, d.target.podUid, over.message ?? 'too many streams'));
            end(ws, 1000, 'too many streams');
          });
          return;
        }
        d.releases.push(limiter.acquire(d.target.podUid, d.requester));
      }
      d.idle = newIdleTimer(limiter.options.idleTimeoutMs, () => {
        log.info({ path: d.path, idleMs: limiter.options.idleTimeoutMs }, 'Closing an idle port-forward');
        ws.cork(() => end(ws, 1000, `idle for ${limiter.options.idleTimeoutMs} ms (--streaming-connection-idle-timeout)`));
      });
      ws.cork(() => {
        d.ports.forEach((p, i) => {
          send(ws, 2 * i, portPrefix(p.port));
          send(ws, 2 * i + 1, portPrefix(p.port));
        });
      });
      d.ports.forEach((p, i) => {
        const s = host.openPortForward!({ reach: d.target.reach, port: p.port });
        p.session = s;
        s.onData((chunk) => {
          if (d.closed || p.done) return;
          d.idle?.touch();
          // Data arrives from the worker's port, outside any uWS callback: cork the send.
          ws.cork(() => send(ws, 2 * i, chunk));
          if (p.heldAck > 0 || ws.getBufferedAmount() >= kHighWaterBytes) p.heldAck += chunk.byteLength;
          else s.ack(chunk.byteLength);
        });
        s.onEnd((error) => portEnded(ws, i, error));
      });
    },
    message(ws, message) {
      const d = ws.getUserData();
      if (d.closed) return;
      const frame = decodeFrame(d.protocol, message);
      if (!frame) return;
      d.idle?.touch();
      const i = frame.channel >> 1;
      if (i >= d.ports.length) return end(ws, 1002, `frame ${frame.channel} is not a valid channel`);
      if (frame.channel % 2 === 1) return; // an error channel: the server's to write
      const p = d.ports[i];
      if (p.done || !p.session || frame.data.byteLength === 0) return;
      if (!p.session.write(frame.data)) {
        p.session.close();
        portEnded(ws, i, 'the pod does not read its connection as fast as data is sent (8 MiB waiting); connection closed');
      }
    },
    drain(ws) {
      const d = ws.getUserData();
      if (ws.getBufferedAmount() >= kHighWaterBytes) return;
      for (const p of d.ports) {
        if (p.heldAck > 0) {
          const n = p.heldAck;
          p.heldAck = 0;
          p.session?.ack(n);
        }
      }
    },
    close(ws) {
      teardown(ws.getUserData());
    },
  };
  return behavior;
}

/** overBound: the 429 Status when `n` more connections of `requester` into pod `podUid` do not fit, else undefined. */
function overBound(limiter: StreamLimiter, podUid: string, requester: StreamRequester, n: number): Status | undefined {
  const first = limiter.check(podUid, requester);
  if (first || n === 1) return first;
  const held: (() => void)[] = [];
  try {
    for (let k = 0; k < n; k++) {
      const over = limiter.check(podUid, requester);
      if (over) return over;
      held.push(limiter.acquire(podUid, requester));
    }
    return undefined;
  } finally {
    for (const release of held) release();
  }
}

/** PortForwardUpgrade: what both port-forward WebSockets read of an upgrade request once it passed {@link checkPortForwardUpgrade}. */
export interface PortForwardUpgrade {
  ok: true;
  path: string;
  query: URLSearchParams;
  /** The sub-protocols offered, bearer-token protocols removed. */
  offered: string[];
  target: PortForwardTarget;
  /** The authenticated user (the per-user bound); undefined without auth. */
  requester: StreamRequester;
  key: string;
  extensions: string;
}

/**
 * checkPortForwardUpgrade: the checks every port-forward upgrade makes before its own (the
 * kubelet's getPortForward and the apiserver's pod portforward REST): RBAC `create` on the path's
 * resource (auth.ts; refusals are logged), a host that serves port-forward (405), the path's namespace,
 * pod and optional uid (parameters 0–2: 400 on bad encoding or names), the running pod (404 `pod
 * does not exist`, 404 `pod not found` for another uid, 400 without a running sandbox). Reads
 * `ureq` synchronously, as uWS requires. Never throws.
 * @returns the request's parts, or `{ ok: false, status }`: the Status to refuse the upgrade with.
 */
export function checkPortForwardUpgrade(
  ureq: uWS.HttpRequest,
  host: AgentHost,
  auth: ServerAuth | undefined,
  log: Logger,
): PortForwardUpgrade | { ok: false; status: Status } {
  const refuse = (status: Status) => ({ ok: false as const, status });
  const path = ureq.getUrl();
  const raw = [ureq.getParameter(0) ?? '', ureq.getParameter(1) ?? '', ureq.getParameter(2)];
  const query = new URLSearchParams(ureq.getQuery() ?? '');
  const key = ureq.getHeader('sec-websocket-key');
  const extensions = ureq.getHeader('sec-websocket-extensions');
  const protocolHeader = ureq.getHeader('sec-websocket-protocol');
  const { access } = checkUpgradeAccess(auth, path, ureq);
  if (!access.ok) {
    log.warn({ method: 'GET', path, code: access.status.code, reason: access.reason }, 'Refused port-forward request');
    return refuse(access.status);
  }
  if (!host.portForwardTarget || !host.openPortForward)
    return refuse(statusError(405, 'MethodNotAllowed', 'this agent does not serve port-forward'));
  let params: Record<string, string>;
  try {
    params = { namespace: decodeURIComponent(raw[0]), pod: decodeURIComponent(raw[1]) };
    if (raw[2] !== undefined && raw[2] !== '') params.uid = decodeURIComponent(raw[2]);
  } catch {
    return refuse(statusError(400, 'BadRequest', `malformed percent-encoding in path ${JSON.stringify(path)}`));
  }
  const bad = checkPathParams(params);
  if (bad) return refuse(bad);
  const offered = protocolHeader
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '' && !p.startsWith(kBearerProtocolPrefix));
  let target: PortForwardTarget;
  try {
    target = host.portForwardTarget(params.namespace, params.pod);
  } catch (err) {
    try {
      return refuse(hostErrorStatus(err, params.pod));
    } catch {
      return refuse(statusError(500, 'InternalError', `port-forward: ${(err as Error)?.message ?? String(err)}`));
    }
  }
  if (params.uid !== undefined && params.uid !== target.podUid) return refuse(statusError(404, 'NotFound', 'pod not found'));
  return { ok: true, path, query, offered, target, requester: access.user, key, extensions };
}
