/**
 * Counterpart of k8s.io/apiserver/pkg/storage/cacher (watchCache): the pods' watch history. It
 * follows the status manager's change feed, keeps each pod's latest object and a bounded ring of
 * the last `historySize` changes, and serves watches that start from "now" (initial ADDED events,
 * then a BOOKMARK) or resume from a resourceVersion still in the ring (else one ERROR with a 410
 * Status, as the apiserver's "too old resource version"). Main thread only.
 */
import type { Pod, Status } from '../../shared/api.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import type { WatchCancel, WatchEvent } from '../../server/ws/watch-event.js';
import type { PodStatusChange, StatusManager } from '../status/status-manager.js';

/** Options of `newWatchCache`. */
export interface WatchCacheOptions {
  /** Changes kept for `?resourceVersion=` resumes (the ring's capacity); default 10000. */
  historySize?: number;
}

/** kDefaultWatchCacheOptions: the defaults of WatchCacheOptions. */
export const kDefaultWatchCacheOptions: Required<WatchCacheOptions> = { historySize: 10_000 };

/** WatchCache: the history plus the live fan-out to watchers. */
export interface WatchCache {
  /**
   * watch delivers events to `onEvent`, synchronously during this call for the initial part:
   * - `fromResourceVersion` undefined or 0: one ADDED per current pod (in resourceVersion order),
   *   then a BOOKMARK at the current resourceVersion;
   * - N > 0 still covered by the ring (N >= current - historySize and N <= current): every change
   *   after N in order, then a BOOKMARK at the current resourceVersion;
   * - otherwise one ERROR event whose object is a 410 `Status` (reason `Expired`) and nothing more.
   *   A resourceVersion above the current one is also "expired" (it cannot come from this run);
   *   one from an earlier run of the agent is below this run's first (the agent starts its
   *   versions at its start time, see StatusManagerOptions), so it gets 410 and the client relists.
   * After the initial part every change is delivered as it happens, in resourceVersion order,
   * until the returned function is called.
   */
  watch(fromResourceVersion: number | undefined, onEvent: (event: WatchEvent) => void): WatchCancel;
  /** The resourceVersion of the last change (0 before any). */
  resourceVersion(): number;
  /** The oldest resourceVersion a watch can resume from (current - number of changes held). */
  oldestResumableVersion(): number;
  /** Number of live watchers (for metrics). */
  watchers(): number;
  /** stop unsubscribes from the status manager; later watchers get no live events. Idempotent. */
  stop(): void;
}

/** expiredStatus: the apiserver's 410 answer to a watch from a compacted resourceVersion. */
export function expiredStatus(requested: number, oldest: number): Status {
  return {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410,
    message: `too old resource version: ${requested} (${oldest})`,
  };
}

function toEvent(change: PodStatusChange): WatchEvent {
  const pod: Pod = change.pod;
  const object: Pod = {
    apiVersion: 'v1', kind: 'Pod', ...pod,
    metadata: { ...pod.metadata, resourceVersion: String(change.resourceVersion) },
  };
  return { type: change.type, object, resourceVersion: change.resourceVersion, uid: change.uid };
}

function bookmark(resourceVersion: number): WatchEvent {
  return { type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: String(resourceVersion) } }, resourceVersion, uid: '' };
}

/**
 * newWatchCache subscribes to `statusManager` at once (construct it before the first status is
 * set, so the ring and the latest-object table see every change).
 * @throws InvalidArgumentError when options.historySize is not an integer >= 1.
 */
export function newWatchCache(statusManager: StatusManager, options: WatchCacheOptions = {}): WatchCache {
  const opts = { historySize: options.historySize ?? kDefaultWatchCacheOptions.historySize };
  if (!Number.isInteger(opts.historySize) || opts.historySize < 1) {
    throw new InvalidArgumentError(`options.historySize (--watch-history-size) must be an integer >= 1, got ${opts.historySize}`);
  }
  const ring: (WatchEvent | undefined)[] = new Array(opts.historySize);
  let held = 0; // changes in the ring
  let current = statusManager.resourceVersion();
  /** Latest event per live pod UID; Map order = insertion, re-inserted on change, so resourceVersion order. */
  const latest = new Map<string, WatchEvent>();
  const watchers = new Set<(event: WatchEvent) => void>();
  /** The ADDED form of a MODIFIED latest event, made once and shared (its frame is serialized once). */
  const addedForm = new WeakMap<WatchEvent, WatchEvent>();
  const asAdded = (e: WatchEvent): WatchEvent => {
    if (e.type === 'ADDED') return e;
    let a = addedForm.get(e);
    if (!a) addedForm.set(e, (a = { type: 'ADDED', object: e.object, resourceVersion: e.resourceVersion, uid: e.uid }));
    return a;
  };

  const unsubscribe = statusManager.subscribe((change) => {
    const event = toEvent(change);
    current = change.resourceVersion;
    ring[current % opts.historySize] = event;
    if (held < opts.historySize) held++;
    latest.delete(change.uid);
    if (change.type !== 'DELETED') latest.set(change.uid, event);
    for (const fn of watchers) fn(event);
  });

  const oldest = () => current - held;

  return {
    watch(from, onEvent) {
      if (from === undefined || from === 0) {
        for (const e of latest.values()) onEvent(asAdded(e));
      } else if (from < oldest() || from > current) {
        onEvent({ type: 'ERROR', object: expiredStatus(from, oldest()), resourceVersion: 0, uid: '' });
        return () => {};
      } else {
        for (let rv = from + 1; rv <= current; rv++) onEvent(ring[rv % opts.historySize]!);
      }
      onEvent(bookmark(current));
      const fn = (e: WatchEvent) => onEvent(e);
      watchers.add(fn);
      return () => {
        watchers.delete(fn);
      };
    },
    resourceVersion: () => current,
    oldestResumableVersion: oldest,
    watchers: () => watchers.size,
    stop() {
      unsubscribe();
      watchers.clear();
    },
  };
}
