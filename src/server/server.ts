// Counterpart of pkg/kubelet/server/server.go (the kubelet's HTTP server), on uWebSockets.js.
// This is the only file that imports uWebSockets.js (STYLE.md §1: one home per library).
import { chmodSync } from 'node:fs';
import uWS from 'uWebSockets.js';
import { boundedField, type Logger } from '../shared/logging.js';
import type { AgentHost } from './host/agent-host.js';
import { refuseUpgrade } from './http/reply.js';
import { newRouter, type Route } from './routes/router.js';
import { dispatch, type ServerContext } from './dispatch.js';
import { healthzHandler } from './routes/healthz.js';
import { getPodHandler, listPodsHandler } from './routes/pods.js';
import { instrumentRoutes, metricsHandler } from './routes/metrics.js';
import { statsRoutes } from './routes/stats.js';
import { dashboardAssetHandler, dashboardIndexHandler } from './dashboard/serve.js';
import { registerWatch } from './ws/watch.js';
import { newWatchLimiter, type WatchLimits } from './http/watch-limits.js';
import type { ServerAuth } from './auth/auth.js';
import { kDefaultRequestLimits, kMaxBodyTimeoutMs, type RequestLimits } from './http/request-limits.js';
import { intakeRoutes } from './routes/intake.js';
import { objectRoutes } from './routes/objects.js';
import { logsRoutes } from './routes/logs.js';
import { eventsRoutes } from './routes/events.js';
import { nodeRoutes } from './routes/node.js';
import { streamingRoutes } from './streaming/run.js';
import { registerStreaming } from './streaming/exec-ws.js';
import { registerPortForwardTunnel } from './streaming/port-forward-tunnel.js';
import { kDefaultPortForwardLimits, portForwardRoutes, registerPortForward } from './streaming/port-forward-ws.js';
import { newStreamLimiter, type StreamingOptions, type StreamLimiter } from './streaming/stream-limits.js';
import { newKubeApi } from './kube-api/routes.js';
import { checkHostAndOrigin, newOriginPolicy, type OriginPolicy } from './origin-check.js';
import { kUnixSocketMode, prepareUnixSocketPath, removeUnixSocket } from './unix-socket.js';
import type { KubeApiOptions } from './kube-api/options.js';

/** kUwsNativeBinary: the native build of uWebSockets.js for Linux x64 / Node 20 (ABI 115). */
/** uWS ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT. */
const kListenExclusivePort = 1;

export const kUwsNativeBinary = 'uws_linux_x64_115.node';

/** AgentServerOptions: where to listen and how to log. */
export interface AgentServerOptions {
  /** IP address to bind (`--address`). */
  address: string;
  /** TCP port (`--port`); 0 picks a free port, see `AgentServer.port`. */
  port: number;
  /** Logger; the server logs with `{component: 'server'}`. */
  logger: Logger;
  /**
   * Authentication and authorization (auth.ts): the bearer tokens (the admin token and
   * `--token-auth-file`) and whether anonymous reads are allowed (`--anonymous-auth`). The agent
   * always passes it; undefined = every request is allowed, for in-process tests of other parts.
   */
  auth?: ServerAuth;
  /** Size limits and timeouts (defaults: kDefaultRequestLimits). */
  limits?: RequestLimits;
  /** Bounds of exec, attach and run (streaming/stream-limits.ts: idle timeout, streams per pod and per node). */
  streaming?: StreamingOptions;
  /** Bounds of port-forward (connections per user, per pod and per node; default kDefaultPortForwardLimits; the idle timeout is `streaming`'s). */
  portForward?: Omit<StreamingOptions, 'idleTimeoutMs'>;
  /**
   * A second listener: the same routes over TLS (`--tls-port`), for kubectl, which sends a bearer
   * token only over TLS. `port` 0 picks a free port (see `AgentServer.tlsPort`); the files are PEM.
   */
  tls?: { port: number; certFile: string; keyFile: string };
  /** Concurrent watches per user and in all, over `WS /watch/pods` and the API's watch together (watch-limits.ts; default kDefaultWatchLimits). */
  watchLimits?: WatchLimits;
  /**
   * A unix socket to serve the same routes on (`<root-dir>/kubelet-ts.sock`): made mode 0600 for the
   * agent's user; a stale one is replaced, anything else at the path refused (unix-socket.ts). The
   * local client authenticates the server by the file's owner (src/cli/local-socket.ts).
   */
  unixSocket?: string;
  /**
   * The node's names beside the loopback ones (node name, `--address`, node IPs): the `Host` values
   * the TCP listeners answer to a request without credentials and to every WebSocket upgrade (origin-check.ts).
   */
  hostNames?: string[];
  /** The Kubernetes API slice's seams (kube-api/options.ts: PATCH of pods, OpenAPI documents); defaults when absent. */
  kubeApi?: KubeApiOptions;
}

/** AgentServer: a listening server. */
export interface AgentServer {
  /** The port actually bound (the ephemeral one when 0 was asked for). */
  readonly port: number;
  /** The TLS listener's port (AgentServerOptions.tls), or 0 without one. */
  readonly tlsPort: number;
  /** The unix socket's path (AgentServerOptions.unixSocket), or '' without one. */
  readonly unixSocket: string;
  /** close stops listening and drops open connections. Idempotent; returns at once. */
  close(): void;
}

/**
 * checkNativeUws throws unless the native uWebSockets.js binary is loaded: the package silently
 * falls back to a slow pure-JS server when its binary does not load (ENVIRONMENT.md).
 * @param sharedObjects the process's loaded shared objects (`process.report.getReport().sharedObjects`).
 * @throws Error naming the missing binary.
 */
export function checkNativeUws(sharedObjects: readonly string[]): void {
  if (!sharedObjects.some((so) => so.endsWith(`/${kUwsNativeBinary}`) || so === kUwsNativeBinary)) {
    throw new Error(
      `uWebSockets.js native binary ${kUwsNativeBinary} is not loaded (it fell back to its slow JS server); ` +
        `this needs Node 20 (ABI 115) on linux-x64 and the uWebSockets.js package's binaries/ directory`,
    );
  }
}

function loadedSharedObjects(): string[] {
  const report = process.report.getReport() as unknown as { sharedObjects?: string[] };
  return report.sharedObjects ?? [];
}

/** The routes of the server (docs/contracts.md "HTTP API") */
function routes(limiter: StreamLimiter, kubeApi: Route[]): Route[] {
  return [
    ...kubeApi,
    ...streamingRoutes(limiter),
    ...portForwardRoutes(),
    { path: '/healthz', methods: { get: healthzHandler } },
    { path: '/pods', methods: { get: listPodsHandler } },
    { path: '/pods/:namespace/:name', methods: { get: getPodHandler } },
    ...intakeRoutes(),
    ...objectRoutes(),
    ...logsRoutes(),
    ...eventsRoutes(),
    ...nodeRoutes(),
    { path: '/metrics', methods: { get: metricsHandler } },
    ...statsRoutes(),
    { path: '/', methods: { get: dashboardIndexHandler } },
    { path: '/dashboard/:file', methods: { get: dashboardAssetHandler } },
  ];
}

/** mergeRoutes folds routes with the same path into one (their methods together). */
function mergeRoutes(list: Route[]): Route[] {
  const byPath = new Map<string, Route>();
  for (const r of list) {
    const prev = byPath.get(r.path);
    byPath.set(r.path, prev ? { path: r.path, methods: { ...prev.methods, ...r.methods } } : { path: r.path, methods: { ...r.methods } });
  }
  return [...byPath.values()];
}

/**
 * createServer starts the HTTP server on `options.address:options.port` (docs/contracts.md "HTTP API"):
 * `GET /healthz`, `GET /pods`, `GET /pods/{namespace}/{name}`; unknown paths get a 404 `Status`
 * and known paths with another method a 405 `Status` with `Allow`. It reaches the agent only
 * through `host`. Called once by the agent on the main thread; resolves when listening.
 * @throws Error if the native uWebSockets.js binary is not loaded, or the address/port cannot be bound.
 */
export async function createServer(host: AgentHost, options: AgentServerOptions): Promise<AgentServer> {
  checkNativeUws(loadedSharedObjects());
  const logger = options.logger.child({ component: 'server' });
  const limiter = newStreamLimiter(options.streaming);
  // One bound for both watch endpoints, over the HTTP and the TLS listener alike.
  const watchLimiter = newWatchLimiter(options.watchLimits);
  const kubeApi = newKubeApi({ watchLimiter, ...options.kubeApi });
  const router = newRouter(instrumentRoutes(mergeRoutes(routes(limiter, kubeApi.routes)), host));
  const portForwardLimiter = newStreamLimiter(
    {
      maxStreamsPerPod: options.portForward?.maxStreamsPerPod ?? kDefaultPortForwardLimits.maxStreamsPerPod,
      maxStreamsPerNode: options.portForward?.maxStreamsPerNode ?? kDefaultPortForwardLimits.maxStreamsPerNode,
      maxStreamsPerUser: options.portForward?.maxStreamsPerUser ?? kDefaultPortForwardLimits.maxStreamsPerUser,
      idleTimeoutMs: limiter.options.idleTimeoutMs,
    },
    { what: 'port-forward connections', userFlag: '--max-port-forwards-per-user' },
  );
  const limits = { ...kDefaultRequestLimits, ...options.limits };
  // uWS drops a request still uploading after 8-12 s without a word: answer 408 before that.
  limits.bodyTimeoutMs = Math.min(limits.bodyTimeoutMs, kMaxBodyTimeoutMs);
  const listenPorts: number[] = [];
  const ctx: ServerContext = {
    router,
    host,
    logger,
    auth: options.auth,
    limits,
    info: { listen: { address: options.address, ports: listenPorts }, logger },
  };
  /**
   * mount registers every route on one uWS app (the HTTP one, with `tls` the HTTPS one, with
   * `unixSocket` the socket's). With `origin`, every WebSocket upgrade first passes the Host/Origin
   * check (origin-check.ts) and so does dispatch for a request without credentials.
   */
  const mount = (app: uWS.TemplatedApp, origin?: OriginPolicy, dashboardTlsPort?: () => number) => {
    const checked = origin ? withOriginCheck(app, origin, logger) : app;
    const watchServer = registerWatch(checked, host, logger, { auth: options.auth, limiter: watchLimiter });
    registerStreaming(checked, host, logger, limiter, options.auth);
    registerPortForward(checked, host, logger, portForwardLimiter, options.auth);
    registerPortForwardTunnel(checked, host, logger, portForwardLimiter, options.auth);
    const appCtx: ServerContext = { ...ctx, origin, dashboardTlsPort };
    app.any('/*', (res, req) => dispatch(appCtx, res, req));
    return watchServer;
  };
  const names = options.hostNames ?? [];
  const httpOrigin = newOriginPolicy('http', [...names, options.address]);
  const app = uWS.App();
  const watchServers = [mount(app, httpOrigin, () => tls?.port ?? 0)];
  const listenSocket = await listenOn(app, options.address, options.port, '--address/--port');
  const port = uWS.us_socket_local_port(listenSocket as uWS.us_socket);
  listenPorts.push(port);
  logger.info({ address: options.address, port }, 'Started HTTP server');
  let tls: { app: uWS.TemplatedApp; socket: uWS.us_listen_socket; port: number } | undefined;
  let unix: { app: uWS.TemplatedApp; socket: uWS.us_listen_socket } | undefined;
  try {
    if (options.tls) {
      const tlsOrigin = newOriginPolicy('https', [...names, options.address]);
      const tlsApp = uWS.SSLApp({ cert_file_name: options.tls.certFile, key_file_name: options.tls.keyFile });
      watchServers.push(mount(tlsApp, tlsOrigin));
      const socket = await listenOn(tlsApp, options.address, options.tls.port, '--address/--tls-port');
      tls = { app: tlsApp, socket, port: uWS.us_socket_local_port(socket as uWS.us_socket) };
      listenPorts.push(tls.port);
      logger.info({ address: options.address, port: tls.port }, 'Started HTTPS server');
    }
    if (options.unixSocket) {
      const unixApp = uWS.App();
      watchServers.push(mount(unixApp));
      unix = { app: unixApp, socket: await listenUnix(unixApp, options.unixSocket) };
      logger.info({ path: options.unixSocket }, 'Started the local unix socket server');
    }
  } catch (err) {
    uWS.us_listen_socket_close(listenSocket);
    if (tls) uWS.us_listen_socket_close(tls.socket);
    throw err;
  }
  let closed = false;
  const closeApp = (a: uWS.TemplatedApp, socket: uWS.us_listen_socket) => {
    uWS.us_listen_socket_close(socket);
    // App.close (uWS ≥ 20.28, missing from the bundled types) also drops keep-alive connections.
    const closeAll = (a as unknown as { close?: () => void }).close;
    if (typeof closeAll === 'function') closeAll.call(a);
  };
  return {
    port,
    tlsPort: tls?.port ?? 0,
    unixSocket: unix ? (options.unixSocket ?? '') : '',
    close() {
      if (closed) return;
      closed = true;
      for (const w of watchServers) w?.close();
      kubeApi.close();
      closeApp(app, listenSocket);
      if (tls) closeApp(tls.app, tls.socket);
      if (unix) {
        closeApp(unix.app, unix.socket);
        removeUnixSocket(options.unixSocket ?? '');
      }
      logger.info({ address: options.address, port }, 'Stopped HTTP server');
    },
  };
}

/**
 * listenOn binds `app` to `address:port` exclusively: without it uSockets sets SO_REUSEPORT and a
 * second agent on the same port would silently share it. (The 4-argument host form exists at
 * runtime but not in the bundled types.)
 * @throws Error naming `flags` when the address/port cannot be bound.
 */
function listenOn(app: uWS.TemplatedApp, address: string, port: number, flags: string): Promise<uWS.us_listen_socket> {
  return new Promise<uWS.us_listen_socket>((resolve, reject) => {
    const listen = app.listen as unknown as (
      host: string,
      port: number,
      opts: number,
      cb: (s: uWS.us_listen_socket | false) => void,
    ) => void;
    listen.call(app, address, port, kListenExclusivePort, (socket) => {
      if (socket) resolve(socket);
      else reject(new Error(`cannot listen on ${address}:${port} (${flags}): address in use or not available`));
    });
  });
}

/**
 * listenUnix serves `app` on the unix socket `path` (prepareUnixSocketPath first: a stale socket is
 * replaced, anything else refused), created under umask 0177 and then set to mode 0600, so that no
 * other user can connect even for an instant.
 * @throws InvalidArgumentError naming the path (prepareUnixSocketPath), or Error when it cannot be bound.
 */
async function listenUnix(app: uWS.TemplatedApp, path: string): Promise<uWS.us_listen_socket> {
  await prepareUnixSocketPath(path);
  const listen = (app as unknown as { listen_unix: (cb: (s: uWS.us_listen_socket | false) => void, path: string) => void }).listen_unix;
  let socket: uWS.us_listen_socket | false = false;
  const previous = process.umask(0o177);
  try {
    listen.call(app, (s) => (socket = s), path);
  } finally {
    process.umask(previous);
  }
  if (!socket) throw new Error(`cannot listen on the unix socket ${path}: not available`);
  chmodSync(path, kUnixSocketMode);
  return socket;
}

/**
 * withOriginCheck: `app` whose `ws()` registrations refuse an upgrade with the 403 `Status` of
 * checkHostAndOrigin before their own upgrade handler runs (every WebSocket route: watch, exec,
 * attach, port-forward and its tunnel), so no handler can forget it.
 */
function withOriginCheck(app: uWS.TemplatedApp, policy: OriginPolicy, logger: Logger): uWS.TemplatedApp {
  return new Proxy(app, {
    get(target, prop, receiver) {
      if (prop !== 'ws') {
        const value = Reflect.get(target, prop) as unknown;
        // uWS's native methods need the app itself as `this`.
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      return (pattern: string, behavior: uWS.WebSocketBehavior<unknown>) => {
        const upgrade = behavior.upgrade;
        const checked: uWS.WebSocketBehavior<unknown> = {
          ...behavior,
          upgrade(res, req, context) {
            const bad = checkHostAndOrigin(policy, req.getHeader('host'), req.getHeader('origin'));
            if (!bad) return upgrade?.(res, req, context);
            logger.warn(
              {
                path: boundedField(req.getUrl()),
                host: boundedField(req.getHeader('host')),
                origin: boundedField(req.getHeader('origin')),
              },
              'Refused a WebSocket upgrade from another site',
            );
            refuseUpgrade(res, bad);
          },
        };
        target.ws(pattern, checked);
        return receiver as uWS.TemplatedApp;
      };
    },
  });
}
