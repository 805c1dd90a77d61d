// Counterpart of k8s.io/apimachinery/pkg/watch (watch.Event, EventType): the events of WS /watch/pods.
import type { Pod, Status } from '../../shared/api.js';

/** WatchEventType: as watch.EventType; BOOKMARK carries only `metadata.resourceVersion`, ERROR a `Status`. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * WatchEvent: one change of the pods' watch, as the agent's watch cache hands it to the server.
 * The wire frame is `{"type": type, "object": object}` (docs/contracts.md "HTTP API"); `object.metadata.resourceVersion`
 * is `String(resourceVersion)` for pod events and BOOKMARKs. Treat an event as immutable: the same
 * object is shared by every watcher and by the history ring.
 */
export interface WatchEvent {
  type: WatchEventType;
  /** A Pod (with status) for ADDED/MODIFIED/DELETED, `{kind:'Pod', metadata:{resourceVersion}}` for BOOKMARK, a Status for ERROR. */
  object: Pod | Status;
  /** The change's resourceVersion (the status manager's counter); for BOOKMARK the current one; 0 for ERROR. */
  resourceVersion: number;
  /** The pod UID ('' for BOOKMARK and ERROR); coalescing a slow client's updates is keyed by it. */
  uid: string;
  /** The serialized frame, filled in once by the server (`watchFrame`) and reused for every client. */
  frame?: string;
}

/** watchFrame: the event's text frame `{"type":…,"object":…}`, serialized once and cached on the event. */
export function watchFrame(event: WatchEvent): string {
  return (event.frame ??= `{"type":${JSON.stringify(event.type)},"object":${JSON.stringify(event.object)}}`);
}

/**
 * WatchCancel: stops a watch started with `AgentHost.watch`; no event is delivered after it
 * returns. Idempotent.
 */
export type WatchCancel = () => void;
