/**
 * The change feeds of the kinds other than pods (nodes, namespaces, events, configmaps, secrets):
 * one {@link KindHistory} per kind and host, kept current by re-listing the kind through the host
 * and diffing (KindHistory.resync) — as the apiserver's cacher keeps its watch cache current from
 * its reflector (k8s.io/apiserver/pkg/storage/cacher/cacher.go). A re-list runs:
 * - before every list and watch of the kind (a list always shows the current state);
 * - when the host reports a change of a kind that has watchers (AgentHost.onResourceChange: a
 *   recorded event, the node's cordon), and after the server's own writes (namespaces, cordon);
 * - every {@link KindSpec.pollMs} while the kind has watchers, for changes nothing reports (a
 *   node condition, a namespace coming into use, a ConfigMap from a file source).
 * Re-lists of one kind run one at a time; calls while one waits to start join it. Main thread.
 */
import { hostClock, type AgentHost, type ResourceChangeKind } from '../host/agent-host.js';
import { newKindHistory, type KindHistory, type KindObject, type VersionClock } from './kind-history.js';
import type { TimerHandle } from '../../shared/clock.js';

/** kSignalDelayMs: a reported change is followed by a re-list this many milliseconds later (changes in between join it). */
const kSignalDelayMs = 50;

/** KindSpec: how a kind is listed from the host (undefined: the host does not serve it). */
export interface KindSpec<T extends KindObject> {
  resource: ResourceChangeKind;
  kind: string;
  list(host: AgentHost): Promise<T[] | undefined> | T[] | undefined;
  /** What identifies an unchanged object (default: its JSON). */
  fingerprint?(o: T): string;
  /** Re-list period while watched, in milliseconds (default 1000). */
  pollMs?: number;
  /**
   * ownVersions: the objects carry the host's own resourceVersions (kept, not replaced by the
   * clock's); returns the host's counter now (a deletion's version), undefined when the host has none.
   */
  ownVersions?(host: AgentHost): number | undefined;
}

/** KindFeed: a kind's history and the re-list that brings it up to date. */
export interface KindFeed<T extends KindObject> {
  history: KindHistory<T>;
  /** sync re-lists now (or joins the re-list waiting to start); false when the host does not serve the kind. @throws what the host's list throws. */
  sync(): Promise<boolean>;
}

/** KindFeeds: the feeds of one host. */
export interface KindFeeds {
  feed<T extends KindObject>(spec: KindSpec<T>): KindFeed<T>;
  /** close stops the polls and the host subscription. Idempotent. */
  close(): void;
}

/** newKindFeeds: the feeds of `host`, created on first use; versions from `clock`; polls and re-lists on the host's clock (hostClock). */
export function newKindFeeds(host: AgentHost, clock: VersionClock): KindFeeds {
  const time = hostClock(host);
  const feeds = new Map<string, { feed: KindFeed<KindObject>; spec: KindSpec<KindObject>; nextPollMs: number }>();
  /** Kinds reported changed, listed again together within {@link kSignalDelayMs} (a burst of changes costs one re-list). */
  const signalled = new Set<string>();
  let signalTimer: TimerHandle | undefined;
  const unsubscribe = host.onResourceChange?.((resource) => {
    // Only a kind someone watches is re-listed on a change: a list re-lists before it answers, and
    // a burst of pod starts records events by the hundred (each re-list diffs every event).
    if (!feeds.get(resource)?.feed.history.watchers()) return;
    signalled.add(resource);
    signalTimer ??= time.setTimeout(() => {
      signalTimer = undefined;
      for (const r of signalled)
        void feeds
          .get(r)
          ?.feed.sync()
          .catch(() => undefined);
      signalled.clear();
    }, kSignalDelayMs);
  });
  const poll = time.setInterval(() => {
    const now = time.now();
    for (const f of feeds.values()) {
      if (f.feed.history.watchers() === 0 || now < f.nextPollMs) continue;
      f.nextPollMs = now + (f.spec.pollMs ?? 1000);
      void f.feed.sync().catch(() => undefined);
    }
  }, 250);

  const create = <T extends KindObject>(spec: KindSpec<T>): KindFeed<T> => {
    const own = spec.ownVersions?.(host) !== undefined;
    const history = newKindHistory<T>(clock, { kind: spec.kind, ...(own ? { startVersion: 0 } : {}) });
    let tail: Promise<unknown> = Promise.resolve();
    let waiting: Promise<boolean> | undefined;
    const sync = (): Promise<boolean> => {
      if (waiting) return waiting;
      const run = tail.then(async () => {
        waiting = undefined;
        const items = await spec.list(host);
        if (items === undefined) return false;
        const deletedVersion = own ? spec.ownVersions?.(host) : undefined;
        history.resync(items, spec.fingerprint?.bind(spec), deletedVersion === undefined ? undefined : { deletedVersion });
        return true;
      });
      tail = run.catch(() => undefined);
      return (waiting = run);
    };
    return { history, sync };
  };

  return {
    feed<T extends KindObject>(spec: KindSpec<T>): KindFeed<T> {
      let f = feeds.get(spec.resource);
      if (!f)
        feeds.set(
          spec.resource,
          (f = { feed: create(spec) as unknown as KindFeed<KindObject>, spec: spec as unknown as KindSpec<KindObject>, nextPollMs: 0 }),
        );
      return f.feed as unknown as KindFeed<T>;
    },
    close() {
      time.clearInterval(poll);
      time.clearTimeout(signalTimer);
      unsubscribe?.();
    },
  };
}
