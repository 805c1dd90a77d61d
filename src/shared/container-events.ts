/**
 * The wire protocol of the container events worker (src/workers/container-events.worker.ts ↔
 * src/main/pleg/event-pleg.ts): the counterpart of the CRI's GetContainerEvents stream messages
 * (k8s.io/cri-api ContainerEventResponse), flattened. Not a piscina task: the stream is
 * long-lived, so it runs in a dedicated Worker owned by the event PLEG, which posts these plain
 * structured-cloneable messages (times in epoch milliseconds). A runtime without container events
 * (containerd 1.6) answers `unsupported` once: the PLEG then relists at the generic PLEG's period.
 */
import type { RuntimeEndpoint } from './runtime-endpoint.js';

/** workerData of the container events worker: the runtime it watches (node-runtime.ts getRuntime; 'fake' is its own, empty, in-memory runtime). */
export interface ContainerEventsBootstrap extends RuntimeEndpoint {
  kind: 'container-events';
  /** Only containers labelled `kubelet-ts.node-name=<nodeName>` are reported. */
  nodeName: string;
  /** Longest wait between two reconnect attempts, milliseconds (default 5000). */
  maxBackoffMs?: number;
  /**
   * How long the worker gathers events into one `events` message, milliseconds (default
   * kEventsBatchWindowMs, 5); 0 posts each read of the stream at once.
   */
  batchWindowMs?: number;
}

/**
 * kEventsBatchWindowMs: the events worker's batching window, milliseconds. The engine writes each
 * event on its own (a pod start is four: the sandbox's and the container's create and start), so
 * posting each read cost the main thread one message, one structured clone and one sync-loop
 * PLEG pass per event (issue #42 item 1); events of the next 5 ms go in the same message. The
 * added delay (at most 5 ms) is small beside the event-to-watch bound (100 ms, issue #31).
 */
export const kEventsBatchWindowMs = 5;

/** One container event from the runtime's events stream (Docker's events), as the events worker forwards it. */
export interface RuntimeContainerEvent {
  /** The action: `create`, `start`, `die`, `oom` or `destroy` (Docker's words). */
  action: string;
  containerId: string;
  /** `io.kubernetes.pod.uid` label ('' if absent). */
  podUid: string;
  /** `io.kubernetes.container.name` label (`POD` for the sandbox). */
  containerName: string;
  /** When the runtime emitted it, epoch milliseconds. */
  timeMs: number;
  /** Exit code, for `die`. */
  exitCode?: number;
}

/**
 * Messages the events worker posts: `connected` each time the stream is (re)opened, `events` with
 * a batch of container events in stream order, `disconnected` when the stream ends or fails,
 * `unsupported` (once, then nothing) when the runtime has no container events.
 */
export type ContainerEventsMessage =
  | { type: 'connected' }
  | { type: 'unsupported'; message: string }
  | { type: 'disconnected'; message: string }
  | { type: 'events'; events: RuntimeContainerEvent[] };

/** Messages the events worker accepts: `stop` closes the stream and ends the worker. */
export type ContainerEventsCommand = { type: 'stop' };
