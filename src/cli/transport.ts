/**
 * The client's connections to the agent, as client-go's rest.Config transport (TLSClientConfig with
 * the cluster's CA; never InsecureSkipVerify unless asked) plus the agent's unix socket: an HTTP
 * request over the socket, over https verified against a CA, or over plain http (never with a
 * credential: clientFlags in client.ts sees to that), and the matching WebSocket target.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

/** Connection: where a client command connects (a part of ClientFlags). */
export interface Connection {
  /** The agent's base URL (`http://…`, `https://…`), or `unix://<path>` for its socket. */
  server: string;
  /** The unix socket's path when `server` is `unix://…`. */
  socketPath?: string;
  /** PEM of the CA the https server's certificate must chain to; undefined = the system's CAs. */
  ca?: string;
}

/** Statuses whose Response has no body (the fetch standard's null body statuses). */
const kNullBodyStatuses = new Set([204, 205, 304]);

function toResponse(res: IncomingMessage): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  const status = res.statusCode ?? 500;
  const body = kNullBodyStatuses.has(status) ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
  if (body === null) res.resume();
  return new Response(body, { status, statusText: res.statusMessage ?? '', headers });
}

/**
 * sendRequest sends one HTTP request to the agent on `conn` (socket, https verified against
 * `conn.ca`, or http) and resolves with a fetch Response whose body streams (`follow` logs).
 * @throws Error (node's) when the connection or the TLS verification fails.
 */
export function sendRequest(
  conn: Connection,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const opts: RequestOptions & { ca?: string } = {
      method,
      headers: body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
    };
    let req;
    if (conn.socketPath !== undefined) {
      req = httpRequest({ ...opts, socketPath: conn.socketPath, path, headers: { ...opts.headers, Host: 'localhost' } });
    } else {
      const url = new URL(`${conn.server}${path}`);
      // https: the server's certificate is always verified (rejectUnauthorized is node's default and never turned off).
      req = url.protocol === 'https:' ? httpsRequest(url, { ...opts, ...(conn.ca ? { ca: conn.ca } : {}) }) : httpRequest(url, opts);
    }
    req.once('response', (res) => resolve(toResponse(res)));
    req.once('error', reject);
    req.end(body);
  });
}

/**
 * wsTarget: the `ws` package's URL and options for a WebSocket to `path` (with its query) on
 * `conn`: `ws+unix://<socket>:<path>` over the socket, `wss://` with the CA over https, `ws://`
 * over http; `headers` are sent with the upgrade. Pure.
 */
export function wsTarget(
  conn: Connection,
  path: string,
  headers: Record<string, string>,
): { url: string; options: { headers: Record<string, string>; ca?: string } } {
  if (conn.socketPath !== undefined) return { url: `ws+unix://${conn.socketPath}:${path}`, options: { headers } };
  const url = new URL(`${conn.server}${path}`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return { url: url.toString(), options: { headers, ...(conn.ca && url.protocol === 'wss:' ? { ca: conn.ca } : {}) } };
}
