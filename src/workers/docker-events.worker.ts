/**
 * Counterpart of the runtime side of pkg/kubelet/pleg/evented.go (the CRI GetContainerEvents
 * stream): a worker_threads entry that holds ONE long-lived container events stream for this node
 * (ContainerRuntime.watchContainerEvents) and forwards every container lifecycle event to its
 * parent over `parentPort`.
 *
 * Why a dedicated Worker and not a piscina task: the stream never ends, so it would pin one of the
 * pool's task slots forever; a Worker owned by the event PLEG keeps all Docker I/O off the main
 * thread and leaves the pool to syncs. The runtime (Docker's NDJSON events endpoint, or the fake's
 * own container changes) is picked from the bootstrap by getRuntime.
 *
 * Messages to the parent ({@link DockerEventsMessage}): `connected` every time the stream is (re)opened —
 * the PLEG relists then, so a transition that happened while it was down is never lost —,
 * `events` with a batch of container events, `disconnected` when the stream ends or fails. It reconnects by
 * itself with a capped backoff (250 ms doubling to `maxBackoffMs`) until the parent posts `stop`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { DockerEventsBootstrap, DockerEventsCommand, DockerEventsMessage } from '../shared/docker-events.js';
import { scopeToNode } from './runtime/node-scope.js';
import type { ContainerEventWatch, ContainerRuntime } from './runtime/runtime.js';
import { getRuntime } from './runtime/runtime-service.js';

/**
 * runEventsLoop opens the stream through `runtime` (default: this thread's runtime for `b`,
 * scoped to `b.nodeName`) and keeps it open (reconnecting) until `stop()`; `post` receives every
 * message. Exported for tests, which drive it on their own thread.
 */
export function runEventsLoop(
  b: Omit<DockerEventsBootstrap, 'kind'>,
  post: (m: DockerEventsMessage) => void,
  runtime: ContainerRuntime = scopeToNode(getRuntime(b), b.nodeName),
): { stop(): void } {
  const maxBackoffMs = b.maxBackoffMs ?? 5000;
  let stopped = false;
  let backoffMs = 250;
  let watch: ContainerEventWatch | null = null;
  let timer: NodeJS.Timeout | undefined;
  let wasConnected = true; // report the first failure to connect too

  const retry = (message: string) => {
    watch = null;
    if (stopped) return;
    if (wasConnected) post({ type: 'disconnected', message });
    wasConnected = false;
    timer = setTimeout(connect, backoffMs);
    backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
  };

  const connect = () => {
    if (stopped) return;
    watch = runtime.watchContainerEvents({ labels: [] }, {
      onOpen() {
        backoffMs = 250;
        wasConnected = true;
        post({ type: 'connected' });
      },
      onEvents(events) {
        post({ type: 'events', events });
      },
      onClose: retry,
    });
  };

  connect();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      watch?.close();
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
