// Counterpart of dockershim's GetContainerLogs and the CRI GetContainerEvents stream over Docker: the long-lived reads of the Docker runtime.
/**
 * The two streaming calls of the Docker runtime (docker-runtime.ts), over dockerode's modem: the
 * events stream (`GET /events`, newline-delimited JSON) and a container's log
 * (`GET /containers/{id}/logs`, multiplexed frames unless the container has a TTY). Kept apart from
 * docker-runtime.ts for size; like it, worker threads only, and dockerode stays under
 * src/workers/runtime/.
 */
import type { IncomingMessage } from 'node:http';
import type Docker from 'dockerode';
import type { Clock } from '../../../shared/clock.js';
import { AgentError } from '../../../shared/errors.js';
import type {
  ContainerEvent,
  ContainerEventHandlers,
  ContainerEventWatch,
  ContainerListFilter,
  ContainerLogHandlers,
  ContainerLogOptions,
  ContainerLogReader,
} from '../container/runtime.js';

/**
 * The container actions forwarded: the state changes the PLEG acts on. The rest (exec_*, attach,
 * kill, stop…) are not state changes; `create` is one the PLEG makes no pod event of (the kubelet's
 * generic PLEG neither: a created container is not a lifecycle event), and the sync that created a
 * container records its created state itself (its read-back, the PLEG's observeRuntimePod), so the
 * engine need not write it, nor the events worker wake for it: 2 of a pod start's 4 events (issue #42).
 */
export const kForwardedActions: ReadonlySet<string> = new Set(['start', 'die', 'oom', 'destroy']);

/**
 * parseDockerEvent turns one line of the events stream into a ContainerEvent, or null for a
 * non-container event, an action we do not forward, or a line that is not JSON (pure).
 */
export function parseDockerEvent(line: string): ContainerEvent | null {
  let e: {
    Type?: string;
    Action?: string;
    status?: string;
    id?: string;
    Actor?: { ID?: string; Attributes?: Record<string, string> };
    time?: number;
    timeNano?: number;
  };
  try {
    e = JSON.parse(line);
  } catch {
    return null;
  }
  if ((e.Type ?? 'container') !== 'container') return null;
  const action = e.Action ?? e.status ?? '';
  if (!kForwardedActions.has(action)) return null;
  const attrs = e.Actor?.Attributes ?? {};
  const timeMs = typeof e.timeNano === 'number' ? Math.floor(e.timeNano / 1e6) : (e.time ?? 0) * 1000;
  const out: ContainerEvent = {
    action,
    containerId: e.Actor?.ID ?? e.id ?? '',
    podUid: attrs['io.kubernetes.pod.uid'] ?? '',
    containerName: attrs['io.kubernetes.container.name'] ?? '',
    timeMs,
  };
  if (action === 'die' && attrs.exitCode !== undefined) out.exitCode = Number(attrs.exitCode);
  return out;
}

/**
 * eventsFilters: the Engine API `filters` of the events stream for `filter`: type container, the
 * actions the PLEG reads ({@link kForwardedActions}: `event`), and `filter`'s labels. The engine
 * drops every other event before it is written (exec_*, attach, kill, stop, resize, network and
 * image events), so the events worker neither reads nor decodes them, as the CRI's
 * GetContainerEvents carries only container lifecycle events (cri-api ContainerEventType: created,
 * started, stopped, deleted). Pure.
 */
export function eventsFilters(filter: ContainerListFilter): { type: string[]; event: string[]; label: string[] } {
  return { type: ['container'], event: [...kForwardedActions], label: [...filter.labels] };
}

/**
 * watchDockerEvents opens one events stream (no reconnect: the caller does that after onClose).
 * Lines split across chunks are reassembled; each chunk's complete lines become one onEvents batch.
 */
export function watchDockerEvents(docker: Docker, filter: ContainerListFilter, h: ContainerEventHandlers): ContainerEventWatch {
  const abort = new AbortController();
  let res: IncomingMessage | undefined;
  let closed = false;
  let ended = false;
  const end = (message: string) => {
    if (ended || closed) return;
    ended = true;
    h.onClose(message);
  };
  docker.modem.dial(
    {
      path: '/events?',
      method: 'GET',
      options: { filters: eventsFilters(filter) },
      abortSignal: abort.signal,
      isStream: true,
      statusCodes: { 200: true },
    },
    (err: unknown, stream: unknown) => {
      if (closed) {
        (stream as IncomingMessage | null)?.destroy();
        return;
      }
      if (err) {
        const status = (err as { statusCode?: unknown }).statusCode;
        end(
          typeof status === 'number' ? `events stream answered HTTP ${status}` : `cannot open the events stream: ${(err as Error).message}`,
        );
        return;
      }
      res = stream as IncomingMessage;
      h.onOpen();
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        if (closed) return;
        buf += chunk;
        let nl: number;
        const batch: ContainerEvent[] = [];
        while ((nl = buf.indexOf('\n')) !== -1) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const ev = parseDockerEvent(line);
          if (ev) batch.push(ev);
        }
        if (batch.length) h.onEvents(batch);
      });
      res.on('end', () => end('events stream ended'));
      res.on('error', (e) => end(`events stream failed: ${e.message}`));
      res.on('close', () => end('events stream closed'));
    },
  );
  return {
    close() {
      if (closed) return;
      closed = true;
      abort.abort();
      res?.destroy();
    },
  };
}

/**
 * newDemuxer splits Docker's multiplexed log stream (8-byte frame headers: stream type, 3 zero
 * bytes, big-endian payload size) into payload bytes; stdout and stderr are merged in order, as
 * the kubelet serves them. Stateful across chunks. Pure otherwise.
 */
export function newDemuxer(): (chunk: Buffer) => Buffer[] {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    const out: Buffer[] = [];
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      out.push(pending.subarray(8, 8 + size));
      pending = pending.subarray(8 + size);
    }
    return out;
  };
}

/** logsQuery: the Engine API `GET /containers/{id}/logs` query for `opts` (`since` is epoch seconds from `nowMs`). Pure. */
export function logsQuery(opts: ContainerLogOptions, nowMs: number): Record<string, string> {
  const q: Record<string, string> = { stdout: '1', stderr: '1', follow: opts.follow ? '1' : '0', timestamps: opts.timestamps ? '1' : '0' };
  q.tail = opts.tailLines === undefined ? 'all' : String(opts.tailLines);
  if (opts.sinceSeconds !== undefined) q.since = String(Math.floor(nowMs / 1000) - opts.sinceSeconds);
  return q;
}

/**
 * readDockerLogs opens container `id`'s log stream (`tty`: the container has a TTY, so its log is
 * raw bytes, not frames) and resolves once Docker answered 200 (`since` counted from `clock.now()`). A read is streamed, never
 * buffered whole, follow or not: pause() stops reading the socket.
 * @throws the modem's error for a non-200 answer or a socket failure (the caller maps it).
 */
export function readDockerLogs(
  docker: Docker,
  id: string,
  tty: boolean,
  opts: ContainerLogOptions,
  h: ContainerLogHandlers,
  clock: Clock,
): Promise<ContainerLogReader> {
  return new Promise((resolve, reject) => {
    docker.modem.dial(
      {
        path: `/containers/${id}/logs?`,
        method: 'GET',
        options: logsQuery(opts, clock.now()),
        isStream: true,
        statusCodes: { 200: true, 404: 'no such container' },
      },
      (err: unknown, stream: unknown) => {
        if (err) return reject(err);
        const res = stream as IncomingMessage;
        let cancelled = false;
        let ended = false;
        const end = (e?: Error) => {
          if (ended || cancelled) return;
          ended = true;
          h.onEnd(e);
        };
        const demux = tty ? (c: Buffer) => [c] : newDemuxer();
        res.on('data', (chunk: Buffer) => {
          if (cancelled) return;
          for (const part of demux(chunk)) {
            if (cancelled) return;
            if (part.length > 0) h.onData(part);
          }
        });
        res.on('end', () => end());
        res.on('error', (e) => end(new AgentError('ERR_RUNTIME', `logs of container ${id}: ${e.message}`, { retriable: true })));
        resolve({
          pause: () => res.pause(),
          resume: () => res.resume(),
          cancel() {
            if (cancelled) return;
            cancelled = true;
            res.destroy();
          },
        });
      },
    );
  });
}
