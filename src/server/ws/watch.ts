/**
 * Counterpart of the apiserver's watch endpoint (k8s.io/apiserver/pkg/endpoints/handlers/watch.go,
 * WebSocket form): `WS /watch/pods` on uWebSockets.js (docs/contracts.md "HTTP API").
 *
 * Fan-out: the server holds one watch on the agent (the hub). Unfiltered clients that keep up are
 * subscribed to one uWS pub/sub topic and get each frame through a single `app.publish`; clients
 * with `namespace`/`labelSelector` filters, and clients that fell behind, get per-client sends.
 *
 * Slow clients: a client whose uWS buffered amount is above `highWaterBytes` (64 KiB: the most
 * of a copy one client holds in the agent, plus one frame) is sent nothing more; its pending
 * updates are coalesced to the latest event per pod (a Map uid → the shared event, never a copy)
 * and flushed in resourceVersion order when uWS reports `drain`. A coalesced pod shows its latest
 * state (intermediate versions are skipped; an ADDED then DELETED pod is never shown). A fast
 * client is never delayed by a slow one. A client whose pending data — its uWS buffer plus the
 * frames of the changes coalesced for it since it went live — passes `maxPendingBytes` (2 MiB) is
 * closed with code 4429 and a reason, as the apiserver's watch cache closes a watcher that cannot
 * keep up (cacher/cache_watcher.go): it watches again from the last resourceVersion it saw, or
 * gets a 410 and lists again; one that does not take the close frame within kCloseGraceMs (5 s)
 * is dropped, its buffer with it. The initial ADDED events are not counted: they are handed out at the
 * client's pace, as the watch cache's initial events are.
 *
 * Bounds: an upgrade is first admitted by the shared {@link WatchLimiter} (per user and in all,
 * watch-limits.ts); past it the answer is 429 `TooManyRequests` with `Retry-After`, before any state
 * is copied for the client.
 */
import type uWS from 'uWebSockets.js';
import { isInvalidInput } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { AgentHost } from '../host/agent-host.js';
import { checkUpgradeAccess, type ServerAuth } from '../auth/auth.js';
import { matchesLabelSelector, parseLabelSelector, type LabelSelector } from '../http/label-selector.js';
import { statusLine } from '../http/reply.js';
import { statusError } from '../http/status.js';
import type { WatchLimiter } from '../http/watch-limits.js';
import { watchFrame, type WatchCancel, type WatchEvent } from '../host/watch-event.js';

/** kWatchPath: the WebSocket path of the pods' watch. */
export const kWatchPath = '/watch/pods';
/** kWatchTopic: the uWS pub/sub topic of unfiltered clients that keep up. */
export const kWatchTopic = 'watch/pods';
/** kCloseTooSlow: close code for a client whose buffer reached maxBackpressureBytes (an application code, 4000–4999). */
export const kCloseTooSlow = 4429;

/** kCloseGraceMs: how long a client closed as too slow has to take its close frame before its socket is dropped (milliseconds). */
export const kCloseGraceMs = 5_000;

/** Options of `registerWatch` (bytes). */
export interface WatchServerOptions {
  /** Above this buffered amount a client is "slow": its updates are coalesced until drain. Default 64 KiB. */
  highWaterBytes?: number;
  /** A client whose buffered bytes plus the frames coalesced for it since it went live pass this is closed with 4429. Default 2 MiB. */
  maxPendingBytes?: number;
  /** uWS maxBackpressure, the hard cap within one tick of publishes (uWS drops past it): closed with 4429. Default 64 MiB. */
  maxBackpressureBytes?: number;
  /** Concurrent watches per user and in all (watch-limits.ts), shared with the HTTP watch; undefined = no bound (in-process tests). */
  limiter?: WatchLimiter;
  /**
   * Authentication (the admin token, `--token-auth-file`, `--anonymous-auth`), checked before the
   * upgrade as for every HTTP path; undefined = every upgrade allowed (in-process tests only). A
   * token comes as `Authorization: Bearer <token>`, or — for browsers, which cannot set headers on a
   * WebSocket — the apiserver's subprotocol `base64url.bearer.authorization.k8s.io.<base64url token>`
   * offered beside another subprotocol, which the server echoes back (auth.ts, checkWebSocketAccess).
   */
  auth?: ServerAuth;
}

/** kDefaultWatchServerOptions: the defaults of WatchServerOptions. */
export const kDefaultWatchServerOptions: Required<Omit<WatchServerOptions, 'auth' | 'limiter'>> = {
  highWaterBytes: 64 << 10,
  maxPendingBytes: 2 << 20,
  maxBackpressureBytes: 64 << 20,
};

/** WatchServer: what server.ts keeps of the watch endpoint. */
export interface WatchServer {
  /** Connected watch clients. */
  clients(): number;
  /** Clients currently coalescing (slow). */
  slowClients(): number;
  /** close cancels the hub watch; server.ts closes the sockets. Idempotent. */
  close(): void;
}

interface ClientData {
  namespace: string;
  selector: LabelSelector;
  filtered: boolean;
  fromResourceVersion: number | undefined;
  /** On the topic (unfiltered, keeping up). */
  onTopic: boolean;
  /** Pending coalesced events by uid ('' = BOOKMARK), insertion order = resourceVersion order. */
  pending: Map<string, WatchEvent>;
  /** Frame bytes of the pending events that came live (uid → bytes; initial ones are not counted), and their sum. */
  pendingSizes: Map<string, number>;
  pendingBytes: number;
  /** The initial events have been handed over: pending events count from now on. */
  live: boolean;
  /** Gives the client's place back to the WatchLimiter (idempotent). */
  release: () => void;
  /** Filtered clients: UIDs of the pods the client has been shown (to turn filter transitions into ADDED/DELETED). */
  visible: Set<string>;
  closed: boolean;
}

type Ws = uWS.WebSocket<ClientData>;

function parseQuery(query: URLSearchParams): Pick<ClientData, 'namespace' | 'selector' | 'fromResourceVersion'> {
  const rv = query.get('resourceVersion') ?? '';
  let fromResourceVersion: number | undefined;
  if (rv !== '') {
    if (!/^\d+$/.test(rv)) throw new TypeError(`resourceVersion: must be a non-negative integer, got ${JSON.stringify(rv)}`);
    fromResourceVersion = Number(rv);
  }
  return { namespace: query.get('namespace') ?? '', selector: parseLabelSelector(query.get('labelSelector') ?? ''), fromResourceVersion };
}

/**
 * coalesce puts `event` into a slow client's pending map, as the latest state of its pod:
 * ADDED+MODIFIED → ADDED (latest object); ADDED+DELETED → nothing (the client never saw it);
 * DELETED+ADDED → MODIFIED; otherwise the newer event. Re-inserted so the map stays in
 * resourceVersion order.
 */
export function coalesce(pending: Map<string, WatchEvent>, event: WatchEvent): void {
  const before = pending.get(event.uid);
  pending.delete(event.uid);
  if (!before) {
    pending.set(event.uid, event);
    return;
  }
  if (before.type === 'ADDED' && event.type === 'DELETED') return;
  if (before.type === 'ADDED' && event.type === 'MODIFIED') {
    pending.set(event.uid, { type: 'ADDED', object: event.object, resourceVersion: event.resourceVersion, uid: event.uid });
    return;
  }
  if (before.type === 'DELETED' && event.type === 'ADDED') {
    pending.set(event.uid, { type: 'MODIFIED', object: event.object, resourceVersion: event.resourceVersion, uid: event.uid });
    return;
  }
  pending.set(event.uid, event);
}

/**
 * registerWatch adds `WS /watch/pods` to `app` (docs/contracts.md "HTTP API"). Query: `resourceVersion` (resume),
 * `namespace`, `labelSelector`; a bad value is answered before the upgrade with a 400 `Status`.
 * Returns undefined (and registers nothing) when `host` has no `watch`. Main thread only.
 */
export function registerWatch(
  app: uWS.TemplatedApp,
  host: AgentHost,
  logger: Logger,
  options: WatchServerOptions = {},
): WatchServer | undefined {
  if (!host.watch) return undefined;
  const watch = host.watch.bind(host);
  const opts = {
    highWaterBytes: options.highWaterBytes ?? kDefaultWatchServerOptions.highWaterBytes,
    maxPendingBytes: options.maxPendingBytes ?? kDefaultWatchServerOptions.maxPendingBytes,
    maxBackpressureBytes: options.maxBackpressureBytes ?? kDefaultWatchServerOptions.maxBackpressureBytes,
  };
  const topicClients = new Set<Ws>();
  const directClients = new Set<Ws>();
  let hub: WatchCancel | null = null;
  let sweepScheduled = false;
  let closed = false;

  const matches = (d: ClientData, e: WatchEvent): boolean => {
    if (!d.filtered || e.uid === '') return true;
    const meta = (e.object as { metadata?: { namespace?: string; labels?: Record<string, string> } }).metadata;
    return (d.namespace === '' || (meta?.namespace ?? 'default') === d.namespace) && matchesLabelSelector(d.selector, meta?.labels);
  };

  /**
   * throughFilter: the event a filtered client sees, as the apiserver's filtered watch: a pod that
   * starts matching (labels changed) arrives as ADDED, one that stops matching as DELETED, others
   * not at all. A DELETED of a matching pod always passes (a resumed client may hold it).
   */
  const throughFilter = (d: ClientData, e: WatchEvent): WatchEvent | undefined => {
    if (e.uid === '') return e;
    const match = matches(d, e);
    const had = d.visible.has(e.uid);
    if (e.type === 'DELETED') {
      d.visible.delete(e.uid);
      return had || match ? e : undefined;
    }
    if (match) {
      d.visible.add(e.uid);
      return had || e.type === 'ADDED' ? e : { type: 'ADDED', object: e.object, resourceVersion: e.resourceVersion, uid: e.uid };
    }
    if (!had) return undefined;
    d.visible.delete(e.uid);
    return { type: 'DELETED', object: e.object, resourceVersion: e.resourceVersion, uid: e.uid };
  };

  /** Sockets told to go (tooSlow) whose close handshake has not finished, with the timer that forces it. */
  const closing = new Map<Ws, NodeJS.Timeout>();

  const tooSlow = (ws: Ws) => {
    const d = ws.getUserData();
    logger.warn({ bufferedBytes: ws.getBufferedAmount(), pendingBytes: d.pendingBytes }, 'Closing a watch client that does not read');
    d.closed = true;
    // A client that does not read never takes the close frame queued behind its buffer: past the
    // grace its socket is dropped (the buffer with it), as the apiserver's ended watch holds nothing.
    const force = setTimeout(() => {
      closing.delete(ws);
      try {
        ws.close();
      } catch {
        // closed meanwhile
      }
    }, kCloseGraceMs);
    force.unref();
    closing.set(ws, force);
    ws.end(kCloseTooSlow, 'watch client too slow: watch again with ?resourceVersion= of the last event seen');
  };

  /** offer sends `e` to a direct client now, or coalesces it when the client is behind. */
  const offer = (ws: Ws, event: WatchEvent) => {
    const d = ws.getUserData();
    if (d.closed) return;
    const e = d.filtered ? throughFilter(d, event) : event;
    if (!e) return;
    if (d.pending.size > 0 || ws.getBufferedAmount() >= opts.highWaterBytes) {
      coalesce(d.pending, e);
      d.pendingBytes -= d.pendingSizes.get(e.uid) ?? 0;
      d.pendingSizes.delete(e.uid);
      const kept = d.pending.get(e.uid);
      if (kept && d.live) {
        // The shared event's frame (serialized once for every client), not `kept`'s: a coalesced
        // event is this client's own object, and serializing it here would be the per-client copy
        // this bound is there to prevent. Their sizes differ by the type's few bytes.
        const size = watchFrame(event).length;
        d.pendingSizes.set(e.uid, size);
        d.pendingBytes += size;
        if (ws.getBufferedAmount() + d.pendingBytes > opts.maxPendingBytes) tooSlow(ws);
      }
      return;
    }
    if (ws.send(watchFrame(e)) === 2) tooSlow(ws);
  };

  const toDirect = (ws: Ws) => {
    const d = ws.getUserData();
    if (d.onTopic) {
      ws.unsubscribe(kWatchTopic);
      topicClients.delete(ws);
      d.onTopic = false;
    }
    directClients.add(ws);
  };

  const toTopicIfCaughtUp = (ws: Ws) => {
    const d = ws.getUserData();
    if (d.filtered || d.onTopic || d.pending.size > 0 || ws.getBufferedAmount() >= opts.highWaterBytes) return;
    directClients.delete(ws);
    ws.subscribe(kWatchTopic);
    topicClients.add(ws);
    d.onTopic = true;
  };

  /** After a tick of publishes: topic clients that fell behind leave the topic and coalesce from now on. */
  const sweep = () => {
    sweepScheduled = false;
    for (const ws of topicClients) {
      const buffered = ws.getBufferedAmount();
      if (buffered > opts.maxPendingBytes) {
        topicClients.delete(ws);
        tooSlow(ws);
      } else if (buffered >= opts.highWaterBytes) {
        toDirect(ws);
      }
    }
  };

  const onHubEvent = (e: WatchEvent) => {
    if (topicClients.size > 0) {
      app.publish(kWatchTopic, watchFrame(e));
      if (!sweepScheduled) {
        sweepScheduled = true;
        setImmediate(sweep);
      }
    }
    for (const ws of directClients) offer(ws, e);
  };

  const ensureHub = () => {
    if (hub || closed) return;
    let live = false;
    hub = watch(undefined, (e) => {
      if (live) onHubEvent(e);
      else if (e.type === 'BOOKMARK') live = true; // the hub's own initial events are not for anyone
    });
  };

  const flush = (ws: Ws) => {
    const d = ws.getUserData();
    if (d.closed) return;
    for (const [uid, e] of d.pending) {
      if (ws.getBufferedAmount() >= opts.highWaterBytes) return;
      d.pending.delete(uid);
      d.pendingBytes -= d.pendingSizes.get(uid) ?? 0;
      d.pendingSizes.delete(uid);
      if (ws.send(watchFrame(e)) === 2) return tooSlow(ws);
    }
    toTopicIfCaughtUp(ws);
  };

  app.ws<ClientData>(kWatchPath, {
    maxPayloadLength: 16 * 1024,
    maxBackpressure: opts.maxBackpressureBytes,
    closeOnBackpressureLimit: 0,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade(res, req, context) {
      const query = new URLSearchParams(req.getQuery() ?? '');
      const key = req.getHeader('sec-websocket-key');
      const extensions = req.getHeader('sec-websocket-extensions');
      // The token's subprotocol is never echoed: `protocol` is the first other one offered.
      const { access, protocol } = checkUpgradeAccess(options.auth, kWatchPath, req);
      if (!access.ok) {
        // Never log the token itself.
        logger.warn({ method: 'GET', path: kWatchPath, code: access.status.code, reason: access.reason }, 'Unauthorized watch request');
        const body = JSON.stringify(access.status);
        const code = access.status.code ?? 401;
        res.cork(() => {
          res.writeStatus(statusLine(code)).writeHeader('Content-Type', 'application/json');
          if (code === 401) res.writeHeader('WWW-Authenticate', 'Bearer realm="kubelet-ts"');
          res.end(body);
        });
        return;
      }
      let parsed: ReturnType<typeof parseQuery>;
      try {
        parsed = parseQuery(query);
      } catch (err) {
        if (!(err instanceof TypeError) && !isInvalidInput(err)) throw err;
        const body = JSON.stringify(statusError(400, 'BadRequest', (err as Error).message));
        res.cork(() => res.writeStatus(statusLine(400)).writeHeader('Content-Type', 'application/json').end(body));
        return;
      }
      // Admitted last, so that a refused query takes no place; refused before any state is copied.
      const admission = options.limiter?.acquire(access.user?.name ?? '');
      if (admission && !admission.ok) {
        logger.warn({ method: 'GET', path: kWatchPath, user: access.user?.name ?? '', code: 429 }, 'Too many watches');
        const body = JSON.stringify(admission.status);
        res.cork(() =>
          res
            .writeStatus(statusLine(429))
            .writeHeader('Retry-After', String(admission.retryAfterSeconds))
            .writeHeader('Content-Type', 'application/json')
            .end(body),
        );
        return;
      }
      const data: ClientData = {
        ...parsed,
        filtered: parsed.namespace !== '' || parsed.selector.length > 0,
        onTopic: false,
        pending: new Map(),
        visible: new Set(),
        closed: false,
        pendingSizes: new Map(),
        pendingBytes: 0,
        live: false,
        release: admission?.release ?? (() => {}),
      };
      res.upgrade(data, key, protocol, extensions, context);
    },
    open(ws) {
      ensureHub();
      const d = ws.getUserData();
      let expired = false;
      // The initial part arrives synchronously; cancel at once: live events come through the hub.
      const cancel = watch(d.fromResourceVersion, (e) => {
        if (e.type === 'ERROR') expired = true;
        offer(ws, e);
      });
      cancel();
      d.live = true;
      if (expired) {
        d.closed = true;
        ws.end(1000, 'resourceVersion too old');
        return;
      }
      directClients.add(ws);
      toTopicIfCaughtUp(ws);
    },
    drain(ws) {
      flush(ws);
    },
    close(ws) {
      clearTimeout(closing.get(ws));
      closing.delete(ws);
      const d = ws.getUserData();
      d.closed = true;
      d.pending.clear();
      d.pendingSizes.clear();
      d.visible.clear();
      d.release();
      topicClients.delete(ws);
      directClients.delete(ws);
    },
  });

  return {
    clients: () => topicClients.size + directClients.size,
    slowClients: () => {
      let n = 0;
      for (const ws of directClients) if (ws.getUserData().pending.size > 0) n++;
      return n;
    },
    close() {
      closed = true;
      hub?.();
      hub = null;
    },
  };
}
