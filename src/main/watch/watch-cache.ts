/**
 * Counterpart of k8s.io/apiserver/pkg/storage/cacher (watchCache): the pods' watch history. It
 * follows the status manager's change feed, keeps each pod's latest object and a bounded ring of
 * the last changes, and serves watches that start from "now" (initial ADDED events, then a
 * BOOKMARK) or resume from a resourceVersion still in the ring (else one ERROR with a 410 Status,
 * as the apiserver's "too old resource version"). Main thread only.
 *
 * The ring is bounded twice: by count (`historySize`, as the apiserver's watch cache capacity) and
 * by bytes (`historyBytes`, ours: the apiserver's cache holds small objects, ours may hold pods
 * near the 1 MiB body limit, and 720 changes of 200 KB pods held 270 MiB by count alone). A
 * change's size is the UTF-8 length of its wire frame (`watchFrame`), serialized once when it
 * enters the ring and reused for every watcher. When either bound is passed the oldest changes
 * are dropped, so a byte bound only compacts earlier: a resume from before the oldest change held
 * still gets the 410. The history is the one every kind's watch uses (server/kube-api/
 * kind-history.ts), keyed here by pod UID, with the status manager's resourceVersions.
 */
import type { Pod, Status } from '../../shared/api.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import { newKindHistory, newVersionClock, tooOldStatus } from '../../server/kube-api/kind-history.js';
import type { WatchCancel, WatchEvent } from '../../server/host/watch-event.js';
import type { PodStatusChange, StatusManager } from '../status/status-manager.js';

/** Options of `newWatchCache`. */
export interface WatchCacheOptions {
  /** Changes kept for `?resourceVersion=` resumes (the ring's capacity); default 10000. */
  historySize?: number;
  /**
   * Bytes the changes kept may total (`--watch-history-bytes`, default 64 MiB): the sum of their
   * frames' UTF-8 lengths. The newest change is always kept, whatever its size (a resume from just
   * before it still works); older ones are dropped oldest first while the sum is above the bound.
   */
  historyBytes?: number;
}

/** kDefaultWatchCacheOptions: the defaults of WatchCacheOptions (64 MiB of history). */
export const kDefaultWatchCacheOptions: Required<WatchCacheOptions> = { historySize: 10_000, historyBytes: 64 * 1024 * 1024 };

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
  /**
   * podResourceVersion: the resourceVersion of pod `uid`'s last change, its `metadata.resourceVersion`
   * (the apiserver's per-object version, etcd's mod revision); undefined for a pod not listed. The
   * one record of it: GET, LIST, PUT and DELETE preconditions read it (AgentHost.podResourceVersion).
   */
  podResourceVersion(uid: string): number | undefined;
  /** The oldest resourceVersion a watch can resume from (current - number of changes held). */
  oldestResumableVersion(): number;
  /** The changes held and their frames' total UTF-8 bytes (for metrics and the bench). */
  historyUsage(): { changes: number; bytes: number };
  /** Number of live watchers (for metrics). */
  watchers(): number;
  /** stop unsubscribes from the status manager; later watchers get no live events. Idempotent. */
  stop(): void;
}

/** expiredStatus: the apiserver's 410 answer to a watch from a compacted resourceVersion. */
export const expiredStatus: (requested: number, oldest: number) => Status = tooOldStatus;

/** podUid: the pods' history key (a pod's full name may be reused by a new pod: its UID may not). */
function podUid(pod: { metadata?: { uid?: string } }): string {
  return pod.metadata?.uid ?? '';
}

/**
 * newWatchCache subscribes to `statusManager` at once (construct it before the first status is
 * set, so the ring and the latest-object table see every change).
 * @throws InvalidArgumentError when options.historySize or options.historyBytes is not an integer >= 1.
 */
export function newWatchCache(statusManager: StatusManager, options: WatchCacheOptions = {}): WatchCache {
  const opts = {
    historySize: options.historySize ?? kDefaultWatchCacheOptions.historySize,
    historyBytes: options.historyBytes ?? kDefaultWatchCacheOptions.historyBytes,
  };
  if (!Number.isInteger(opts.historySize) || opts.historySize < 1) {
    throw new InvalidArgumentError(`options.historySize must be an integer >= 1, got ${opts.historySize}`);
  }
  if (!Number.isInteger(opts.historyBytes) || opts.historyBytes < 1) {
    throw new InvalidArgumentError(`options.historyBytes (--watch-history-bytes) must be an integer >= 1, got ${opts.historyBytes}`);
  }
  // One history as every kind's (kube-api/kind-history.ts): the pods' versions are the status manager's, keys their UIDs.
  const start = statusManager.resourceVersion();
  const history = newKindHistory<Pod>(newVersionClock(start), {
    kind: 'Pod',
    startVersion: start,
    historySize: opts.historySize,
    historyBytes: opts.historyBytes,
    key: podUid,
  });
  const unsubscribe = statusManager.subscribe((change: PodStatusChange) => {
    history.publish({
      type: change.type,
      object: { apiVersion: 'v1', kind: 'Pod', ...change.pod },
      resourceVersion: change.resourceVersion,
    });
  });
  return {
    watch: (from, onEvent) => history.watch(from, onEvent),
    resourceVersion: () => history.resourceVersion(),
    podResourceVersion: (uid) => history.versionOf(uid),
    oldestResumableVersion: () => history.compacted(),
    historyUsage: () => history.historyUsage(),
    watchers: () => history.watchers(),
    stop() {
      unsubscribe();
      history.stop();
    },
  };
}
