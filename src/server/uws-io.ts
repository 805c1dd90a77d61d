// The uWS request plumbing of server.ts (writing a reply, streaming one, reading a body), apart so
// server.ts stays the listeners and the dispatch. Counterpart of the response writing of
// k8s.io/apiserver/pkg/endpoints/handlers/responsewriters.
import type uWS from 'uWebSockets.js';
import { statusLine, type HttpReply } from './reply.js';
import { statusError } from './status.js';
import { tooLarge } from './request-limits.js';

/** RequestState: what a request's callbacks share (uWS allows one onAborted per response). */
export interface RequestState {
  aborted: boolean;
  onAbort: (() => void)[];
  /** True while a body is announced but not all in (the reply then closes the connection: its rest is no request). */
  bodyPending?: boolean;
}

/** writeReply writes `reply` on `res`; `close` ends the connection after it (`Connection: close`). */
export function writeReply(res: uWS.HttpResponse, reply: HttpReply, state?: RequestState, close = false): void {
  res.writeStatus(statusLine(reply.status));
  res.writeHeader('Content-Type', reply.contentType);
  if (reply.headers) for (const [name, value] of Object.entries(reply.headers)) res.writeHeader(name, value);
  if (reply.stream && state) return startStream(res, reply.stream, state);
  res.end(reply.body, close);
}

/**
 * startStream hands a streaming reply a ReplySink over `res`: writes after the first are corked
 * (they come from other events), `write` reports backpressure and `onWritable` waits for a drain.
 */
function startStream(res: uWS.HttpResponse, stream: NonNullable<HttpReply['stream']>, state: RequestState): void {
  let ended = false;
  let inCallback = true;
  let writable: (() => void) | undefined;
  const closeFns: (() => void)[] = [];
  state.onAbort.push(() => {
    for (const fn of closeFns.splice(0)) fn();
  });
  const corked = (fn: () => void) => (inCallback ? fn() : res.cork(fn));
  res.onWritable(() => {
    const fn = writable;
    writable = undefined;
    fn?.();
    return true;
  });
  stream({
    get closed() {
      return ended || state.aborted;
    },
    write(chunk) {
      if (ended || state.aborted) return false;
      let ok = true;
      corked(() => {
        ok = res.write(chunk);
      });
      return ok;
    },
    onWritable(fn) {
      writable = fn;
    },
    end() {
      if (ended || state.aborted) return;
      ended = true;
      corked(() => res.end());
    },
    onClose(fn) {
      if (state.aborted) fn();
      else closeFns.push(fn);
    },
  });
  inCallback = false;
}

/**
 * readBody collects the request body with `res.onData`, refusing it with 413 as soon as it
 * passes `limit` bytes and with 408 when the client takes longer than `timeoutMs`.
 * Must be called inside the uWS request callback.
 */
export function readBody(res: uWS.HttpResponse, limit: number, timeoutMs: number, state: RequestState): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      reject(statusError(408, 'Timeout', `the request body was not received within ${timeoutMs} ms`));
    }, timeoutMs);
    timer.unref();
    state.onAbort.push(() => {
      done = true;
      clearTimeout(timer);
    });
    res.onData((ab, isLast) => {
      if (done) return;
      size += ab.byteLength;
      if (size > limit) {
        done = true;
        clearTimeout(timer);
        reject(tooLarge(limit));
        return;
      }
      // uWS reuses the ArrayBuffer after this callback: copy it.
      chunks.push(Buffer.from(new Uint8Array(ab.slice(0))));
      if (isLast) {
        done = true;
        clearTimeout(timer);
        resolve(Buffer.concat(chunks, size));
      }
    });
  });
}

