// Counterpart of the Docker Engine API client dockershim used (github.com/docker/docker/client, through pkg/kubelet/dockershim/libdocker/kube_docker_client.go, kubernetes ≤1.23): one keep-alive HTTP/1.1 transport on the daemon's unix socket.
/**
 * The Docker Engine API client of a pod's hot path (issue #42 item 1): the request-response calls
 * a pod's start and removal make (container create, start, inspect, list, stop, remove, image
 * inspect) and the runtime status's ping, info and version, over an undici `Pool` on the Engine's
 * unix socket — keep-alive connections, no per-request option merging, query building of every
 * option or debug formatting (what dockerode's docker-modem does for each request: a third of a
 * sync worker's busy time in a burst, docs/performance.md). dockerode keeps the streams (events,
 * logs, attach, exec, stats) and the rest (docker-runtime.ts, docker-streams.ts, docker-attach.ts).
 *
 * What stays as dockerode did it (docker-modem 5.0.7 `Modem.dial`/`buildPayload`): unversioned
 * paths (no `version` is given to dockerode, so docker-modem adds no `/v1.xx` prefix and dockerd
 * serves its default API version); a POST's JSON body with `Content-Type: application/json`; a
 * status outside 2xx rejects with an Error whose `statusCode` is the status, `json` the parsed
 * answer (dockerd's `{ message }`) and message `(HTTP code <n>) <reason> - <message> ` — the shape
 * `toAgentError`, `statusCode` (docker-engine-shapes.ts) and create-conflict.ts read. A socket
 * failure rejects with a Node socket error `code` (`ENOENT`, `ECONNREFUSED`, `ECONNRESET`, …):
 * undici's own socket error codes are given as `ECONNRESET` (the connection closed) or
 * `ETIMEDOUT` (connect timeout) so toAgentError still says the runtime is unavailable.
 * undici's headers and body timeouts are off (dockerode had none): a call's deadline is its own
 * `timeoutMs` (the caller's `--runtime-request-timeout`), on one shared timer per duration
 * (../cri/timer-list.ts), rejecting as ../cri/deadline.ts withDeadline does; an AbortSignal is also taken.
 *
 * Per call (issue #42 item 1): one handler object given to undici's `Pool.dispatch` (its legacy
 * handler API: `onConnect`, `onHeaders`, `onData`, `onComplete`, `onError`, which undici 7.30.3
 * calls without wrapping or parsing the answer's headers), which keeps the answer's chunks and
 * parses them once at its end — no `request()` API, `Readable` body and its consume mixin, no
 * AbortController, abort listener or timer per call.
 */
import { createRequire } from 'node:module';
import type { Dispatcher, Pool as UndiciPool } from 'undici';
import { realClock, type Clock } from '../../../shared/clock.js';
import { deadlineError } from '../cri/deadline.js';
import { timerList, type TimerEntry, type TimerList } from '../cri/timer-list.js';

/**
 * undici's `Pool`, required alone: every worker thread that runs a Docker runtime loads it once,
 * and `undici`'s index also loads fetch, WebSocket, caches, mocks and interceptors — three times
 * the CPU (about 75 against 25 ms a thread on this machine, loaded). undici 7.30.3 (pinned) has
 * no `exports` map, so the path is reachable; an undici that moved it fails at the thread's first
 * Docker call, loudly (its tests: engine-client*.test.ts).
 */
const Pool = createRequire(import.meta.url)('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
type Pool = UndiciPool;

/** EngineError: a failed Engine call, in docker-modem's error shape. */
export interface EngineError extends Error {
  /** The HTTP status of an answer outside 2xx; absent for a socket error. */
  statusCode?: number;
  /** The answer's JSON (dockerd's `{ message }`), or its text when it was not JSON, or null when empty. */
  json?: { message?: string } | string | null;
  /** docker-modem's word for the status (`not modified`, `no such object`, `conflict`, …). */
  reason?: string;
  /** A socket error's Node code (`ENOENT`, `ECONNREFUSED`, `ECONNRESET`, `ETIMEDOUT`, …). */
  code?: string;
}

/** EngineCall: one request. `path` is the unversioned path with its query (build the query with {@link engineQuery}). */
export interface EngineCall {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** Sent as `JSON.stringify(body)` with `Content-Type: application/json`; none when undefined. */
  body?: unknown;
  /** Aborts the request: the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * The call's deadline, milliseconds (undefined or 0 = none): past it the request is aborted and
   * the call rejects with ../cri/deadline.ts deadlineError(`what`, `timeoutMs`).
   */
  timeoutMs?: number;
  /** The call's name in its deadline's error (`inspect container <id>`). */
  what?: string;
}

/**
 * EngineClientOptions: how many connections at most (undefined = no bound), how long an idle one
 * is kept (milliseconds), and the Clock of the calls' deadlines (default realClock).
 */
export interface EngineClientOptions {
  connections?: number;
  keepAliveTimeoutMs?: number;
  clock?: Clock;
}

/** kReasons: docker-modem's words for the statuses the Engine answers (its per-call `statusCodes` tables). */
const kReasons: Readonly<Record<number, string>> = {
  304: 'not modified',
  400: 'bad parameter',
  404: 'no such object',
  406: 'impossible to attach',
  409: 'conflict',
  500: 'server error',
};

/** kSocketCodes: undici's connection failures as the Node socket codes dockerode's http client gave. */
const kSocketCodes: Readonly<Record<string, string>> = {
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_CLOSED: 'ECONNRESET',
  UND_ERR_DESTROYED: 'ECONNRESET',
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
};

/** What a call resolves to: the answer's parsed JSON, its text, or nothing (its body dropped). */
const kJson = 0;
const kText = 1;
const kNone = 2;
type Want = typeof kJson | typeof kText | typeof kNone;

/** kJsonHeaders: a POST body's header, as undici's flat `[name, value]` list (made once). */
const kJsonHeaders = ['content-type', 'application/json'];

/** LegacyDispatch: `Pool.dispatch` with undici's legacy handler object ({@link Exchange}). */
type LegacyDispatch = (this: Pool, opts: Dispatcher.DispatchOptions, handler: Exchange) => boolean;

/**
 * EngineClient: the Engine API on one unix socket. {@link EngineClient.json} resolves to a 2xx
 * answer's parsed JSON, {@link EngineClient.send} to nothing (its body read and dropped); both
 * reject with an {@link EngineError}. `requests` counts the requests sent (tests check a pod's
 * start went through here). One per socket per worker thread (docker-runtime.ts).
 */
export class EngineClient {
  readonly #pool: Pool;
  readonly #clock: Clock;
  /** Requests sent since this client was made. */
  requests = 0;

  /** `socketPath`: the Engine's unix socket (`--docker-endpoint` without `unix://`). */
  constructor(socketPath: string, opts: EngineClientOptions = {}) {
    this.#pool = new Pool('http://localhost', {
      socketPath,
      connections: opts.connections ?? null,
      pipelining: 1,
      keepAliveTimeout: opts.keepAliveTimeoutMs ?? 10_000,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.#clock = opts.clock ?? realClock;
  }

  /**
   * json sends `call` and resolves to the answer's parsed JSON.
   * @throws EngineError (a status outside 2xx, a socket failure); a SyntaxError for an answer that is not JSON; the deadline's error; the signal's reason.
   */
  json<T>(call: EngineCall): Promise<T> {
    return this.#request(call, kJson) as Promise<T>;
  }

  /** text sends `call` and resolves to the answer's text (`GET /_ping`'s `OK`). @throws as {@link EngineClient.json}. */
  text(call: EngineCall): Promise<string> {
    return this.#request(call, kText) as Promise<string>;
  }

  /** send sends `call` and resolves once its answer (2xx; a 204 has none) is read. @throws as {@link EngineClient.json}. */
  send(call: EngineCall): Promise<void> {
    return this.#request(call, kNone) as Promise<void>;
  }

  /** close ends the pooled connections (after the requests under way). */
  close(): Promise<void> {
    return this.#pool.close();
  }

  #request(call: EngineCall, want: Want): Promise<unknown> {
    this.requests++;
    let body: string | undefined;
    try {
      body = call.body === undefined ? undefined : JSON.stringify(call.body);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    let exchange!: Exchange;
    const answer = new Promise<unknown>((resolve, reject) => {
      exchange = new Exchange(call.method, call.path, want, resolve, reject);
    });
    if (call.signal && !exchange.watch(call.signal)) return answer;
    const timeoutMs = call.timeoutMs ?? 0;
    if (timeoutMs > 0) exchange.deadline(timerList(this.#clock, timeoutMs), call.what ?? `${call.method} ${call.path}`, timeoutMs);
    (this.#pool.dispatch as unknown as LegacyDispatch).call(
      this.#pool,
      { method: call.method, path: call.path, headers: body === undefined ? undefined : kJsonHeaders, body },
      exchange,
    );
    return answer;
  }
}

/**
 * Exchange: one request's handler (undici's legacy dispatch handler API) and, with a deadline, its
 * entry in the deadline's TimerList. Keeps the answer's chunks (none for a 2xx of `send`) and
 * settles the call once: at the answer's end, at a socket error, at its deadline or its signal's abort.
 */
class Exchange implements TimerEntry {
  due = 0;
  /** The call has settled (the TimerList's flag too). */
  settled = false;
  readonly #method: string;
  readonly #path: string;
  readonly #want: Want;
  /** The call's promise's resolving functions; dropped once it settles (a settled entry can wait in its TimerList). */
  #resolve: (v: unknown) => void;
  #reject: (err: unknown) => void;
  #status = 0;
  #chunks: Buffer[] = [];
  /** undici's abort of the request, once it has a connection. */
  #abort: ((err: Error) => void) | undefined;
  /** Why the call was ended before its request had a connection. */
  #reason: Error | undefined;
  #list: TimerList | undefined;
  #what = '';
  #timeoutMs = 0;
  #signal: AbortSignal | undefined;

  constructor(method: string, path: string, want: Want, resolve: (v: unknown) => void, reject: (err: unknown) => void) {
    this.#method = method;
    this.#path = path;
    this.#want = want;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** watch ends the call at `signal`'s abort; false (and the call rejected) when it has aborted already. */
  watch(signal: AbortSignal): boolean {
    if (signal.aborted) {
      this.settled = true;
      this.#fail(signal.reason);
      return false;
    }
    this.#signal = signal;
    signal.addEventListener('abort', this, { once: true });
    return true;
  }

  /** deadline ends the call with deadlineError(`what`, `timeoutMs`) after `timeoutMs` ms on `list`. */
  deadline(list: TimerList, what: string, timeoutMs: number): void {
    this.#list = list;
    this.#what = what;
    this.#timeoutMs = timeoutMs;
    list.add(this);
  }

  /** The signal's abort (EventTarget's listener object). */
  handleEvent(): void {
    this.#cancel(this.#signal?.reason as Error);
  }

  /** The deadline passed (TimerList; `settled` is already set). */
  fire(): void {
    if (this.#signal) this.#signal.removeEventListener('abort', this);
    this.#end(deadlineError(this.#what, this.#timeoutMs));
  }

  onConnect(abort: (err: Error) => void): void {
    if (this.#reason) abort(this.#reason);
    else this.#abort = abort;
  }

  onHeaders(statusCode: number): boolean {
    this.#status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (!this.settled && (this.#want !== kNone || this.#status < 200 || this.#status >= 300)) this.#chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (!this.#finish()) return;
    const status = this.#status;
    const chunks = this.#chunks;
    this.#chunks = [];
    const text = chunks.length === 0 ? '' : chunks.length === 1 ? chunks[0]!.toString() : Buffer.concat(chunks).toString();
    if (status < 200 || status >= 300) return this.#fail(statusError(status, text));
    if (this.#want === kNone) return this.#ok(undefined);
    if (this.#want === kText) return this.#ok(text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      return this.#fail(err);
    }
    this.#ok(json);
  }

  onError(err: Error): void {
    if (!this.#finish()) return;
    const code = kSocketCodes[(err as { code?: string } | null)?.code ?? ''];
    if (code) this.#fail(Object.assign(new Error(`${this.#method} ${this.#path}: ${err.message}`, { cause: err }), { code }));
    else this.#fail(err);
  }

  /** #cancel ends the call with `err` and aborts its request (undici then calls onError, ignored). */
  #cancel(err: Error): void {
    if (this.#finish()) this.#end(err);
  }

  /** #end rejects the settled call with `err` and aborts its request, now or at its connection. */
  #end(err: Error): void {
    this.#fail(err);
    if (this.#abort) this.#abort(err);
    else this.#reason = err;
  }

  #ok(value: unknown): void {
    const resolve = this.#resolve;
    this.#resolve = this.#reject = noop;
    resolve(value);
  }

  #fail(err: unknown): void {
    const reject = this.#reject;
    this.#resolve = this.#reject = noop;
    reject(err);
  }

  /**
   * #finish marks the call settled (false when it was already): its deadline entry and signal
   * listener go; the resolving functions are taken from this entry, which may outlive the call.
   */
  #finish(): boolean {
    if (this.settled) return false;
    if (this.#list) this.#list.settle(this);
    else this.settled = true;
    if (this.#signal) this.#signal.removeEventListener('abort', this);
    this.#signal = undefined;
    return true;
  }
}

function noop(): void {}

/** statusError: an answer outside 2xx (`status`, its body's `text`) as docker-modem's error. */
function statusError(status: number, text: string): EngineError {
  let json: EngineError['json'] = null;
  if (text) {
    try {
      json = JSON.parse(text) as { message?: string };
    } catch {
      json = text;
    }
  }
  const reason = kReasons[status] ?? 'unexpected';
  const cause = typeof json === 'object' && typeof json?.message === 'string' ? json.message : text;
  return Object.assign(new Error(`(HTTP code ${status}) ${reason} - ${cause} `), { statusCode: status, json, reason });
}

/**
 * engineQuery: `?k=v&…` of the defined values, as docker-modem's query (Node's `querystring`
 * escaping; an object as its JSON, e.g. `filters`); '' when there are none.
 */
export function engineQuery(params: Readonly<Record<string, string | number | boolean | object | undefined>>): string {
  let q = '';
  for (const k in params) {
    const v = params[k];
    if (v === undefined) continue;
    q += `${q ? '&' : '?'}${k}=${encodeURIComponent(typeof v === 'object' ? JSON.stringify(v) : String(v))}`;
  }
  return q;
}
