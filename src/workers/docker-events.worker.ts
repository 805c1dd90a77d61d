/**
 * Counterpart of the runtime side of pkg/kubelet/pleg/evented.go (the CRI GetContainerEvents
 * stream): a worker_threads entry that holds ONE long-lived Docker events stream for this node and
 * forwards every container lifecycle event to its parent over `parentPort`.
 *
 * Why a dedicated Worker and not a piscina task: the stream never ends, so it would pin one of the
 * pool's task slots forever; a Worker owned by the event PLEG keeps all Docker I/O off the main
 * thread and leaves the pool to syncs. It talks HTTP over the unix socket with node:http (the
 * events endpoint is one GET with newline-delimited JSON), so dockerode keeps its one home.
 *
 * Messages to the parent ({@link DockerEventsMessage}): `connected` every time the stream is (re)opened —
 * the PLEG relists then, so a transition that happened while it was down is never lost —,
 * `event` per container event, `disconnected` when the stream ends or fails. It reconnects by
 * itself with a capped backoff (250 ms doubling to `maxBackoffMs`) until the parent posts `stop`.
 */
import { request, type ClientRequest } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import type { DockerContainerEvent, DockerEventsBootstrap, DockerEventsCommand, DockerEventsMessage } from '../shared/docker-events.js';

/** The container actions forwarded (the rest — exec_*, attach, kill, stop… — are not state changes). */
export const kForwardedActions: ReadonlySet<string> = new Set(['create', 'start', 'die', 'oom', 'destroy']);

/**
 * parseDockerEvent turns one line of the events stream into a DockerContainerEvent, or null for a
 * non-container event, an action we do not forward, or a line that is not JSON (pure).
 */
export function parseDockerEvent(line: string): DockerContainerEvent | null {
  let e: { Type?: string; Action?: string; status?: string; id?: string; Actor?: { ID?: string; Attributes?: Record<string, string> }; time?: number; timeNano?: number };
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
  const out: DockerContainerEvent = {
    action,
    containerId: e.Actor?.ID ?? e.id ?? '',
    podUid: attrs['io.kubernetes.pod.uid'] ?? '',
    containerName: attrs['io.kubernetes.container.name'] ?? '',
    timeMs,
  };
  if (action === 'die' && attrs.exitCode !== undefined) out.exitCode = Number(attrs.exitCode);
  return out;
}

/** eventsPath is the Engine API path of the filtered events stream (type container, our node label). */
export function eventsPath(nodeName: string): string {
  const filters = JSON.stringify({ type: ['container'], label: [`kubelet-ts.node-name=${nodeName}`] });
  return `/events?filters=${encodeURIComponent(filters)}`;
}

/**
 * runEventsLoop opens the stream and keeps it open (reconnecting) until `stop()`; `post` receives
 * every message. Exported for tests, which drive it on their own thread.
 */
export function runEventsLoop(b: Omit<DockerEventsBootstrap, 'kind'>, post: (m: DockerEventsMessage) => void): { stop(): void } {
  const maxBackoffMs = b.maxBackoffMs ?? 5000;
  let stopped = false;
  let backoffMs = 250;
  let req: ClientRequest | null = null;
  let timer: NodeJS.Timeout | undefined;
  let wasConnected = true; // report the first failure to connect too

  const retry = (message: string) => {
    req = null;
    if (stopped) return;
    if (wasConnected) post({ type: 'disconnected', message });
    wasConnected = false;
    timer = setTimeout(connect, backoffMs);
    backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
  };

  const connect = () => {
    if (stopped) return;
    let ended = false;
    const once = (message: string) => {
      if (ended) return;
      ended = true;
      retry(message);
    };
    req = request({ socketPath: b.dockerSocketPath, path: eventsPath(b.nodeName), method: 'GET' }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        once(`events stream answered HTTP ${res.statusCode}`);
        return;
      }
      backoffMs = 250;
      wasConnected = true;
      post({ type: 'connected' });
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        const batch: DockerContainerEvent[] = [];
        while ((nl = buf.indexOf('\n')) !== -1) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const ev = parseDockerEvent(line);
          if (ev) batch.push(ev);
        }
        if (batch.length) post({ type: 'events', events: batch });
      });
      res.on('end', () => once('events stream ended'));
      res.on('error', (err) => once(`events stream failed: ${err.message}`));
      res.on('close', () => once('events stream closed'));
    });
    req.on('error', (err) => once(`cannot open the events stream: ${err.message}`));
    req.end();
  };

  connect();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      req?.destroy();
    },
  };
}

// Worker entry: only when loaded as a Worker with our bootstrap.
if (parentPort && (workerData as { kind?: string } | null)?.kind === 'docker-events') {
  const port = parentPort;
  const loop = runEventsLoop(workerData as DockerEventsBootstrap, (m) => port.postMessage(m));
  port.on('message', (cmd: DockerEventsCommand) => {
    if (cmd?.type === 'stop') {
      loop.stop();
      port.close();
    }
  });
}
