// Counterpart of k8s.io/apiserver/pkg/endpoints/handlers/responsewriters: replies as plain data.
import type { Status } from '../shared/api.js';

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
  /** The body (already serialized). */
  body: string;
}

/** kStatusText: reason phrases for the status line (`200 OK`). */
export const kStatusText: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
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
