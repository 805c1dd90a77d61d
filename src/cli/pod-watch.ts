/**
 * Counterpart of client-go's watch client (rest.Request.Watch and the reflector's watch handling in
 * k8s.io/client-go/tools/cache/reflector.go): one WebSocket watch of the agent's pods
 * (`WS /watch/pods`, docs/contracts.md "HTTP API") for the client's `get pods -w`, and the reflector's retry
 * backoff. It reports each event and tells how the watch ended; deciding to relist or rewatch is
 * the caller's (get.ts).
 *
 * WebSocket: the `ws` package, loaded on first use (Node 20 has no global WebSocket without
 * `--experimental-websocket`).
 */
import type { Pod, Status } from '../shared/api.js';
import { ClientError, unauthorizedMessage, type ClientFlags } from './client.js';
import { wsTarget } from './transport.js';

/** PodWatchEvent: one watch frame `{"type", "object"}`; BOOKMARK carries only `object.metadata.resourceVersion`. */
export interface PodWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: Pod;
}

/** PodWatchRequest: the watch's query (`namespace` and `selector` '' for all; `resourceVersion` '' for "from now, with the current pods as ADDED"). */
export interface PodWatchRequest {
  namespace: string;
  selector: string;
  resourceVersion: string;
}

/**
 * PodWatchEnd: why a watch stopped.
 * - `expired`: the server answered an ERROR with a 410 `Status` (the resourceVersion is older than
 *   its history, or from an earlier agent run): relist, then watch from the new list.
 * - `lost`: the connection failed or closed without an ERROR (agent restarted or unreachable,
 *   closed as too slow with 4429, …); `reason` says how. `opened` is true if the socket had opened.
 * - `aborted`: the caller's signal fired.
 */
export type PodWatchEnd = { kind: 'expired'; message: string } | { kind: 'lost'; reason: string; opened: boolean } | { kind: 'aborted' };

/** watchUrl: the WebSocket URL of `WS /watch/pods` on `server` (http → ws, https → wss) with the request's query. */
export function watchUrl(server: string, request: PodWatchRequest): string {
  const url = new URL('/watch/pods', server);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (request.resourceVersion) url.searchParams.set('resourceVersion', request.resourceVersion);
  if (request.namespace) url.searchParams.set('namespace', request.namespace);
  if (request.selector) url.searchParams.set('labelSelector', request.selector);
  return url.toString();
}

type WsModule = typeof import('ws');
let wsModule: Promise<WsModule> | undefined;

/**
 * loadWs loads the `ws` package once.
 * @throws ClientError naming the package when it is not installed.
 */
function loadWs(): Promise<WsModule> {
  wsModule ??= import('ws').catch((err: unknown) => {
    wsModule = undefined;
    throw new ClientError(`get -w needs the "ws" package, which could not be loaded: ${(err as Error).message}`);
  });
  return wsModule;
}

/**
 * watchPods opens one watch and calls `onEvent` for every ADDED, MODIFIED, DELETED and BOOKMARK
 * frame, in order. Resolves with how the watch ended (see PodWatchEnd); the socket is closed by
 * then.
 * @throws ClientError when the server refuses the watch itself (401 with a hint to pass --token,
 *   403, a 400 for a bad selector, 404 when the agent offers no watch), sends an ERROR that is not
 *   a 410, or sends a frame that is not a watch event: retrying would not help.
 */
export async function watchPods(
  flags: ClientFlags,
  request: PodWatchRequest,
  onEvent: (event: PodWatchEvent) => void,
  signal?: AbortSignal,
): Promise<PodWatchEnd> {
  if (signal?.aborted) return { kind: 'aborted' };
  const { WebSocket } = await loadWs();
  return new Promise<PodWatchEnd>((resolve, reject) => {
    const headers: Record<string, string> = flags.token ? { Authorization: `Bearer ${flags.token}` } : {};
    const url = new URL(watchUrl('http://h', request));
    const target = wsTarget(flags, `${url.pathname}${url.search}`, headers);
    const ws = new WebSocket(target.url, target.options);
    let opened = false;
    let settled = false;
    const finish = (end: PodWatchEnd | Error) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
      if (end instanceof Error) reject(end);
      else resolve(end);
    };
    const onAbort = () => finish({ kind: 'aborted' });
    signal?.addEventListener('abort', onAbort, { once: true });

    ws.on('open', () => {
      opened = true;
    });
    ws.on('unexpected-response', (_req, res) => {
      // The upgrade was answered with a plain HTTP response: a Status saying why.
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const code = res.statusCode ?? 0;
        let message = text.trim() || `${code} ${res.statusMessage ?? ''}`.trim();
        try {
          const status = JSON.parse(text) as Status;
          if (status.kind === 'Status' && status.message) message = status.message;
        } catch {
          // not a Status: keep the text
        }
        if (code === 401) message = unauthorizedMessage(flags);
        if (code >= 500) finish({ kind: 'lost', reason: `the watch was answered ${code}: ${message}`, opened });
        else finish(new ClientError(message, code));
      });
      res.on('error', (err: Error) => finish({ kind: 'lost', reason: err.message, opened }));
    });
    ws.on('message', (data) => {
      if (settled) return;
      let frame: { type?: string; object?: Pod & Status };
      try {
        frame = JSON.parse(String(data)) as typeof frame;
      } catch {
        return finish(new ClientError(`the watch sent a frame that is not JSON: ${String(data).slice(0, 200)}`));
      }
      if (frame.type === 'ERROR') {
        const status = frame.object ?? {};
        if (status.code === 410) return finish({ kind: 'expired', message: status.message ?? 'resourceVersion expired' });
        return finish(new ClientError(`the watch ended with an error: ${status.message ?? JSON.stringify(status)}`, status.code));
      }
      if (frame.type !== 'ADDED' && frame.type !== 'MODIFIED' && frame.type !== 'DELETED' && frame.type !== 'BOOKMARK') {
        return finish(new ClientError(`the watch sent an unknown event type ${JSON.stringify(frame.type)}`));
      }
      if (!frame.object || typeof frame.object !== 'object')
        return finish(new ClientError(`the watch sent a ${frame.type} event without an object`));
      onEvent({ type: frame.type, object: frame.object });
    });
    ws.on('close', (code, reason) => {
      const why = String(reason);
      finish({ kind: 'lost', reason: `connection closed (code ${code}${why ? `: ${why}` : ''})`, opened });
    });
    ws.on('error', (err) => {
      const cause = (err as { code?: string }).code;
      finish({ kind: 'lost', reason: cause && !err.message.includes(cause) ? `${cause}: ${err.message}` : err.message, opened });
    });
  });
}

/** Options of `newWatchBackoff` (milliseconds). */
export interface WatchBackoffOptions {
  /** First delay. Default 1000. */
  initialMs?: number;
  /** Cap of the doubling. Default 30000 (client-go's reflector caps at 30 s too). */
  maxMs?: number;
}

/** kDefaultWatchBackoffOptions: the defaults of WatchBackoffOptions. */
export const kDefaultWatchBackoffOptions: Required<WatchBackoffOptions> = { initialMs: 1000, maxMs: 30_000 };

/** WatchBackoff: the delay before the next watch attempt after a lost connection, as the reflector's backoff manager. */
export interface WatchBackoff {
  /** next: the delay (ms) to wait now; each call doubles the following one up to the cap. */
  next(): number;
  /** reset: back to the initial delay (after a watch that connected). */
  reset(): void;
}

/**
 * newWatchBackoff: delays of initialMs, 2×, 4×, … capped at maxMs. Pure (no timers).
 * @throws RangeError when initialMs is not a positive integer or maxMs < initialMs.
 */
export function newWatchBackoff(options: WatchBackoffOptions = {}): WatchBackoff {
  const initialMs = options.initialMs ?? kDefaultWatchBackoffOptions.initialMs;
  const maxMs = options.maxMs ?? kDefaultWatchBackoffOptions.maxMs;
  if (!Number.isInteger(initialMs) || initialMs <= 0)
    throw new RangeError(`options.initialMs must be a positive integer (milliseconds), got ${initialMs}`);
  if (!Number.isInteger(maxMs) || maxMs < initialMs)
    throw new RangeError(`options.maxMs must be an integer >= options.initialMs (milliseconds), got ${maxMs}`);
  let nextMs = initialMs;
  return {
    next() {
      const d = nextMs;
      nextMs = Math.min(maxMs, nextMs * 2);
      return d;
    },
    reset() {
      nextMs = initialMs;
    },
  };
}
