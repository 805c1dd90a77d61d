/**
 * The wire protocol of the Docker events worker (src/workers/docker-events.worker.ts ↔
 * src/main/pleg/event-pleg.ts): the counterpart of the CRI's GetContainerEvents stream messages
 * (k8s.io/cri-api ContainerEventResponse), flattened. Not a piscina task: the stream is
 * long-lived, so it runs in a dedicated Worker owned by the event PLEG, which posts these plain
 * structured-cloneable messages (times in epoch milliseconds).
 */
import type { RuntimeEndpoint } from './runtime-endpoint.js';

/** workerData of the Docker events worker: the runtime it watches (getRuntime; 'fake' is its own, empty, in-memory runtime). */
export interface DockerEventsBootstrap extends RuntimeEndpoint {
  kind: 'docker-events';
  /** Only containers labelled `kubelet-ts.node-name=<nodeName>` are reported. */
  nodeName: string;
  /** Longest wait between two reconnect attempts, milliseconds (default 5000). */
  maxBackoffMs?: number;
}

/** One container event from Docker's events stream, as the events worker forwards it. */
export interface DockerContainerEvent {
  /** Docker's action: `create`, `start`, `die`, `oom` or `destroy`. */
  action: string;
  containerId: string;
  /** `io.kubernetes.pod.uid` label ('' if absent). */
  podUid: string;
  /** `io.kubernetes.container.name` label (`POD` for the sandbox). */
  containerName: string;
  /** When dockerd emitted it, epoch milliseconds (from `timeNano`). */
  timeMs: number;
  /** Exit code, for `die`. */
  exitCode?: number;
}

/**
 * Messages the events worker posts: `connected` each time the stream is (re)opened, `events` with
 * a batch of container events in stream order, `disconnected` when the stream ends or fails.
 */
export type DockerEventsMessage =
  | { type: 'connected' }
  | { type: 'disconnected'; message: string }
  | { type: 'events'; events: DockerContainerEvent[] };

/** Messages the events worker accepts: `stop` closes the stream and ends the worker. */
export type DockerEventsCommand = { type: 'stop' };
