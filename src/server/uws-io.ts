// The uWS request plumbing of server.ts (writing a reply, streaming one, reading a body), apart so
// server.ts stays the listeners and the dispatch. Counterpart of the response writing of
// k8s.io/apiserver/pkg/endpoints/handlers/responsewriters.
import type uWS from 'uWebSockets.js';
import { statusLine, type HttpReply } from './http/reply.js';
import { statusError } from './http/status.js';
import { tooLarge } from './http/request-limits.js';
import { realClock } from '../shared/clock.js';

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
  if (reply.stream && state) return reply.bulk ? startBulkStream(res, reply.stream, state) : startStream(res, reply.stream, state);
  if (reply.headLength !== undefined) res.endWithoutBody(reply.headLength, close);
  else res.end(reply.body, close);
}

/** kStreamHighWaterBytes: bytes a stream writes before its sink reports backpressure and waits for a drain. */
export const kStreamHighWaterBytes = 256 * 1024;

/**
 * kDrainGraceMs: how long (milliseconds) a sink past kStreamHighWaterBytes waits for uWS to report
 * the socket writable before it takes the silence as "the kernel took it all" (uWS reports writable
 * only after a flush it had to hold back). At most kMaxBlindDrains such guesses follow each other.
 */
export const kDrainGraceMs = 50;

/**
 * kMaxBlindDrains: guessed drains in a row (no writable event between them) after which the sink
 * stops guessing: a client that does not read then leaves its bytes in uWS, which closes it after its
 * 10 s HTTP idle timeout; one still open after kBlindResumeMs (milliseconds) had nothing held back.
 */
export const kMaxBlindDrains = 8;
export const kBlindResumeMs = 11_000;

/**
 * kIdleResetMs: a write that comes this long (milliseconds) after the previous one starts the count
 * afresh: a client that reads has taken what was sent a second ago (one that does not leaves it in
 * uWS, which reports writable once it reads again). Keeps a trickling watch from ever waiting.
 */
export const kIdleResetMs = 1_000;

/** kEndQuietMs: how long (milliseconds) a finished stream keeps its trailer section open for a writable event (uWS still holding bytes). */
export const kEndQuietMs = 20;
/** kBehindEndQuietMs: the same (milliseconds) for a stream that ended while it was waiting for a drain (a client that reads makes uWS report writable well within it). */
export const kBehindEndQuietMs = 1_000;

/**
 * chunkFrame frames `chunk` as one whole HTTP/1.1 chunk, as the pair a uWS `writeHeader(key, value)`
 * call puts on the wire (`key: value\r\n`): `HEX;k=": "\r\n<chunk>\r\n`. The `: ` that uWS puts
 * between key and value lands in a quoted chunk extension (RFC 9112 §7.1.1), which every client ignores.
 * This uWS build's own `write()` sends each chunk's closing CRLF only as the prefix of the next chunk
 * (and the header block's end with the first chunk), so a client that reads chunk by chunk (urllib3,
 * hence the Python client) sees chunk N only when N+1 arrives; the apiserver (net/http's chunked
 * writer) flushes each chunk whole.
 */
export function chunkFrame(chunk: string | Uint8Array): [key: string, value: Buffer] {
  const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  return [`${data.byteLength.toString(16)};k="`, Buffer.concat([kExtensionEnd, data])];
}
const kExtensionEnd = Buffer.from('"\r\n');

/**
 * startStream hands a streaming reply a ReplySink over `res`, framing the body itself (chunkFrame):
 * the header block is ended and flushed at once (a watch on an empty selector, a follow of a silent
 * container get their headers before any event), each write goes out as one whole chunk, and end()
 * sends the last chunk; uWS's `endWithoutBody` then closes the trailer section (its `Date` and
 * `uWebSockets` lines are trailer fields clients discard), so the connection stays reusable.
 * uWS sends bytes it had to hold back only when something more is written: a stream that ended
 * while behind writes a `Kubelet-Ts-Drain` trailer field at each writable event, and closes the
 * trailer section once none came for kEndQuietMs (kBehindEndQuietMs when it was behind: a client
 * still not reading by then loses what uWS holds, and uWS closes it after 10 s).
 * Backpressure: uWS does not report it for these raw writes, so the sink counts the bytes written
 * since the socket was last known drained (a uWS writable event, or a guess: kDrainGraceMs,
 * kMaxBlindDrains, kBlindResumeMs, kIdleResetMs) and answers false past kStreamHighWaterBytes;
 * onWritable then waits for that drain. A client that stops reading is still held: past
 * kMaxBlindDrains guesses its stream waits (a watch queues, then ends at its backlog bound; a log
 * pauses its reading), and uWS closes it after 10 s without progress.
 * Counterpart of net/http's chunkWriter + Flush in the apiserver's watch and log handlers.
 */
function startStream(res: uWS.HttpResponse, stream: NonNullable<HttpReply['stream']>, state: RequestState): void {
  let ended = false;
  let inCallback = true;
  let writable: (() => void) | undefined;
  let pending = 0;
  let blind = 0;
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  let lastWriteAt = 0;
  const closeFns: (() => void)[] = [];
  /** finishAfter closes the trailer section (uWS's endWithoutBody) once no writable event came for `ms`. */
  const finishAfter = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (state.aborted || finished) return;
      finished = true;
      res.cork(() => res.endWithoutBody());
    }, ms);
    timer.unref();
  };
  const corked = (fn: () => void) => (inCallback ? fn() : res.cork(fn));
  const drained = () => {
    clearTimeout(timer);
    timer = undefined;
    pending = 0;
    const fn = writable;
    writable = undefined;
    if (!ended && !state.aborted) fn?.();
  };
  const wait = () => {
    if (timer) return;
    const guess = blind < kMaxBlindDrains;
    timer = setTimeout(
      () => {
        blind = guess ? blind + 1 : 0;
        drained();
      },
      guess ? kDrainGraceMs : kBlindResumeMs,
    );
    timer.unref();
  };
  state.onAbort.push(() => {
    clearTimeout(timer);
    for (const fn of closeFns.splice(0)) fn();
  });
  res.onWritable(() => {
    if (state.aborted || finished) return true;
    // uWS flushes what it holds only when something is written: after the last chunk, a trailer field does it.
    if (ended) {
      res.cork(() => res.writeHeader('Kubelet-Ts-Drain', '1'));
      finishAfter(kDrainGraceMs);
      return true;
    }
    blind = 0;
    drained();
    return true;
  });
  res.writeHeader('Transfer-Encoding', 'chunked\r\n');
  stream({
    get closed() {
      return ended || state.aborted;
    },
    write(chunk) {
      if (ended || state.aborted) return false;
      if (chunk.length === 0) return pending < kStreamHighWaterBytes;
      const [key, value] = chunkFrame(chunk);
      const now = realClock.now();
      if (now - lastWriteAt >= kIdleResetMs && !timer) {
        pending = 0;
        blind = 0;
      }
      lastWriteAt = now;
      corked(() => res.writeHeader(key, value));
      pending += value.byteLength;
      if (pending < kStreamHighWaterBytes) return true;
      wait();
      return false;
    },
    onWritable(fn) {
      writable = fn;
    },
    end() {
      if (ended || state.aborted) return;
      ended = true;
      const behind = timer !== undefined || blind > 0;
      clearTimeout(timer);
      // The last chunk now; the trailer section stays open while uWS may still hold bytes (see finishAfter).
      corked(() => res.writeHeader('0;k="', '"'));
      finishAfter(behind ? kBehindEndQuietMs : kEndQuietMs);
    },
    onClose(fn) {
      if (state.aborted) fn();
      else closeFns.push(fn);
    },
  });
  inCallback = false;
}

/**
 * startBulkStream hands a bulk streaming reply (HttpReply.bulk: a log read to its end, a proxied
 * body) a ReplySink that writes with uWS's own chunked framing: `write` reports uWS's real
 * backpressure and `onWritable` waits for the drain uWS reports, so a fast client gets the body at
 * the socket's speed (startStream's framing must guess the drain and waits up to kBlindResumeMs per
 * 2 MiB). uWS sends each chunk's closing CRLF with the next chunk, which only matters to a client
 * that reads chunk by chunk while the stream is quiet — never the case for a body read to its end.
 * Writes after the first are corked (they come from other events).
 */
function startBulkStream(res: uWS.HttpResponse, stream: NonNullable<HttpReply['stream']>, state: RequestState): void {
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
