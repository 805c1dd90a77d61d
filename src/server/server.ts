// Counterpart of pkg/kubelet/server/server.go (the kubelet's HTTP server), on uWebSockets.js.
// This is the only file that imports uWebSockets.js (STYLE.md §1: one home per library).
import uWS from 'uWebSockets.js';
import type { Logger } from '../shared/logging.js';
import type { AgentHost } from './agent-host.js';
import { statusLine, statusReply, type HttpReply } from './reply.js';
import { newRouter, type HttpRequestInfo, type Route, type Router } from './router.js';
import { healthzHandler } from './routes/healthz.js';
import { getPodHandler, listPodsHandler } from './routes/pods.js';
import { statusError } from './status.js';

/** kUwsNativeBinary: the native build of uWebSockets.js for Linux x64 / Node 20 (ABI 115). */
export const kUwsNativeBinary = 'uws_linux_x64_115.node';

/** AgentServerOptions: where to listen and how to log. */
export interface AgentServerOptions {
  /** IP address to bind (`--address`). */
  address: string;
  /** TCP port (`--port`); 0 picks a free port, see `AgentServer.port`. */
  port: number;
  /** Logger; the server logs with `{component: 'server'}`. */
  logger: Logger;
}

/** AgentServer: a listening server. */
export interface AgentServer {
  /** The port actually bound (the ephemeral one when 0 was asked for). */
  readonly port: number;
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

/** The routes of the server (DESIGN.md §5); later issues add intake, logs, events, node, metrics, watch. */
function routes(): Route[] {
  return [
    { path: '/healthz', methods: { get: healthzHandler } },
    { path: '/pods', methods: { get: listPodsHandler } },
    { path: '/pods/:namespace/:name', methods: { get: getPodHandler } },
  ];
}

function writeReply(res: uWS.HttpResponse, reply: HttpReply): void {
  res.writeStatus(statusLine(reply.status));
  res.writeHeader('Content-Type', reply.contentType);
  if (reply.headers) for (const [name, value] of Object.entries(reply.headers)) res.writeHeader(name, value);
  res.end(reply.body);
}

function internalError(logger: Logger, req: HttpRequestInfo, err: unknown): HttpReply {
  logger.error({ err, method: req.method, path: req.path }, 'HTTP handler failed');
  return statusReply(statusError(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`));
}

/** dispatch answers one request; everything it reads from `req` is read before any await. */
function dispatch(router: Router, host: AgentHost, logger: Logger, res: uWS.HttpResponse, ureq: uWS.HttpRequest): void {
  const headers: Record<string, string> = {};
  ureq.forEach((name, value) => {
    headers[name] = value;
  });
  const req: HttpRequestInfo = { method: ureq.getMethod(), path: ureq.getUrl(), query: new URLSearchParams(ureq.getQuery() ?? ''), headers };
  const match = router.match(req.method, req.path);
  let reply: HttpReply | Promise<HttpReply>;
  switch (match.kind) {
    case 'notFound':
      reply = statusReply(statusError(404, 'NotFound', 'the server could not find the requested resource'));
      break;
    case 'badPath':
      reply = statusReply(statusError(400, 'BadRequest', `malformed percent-encoding in path ${JSON.stringify(req.path)}`));
      break;
    case 'methodNotAllowed':
      reply = statusReply(statusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'), {
        Allow: match.allow.join(', '),
      });
      break;
    case 'handler':
      try {
        reply = match.handler({ host, req, params: match.params });
      } catch (err) {
        reply = internalError(logger, req, err);
      }
      break;
  }
  if (!(reply instanceof Promise)) {
    // Still inside the uWS callback: the response is corked already.
    writeReply(res, reply);
    return;
  }
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  reply
    .catch((err: unknown) => internalError(logger, req, err))
    .then((r) => {
      if (!aborted) res.cork(() => writeReply(res, r));
    });
}

/**
 * createServer starts the HTTP server on `options.address:options.port` (DESIGN.md §5):
 * `GET /healthz`, `GET /pods`, `GET /pods/{namespace}/{name}`; unknown paths get a 404 `Status`
 * and known paths with another method a 405 `Status` with `Allow`. It reaches the agent only
 * through `host`. Called once by the agent on the main thread; resolves when listening.
 * @throws Error if the native uWebSockets.js binary is not loaded, or the address/port cannot be bound.
 */
export async function createServer(host: AgentHost, options: AgentServerOptions): Promise<AgentServer> {
  checkNativeUws(loadedSharedObjects());
  const logger = options.logger.child({ component: 'server' });
  const router = newRouter(routes());
  const app = uWS.App();
  app.any('/*', (res, req) => dispatch(router, host, logger, res, req));
  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen(options.address, options.port, (socket) => {
      if (socket) resolve(socket);
      else reject(new Error(`cannot listen on ${options.address}:${options.port} (--address/--port): address in use or not available`));
    });
  });
  const port = uWS.us_socket_local_port(listenSocket as uWS.us_socket);
  logger.info({ address: options.address, port }, 'Started HTTP server');
  let closed = false;
  return {
    port,
    close() {
      if (closed) return;
      closed = true;
      uWS.us_listen_socket_close(listenSocket);
      // App.close (uWS ≥ 20.28, missing from the bundled types) also drops keep-alive connections.
      const closeAll = (app as unknown as { close?: () => void }).close;
      if (typeof closeAll === 'function') closeAll.call(app);
      logger.info({ address: options.address, port }, 'Stopped HTTP server');
    },
  };
}
