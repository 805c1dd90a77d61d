/**
 * Counterpart of k8s.io/apiserver/pkg/authentication/token/tokenfile (the static token file,
 * `--token-auth-file`), of the apiserver's WebSocket bearer-token authenticator
 * (k8s.io/apiserver/pkg/authentication/request/websocket/protocol.go), of its anonymous
 * authenticator (request/anonymous: `system:anonymous`, group `system:unauthenticated`, joined
 * with union.NewFailOnError so a wrong token is refused, never downgraded to anonymous) and of the
 * kubelet server's authn/authz filter (pkg/kubelet/server/auth.go): authentication here, then
 * one authorization for every request by the RBAC policy (authz/: the request's attributes, the
 * built-in policy and `--authorization-policy-file`).
 */
import { readFile } from 'node:fs/promises';
import type { Status } from '../../shared/api.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import { kDashboardAssetPaths } from '../dashboard/serve.js';
import { statusError } from '../http/status.js';
import { authorizeRequest, defaultAuthorizer, forbidden, forbiddenMessage } from '../authz/authorize.js';
import type { Authorizer } from '../authz/rbac.js';

export { kReadOnlyGroup } from '../authz/bootstrap.js';

/** TokenUser: who a bearer token stands for (user.DefaultInfo). */
export interface TokenUser {
  name: string;
  uid: string;
  groups: string[];
}

/** TokenAuthenticator: tokens → users, from a static token file. */
export interface TokenAuthenticator {
  /** The file the tokens came from (for logs). */
  readonly origin: string;
  /** How many tokens are known. */
  readonly size: number;
  /** authenticateToken: the user of `token`, or undefined. Pure lookup. */
  authenticateToken(token: string): TokenUser | undefined;
}

/**
 * parseCsv reads RFC 4180 CSV as Go's encoding/csv does with `FieldsPerRecord = -1` and
 * `TrimLeadingSpace = true`: fields separated by `,`, a field may be double-quoted (`""` inside
 * quotes is one `"`, and quoted fields may hold commas and newlines), blank lines are skipped,
 * CRLF and LF both end a record. No csv package is installed; this careful minimal parser stands
 * in for one (csv-parse would be the package to add).
 * @returns the records with their 1-based line numbers.
 * @throws InvalidArgumentError `<origin>: line N: …` for an unterminated quoted field or a bare `"` in an unquoted field.
 */
export function parseCsv(text: string, origin: string): { line: number; fields: string[] }[] {
  const records: { line: number; fields: string[] }[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    // Skip blank lines.
    if (text[i] === '\n') {
      i++;
      line++;
      continue;
    }
    if (text[i] === '\r' && text[i + 1] === '\n') {
      i += 2;
      line++;
      continue;
    }
    const startLine = line;
    const fields: string[] = [];
    for (;;) {
      while (i < n && (text[i] === ' ' || text[i] === '\t')) i++; // TrimLeadingSpace
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= n) throw new InvalidArgumentError(`${origin}: line ${startLine}: extraneous or missing " in quoted-field`);
          const c = text[i];
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n') line++;
          field += c;
          i++;
        }
        if (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          throw new InvalidArgumentError(`${origin}: line ${line}: extraneous or missing " in quoted-field`);
        }
      } else {
        while (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          if (text[i] === '"') throw new InvalidArgumentError(`${origin}: line ${line}: bare " in non-quoted-field`);
          field += text[i++];
        }
        if (text[i] === '\r' && text[i + 1] !== '\n') field += text[i++];
      }
      fields.push(field);
      if (i < n && text[i] === ',') {
        i++;
        continue;
      }
      if (i < n && text[i] === '\r') i++;
      if (i < n && text[i] === '\n') {
        i++;
        line++;
      }
      break;
    }
    records.push({ line: startLine, fields });
  }
  return records;
}

/**
 * parseTokenFile reads a static token file: one record per line, `token,user,uid[,"group1,group2"]`,
 * as the apiserver's tokenfile.NewCSV. A record with an empty token is skipped (with a warning); a
 * duplicate token replaces the earlier one (with a warning). Pure.
 * @param warn receives the warnings (e.g. `duplicate token has been found in token file 'f', record number '3'`).
 * @throws InvalidArgumentError `token file '<origin>' must have at least 3 columns (token, user name, user uid), found N`,
 *   or a CSV syntax error naming the file and line.
 */
export function parseTokenFile(text: string, origin: string, warn: (message: string) => void = () => {}): TokenAuthenticator {
  const tokens = new Map<string, TokenUser>();
  let recordNum = 0;
  for (const { fields } of parseCsv(text, `token file '${origin}'`)) {
    if (fields.length < 3) {
      throw new InvalidArgumentError(
        `token file '${origin}' must have at least 3 columns (token, user name, user uid), found ${fields.length}`,
      );
    }
    recordNum++;
    const [token, name, uid] = fields;
    if (token === '') {
      warn(`empty token has been found in token file '${origin}', record number '${recordNum}'`);
      continue;
    }
    if (tokens.has(token)) warn(`duplicate token has been found in token file '${origin}', record number '${recordNum}'`);
    const groups = fields.length >= 4 && fields[3] !== '' ? fields[3].split(',') : [];
    tokens.set(token, { name, uid, groups });
  }
  return {
    origin,
    size: tokens.size,
    authenticateToken: (token) => tokens.get(token),
  };
}

/**
 * loadTokenFile reads and parses `--token-auth-file`.
 * @throws InvalidArgumentError naming `--token-auth-file` and the path when it cannot be read, or as parseTokenFile.
 */
export async function loadTokenFile(path: string, warn?: (message: string) => void): Promise<TokenAuthenticator> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`--token-auth-file: cannot read ${path}: ${(err as Error).message}`);
  }
  return parseTokenFile(text, path, warn);
}

/**
 * kAdminUser: who the agent's own admin token (`<root-dir>/admin.token`) stands for. The group is
 * the apiserver's superuser group `system:masters`, so a reader who knows Kubernetes sees at once
 * that this identity may do everything.
 */
export const kAdminUser: Readonly<TokenUser> = Object.freeze({
  name: 'kubelet-ts:admin',
  uid: 'kubelet-ts:admin',
  groups: Object.freeze(['system:masters']) as string[],
});

/** kAnonymousUser: the user of a request without credentials (request/anonymous's user.Anonymous). */
export const kAnonymousUser: Readonly<TokenUser> = Object.freeze({
  name: 'system:anonymous',
  uid: '',
  groups: Object.freeze(['system:unauthenticated']) as string[],
});

/**
 * newAdminTokenAuthenticator: an authenticator that knows one token, the agent's admin token,
 * as {@link kAdminUser}. Pure lookup; the token is compared, never logged.
 * @param origin names the token file in logs (e.g. `/var/lib/kubelet-ts/admin.token`).
 * @throws InvalidArgumentError if `token` is empty.
 */
export function newAdminTokenAuthenticator(token: string, origin: string): TokenAuthenticator {
  if (token === '') throw new InvalidArgumentError(`${origin}: the admin token is empty`);
  return { origin, size: 1, authenticateToken: (t) => (t === token ? kAdminUser : undefined) };
}

/**
 * unionTokenAuthenticators: the first authenticator that knows a token wins (the apiserver's
 * union of token authenticators). The admin token goes first, so a `--token-auth-file` entry with
 * the same token cannot demote it. Pure.
 */
export function unionTokenAuthenticators(...list: TokenAuthenticator[]): TokenAuthenticator {
  return {
    origin: list.map((a) => a.origin).join(', '),
    size: list.reduce((n, a) => n + a.size, 0),
    authenticateToken(token) {
      for (const a of list) {
        const user = a.authenticateToken(token);
        if (user) return user;
      }
      return undefined;
    },
  };
}

/**
 * ServerAuth: how the server authenticates and authorizes (the kubelet's
 * KubeletAuthentication/KubeletAuthorization).
 * - `tokens`: the bearer tokens it knows (the admin token and `--token-auth-file`).
 * - `anonymous`: whether a request without credentials is served as {@link kAnonymousUser}
 *   (`--anonymous-auth`), for what the built-in anonymous bindings allow (reads).
 * - `authorizer`: the RBAC policy (the built-in policy plus `--authorization-policy-file`);
 *   absent = the built-in policy alone (authz/bootstrap.ts).
 * - `nodeName`: this node's name, the object of the kubelet paths' `nodes/…` attributes ('' if absent).
 */
export interface ServerAuth {
  tokens: TokenAuthenticator;
  anonymous: boolean;
  authorizer?: Authorizer;
  nodeName?: string;
}

/** authorizerOf: the authorizer of `auth` (its policy, or the built-in one). */
export function authorizerOf(auth: ServerAuth): Authorizer {
  return auth.authorizer ?? defaultAuthorizer(auth.anonymous);
}

/** AccessDecision: the request may go on as `user` (undefined when auth is off), or gets `status`. */
export type AccessDecision =
  { ok: true; user?: TokenUser } | { ok: false; status: Status; /** why, for the log line (never the token) */ reason: string };

/** Paths served without authentication (the kubelet's /healthz is probed by anyone). */
const kUnauthenticatedPaths = new Set(['/healthz', '/healthz/']);

/**
 * The dashboard's static files (page, script, stylesheet) are served to GET/HEAD without a token:
 * they hold no data, and a browser cannot send a bearer header when it loads a page. The page asks
 * for the token itself when an API call answers 401 (as the apiserver serves its discovery and
 * OpenAPI documents to everyone while the data needs a token).
 */
const kPublicReadPaths = new Set(kDashboardAssetPaths);

const kReadMethods = new Set(['get', 'head']);

function unauthorized(reason: string): AccessDecision {
  return { ok: false, reason, status: statusError(401, 'Unauthorized', 'Unauthorized') };
}

/**
 * duplicateCredentials: the 400 answer to a request with more than one `Authorization` header.
 * Which one a server, a proxy or a log reads differs (Go's Header.Get takes the first, a JS map
 * the last), so the request is refused before either is looked at.
 */
export function duplicateCredentials(count: number): AccessDecision {
  return {
    ok: false,
    reason: `${count} Authorization headers`,
    status: statusError(400, 'BadRequest', `a request may carry one Authorization header, got ${count}`),
  };
}

/**
 * authorizationHeaders reads every `Authorization` header of a request (uWS's `req.forEach`
 * passes repeated headers one by one, lowercased), so the caller can refuse more than one with
 * {@link duplicateCredentials}. Must run inside the uWS request callback.
 * @returns the first value ('' if none) and how many there were.
 */
export function authorizationHeaders(req: { forEach(cb: (name: string, value: string) => void): void }): { value: string; count: number } {
  let value = '';
  let count = 0;
  req.forEach((name, v) => {
    if (name !== 'authorization') return;
    if (count === 0) value = v;
    count++;
  });
  return { value, count };
}

/**
 * authorizeUser: the RBAC decision for `user` on the request (authz/authorize.ts): the user, or 403
 * with the apiserver's message (401 for the anonymous user, so a client knows to send a token). Pure.
 */
function authorizeUser(auth: ServerAuth, user: TokenUser, method: string, path: string, query?: URLSearchParams): AccessDecision {
  const d = authorizeRequest(authorizerOf(auth), user, method, path, auth.nodeName ?? '', query);
  if (d.allowed) return { ok: true, user };
  if (user === kAnonymousUser)
    return unauthorized(`no bearer token (anonymous requests may not: ${forbiddenMessage(user.name, d.attributes)})`);
  return { ok: false, reason: `RBAC: ${forbiddenMessage(user.name, d.attributes)}`, status: forbidden(user.name, d.attributes) };
}

/** authorizeToken authenticates the bearer `token` (401 for an unknown one) and authorizes its user. Pure. */
function authorizeToken(auth: ServerAuth, method: string, path: string, token: string, query?: URLSearchParams): AccessDecision {
  const user = auth.tokens.authenticateToken(token);
  if (!user) return unauthorized('invalid bearer token');
  return authorizeUser(auth, user, method, path, query);
}

/**
 * checkAccess authenticates (`Authorization: Bearer <token>`) and authorizes one request, as the
 * kubelet's filter does after the apiserver's authenticators. With `auth` undefined (only
 * in-process tests start a server so) every request is allowed. `/healthz` never needs a token,
 * nor do GET and HEAD of the dashboard's static files ({@link kDashboardAssetPaths}). A request
 * without an `Authorization` header is anonymous: 401 unless `auth.anonymous`, then authorized as
 * {@link kAnonymousUser} (401 when refused). A malformed header or an unknown token → 401 (never
 * anonymous). Every identity is then authorized by RBAC (authz/authorize.ts: the request's
 * attributes, the built-in policy and the policy file): 403 `Forbidden` with the apiserver's
 * message when no rule allows it. Pure; WebSocket upgrades go through {@link checkWebSocketAccess};
 * a second `Authorization` header is refused before this by the caller ({@link duplicateCredentials}).
 * @param method lowercased HTTP method (`get` for a WebSocket upgrade).
 * @param path the request path (without query, still percent-encoded).
 * @param authorization the `Authorization` header value ('' if none).
 * @param query the query (`watch=true` makes a collection GET a `watch`).
 */
export function checkAccess(
  auth: ServerAuth | undefined,
  method: string,
  path: string,
  authorization: string,
  query?: URLSearchParams,
): AccessDecision {
  if (auth === undefined || kUnauthenticatedPaths.has(path)) return { ok: true };
  if (kReadMethods.has(method) && kPublicReadPaths.has(path)) return { ok: true };
  if (authorization === '') {
    if (!auth.anonymous) return unauthorized('no bearer token (anonymous requests are off: --anonymous-auth=false)');
    return authorizeUser(auth, kAnonymousUser, method, path, query);
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) return unauthorized('malformed Authorization header');
  return authorizeToken(auth, method, path, m[1], query);
}

/** kBearerProtocolPrefix: the apiserver's WebSocket subprotocol prefix that carries a bearer token. */
export const kBearerProtocolPrefix = 'base64url.bearer.authorization.k8s.io.';

/**
 * ProtocolToken: what a `Sec-WebSocket-Protocol` header offers: the bearer token ('' when no
 * bearer subprotocol was offered) and the other subprotocols in the client's order; or why the
 * bearer subprotocol is refused.
 */
export type ProtocolToken = { ok: true; token: string; protocols: string[] } | { ok: false; reason: string };

const kUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * bearerTokenFromProtocols reads the bearer token a browser sends as the subprotocol
 * `base64url.bearer.authorization.k8s.io.<base64url, no padding, of the token>`, as the
 * apiserver's websocket.ProtocolAuthenticator: entries are comma-separated and trimmed; more than
 * one bearer entry, an encoding that is not unpadded base64url, a token that is not UTF-8, or a
 * token offered without any other subprotocol (the server must be able to echo one back that is
 * not the token) are refused. The other entries are returned without the bearer one, so the token
 * is never echoed. Pure.
 */
export function bearerTokenFromProtocols(header: string): ProtocolToken {
  let token = '';
  let sawToken = false;
  const protocols: string[] = [];
  for (const raw of header.split(',')) {
    const p = raw.trim();
    if (p === '') continue;
    if (!p.startsWith(kBearerProtocolPrefix)) {
      protocols.push(p);
      continue;
    }
    if (sawToken) return { ok: false, reason: 'multiple base64url.bearer.authorization tokens specified' };
    sawToken = true;
    const encoded = p.slice(kBearerProtocolPrefix.length);
    // Go's base64.RawURLEncoding: the URL-safe alphabet, no padding, never 4n+1 characters.
    if (!/^[A-Za-z0-9_-]*$/.test(encoded) || encoded.length % 4 === 1) {
      return { ok: false, reason: 'invalid base64url.bearer.authorization token encoding' };
    }
    try {
      token = kUtf8.decode(Buffer.from(encoded, 'base64url'));
    } catch {
      return { ok: false, reason: 'invalid base64url.bearer.authorization token' };
    }
  }
  if (token !== '' && protocols.length === 0) return { ok: false, reason: 'missing additional subprotocol' };
  return { ok: true, token, protocols };
}

/** WebSocketAccess: the decision for a WebSocket upgrade and the subprotocol to answer with ('' = none). */
export interface WebSocketAccess {
  access: AccessDecision;
  protocol: string;
}

/**
 * checkUpgradeAccess: {@link checkWebSocketAccess} on an upgrade request as uWS gives it (its
 * Authorization headers, counted: more than one is a 400, and its Sec-WebSocket-Protocol). Read
 * synchronously in the upgrade handler, as uWS requires. Pure.
 */
export function checkUpgradeAccess(
  auth: ServerAuth | undefined,
  path: string,
  req: { forEach(cb: (name: string, value: string) => void): void; getHeader(name: string): string; getQuery?(): string | undefined },
): WebSocketAccess {
  const authorization = authorizationHeaders(req);
  const query = new URLSearchParams(req.getQuery?.() ?? '');
  const checked = checkWebSocketAccess(auth, path, authorization.value, req.getHeader('sec-websocket-protocol'), query);
  return authorization.count > 1 ? { access: duplicateCredentials(authorization.count), protocol: checked.protocol } : checked;
}

/**
 * checkWebSocketAccess authenticates and authorizes a WebSocket upgrade (a GET of `path`) as the
 * apiserver's union of its bearer-header and WebSocket-protocol authenticators: the
 * `Authorization` header's token is tried first, then the token of a
 * `base64url.bearer.authorization.k8s.io.` subprotocol; either one authenticating is enough. A
 * request offering neither is anonymous ({@link checkAccess}); a token offered and refused is 401,
 * never anonymous. The upgrade is authorized as a GET of `path` (authz/attributes.ts makes a GET
 * of exec, attach, port-forward and the kubelet's streaming paths a `create`); a token user
 * RBAC refuses gets 403, never a fallback to the subprotocol's token. The subprotocol answered
 * is the first other one the client offered ('' if
 * none), never the token's. With `auth` undefined the upgrade is allowed and a bearer subprotocol
 * is ignored. Pure.
 * @param authorization the `Authorization` header value ('' if none).
 * @param protocolHeader the `Sec-WebSocket-Protocol` header value ('' if none).
 */
export function checkWebSocketAccess(
  auth: ServerAuth | undefined,
  path: string,
  authorization: string,
  protocolHeader: string,
  query?: URLSearchParams,
): WebSocketAccess {
  const offered = bearerTokenFromProtocols(protocolHeader);
  const protocol = offered.ok
    ? (offered.protocols[0] ?? '')
    : (protocolHeader
        .split(',')
        .map((p) => p.trim())
        .find((p) => p !== '' && !p.startsWith(kBearerProtocolPrefix)) ?? '');
  if (auth === undefined) return { access: { ok: true }, protocol };
  const byHeader = authorization === '' ? undefined : checkAccess(auth, 'get', path, authorization, query);
  if (byHeader && (byHeader.ok || byHeader.status.code !== 401)) return { access: byHeader, protocol };
  if (!offered.ok) return { access: unauthorized(offered.reason), protocol };
  if (offered.token !== '') return { access: authorizeToken(auth, 'get', path, offered.token, query), protocol };
  return { access: byHeader ?? checkAccess(auth, 'get', path, '', query), protocol };
}
