/**
 * One HTTP request through the server's filter chain, as the kubelet's server runs it
 * (pkg/kubelet/server/server.go: its auth filter, then the go-restful container's routing) and the
 * apiserver's handler chain (k8s.io/apiserver/pkg/server/filters and handler.go: the request's
 * limits, Host/Origin, authentication and authorization, then the route, its 404/405, the body and
 * a handler timeout). server.ts mounts it on every listener.
 */
import type uWS from 'uWebSockets.js';
import type { Status } from '../shared/api.js';
import { boundedErr, boundedField, type Logger } from '../shared/logging.js';
import { authorizationHeaders, authorizerOf, checkAccess, duplicateCredentials, type ServerAuth } from './auth/auth.js';
import { dashboardHttpsRedirect } from './dashboard/https-redirect.js';
import type { AgentHost } from './host/agent-host.js';
import { statusReply, type HttpReply } from './http/reply.js';
import { checkPathParams, conflictingContentLength, headerBytes, tooLarge, type RequestLimits } from './http/request-limits.js';
import { statusError } from './http/status.js';
import { checkHostAndOrigin, type OriginPolicy } from './origin-check.js';
import type { HttpRequestInfo, RouteServerInfo, Router } from './routes/router.js';
import { readBody, writeReply, type RequestState } from './uws-io.js';

function isStatus(v: unknown): v is Status {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'Status';
}

/** ServerContext: what dispatch needs besides the request. */
export interface ServerContext {
  router: Router;
  host: AgentHost;
  logger: Logger;
  auth?: ServerAuth;
  limits: Required<RequestLimits>;
  /** Handed to every handler as RouteContext.server. */
  info: RouteServerInfo;
  /** The listener's Host/Origin policy (origin-check.ts); undefined on the unix socket, which no browser reaches. */
  origin?: OriginPolicy;
  /** On the plain-http listener: the TLS listener's port (0 = none) the page is redirected to (dashboard/https-redirect.ts). */
  dashboardTlsPort?: () => number;
}

function internalError(logger: Logger, req: HttpRequestInfo, err: unknown): HttpReply {
  logger.error({ err: boundedErr(err), method: req.method, path: boundedField(req.path) }, 'HTTP handler failed');
  return statusReply(statusError(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`));
}

/**
 * dispatch answers one request: header limit, one Authorization header at most (400 otherwise),
 * authentication and authorization (auth.ts), route
 * match, path parameter checks, the body (POST/PUT/PATCH/DELETE, within the size limit), then the
 * handler, guarded by a timeout. Everything it reads from `ureq` is read before any await; writes
 * after an await are corked; `onAborted` is always registered.
 */
export function dispatch(ctx: ServerContext, res: uWS.HttpResponse, ureq: uWS.HttpRequest): void {
  const { router, host, logger, limits, info } = ctx;
  const headers: Record<string, string> = {};
  const contentLengths: string[] = [];
  ureq.forEach((name, value) => {
    headers[name] = value;
    if (name === 'content-length') contentLengths.push(value);
  });
  const req: HttpRequestInfo = {
    method: ureq.getMethod(),
    path: ureq.getUrl(),
    query: new URLSearchParams(ureq.getQuery() ?? ''),
    headers,
  };
  const state: RequestState = { aborted: false, onAbort: [] };
  res.onAborted(() => {
    state.aborted = true;
    for (const fn of state.onAbort.splice(0)) fn();
  });
  const fail = (status: Status, extra?: Record<string, string>) => writeReply(res, statusReply(status, extra));
  const badLength = conflictingContentLength(contentLengths);
  if (badLength) {
    // The body's framing is unknown: answer, then close, so no byte of it is read as a next request.
    writeReply(res, statusReply(badLength), undefined, true);
    return;
  }
  if (headerBytes(headers) > limits.maxHeaderBytes) {
    return fail(statusError(431, 'BadRequest', `request headers are too large: limit is ${limits.maxHeaderBytes} bytes`));
  }
  // `headers` keeps the last of repeated headers: the Authorization ones are counted apart.
  const authorization = authorizationHeaders(ureq);
  // What a browser could send cross-site carries no credentials in a header: it must name this node.
  const badOrigin =
    ctx.origin && authorization.count === 0 ? checkHostAndOrigin(ctx.origin, headers.host ?? '', headers.origin ?? '') : undefined;
  if (badOrigin) {
    logger.warn(
      {
        method: req.method,
        path: boundedField(req.path),
        host: boundedField(headers.host ?? ''),
        origin: boundedField(headers.origin ?? ''),
      },
      'Refused a request from another site',
    );
    return fail(badOrigin);
  }
  const toTls = ctx.dashboardTlsPort && dashboardHttpsRedirect(req.method, req.path, headers.host ?? '', ctx.dashboardTlsPort());
  if (toTls) return writeReply(res, toTls);
  const access =
    authorization.count > 1
      ? duplicateCredentials(authorization.count)
      : checkAccess(ctx.auth, req.method, req.path, authorization.value, req.query);
  const authorizer = ctx.auth ? authorizerOf(ctx.auth) : undefined;
  if (!access.ok) {
    // Never log the token itself.
    const code = access.status.code;
    logger.warn(
      { method: req.method, path: req.path, code, reason: access.reason },
      code === 401 ? 'Unauthorized request' : code === 403 ? 'Forbidden request' : 'Bad credentials in request',
    );
    return fail(access.status, access.status.code === 401 ? { 'WWW-Authenticate': 'Bearer realm="kubelet-ts"' } : undefined);
  }
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
    case 'handler': {
      const bad = checkPathParams(match.params);
      if (bad) {
        reply = statusReply(bad);
        break;
      }
      const wantsBody = req.method === 'post' || req.method === 'put' || req.method === 'patch' || req.method === 'delete';
      // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 §6.3).
      const hasBody = headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined;
      if (wantsBody && !hasBody) {
        try {
          reply = match.handler({
            host,
            req,
            params: match.params,
            body: Buffer.alloc(0),
            user: access.user,
            authorizer,
            server: info,
            onAborted: (fn) => state.onAbort.push(fn),
          });
        } catch (err) {
          reply = internalError(logger, req, err);
        }
      } else if (wantsBody) {
        const declared = Number(headers['content-length'] ?? '0');
        if (Number.isFinite(declared) && declared > limits.maxRequestBodyBytes) {
          reply = statusReply(tooLarge(limits.maxRequestBodyBytes));
          break;
        }
        state.bodyPending = true;
        reply = readBody(res, limits.maxRequestBodyBytes, limits.bodyTimeoutMs, state).then(
          (body) => {
            state.bodyPending = false;
            return match.handler({
              host,
              req,
              params: match.params,
              body,
              user: access.user,
              authorizer,
              server: info,
              onAborted: (fn) => state.onAbort.push(fn),
            });
          },
          (err: unknown) => (isStatus(err) ? statusReply(err) : Promise.reject(err)),
        );
      } else {
        try {
          reply = match.handler({ host, req, params: match.params, user: access.user, authorizer, server: info });
        } catch (err) {
          reply = internalError(logger, req, err);
        }
      }
      break;
    }
  }
  if (!(reply instanceof Promise)) {
    // Still inside the uWS callback: the response is corked already.
    writeReply(res, reply, state);
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<HttpReply>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(
          statusReply(
            statusError(504, 'Timeout', `the server was unable to return a response in the time allotted (${limits.handlerTimeoutMs} ms)`),
          ),
        ),
      limits.handlerTimeoutMs,
    );
    timer.unref();
  });
  Promise.race([reply, timeout])
    .catch((err: unknown) => internalError(logger, req, err))
    .then((r) => {
      clearTimeout(timer);
      if (!state.aborted) res.cork(() => writeReply(res, r, state, state.bodyPending === true));
    });
}
