/**
 * Counterpart of k8s.io/client-go/tools/record (EventRecorder with its EventCorrelator): core/v1
 * Events about pods, kept in a bounded ring on the main thread. A repeat of the same event (same
 * object, reason, message, type and source) bumps `count` and `lastTimestamp` of the stored event
 * instead of adding a new one, as the correlator's aggregation does. Every event is also logged: a
 * Warning at warn, a Normal one at debug — the kubelet logs its events at V(3)
 * (cmd/kubelet/app/server.go: eventBroadcaster.StartStructuredLogging(3)), so at the default
 * `--v=0` a pod start's Scheduled/Pulled/Created/Started cost no log line on the main thread.
 * A message is kept to {@link kMaxEventMessageBytes} (it often quotes pod-provided text such as an
 * image name: a 900 KB one made every stored and logged event 900 KB, issue #11 finding 4).
 */
import { randomInt } from 'node:crypto';
import type { Event, Pod } from '../../shared/api.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import { boundedField, podFields, type Logger } from '../../shared/logging.js';
import type { PodEventRecord } from '../../shared/sync-tasks.js';
import { realClock, type Clock } from '../../shared/clock.js';
import { rfc3339Seconds } from '../../shared/rfc3339.js';

/**
 * kMaxEventMessageBytes: the UTF-8 bytes an event's message keeps: 1 KiB, the apiserver's event
 * validation limit (pkg/apis/core/validation/events.go NoteLengthLimit), to which the scheduler
 * also truncates its messages (truncateMessage). The rest is replaced by `…(N more bytes)`
 * (boundedField).
 */
export const kMaxEventMessageBytes = 1024;

/** EventRecorder: records and lists pod events. Main thread only. */
export interface EventRecorder {
  /** record stores (or counts again) one event about `pod` and logs it (Warning at warn, Normal at debug). */
  record(pod: Pod, event: PodEventRecord): void;
  /** list returns the stored events, oldest first; optionally only those about one pod UID. */
  list(filter?: { uid?: string; namespace?: string }): Event[];
  /** subscribe calls `fn` for every recorded or re-counted event; returns the unsubscribe function. */
  subscribe(fn: (event: Event) => void): () => void;
}

/** Options of `newEventRecorder`. */
export interface EventRecorderOptions {
  /** Most events kept; the oldest go first (default 1000). */
  capacity?: number;
  /** `source.component` of every event (default `kubelet`), `source.host` is the node. */
  component?: string;
  nodeName: string;
}

/**
 * eventNames: a namer of events, `<pod name>.<8 hex digits>` unique within the process — as client-go's makeEvent
 * (tools/record/event.go) names an event `<object name>.<%x of the time in ns>`: a suffix that does
 * not repeat, not a random one. Here a 32-bit counter from a random start, one per recorder: an
 * addition and a hex format per event, where a randomUUID built a 36-character string from 16
 * random bytes to keep 8 of them (issue #42 item 1). Events are held in memory only, so the names of
 * an earlier run of the agent cannot collide with this run's.
 */
function eventNames(): (podName: string | undefined) => string {
  let next = randomInt(2 ** 32);
  return (podName) => {
    const suffix = next.toString(16).padStart(8, '0');
    next = (next + 1) >>> 0;
    return `${podName}.${suffix}`;
  };
}

/** newEventRecorder creates an empty recorder. @throws InvalidArgumentError for a capacity below 1. */
export function newEventRecorder(options: EventRecorderOptions, deps: { logger: Logger; clock?: Clock }): EventRecorder {
  const clock = deps.clock ?? realClock;
  const capacity = options.capacity ?? 1000;
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new InvalidArgumentError(`options.capacity must be an integer >= 1, got ${capacity}`);
  const component = options.component ?? 'kubelet';
  // Insertion-ordered: re-counting an event moves it to the end, so eviction drops the stalest.
  const events = new Map<string, Event>();
  const listeners = new Set<(e: Event) => void>();
  const eventName = eventNames();
  return {
    record(pod, input) {
      const e =
        input.message.length * 3 > kMaxEventMessageBytes
          ? { ...input, message: boundedField(input.message, kMaxEventMessageBytes) }
          : input;
      const meta = pod.metadata ?? {};
      const key = `${meta.uid ?? ''}\u0000${e.fieldPath ?? ''}\u0000${e.type}\u0000${e.reason}\u0000${e.message}`;
      const now = rfc3339Seconds(clock.now());
      let event = events.get(key);
      if (event) {
        events.delete(key);
        event = { ...event, count: (event.count ?? 1) + 1, lastTimestamp: now };
      } else {
        event = {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: eventName(meta.name), namespace: meta.namespace ?? 'default' },
          involvedObject: {
            kind: 'Pod',
            apiVersion: 'v1',
            name: meta.name,
            namespace: meta.namespace ?? 'default',
            uid: meta.uid,
            ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}),
          },
          reason: e.reason,
          message: e.message,
          type: e.type,
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component, host: options.nodeName },
          reportingComponent: component,
          reportingInstance: options.nodeName,
        };
      }
      events.set(key, event);
      if (events.size > capacity) events.delete(events.keys().next().value as string);
      const level = e.type === 'Warning' ? 'warn' : 'debug';
      if (deps.logger.isLevelEnabled(level)) {
        // Fields added to podFields' fresh object: spreading it into a new literal cost ~10 µs
        // per event, most of record()'s time with 10,000 pods starting (measured on Node 20).
        const fields: Record<string, unknown> = podFields(pod);
        fields.reason = e.reason;
        fields.fieldPath = e.fieldPath;
        fields.eventMessage = e.message;
        fields.count = event.count;
        deps.logger[level](fields, 'Event');
      }
      for (const fn of listeners) fn(event);
    },
    list(filter = {}) {
      const out: Event[] = [];
      for (const e of events.values()) {
        if (filter.uid && e.involvedObject.uid !== filter.uid) continue;
        if (filter.namespace && e.involvedObject.namespace !== filter.namespace) continue;
        out.push(e);
      }
      return out;
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}
