/**
 * Counterpart of pkg/kubelet/pleg/generic.go: the pod lifecycle event generator. Every
 * `relistPeriodMs` it asks a worker for one list of this node's containers, diffs it against the
 * previous list and reports, per pod UID, which containers started, died or went away. It keeps
 * the UIDs that have containers (runtimePodUids), which housekeeping reads to find pods nobody wants.
 *
 * The list runs in the worker pool (no runtime I/O on the main thread); the diff is a pure function.
 * Health follows the kubelet: unhealthy when no relist has finished for `healthThresholdMs`
 * (kubelet: relistThreshold, 3 min).
 */
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import type { Logger } from '../../shared/logging.js';
import type { RelistContainer } from '../../shared/sync-tasks.js';
import type { RuntimeContainerState, RuntimePod } from '../../shared/runtime-pod.js';
import { PROTOCOL_VERSION } from '../../shared/thread-wire.js';
import type { PodSyncRunner } from '../pool/worker-pool.js';

/** PodLifeCycleEventType, as pleg.PodLifeCycleEventType. */
export type PodLifecycleEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged';

/**
 * ContainerExit: what a container's death event says about it (the evented PLEG only), enough to
 * publish the terminated state before any runtime call, as evented.go fills the pod cache from the
 * CRI event's own ContainerStatus.
 */
export interface ContainerExit {
  exitCode: number;
  /** When the runtime reported the death, epoch milliseconds. */
  finishedAtMs: number;
  /** An `oom` event for the container came before its `die`. */
  oomKilled: boolean;
}

/** PodLifecycleEvent: one container of one pod changed state between two relists. */
export interface PodLifecycleEvent {
  uid: string;
  type: PodLifecycleEventType;
  containerId: string;
  /** For ContainerDied from a runtime event (as pleg.PodLifecycleEvent.Data): the exit it reported. */
  exit?: ContainerExit;
}

/**
 * diffRelist: the events between two relists (pure). `before`/`after` map container ID →
 * container. A container seen for the first time running is ContainerStarted; running → exited is
 * ContainerDied; gone is ContainerRemoved; any other change is ContainerChanged.
 */
export function diffRelist(before: Map<string, RelistContainer>, after: Map<string, RelistContainer>): PodLifecycleEvent[] {
  const events: PodLifecycleEvent[] = [];
  const kind = (from: RuntimeContainerState | undefined, to: RuntimeContainerState): PodLifecycleEventType | null => {
    if (from === to) return null;
    if (to === 'running') return 'ContainerStarted';
    if (to === 'exited') return 'ContainerDied';
    return 'ContainerChanged';
  };
  for (const [id, c] of after) {
    const type = kind(before.get(id)?.state, c.state);
    if (type) events.push({ uid: c.podUid, type, containerId: id });
  }
  for (const [id, c] of before) if (!after.has(id)) events.push({ uid: c.podUid, type: 'ContainerRemoved', containerId: id });
  return events;
}

/** Options of `newGenericPleg` (milliseconds). */
export interface GenericPlegOptions {
  /** --relist-period. */
  relistPeriodMs?: number;
  /** No successful relist for this long makes the PLEG unhealthy. */
  healthThresholdMs?: number;
}

/** kDefaultGenericPlegOptions: relist every 1 s (genericPlegRelistPeriod), unhealthy after 3 min without one (relistThreshold). */
export const kDefaultGenericPlegOptions: Required<GenericPlegOptions> = { relistPeriodMs: 1000, healthThresholdMs: 180_000 };

/**
 * PlegObserver: where the PLEG reports figures for /metrics (pleg-metrics.ts adapts it to
 * prom-client: kubelet_pleg_relist_duration_seconds, kubelet_pleg_relist_interval_seconds,
 * kubelet_pleg_event_lag_seconds, kubelet_evented_pleg_connection_error_count). All values in seconds. Main thread.
 */
export interface PlegObserver {
  /** One finished relist took `seconds` (list in the pool + diff on the main thread). */
  relistDuration(seconds: number): void;
  /** Time between the starts of two relists. */
  relistInterval(seconds: number): void;
  /** One runtime event reached the main thread `seconds` after the runtime emitted it (event PLEG only). */
  eventLag?(seconds: number): void;
  /** The runtime's events stream was lost (event PLEG only). */
  streamError?(): void;
}

/** PlegStats: plain figures for benches and tests (milliseconds). */
export interface PlegStats {
  relists: number;
  lastRelistDurationMs: number;
  /** Every relist's duration since start, newest last (bounded at 1000). */
  relistDurationsMs: number[];
  /** Runtime event lags (event PLEG only), newest last (bounded at 10000). */
  eventLagsMs: number[];
  /** True while the runtime's events stream is connected (event PLEG only; false for the generic PLEG). */
  streaming: boolean;
  /** The relist period in force now. */
  relistPeriodMs: number;
}

/** Dependencies of {@link newGenericPleg}. */
export interface GenericPlegDeps {
  runner: PodSyncRunner;
  logger: Logger;
  /** Optional metrics sink. */
  observer?: PlegObserver;
  /** Called once per relist with the events grouped by pod UID (only pods that changed). */
  onEvents(byPod: Map<string, PodLifecycleEvent[]>): void;
  /** Called after every successful relist with every pod UID that has containers (the Set is built only for it). */
  onRelist?(podUids: Set<string>): void;
  /**
   * Called once, with the first successful relist's RuntimePod of every pod (RelistTask.withRuntimePods),
   * as the kubelet's first relist fills its pod cache: a restored pod's first status then shows what runs.
   */
  onRuntimePods?(pods: RuntimePod[]): void;
  /** Called after every successful relist (the evented PLEG lengthens its period from here). */
  relisted?(): void;
  /** The clock of the relist timer and of the health check (epoch ms); default the real clock. */
  clock?: Clock;
}

/** The PLEG. */
export interface Pleg {
  start(): void;
  /** Resolves when the relist in progress (if any) finished; no relist starts after. */
  stop(): Promise<void>;
  /** relist now (also what the timer calls); resolves when its events were delivered. */
  relist(): Promise<void>;
  /** healthy, as the kubelet's PLEG check in /healthz. */
  healthy(): { ok: boolean; message?: string };
  /** Duration of the last relist, milliseconds. */
  lastRelistDurationMs(): number;
  /** Figures for benches and tests. */
  stats(): PlegStats;
  /**
   * runtimePodUids: every pod UID this node has containers of, as the PLEG sees the runtime now
   * (the last relist, kept current by the events observed since). Housekeeping's orphan list.
   */
  runtimePodUids(): Set<string>;
  /**
   * oldRuntimeCopies: the pod UIDs other than `uid` that had containers of full name
   * `namespace/name` in the first relist (the only one that asks for pod names:
   * RelistTask.withPodNames), less those observePodRemoved was told of. `uid` is dropped from that
   * index: the caller now owns it. Only pods found at start need this; the index shrinks as they
   * are claimed or removed.
   */
  oldRuntimeCopies(fullName: string, uid: string): string[];
  /**
   * observePodRemoved: a kill with remove of pod `uid` finished, so the runtime has no container of
   * it; the two views above leave it out until a relist that started later says otherwise (so
   * housekeeping does not kill it again, nor does a new pod wait for it).
   */
  observePodRemoved(uid: string): void;
  /**
   * observeRuntimePod: what a sync read of pod `pod` (its sandboxes and containers with their
   * states) goes into the relist cache, as a runtime event does (observe). Without it, a container
   * a sync started and something removed before the next relist was never in the relist cache, so
   * its removal made no event and the pod kept its stale status (seen on containerd, which has no
   * events). The kubelet's generic PLEG (pkg/kubelet/pleg/generic.go) keeps every container it
   * relisted in podRecords; the sync's own read is this agent's newer view of the same pod.
   */
  observeRuntimePod(pod: RuntimePod): void;
  /**
   * lastRelistObservedAtMs: when the last successful relist asked the runtime (epoch ms, its
   * RelistResult.observedAtMs); 0 before the first.
   */
  lastRelistObservedAtMs(): number;
  /**
   * hasContainersOf: true when the runtime view (the last relist, kept current by the events
   * observed since) holds a container of pod `uid`. O(1).
   */
  hasContainersOf(uid: string): boolean;
}

/** GenericPleg: the relisting PLEG plus the hooks the event PLEG drives it with. */
export interface GenericPleg extends Pleg {
  /**
   * setRelistPeriod changes the period from the next relist on (the evented PLEG lengthens it
   * while its stream is up and shortens it when the stream is lost, as evented.go does).
   */
  setRelistPeriod(ms: number): void;
  /**
   * observe records a state change learned from elsewhere (a runtime event) in the relist cache, so
   * the next relist does not report it again; `state` null = the container is gone.
   */
  observe(c: RelistContainer, state: RuntimeContainerState | null): void;
}

/** indexByFullName maps each `namespace/name` of a relist to the pod UIDs holding it (pure). */
function indexByFullName(containers: RelistContainer[]): Map<string, string[]> {
  const index = new Map<string, string[]>();
  for (const c of containers) {
    if (!c.podName) continue;
    const key = `${c.podNamespace}/${c.podName}`;
    const uids = index.get(key);
    if (!uids) index.set(key, [c.podUid]);
    else if (!uids.includes(c.podUid)) uids.push(c.podUid);
  }
  return index;
}

/** newGenericPleg creates the PLEG; call start() to begin relisting. */
export function newGenericPleg(options: GenericPlegOptions, deps: GenericPlegDeps): GenericPleg {
  const opts = { ...kDefaultGenericPlegOptions, ...options };
  const durations: number[] = [];
  let relists = 0;
  let lastStartMs = 0;
  const log = deps.logger.child({ component: 'pleg' });
  let previous = new Map<string, RelistContainer>();
  /** Pod UID → how many containers of it `previous` holds. */
  let perPod = new Map<string, number>();
  const countIn = (counts: Map<string, number>, uid: string, by: number) => {
    const n = (counts.get(uid) ?? 0) + by;
    if (n <= 0) counts.delete(uid);
    else counts.set(uid, n);
  };
  let lastObservedAtMs = 0;
  let byFullName = new Map<string, string[]>();
  /** Pods observePodRemoved was told of, with when (epoch ms): left out of the views until a later relist. */
  const removed = new Map<string, number>();
  const clock = deps.clock ?? realClock;
  let lastOkMs = clock.now();
  let lastDurationMs = 0;
  let timer: TimerHandle | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  let failing = false;

  const relistOnce = async (): Promise<void> => {
    const started = clock.monotonicMs();
    if (lastStartMs) deps.observer?.relistInterval((started - lastStartMs) / 1000);
    lastStartMs = started;
    try {
      const first = relists === 0;
      const result = await deps.runner.run({
        kind: 'relist',
        protocol: PROTOCOL_VERSION,
        ...(first ? { withPodNames: true, withRuntimePods: true } : {}),
      });
      // Before the events: the pod cache then holds what the runtime shows of each pod when its first status is generated.
      if (first && result.runtimePods) deps.onRuntimePods?.(result.runtimePods);
      const current = new Map(result.containers.map((c) => [c.id, c]));
      const events = diffRelist(previous, current);
      previous = current;
      perPod = new Map();
      for (const c of result.containers) countIn(perPod, c.podUid, 1);
      lastObservedAtMs = Math.max(lastObservedAtMs, result.observedAtMs);
      if (first) byFullName = indexByFullName(result.containers);
      for (const [uid, atMs] of removed) if (atMs < result.observedAtMs) removed.delete(uid);
      lastOkMs = clock.now();
      lastDurationMs = clock.monotonicMs() - started;
      relists++;
      durations.push(lastDurationMs);
      if (durations.length > 1000) durations.shift();
      deps.observer?.relistDuration(lastDurationMs / 1000);
      if (failing) log.info({}, 'Relist succeeded again');
      failing = false;
      const byPod = new Map<string, PodLifecycleEvent[]>();
      for (const e of events) {
        // A container seen created (or in a state the runtime does not name) wakes nobody, as the
        // kubelet's Relist drops ContainerChanged ("not reliable and no other components use yet"):
        // the sync that created it reports it, and its start or death makes the next relist's event.
        // Delivered, it cost a whole read of the pod after every start a relist caught half way.
        if (e.type === 'ContainerChanged') continue;
        let list = byPod.get(e.uid);
        if (!list) byPod.set(e.uid, (list = []));
        list.push(e);
      }
      if (byPod.size) deps.onEvents(byPod);
      deps.relisted?.();
      deps.onRelist?.(new Set(result.containers.map((c) => c.podUid)));
    } catch (err) {
      if (!failing) log.warn({ err }, 'Relist failed; keeping the last known containers');
      failing = true;
    }
  };

  const relist = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    running ??= relistOnce().finally(() => (running = null));
    return running;
  };

  const schedule = () => {
    if (timer) clock.clearTimeout(timer);
    timer = clock.setTimeout(() => void loop(), opts.relistPeriodMs);
  };
  const loop = async () => {
    await relist();
    if (!stopped) schedule();
  };

  return {
    start() {
      void loop();
    },
    async stop() {
      stopped = true;
      if (timer) clock.clearTimeout(timer);
      await running;
    },
    relist,
    healthy() {
      const since = clock.now() - lastOkMs;
      if (since > opts.healthThresholdMs)
        return {
          ok: false,
          message: `pleg was last seen active ${Math.round(since / 1000)}s ago; threshold is ${opts.healthThresholdMs / 1000}s`,
        };
      return { ok: true };
    },
    lastRelistDurationMs: () => lastDurationMs,
    runtimePodUids() {
      const uids = new Set<string>();
      for (const c of previous.values()) if (!removed.has(c.podUid)) uids.add(c.podUid);
      return uids;
    },
    oldRuntimeCopies(fullName: string, uid: string) {
      const uids = byFullName.get(fullName)?.filter((u) => u !== uid && !removed.has(u)) ?? [];
      if (uids.length === 0) byFullName.delete(fullName);
      else byFullName.set(fullName, uids);
      return uids;
    },
    observePodRemoved(uid: string) {
      removed.set(uid, clock.now());
    },
    observeRuntimePod(pod: RuntimePod) {
      for (const c of [...pod.sandboxes, ...pod.containers]) {
        const known = previous.get(c.id);
        if (!known) countIn(perPod, pod.uid, 1);
        if (known?.state !== c.state) previous.set(c.id, { ...(known ?? {}), id: c.id, podUid: pod.uid, name: c.name, state: c.state });
      }
    },
    stats: () => ({
      relists,
      lastRelistDurationMs: lastDurationMs,
      relistDurationsMs: [...durations],
      eventLagsMs: [],
      streaming: false,
      relistPeriodMs: opts.relistPeriodMs,
    }),
    setRelistPeriod(ms: number) {
      if (ms === opts.relistPeriodMs) return;
      opts.relistPeriodMs = ms;
      if (!stopped && timer && !running) schedule();
    },
    lastRelistObservedAtMs: () => lastObservedAtMs,
    hasContainersOf: (uid) => perPod.has(uid),
    observe(c: RelistContainer, state: RuntimeContainerState | null) {
      const known = previous.get(c.id);
      if (state === null) {
        if (known && previous.delete(c.id)) countIn(perPod, known.podUid, -1);
      } else {
        if (!known) countIn(perPod, c.podUid, 1);
        previous.set(c.id, { ...c, state });
      }
    },
  };
}
