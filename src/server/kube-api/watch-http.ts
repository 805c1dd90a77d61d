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
import type { AgentHost } from '../agent-host.js';
import { jsonReply, type HttpReply } from '../reply.js';
import { statusError } from '../status.js';
import type { WatchLimiter } from '../watch-limits.js';
import { watchFrame, type WatchEvent } from '../ws/watch-event.js';
import { podFields } from './field-selector.js';
import { presentPod } from './present.js';
import { matchesFilter, type ListFilter } from './request.js';
import { kPodPrinter, toTable, type IncludeObject } from './table.js';

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
export function parseWatchParams(query: URLSearchParams): Pick<PodWatchRequest, 'fromResourceVersion' | 'allowBookmarks' | 'timeoutSeconds'> | Status {
  const rv = query.get('resourceVersion') ?? '';
  if (rv !== '' && !/^\d+$/.test(rv)) return statusError(400, 'BadRequest', `resourceVersion: Invalid value: ${JSON.stringify(rv)}: must be a non-negative integer`);
  const ts = query.get('timeoutSeconds') ?? '';
  if (ts !== '' && !/^\d+$/.test(ts)) return statusError(400, 'BadRequest', `timeoutSeconds: Invalid value: ${JSON.stringify(ts)}: must be a non-negative integer`);
  const bm = (query.get('allowWatchBookmarks') ?? '').toLowerCase();
  const out: Pick<PodWatchRequest, 'fromResourceVersion' | 'allowBookmarks' | 'timeoutSeconds'> = { allowBookmarks: bm === 'true' || bm === '1' };
  if (rv !== '' && Number(rv) > 0) out.fromResourceVersion = Number(rv);
  if (ts !== '' && Number(ts) > 0) out.timeoutSeconds = Number(ts);
  return out;
}

function matches(req: PodWatchRequest, pod: Pod): boolean {
  if (req.namespace !== undefined && (pod.metadata?.namespace ?? 'default') !== req.namespace) return false;
  return matchesFilter(req.filter, pod.metadata?.labels, () => podFields(pod));
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
  const watch = host.watch.bind(host);
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
      if (req.fromResourceVersion !== undefined) for (const p of host.listPods()) if (matches(req, p)) visible.add(p.metadata?.uid ?? '');
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
          out = toTable(kPodPrinter, [object as Pod], { include: req.table.include, nowMs: Date.now() });
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
        const relevant = e.uid === '' || visible.has(e.uid) || matches(req, e.object as Pod);
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
        const pod = e.object as Pod;
        const uid = e.uid;
        const now = e.type !== 'DELETED' && matches(req, pod);
        const was = visible.has(uid);
        if (e.type === 'DELETED') {
          if (was || matches(req, pod)) send('DELETED', presentPod(pod));
          visible.delete(uid);
        } else if (now) {
          send(was ? 'MODIFIED' : 'ADDED', presentPod(pod));
          visible.add(uid);
        } else if (was) {
          send('DELETED', presentPod(pod));
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
