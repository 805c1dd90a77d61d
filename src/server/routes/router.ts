// Counterpart of the apiserver's path routing (go-restful WebService routes): path patterns to handlers.
import type { AgentHost } from '../host/agent-host.js';
import type { HttpReply } from '../http/reply.js';
import type { TokenUser } from '../auth/auth.js';
import type { Authorizer } from '../authz/rbac.js';
import type { Logger } from '../../shared/logging.js';
import type { AgentListen } from '../../shared/pod-security/agent-ports.js';

/**
 * HttpRequestInfo: what a handler may know of a request. server.ts copies it out of the uWS
 * request synchronously (uWS request objects die when the callback returns).
 */
export interface HttpRequestInfo {
  /** Lowercased method, e.g. `get`. */
  method: string;
  /** The path, still percent-encoded, without the query (e.g. `/pods/default/web`). */
  path: string;
  /** Parsed query string. */
  query: URLSearchParams;
  /** Request headers by lowercased name. */
  headers: Record<string, string>;
}

/** RouteContext: a handler's input: the agent, the request, and the decoded `:params` of the path. */
export interface RouteContext {
  host: AgentHost;
  req: HttpRequestInfo;
  params: Record<string, string>;
  /** The request body of POST/PUT/PATCH/DELETE, read in full and within the size limit by server.ts. */
  body?: Buffer;
  /** The authenticated user (auth.ts checkAccess); undefined when the server runs without auth (in-process tests). */
  user?: TokenUser;
  /** The server's RBAC authorizer (auth.ts authorizerOf), for the self reviews; undefined without auth. */
  authorizer?: Authorizer;
  /** onAborted: `fn` runs if the client goes away before the answer (long handlers such as POST /run cancel their work). */
  onAborted?: (fn: () => void) => void;
  /** The server the request came in on: where the agent listens (admission refuses pods that would take its ports) and its logger (admission's audit lines). Undefined in in-process tests of single handlers. */
  server?: RouteServerInfo;
}

/** RouteServerInfo: see RouteContext.server. `listen.ports` is filled once the server listens. */
export interface RouteServerInfo {
  listen: AgentListen;
  logger: Logger;
}

/** RouteHandler: answers one request; may be async (server.ts guards with onAborted and corks). */
export type RouteHandler = (ctx: RouteContext) => HttpReply | Promise<HttpReply>;

/**
 * Route: a path pattern (`/pods/:namespace/:name`; a last segment `*` matches any rest, even none:
 * `/api/v1/namespaces/:namespace/pods/:proxyName/proxy/*`) and its handlers by lowercased method.
 */
export interface Route {
  path: string;
  methods: Partial<Record<'get' | 'post' | 'put' | 'delete' | 'patch' | 'head' | 'options', RouteHandler>>;
}

/** RouteMatch: a handler with its params; or `notFound` (no route for the path); or
 * `methodNotAllowed` with the methods that the path allows; or `badPath` (undecodable %-escapes). */
export type RouteMatch =
  | { kind: 'handler'; handler: RouteHandler; params: Record<string, string> }
  | { kind: 'notFound' }
  | { kind: 'methodNotAllowed'; allow: string[] }
  | { kind: 'badPath' };

/** Router: matches a method and a path against the routes it was built with. */
export interface Router {
  /** match: the route for `method` (lowercased) and `path`; pure. A single trailing `/` is ignored. */
  match(method: string, path: string): RouteMatch;
}

/** newRouter compiles `routes`. A static segment always beats a `:param` at the same place. */
export function newRouter(routes: Route[]): Router {
  const compiled = routes.map((r) => ({ segments: r.path.split('/').slice(1), methods: r.methods }));
  // Static patterns first, so `/pods/x` could be added later without a `:param` route hiding it.
  compiled.sort((a, b) => a.segments.filter((s) => s.startsWith(':')).length - b.segments.filter((s) => s.startsWith(':')).length);
  return {
    match(method, path) {
      let parts = path.split('/').slice(1);
      if (parts.length > 1 && parts[parts.length - 1] === '') parts = parts.slice(0, -1);
      let decoded: string[];
      try {
        decoded = parts.map((p) => decodeURIComponent(p));
      } catch {
        return { kind: 'badPath' };
      }
      for (const route of compiled) {
        // A last segment `*` matches whatever follows, nothing included (the handler reads req.path).
        const fixed = route.segments[route.segments.length - 1] === '*' ? route.segments.length - 1 : -1;
        if (fixed < 0 ? route.segments.length !== decoded.length : decoded.length < fixed) continue;
        const params: Record<string, string> = {};
        let ok = true;
        for (let i = 0; i < (fixed < 0 ? decoded.length : fixed) && ok; i++) {
          const seg = route.segments[i];
          if (seg.startsWith(':')) {
            if (decoded[i] === '') ok = false;
            else params[seg.slice(1)] = decoded[i];
          } else if (seg !== decoded[i]) {
            ok = false;
          }
        }
        if (!ok) continue;
        const handler = route.methods[method as keyof Route['methods']];
        if (handler) return { kind: 'handler', handler, params };
        return { kind: 'methodNotAllowed', allow: Object.keys(route.methods).map((m) => m.toUpperCase()) };
      }
      return { kind: 'notFound' };
    },
  };
}
