/**
 * Counterpart of k8s.io/apiserver/pkg/storage/cacher (watchCache, cacher.go) for any kind: the
 * latest object of each key (the store the List reads), a bounded history of changes (the ring
 * a watch resumes from) and the live fan-out to watchers. A kind is plugged in by a change feed:
 * either `publish` (type, object, optionally its own resourceVersion) for a kind that reports
 * each change, or `resync` (the current list, diffed against the store by a fingerprint) for a
 * kind whose objects are computed on demand (the node, namespaces in use). Main thread only.
 *
 * resourceVersions grow with every change; a history built without its own versions takes them
 * from one shared {@link VersionClock}, which starts at the process start time in milliseconds,
 * so a version from an earlier run of the agent is below this run's first and gets 410 Expired,
 * as a compacted etcd revision.
 */
import type { Status } from '../../shared/api.js';
import { watchFrame, type WatchCancel, type WatchEvent } from '../host/watch-event.js';
import { realClock } from '../../shared/clock.js';

/** KindObject: what a history holds: a Kubernetes object (its metadata gets `resourceVersion`). */
export interface KindObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> };
}

/** KindChange: one change of a feed. `resourceVersion`: the feed's own (must grow), else the clock's next. */
export interface KindChange<T extends KindObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: T;
  resourceVersion?: number;
}

/** VersionClock: the resourceVersion counter shared by the histories of one server. */
export interface VersionClock {
  /** next: a new resourceVersion, above every one handed out before. */
  next(): number;
  /** current: the last one handed out (the start value before any). */
  current(): number;
}

/** newVersionClock: a counter that starts at `start` (default: the real clock's time now in ms, see the module comment). */
export function newVersionClock(start = realClock.now()): VersionClock {
  let v = start;
  return { next: () => ++v, current: () => v };
}

/** Options of {@link newKindHistory}. */
export interface KindHistoryOptions {
  /** The kind (e.g. `Event`): the BOOKMARK object's kind. */
  kind: string;
  /** Changes kept for resumes (default 1000). */
  historySize?: number;
  /** Bytes of their frames kept (default 16 MiB); the newest is always kept. */
  historyBytes?: number;
  /** The version before any change when the feed brings its own versions (default: the clock's value now). */
  startVersion?: number;
  /** An object's key (default {@link objectKey}; the pods' history keys by UID), also each event's `uid`. */
  key?: (o: KindObject) => string;
}

/** OwnVersions: a re-list whose objects carry their own resourceVersions (a store that stamps them). */
export interface OwnVersions {
  /** The version of a deletion found by the re-list (the store's counter now). */
  deletedVersion: number;
}

/** KindHistory: one kind's store, history and watchers. */
export interface KindHistory<T extends KindObject> {
  /** publish records one change (the object gets the change's resourceVersion) and tells the watchers. */
  publish(change: KindChange<T>): void;
  /**
   * resync diffs `objects` (the whole current list) against the store by key and `fingerprint`
   * (default: the JSON without resourceVersion) and publishes ADDED, MODIFIED and DELETED changes.
   */
  resync(objects: readonly T[], fingerprint?: (o: T) => string, own?: OwnVersions): void;
  /** list: the latest objects with their resourceVersions, in key order (namespace, then name). */
  list(): T[];
  /** versionOf: the resourceVersion of the latest change of the object under `key` (undefined: none listed). */
  versionOf(key: string): number | undefined;
  /** resourceVersion: the version of the latest change (the clock's value at creation before any). */
  resourceVersion(): number;
  /** compacted: resumes from a version below this get 410 Expired. */
  compacted(): number;
  /**
   * watch delivers, synchronously during the call, one ADDED per object (`from` undefined or 0)
   * or the changes after `from` (from within [compacted, resourceVersion]) or one ERROR with a
   * 410 Expired Status and nothing else; then a BOOKMARK at the current version, then every change
   * as it happens until the returned function is called.
   */
  watch(from: number | undefined, onEvent: (event: WatchEvent) => void): WatchCancel;
  /** watchers: the live watchers (for metrics and tests). */
  watchers(): number;
  /** historyUsage: the changes held and their frames' total UTF-8 bytes (for metrics and the bench). */
  historyUsage(): { changes: number; bytes: number };
  /** stop drops every watcher (no event reaches them after it). Idempotent. */
  stop(): void;
}

/** objectKey: `namespace/name` (cluster-scoped objects: `name`), the apiserver's storage key order. */
export function objectKey(o: KindObject): string {
  const m = o.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

/** expiredStatus: the apiserver's 410 answer to a watch from a compacted resourceVersion. */
export function tooOldStatus(requested: number, oldest: number): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    reason: 'Expired',
    code: 410,
    message: `too old resource version: ${requested} (${oldest})`,
  };
}

function withVersion<T extends KindObject>(o: T, rv: number): T {
  return { ...o, metadata: { ...o.metadata, resourceVersion: String(rv) } };
}

function defaultFingerprint(o: KindObject): string {
  return JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
}

/** newKindHistory: an empty history whose versions come from `clock` unless the feed brings its own. */
export function newKindHistory<T extends KindObject>(clock: VersionClock, options: KindHistoryOptions): KindHistory<T> {
  const size = options.historySize ?? 1000;
  const maxBytes = options.historyBytes ?? 16 << 20;
  const keyOf = options.key ?? objectKey;
  /** The ADDED form of a MODIFIED latest event, made once and shared (its frame is serialized once for every watcher). */
  const addedForm = new WeakMap<WatchEvent, WatchEvent>();
  const asAdded = (e: WatchEvent): WatchEvent => {
    if (e.type === 'ADDED') return e;
    let a = addedForm.get(e);
    if (!a) addedForm.set(e, (a = { type: 'ADDED', object: e.object, resourceVersion: e.resourceVersion, uid: e.uid }));
    return a;
  };
  /** key → latest event (ADDED or MODIFIED) and the fingerprint it was published with. */
  const latest = new Map<string, { event: WatchEvent; print: string }>();
  /** The changes held are `changes[head..]`, oldest first (dropped ones are cut off in batches). */
  let changes: ({ event: WatchEvent; bytes: number } | undefined)[] = [];
  let head = 0;
  let heldBytes = 0;
  let current = options.startVersion ?? clock.current();
  let compactedAt = current;
  const watchers = new Set<(e: WatchEvent) => void>();

  const record = (type: KindChange<T>['type'], object: T, rv: number, print: string) => {
    current = rv;
    const stored = withVersion(object, rv);
    const event: WatchEvent = { type, object: stored as never, resourceVersion: rv, uid: keyOf(object) };
    const bytes = Buffer.byteLength(watchFrame(event));
    changes.push({ event, bytes });
    heldBytes += bytes;
    while (changes.length - head > 1 && (changes.length - head > size || heldBytes > maxBytes)) {
      const dropped = changes[head]!;
      changes[head++] = undefined; // not held: its object may be large (a pod near 1 MiB)
      heldBytes -= dropped.bytes;
      compactedAt = dropped.event.resourceVersion;
    }
    if (head >= 1024 && head * 2 >= changes.length) {
      changes = changes.slice(head);
      head = 0;
    }
    // Re-inserted on every change: the Map's order is the changes' order (a watch from 0 lists in resourceVersion order).
    latest.delete(event.uid);
    if (type !== 'DELETED') latest.set(event.uid, { event, print });
    for (const fn of watchers) fn(event);
  };
  const publish = (c: KindChange<T>, print = '') => {
    // A feed's own version that does not grow (a deletion's, found after later changes) takes the next one.
    const rv = c.resourceVersion !== undefined ? Math.max(c.resourceVersion, current + 1) : Math.max(clock.next(), current + 1);
    record(c.type, c.object, rv, print);
  };

  return {
    publish: (c) => publish(c),
    resync(objects, fingerprint = defaultFingerprint, own) {
      const seen = new Set<string>();
      const changed: { c: KindChange<T>; print: string }[] = [];
      for (const o of objects) {
        const key = keyOf(o);
        seen.add(key);
        const print = fingerprint(o);
        const had = latest.get(key);
        if (had?.print === print) continue;
        const rv = own ? Number(o.metadata?.resourceVersion) : undefined;
        changed.push({
          c: {
            type: had ? 'MODIFIED' : 'ADDED',
            object: o,
            ...(rv !== undefined && Number.isSafeInteger(rv) ? { resourceVersion: rv } : {}),
          },
          print,
        });
      }
      // Own versions: published in their order, each with its version.
      if (own) changed.sort((a, b) => (a.c.resourceVersion ?? 0) - (b.c.resourceVersion ?? 0));
      for (const { c, print } of changed) publish(c, print);
      for (const [key, { event }] of [...latest])
        if (!seen.has(key))
          publish({ type: 'DELETED', object: event.object as T, ...(own ? { resourceVersion: own.deletedVersion } : {}) });
    },
    list: () => [...latest.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v.event.object as T),
    versionOf: (key) => latest.get(key)?.event.resourceVersion,
    resourceVersion: () => current,
    compacted: () => compactedAt,
    watch(from, onEvent) {
      if (from === undefined || from === 0) {
        for (const { event } of latest.values()) onEvent(asAdded(event));
      } else if (from < compactedAt || from > current) {
        onEvent({ type: 'ERROR', object: tooOldStatus(from, compactedAt), resourceVersion: 0, uid: '' });
        return () => {};
      } else {
        let lo = head;
        let hi = changes.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (changes[mid]!.event.resourceVersion <= from) lo = mid + 1;
          else hi = mid;
        }
        for (let i = lo; i < changes.length; i++) onEvent(changes[i]!.event);
      }
      onEvent({
        type: 'BOOKMARK',
        object: { apiVersion: 'v1', kind: options.kind, metadata: { resourceVersion: String(current) } } as never,
        resourceVersion: current,
        uid: '',
      });
      const fn = (e: WatchEvent) => onEvent(e);
      watchers.add(fn);
      return () => {
        watchers.delete(fn);
      };
    },
    watchers: () => watchers.size,
    historyUsage: () => ({ changes: changes.length - head, bytes: heldBytes }),
    stop: () => watchers.clear(),
  };
}
