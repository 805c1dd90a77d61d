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
 * No timeouts of its own (undici's headers and body timeouts are off, as dockerode has none): a
 * call's deadline is its caller's AbortSignal (../cri/deadline.ts withDeadline).
 */
import { createRequire } from 'node:module';
import type { Dispatcher, Pool as UndiciPool } from 'undici';

/**
 * undici's `Pool` and its `request` API, required alone: every worker thread that runs a Docker
 * runtime loads them once, and `undici`'s index also loads fetch, WebSocket, caches, mocks and
 * interceptors — three times the CPU (about 75 against 25 ms a thread on this machine, loaded).
 * undici 7.30.3 (pinned) has no `exports` map, so the paths are reachable; an undici that moved
 * them fails at the thread's first Docker call, loudly (its tests: engine-client*.test.ts).
 */
const requireUndici = createRequire(import.meta.url);
const Pool = requireUndici('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
type Pool = UndiciPool;
/** undici's `Dispatcher.prototype.request` (lib/api/api-request.js), called with the pool as `this`. */
const poolRequest = requireUndici('undici/lib/api/api-request.js') as (
  this: Dispatcher,
  opts: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

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
  /** Aborts the request (the call's deadline). */
  signal?: AbortSignal;
}

/** EngineClientOptions: how many connections at most (undefined = no bound), and how long an idle one is kept (milliseconds). */
export interface EngineClientOptions {
  connections?: number;
  keepAliveTimeoutMs?: number;
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

/**
 * EngineClient: the Engine API on one unix socket. {@link EngineClient.json} resolves to a 2xx
 * answer's parsed JSON, {@link EngineClient.send} to nothing (its body read and dropped); both
 * reject with an {@link EngineError}. `requests` counts the requests sent (tests check a pod's
 * start went through here). One per socket per worker thread (docker-runtime.ts).
 */
export class EngineClient {
  readonly #pool: Pool;
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
  }

  /**
   * json sends `call` and resolves to the answer's parsed JSON.
   * @throws EngineError (a status outside 2xx, a socket failure, an answer that is not JSON); the signal's abort error.
   */
  async json<T>(call: EngineCall): Promise<T> {
    const res = await this.#request(call);
    if (res.statusCode < 200 || res.statusCode >= 300) throw await statusError(res);
    return (await res.body.json()) as T;
  }

  /** text sends `call` and resolves to the answer's text (`GET /_ping`'s `OK`). @throws as {@link EngineClient.json}. */
  async text(call: EngineCall): Promise<string> {
    const res = await this.#request(call);
    if (res.statusCode < 200 || res.statusCode >= 300) throw await statusError(res);
    return res.body.text();
  }

  /** send sends `call` and resolves once its answer (2xx; a 204 has none) is read. @throws as {@link EngineClient.json}. */
  async send(call: EngineCall): Promise<void> {
    const res = await this.#request(call);
    if (res.statusCode < 200 || res.statusCode >= 300) throw await statusError(res);
    await res.body.dump();
  }

  /** close ends the pooled connections (after the requests under way). */
  close(): Promise<void> {
    return this.#pool.close();
  }

  async #request(call: EngineCall): Promise<Dispatcher.ResponseData> {
    this.requests++;
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    try {
      return await poolRequest.call(this.#pool, {
        method: call.method,
        path: call.path,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body,
        signal: call.signal,
      });
    } catch (err) {
      const code = kSocketCodes[(err as { code?: string } | null)?.code ?? ''];
      if (code) throw Object.assign(new Error(`${call.method} ${call.path}: ${(err as Error).message}`, { cause: err }), { code });
      throw err;
    }
  }
}

/** statusError: an answer outside 2xx as docker-modem's error (its body read). */
async function statusError(res: Dispatcher.ResponseData): Promise<EngineError> {
  const text = await res.body.text();
  let json: EngineError['json'] = null;
  if (text) {
    try {
      json = JSON.parse(text) as { message?: string };
    } catch {
      json = text;
    }
  }
  const reason = kReasons[res.statusCode] ?? 'unexpected';
  const cause = typeof json === 'object' && typeof json?.message === 'string' ? json.message : text;
  return Object.assign(new Error(`(HTTP code ${res.statusCode}) ${reason} - ${cause} `), { statusCode: res.statusCode, json, reason });
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
