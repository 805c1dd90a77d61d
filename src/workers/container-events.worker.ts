/**
 * Counterpart of the runtime side of pkg/kubelet/pleg/evented.go (the CRI GetContainerEvents
 * stream): a worker_threads entry that holds ONE long-lived container events stream for this node
 * (NodeRuntime.events.watchContainerEvents) and forwards every container lifecycle event to its
 * parent over `parentPort`. A runtime without events (NodeRuntime.events absent: containerd 1.6)
 * gets one `unsupported` message and nothing more, as evented.go falls back to the generic PLEG.
 *
 * Why a dedicated Worker and not a piscina task: the stream never ends, so it would pin one of the
 * pool's task slots forever; a Worker owned by the event PLEG keeps the runtime's I/O off the main
 * thread and leaves the pool to syncs. The runtime is picked from the bootstrap by getRuntime.
 *
 * Messages to the parent ({@link ContainerEventsMessage}): `connected` every time the stream is (re)opened —
 * the PLEG relists then, so a transition that happened while it was down is never lost —,
 * `events` with a batch of container events, `disconnected` when the stream ends or fails. It reconnects by
 * itself with a capped backoff (250 ms doubling to `maxBackoffMs`) until the parent posts `stop`.
 * Events are gathered for `batchWindowMs` (default {@link kEventsBatchWindowMs}) after the first one
 * and posted as one `events` message, in stream order; pending events are posted before a
 * `disconnected` and on `stop`. Upstream's evented PLEG reads the CRI stream one event at a time;
 * the batching is ours, for the main thread's cost per message.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { realClock, type Clock, type TimerHandle } from '../shared/clock.js';
import {
  kEventsBatchWindowMs,
  type ContainerEventsBootstrap,
  type ContainerEventsCommand,
  type ContainerEventsMessage,
  type RuntimeContainerEvent,
} from '../shared/container-events.js';
import { getRuntime } from './runtime/node-runtime.js';
import type { ContainerEventWatch, NodeRuntime } from './runtime/container/runtime.js';
import { announceThreadRole } from './thread-roles.js';

announceThreadRole('container-events');

/**
 * runEventsLoop opens the stream through `events` (default: this thread's NodeRuntime's for `b`,
 * scoped to `b.nodeName`) and keeps it open (reconnecting) until `stop()`; `post` receives every
 * message. Without `events` it posts `unsupported` once and does nothing more. The reconnect backoff
 * and the batching window wait on `clock` (the thread's Clock, default realClock). Exported for tests, which drive it on
 * their own thread.
 */
export function runEventsLoop(
  b: Omit<ContainerEventsBootstrap, 'kind'>,
  post: (m: ContainerEventsMessage) => void,
  events: NodeRuntime['events'] = getRuntime(b).events,
  clock: Clock = realClock,
): { stop(): void } {
  if (!events) {
    post({ type: 'unsupported', message: 'the container runtime has no container events (GetContainerEvents)' });
    return { stop() {} };
  }
  const runtime = events;
  const maxBackoffMs = b.maxBackoffMs ?? 5000;
  const batchWindowMs = b.batchWindowMs ?? kEventsBatchWindowMs;
  let pending: RuntimeContainerEvent[] = [];
  let batchTimer: TimerHandle | undefined;
  const flush = () => {
    clock.clearTimeout(batchTimer);
    batchTimer = undefined;
    if (pending.length === 0) return;
    const events = pending;
    pending = [];
    post({ type: 'events', events });
  };
  let stopped = false;
  let backoffMs = 250;
  let watch: ContainerEventWatch | null = null;
  let timer: TimerHandle | undefined;
  let wasConnected = true; // report the first failure to connect too

  const retry = (message: string) => {
    watch = null;
    if (stopped) return;
    flush();
    if (wasConnected) post({ type: 'disconnected', message });
    wasConnected = false;
    timer = clock.setTimeout(connect, backoffMs);
    backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
  };

  const connect = () => {
    if (stopped) return;
    watch = runtime.watchContainerEvents(
      { labels: [] },
      {
        onOpen() {
          backoffMs = 250;
          wasConnected = true;
          post({ type: 'connected' });
        },
        onEvents(events) {
          if (batchWindowMs <= 0) return post({ type: 'events', events });
          for (const e of events) pending.push(e);
          batchTimer ??= clock.setTimeout(flush, batchWindowMs);
        },
        onClose: retry,
      },
    );
  };

  connect();
  return {
    stop() {
      flush();
      stopped = true;
      clock.clearTimeout(timer);
      watch?.close();
    },
  };
}

// Worker entry: only when loaded as a Worker with our bootstrap.
if (parentPort && (workerData as { kind?: string } | null)?.kind === 'container-events') {
  const port = parentPort;
  const b = workerData as ContainerEventsBootstrap;
  const loop = runEventsLoop(b, (m) => port.postMessage(m), getRuntime(b).events, realClock);
  port.on('message', (cmd: ContainerEventsCommand) => {
    if (cmd?.type === 'stop') {
      loop.stop();
      port.close();
    }
  });
}
