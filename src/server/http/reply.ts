// Counterpart of k8s.io/apiserver/pkg/endpoints/handlers/responsewriters: replies as plain data.
import type uWS from 'uWebSockets.js';
import type { Status } from '../../shared/api.js';

/**
 * HttpReply: what a route handler answers, as plain data; server.ts writes it to uWS.
 * Handlers never touch the uWS response object, so they are testable without a socket.
 */
export interface HttpReply {
  /** HTTP status code, e.g. 200. */
  status: number;
  /** Content-Type header value. */
  contentType: string;
  /** Extra headers, e.g. `Allow` on a 405. */
  headers?: Record<string, string>;
  /** The body (already serialized; a Buffer is sent as it is, without encoding it again: a cached large list). */
  body: string | Buffer;
  /**
   * A streamed body (e.g. `GET /containerLogs?follow=true`): when set, server.ts writes the
   * status and headers, ignores `body` and hands the response to `stream` as a ReplySink.
   */
  stream?: (sink: ReplySink) => void;
  /**
   * The stream is a body read to its end (a log without `follow`, a proxied body), not a feed a
   * client reads chunk by chunk while it is quiet (a watch, a log follow): written with uWS's own
   * framing and its real backpressure, at the socket's speed (uws-io.ts startBulkStream).
   */
  bulk?: boolean;
  /** A HEAD answer: no body is sent and `Content-Length` reports this many bytes (`body` ignored). */
  headLength?: number;
}

/**
 * ReplySink: a streaming response, for a {@link HttpReply.stream}. Main thread; every call is
 * safe after the client went away (it does nothing then).
 */
export interface ReplySink {
  /** write sends a chunk; false means the socket is backpressured: wait for onWritable before writing more. */
  write(chunk: string | Uint8Array): boolean;
  /** onWritable: `fn` runs once when a backpressured socket drains. */
  onWritable(fn: () => void): void;
  /** end finishes the response. Idempotent. */
  end(): void;
  /** onClose: `fn` runs once when the client goes away before end(). */
  onClose(fn: () => void): void;
  /** True once the client went away or end() was called. */
  readonly closed: boolean;
}

/** kStatusText: reason phrases for the status line (`200 OK`). */
export const kStatusText: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  507: 'Insufficient Storage',
};

/** statusLine: `"<code> <reason phrase>"` for uWS `writeStatus`. */
export function statusLine(code: number): string {
  return `${code} ${kStatusText[code] ?? 'Unknown'}`;
}

/** jsonReply: `value` serialized as JSON with status `status`. */
export function jsonReply(status: number, value: unknown, headers?: Record<string, string>): HttpReply {
  return { status, contentType: 'application/json', body: JSON.stringify(value), ...(headers ? { headers } : {}) };
}

/** textReply: a `text/plain` body. */
export function textReply(status: number, text: string): HttpReply {
  return { status, contentType: 'text/plain; charset=utf-8', body: text };
}

/** statusReply: a `Status` object as JSON, with the HTTP status taken from `status.code`. */
export function statusReply(status: Status, headers?: Record<string, string>): HttpReply {
  return jsonReply(status.code ?? 500, status, headers);
}

/**
 * refuseUpgrade answers a WebSocket upgrade (exec, attach, port-forward) that is refused before
 * it happens: `status` as JSON with its code, `WWW-Authenticate` on 401 and `Retry-After: 1` on
 * 429 (a stream bound), corked. Main thread (uWS).
 */
export function refuseUpgrade(res: uWS.HttpResponse, status: Status): void {
  const body = JSON.stringify(status);
  const code = status.code ?? 500;
  res.cork(() => {
    res.writeStatus(statusLine(code)).writeHeader('Content-Type', 'application/json');
    if (code === 401) res.writeHeader('WWW-Authenticate', 'Bearer realm="kubelet-ts"');
    if (code === 429) res.writeHeader('Retry-After', '1');
    res.end(body);
  });
}
