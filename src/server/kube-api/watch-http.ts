/**
 * Counterpart of the apiserver's HTTP watch (k8s.io/apiserver/pkg/endpoints/handlers/watch.go:
 * `?watch=true` answered as a chunked stream of newline-separated JSON watch events; and the
 * cacher's filtering, which turns an object entering or leaving a selector into ADDED or DELETED).
 * The events come from the same history as `WS /watch/pods` (AgentHost.watch): a watch from
 * resourceVersion 0 or none starts with one ADDED per pod, a watch from N with the changes after N,
 * and a watch from a compacted N gets one ERROR event with the 410 Expired Status, then the end.
 *
 * Bounds (issue #38, finding 6): a watch is first admitted by the server's WatchLimiter (per user
 * and in all, watch-limits.ts; past it 429 `TooManyRequests` with `Retry-After`). Events are written
 * only while the socket takes them; the others wait as references to the shared events (never a
 * copy), the initial ones at the client's pace. A watcher whose waiting changes plus what it has
 * not read pass {@link kMaxWatchBacklogBytes} is closed, as the watch cache closes a watcher that
 * cannot keep up (cacher/cache_watcher.go): kubectl and client-go watch again from the last
 * resourceVersion they saw, or list again on a 410.
 */
import type { Pod, Status } from '../../shared/api.js';
import { hostClock, type AgentHost } from '../host/agent-host.js';
import { jsonReply, type HttpReply } from '../http/reply.js';
import { statusError } from '../http/status.js';
import type { WatchLimiter } from '../http/watch-limits.js';
import { watchFrame, type WatchEvent } from '../host/watch-event.js';
import { podFields } from './field-selector.js';
import { presentPod } from './present.js';
import { matchesFilter, queryBool, type ListFilter } from './request.js';
import { kPodPrinter, toTable, type IncludeObject, type TablePrinter } from './table.js';
import { realClock, type Clock } from '../../shared/clock.js';

/**
 * kMaxWatchBacklogBytes: a watcher whose changes waiting to be written (their frames' size) plus
 * the bytes its socket holds unsent pass this is closed (bytes, 2 MiB; 16 MiB before issue #38).
 */
export const kMaxWatchBacklogBytes = 2 << 20;

/** PodWatchRequest: a parsed pod watch. */
export interface PodWatchRequest {
  /** Only this namespace (undefined: all). */
  namespace?: string;
  filter: ListFilter;
  /** `resourceVersion`: undefined (or 0) for "current state first", else resume after it. */
  fromResourceVersion?: number;
  /** `allowWatchBookmarks`: BOOKMARK events are sent only when asked for. */
  allowBookmarks: boolean;
  /** `timeoutSeconds`: end the stream after this many seconds (undefined: never). */
  timeoutSeconds?: number;
  /** Answer each object as a one-row Table (Accept asked for a Table). */
  table?: { include: IncludeObject };
}

/**
 * parseWatchParams reads `resourceVersion`, `allowWatchBookmarks` and `timeoutSeconds`.
 * @returns the parts of a PodWatchRequest, or a 400 Status naming the parameter.
 */
export function parseWatchParams(
  query: URLSearchParams,
): Pick<PodWatchRequest, 'fromResourceVersion' | 'allowBookmarks' | 'timeoutSeconds'> | Status {
  const rv = query.get('resourceVersion') ?? '';
  if (rv !== '' && !/^\d+$/.test(rv))
    return statusError(400, 'BadRequest', `resourceVersion: Invalid value: ${JSON.stringify(rv)}: must be a non-negative integer`);
  const ts = query.get('timeoutSeconds') ?? '';
  if (ts !== '' && !/^\d+$/.test(ts))
    return statusError(400, 'BadRequest', `timeoutSeconds: Invalid value: ${JSON.stringify(ts)}: must be a non-negative integer`);
  const out: Pick<PodWatchRequest, 'fromResourceVersion' | 'allowBookmarks' | 'timeoutSeconds'> = {
    allowBookmarks: queryBool(query, 'allowWatchBookmarks'),
  };
  if (rv !== '' && Number(rv) > 0) out.fromResourceVersion = Number(rv);
  if (ts !== '' && Number(ts) > 0) out.timeoutSeconds = Number(ts);
  return out;
}

/** KubeObject: what a Table row can be made of. */
type KubeObject = { apiVersion?: string; kind?: string; metadata?: unknown };

/**
 * WatchKind: what the one HTTP watch writer needs to know of a kind: which objects a request
 * selects, how an object is shown, its Table printer, and the keys of the objects selected now
 * (a resumed watch has listed them: a change of one of them is MODIFIED). An event's `uid` is the
 * object's key (a pod's UID; `namespace/name` for the other kinds, kind-history.ts).
 */
export interface WatchKind<T extends KubeObject> {
  matches(o: T): boolean;
  present(o: T): unknown;
  printer: TablePrinter<T>;
  currentKeys(): Iterable<string>;
  /** The clock of the Table rows' ages (epoch ms); default the real clock. */
  clock?: Clock;
}

/** podWatchKind: pods as the watch writer sees them (the request's namespace and selectors; presentPod). */
function podWatchKind(host: AgentHost, req: PodWatchRequest): WatchKind<Pod> {
  const matches = (pod: Pod) =>
    (req.namespace === undefined || (pod.metadata?.namespace ?? 'default') === req.namespace) &&
    matchesFilter(req.filter, pod.metadata?.labels, () => podFields(pod));
  return {
    matches,
    present: (p) => presentPod(p),
    printer: kPodPrinter,
    clock: hostClock(host),
    *currentKeys() {
      for (const p of host.listPods()) if (matches(p)) yield p.metadata?.uid ?? '';
    },
  };
}

/** The watch's admission: the server's limiter and the requesting user's name ('' without auth). */
export interface WatchAdmissionRequest {
  limiter?: WatchLimiter;
  user: string;
}

/**
 * podWatchReply answers a pod watch as a streamed HttpReply: 200, `application/json`, one JSON
 * watch event per line. An object leaving the selector is sent as DELETED, one entering it as
 * ADDED. The stream ends after an ERROR event, at `timeoutSeconds`, when the client goes, or when
 * it falls more than {@link kMaxWatchBacklogBytes} behind. A host without `watch` → 405; a watch
 * past `admission.limiter`'s limits → 429 `TooManyRequests` with `Retry-After`.
 */
export function podWatchReply(host: AgentHost, req: PodWatchRequest, admission: WatchAdmissionRequest = { user: '' }): HttpReply | Status {
  if (!host.watch) return statusError(405, 'MethodNotAllowed', 'this agent does not serve watches');
  return watchReply(host.watch.bind(host), podWatchKind(host, req), req, admission);
}

/**
 * watchReply: the HTTP watch of any kind (podWatchReply's stream, see there), over `watch` (a
 * history's watch: AgentHost.watch for pods, kind-history.ts for the others) and `kind`.
 * A watch past `admission.limiter`'s limits → 429 `TooManyRequests` with `Retry-After`.
 */
export function watchReply<T extends KubeObject>(
  watch: (from: number | undefined, onEvent: (e: WatchEvent) => void) => () => void,
  kind: WatchKind<T>,
  req: Omit<PodWatchRequest, 'namespace' | 'filter'>,
  admission: WatchAdmissionRequest = { user: '' },
): HttpReply {
  const admitted = admission.limiter?.acquire(admission.user);
  if (admitted && !admitted.ok) return jsonReply(429, admitted.status, { 'Retry-After': String(admitted.retryAfterSeconds) });
  const release = admitted?.release ?? (() => {});
  return {
    status: 200,
    contentType: 'application/json',
    headers: { 'Cache-Control': 'no-cache, private' },
    body: '',
    stream: (sink) => {
      const visible = new Set<string>();
      // Resuming: the client has listed the pods that match now; a change of one of them is MODIFIED.
      if (req.fromResourceVersion !== undefined) for (const key of kind.currentKeys()) visible.add(key);
      let done = false;
      /** Bytes written since the socket reported backpressure (uWS holds them); 0 while it keeps up. */
      let backlog = 0;
      /** Events not written yet (the socket is backpressured), in order; `queuedBytes`: the frames of the live ones among them. */
      const queue: { e: WatchEvent; bytes: number }[] = [];
      let queuedBytes = 0;
      let live = false;
      let cancel: (() => void) | undefined;
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        if (done) return;
        done = true;
        queue.length = 0;
        release();
        clearTimeout(timer);
        cancel?.();
        sink.end();
      };
      const send = (type: string, object: unknown) => {
        if (done) return;
        let out = object;
        if (req.table && (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED')) {
          // Every event's Table carries its column definitions: kubectl 1.32's watch printer loses the
          // row separators when later ones leave them out (checked with `kubectl get -w`).
          out = toTable(kind.printer, [object as T], { include: req.table.include, nowMs: (kind.clock ?? realClock).now() });
        }
        const line = `{"type":${JSON.stringify(type)},"object":${JSON.stringify(out)}}\n`;
        const ok = sink.write(line);
        if (!ok || backlog > 0) {
          if (backlog === 0) sink.onWritable(drain);
          backlog += line.length;
        }
      };
      /** The socket drained: write what waits until it pushes back again. */
      const drain = () => {
        backlog = 0;
        while (!done && backlog === 0 && queue.length > 0) {
          const next = queue.shift()!;
          queuedBytes -= next.bytes;
          write(next.e);
        }
      };
      /** onEvent: written now while the socket keeps up, else queued (a reference); too far behind → closed. */
      const onEvent = (e: WatchEvent) => {
        if (done) return;
        if (backlog === 0 && queue.length === 0) return write(e);
        // Counted: the live changes this watcher will be sent (a pod it does not see costs it nothing).
        const relevant = e.uid === '' || visible.has(e.uid) || kind.matches(e.object as T);
        const bytes = live && relevant ? watchFrame(e).length : 0;
        queue.push({ e, bytes });
        queuedBytes += bytes;
        // As the apiserver drops a watcher that cannot keep up: the client re-watches from its last resourceVersion.
        if (backlog + queuedBytes > kMaxWatchBacklogBytes) finish();
      };
      const write = (e: WatchEvent) => {
        if (e.type === 'ERROR') {
          send('ERROR', e.object);
          queueMicrotask(finish);
          return;
        }
        if (e.type === 'BOOKMARK') {
          if (req.allowBookmarks) send('BOOKMARK', e.object);
          return;
        }
        const pod = e.object as T;
        const uid = e.uid;
        const now = e.type !== 'DELETED' && kind.matches(pod);
        // An ADDED object was not there before (a resumed watch marks what is there now as listed, which may be newer than its version).
        const was = e.type !== 'ADDED' && visible.has(uid);
        if (e.type === 'DELETED') {
          if (was || kind.matches(pod)) send('DELETED', kind.present(pod));
          visible.delete(uid);
        } else if (now) {
          send(was ? 'MODIFIED' : 'ADDED', kind.present(pod));
          visible.add(uid);
        } else if (was) {
          send('DELETED', kind.present(pod));
          visible.delete(uid);
        }
      };
      sink.onClose(finish);
      cancel = watch(req.fromResourceVersion, onEvent);
      live = true;
      if (done) cancel();
      else if (req.timeoutSeconds !== undefined) {
        timer = setTimeout(finish, req.timeoutSeconds * 1000);
        timer.unref();
      }
    },
  };
}
