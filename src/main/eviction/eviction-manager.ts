/**
 * Counterpart of pkg/kubelet/eviction/eviction_manager.go (managerImpl): the eviction manager.
 * Every monitoring interval (the kubelet's 10 s; `--eviction-monitoring-interval` here) one
 * `synchronize` pass:
 *   observe the signals from the stats provider's latest Summary → thresholds met (soft ones only
 *   once their grace period has passed) → node conditions MemoryPressure / DiskPressure, kept True
 *   for `--eviction-pressure-transition-period` after the last observation → if a threshold with
 *   fresh stats is met: rank the active pods for its resource and evict ONE (the first that is not
 *   critical), then wait for it to be cleaned up (30 s at most, polled every second) and take fresh
 *   stats before the next pass. The thresholds need the node's figures only; the ranking takes a
 *   collection of every pod first (the stats provider reads pods' figures only on demand).
 * Before the thresholds, every pass also evicts the pods over a local storage limit (an emptyDir
 * `sizeLimit`, the pod's or a container's `ephemeral-storage` limit: local-storage.ts), as the
 * kubelet's localStorageEviction with LocalStorageCapacityIsolation on (its default).
 * Evicting is the deps' `evictPod` (the agent fails the pod with phase Failed, reason `Evicted`
 * and the message, records the `Evicted` event, and kills it through the pod workers); this file
 * decides. Critical pods (static pods, mirror pods, priority ≥ 2000000000: kubetypes.IsCriticalPod)
 * are never evicted and always admitted, as upstream. For a filesystem signal the node-level
 * reclaim runs first (`reclaimDisk`: dead containers and unused images, then fresh stats; no
 * eviction if no threshold is met any more), as reclaimNodeLevelResources. Not done here:
 * `--eviction-minimum-reclaim` and the memcg threshold notifier. Main thread only.
 */
import type { Pod } from '../../shared/api.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import type { Logger } from '../../shared/logging.js';
import { podFields } from '../../shared/logging.js';
import { podTerminationGracePeriodSeconds } from '../../shared/pod-policy.js';
import { getPodQOS, isCriticalPod } from '../../shared/qos.js';
import type { Summary } from '../../shared/stats.js';
import {
  admitUnderPressure,
  cachedStatsFunc,
  evictionMessage,
  makeSignalObservations,
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  rankPods,
  sortByEvictionPriority,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  thresholdsUpdatedStats,
  type PressureCondition,
  type SignalObservations,
  type StatsFunc,
} from './helpers.js';
import { localStorageViolation } from './local-storage.js';
import { kSignalToResource, type Threshold } from './thresholds.js';

/** kDefaultEvictionMonitoringIntervalMs: the kubelet's evictionMonitoringPeriod (10 s). */
export const kDefaultEvictionMonitoringIntervalMs = 10_000;
/** kImmediateEvictionGracePeriodSeconds: the grace period of a hard eviction, seconds (upstream immediateEvictionGracePeriodSeconds, 1). */
export const kImmediateEvictionGracePeriodSeconds = 1;
/** kPodCleanupTimeoutMs: how long a pass waits for the evicted pod to be cleaned up (podCleanupTimeout, 30 s). */
export const kPodCleanupTimeoutMs = 30_000;

/** EvictionConfig: the manager's settings (eviction.Config). Times in milliseconds, grace periods in seconds. */
export interface EvictionConfig {
  thresholds: Threshold[];
  /** --eviction-pressure-transition-period, ms (default 5 min). */
  pressureTransitionPeriodMs: number;
  /** --eviction-max-pod-grace-period, seconds; <= 0 = the pod's own terminationGracePeriodSeconds for soft evictions. */
  maxPodGracePeriodSeconds: number;
  /** Period of synchronize, ms (default kDefaultEvictionMonitoringIntervalMs). */
  monitoringIntervalMs?: number;
}

/** An active pod: one with its spec, not terminal and not being stopped (GetActivePods). */
export interface ActivePod {
  pod: Pod;
}

/** Dependencies of newEvictionManager. */
export interface EvictionManagerDeps {
  logger: Logger;
  /**
   * The stats provider's latest Summary (undefined before the first collection). It always has the
   * node's figures; the pods' only those of pods with a local-storage limit, unless the last
   * collection covered every pod (StatsProvider.summary).
   */
  summary(): Summary | undefined;
  /** Collects now (fresh stats after an eviction); with 'all', every pod's figures (before ranking); may reject. */
  collect(scope?: 'all'): Promise<unknown>;
  /** MemTotal, bytes: memory.available's capacity. */
  memoryCapacityBytes: number;
  /** The pods that may be evicted (not terminal, termination not requested). */
  activePods(): Pod[];
  /**
   * evictPod fails pod `uid` (phase Failed, reason `Evicted`, `message`), records the `Evicted`
   * event with `annotations` and kills it within `gracePeriodSeconds` (seconds). Returns false
   * when the pod is gone already.
   */
  evictPod(pod: Pod, e: { message: string; gracePeriodSeconds: number; annotations: Record<string, string> }): boolean;
  /** True once pod `uid`'s containers are stopped (the kill has finished) or the pod is gone. */
  podCleanedUp(uid: string): boolean;
  /**
   * Reclaims node-level disk space before pods are evicted for a filesystem signal
   * (reclaimNodeLevelResources: dead containers and every unused image); absent = none. May reject (logged).
   */
  reclaimDisk?(): Promise<void>;
  /** Counts an eviction (`kubelet_evictions{eviction_signal}`). */
  onEviction?(signal: string): void;
  /** The clock of the monitoring timer and of the observation times (epoch ms); default the real clock. */
  clock?: Clock;
}

/** EvictionManager: pressure, admission and the periodic eviction pass. Main thread only. */
export interface EvictionManager {
  /** Starts the periodic pass (a first one at once). Idempotent. */
  start(): void;
  /** Stops the periodic pass and waits for one in progress. */
  stop(): Promise<void>;
  /**
   * synchronize runs one pass now (joins one in progress) and resolves with the evicted pod, or
   * null. Never rejects: errors are logged.
   */
  synchronize(): Promise<Pod | null>;
  /** The pressure conditions now True (MemoryPressure, DiskPressure), for the Node and admission. */
  conditions(): PressureCondition[];
  /** Admission while under pressure (the eviction manager's PodAdmitHandler). */
  admit(pod: Pod): { admit: true } | { admit: false; reason: string; message: string };
}

class EvictionManagerImpl implements EvictionManager {
  #timer: TimerHandle | undefined;
  #running: Promise<Pod | null> | null = null;
  #conditions: PressureCondition[] = [];
  #conditionsLastObservedAt = new Map<PressureCondition, number>();
  #thresholdsFirstObservedAt = new Map<string, number>();
  #lastObservations: SignalObservations = {};
  /** The pod evicted last, until it is cleaned up (waitForPodsCleanup), with the deadline. */
  #cleanup: { uids: string[]; untilMs: number } | null = null;
  #stopped = false;
  readonly #clock: Clock;

  constructor(
    private readonly config: EvictionConfig,
    private readonly deps: EvictionManagerDeps,
  ) {
    this.#clock = deps.clock ?? realClock;
  }

  start(): void {
    if (this.#timer || this.#stopped) return;
    void this.synchronize();
    this.#timer = this.#clock.setInterval(
      () => void this.synchronize(),
      this.config.monitoringIntervalMs ?? kDefaultEvictionMonitoringIntervalMs,
    );
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clock.clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  conditions(): PressureCondition[] {
    return [...this.#conditions];
  }

  admit(pod: Pod) {
    // No pressure (the usual case): admitted without classing the pod (the kubelet's Admit returns first too).
    if (this.#conditions.length === 0) return { admit: true as const };
    const r = admitUnderPressure(pod, this.#conditions, getPodQOS(pod), isCriticalPod(pod));
    if (!r.admit) this.deps.logger.info({ ...podFields(pod), nodeCondition: this.#conditions }, 'Failed to admit pod to node');
    return r;
  }

  synchronize(): Promise<Pod | null> {
    if (this.#running) return this.#running;
    this.#running = this.#pass()
      .catch((err: unknown) => {
        this.deps.logger.warn({ err }, 'Eviction manager: failed to synchronize');
        return null;
      })
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  async #pass(): Promise<Pod | null> {
    const { config, deps } = this;
    if (this.#stopped) return null;
    if (this.#cleanup) {
      // waitForPodsCleanup: no decision while the pods evicted last are still being stopped.
      const done = this.#cleanup.uids.every((uid) => deps.podCleanedUp(uid));
      if (!done && this.#clock.now() < this.#cleanup.untilMs) return null;
      if (!done) deps.logger.info({ uids: this.#cleanup.uids }, 'Eviction manager: timed out waiting for pods to be cleaned up');
      this.#cleanup = null;
      // The kubelet takes the next Summary with updateStats: figures taken after the pod went.
      await deps.collect().catch(() => undefined);
    }
    const summary = deps.summary();
    if (!summary) return null;
    const now = this.#clock.now();
    const observations = makeSignalObservations(summary, deps.memoryCapacityBytes);
    const met = thresholdsMet(config.thresholds, observations);
    const firstObservedAt = thresholdsFirstObservedAt(met, this.#thresholdsFirstObservedAt, now);
    const lastObservedAt = nodeConditionsLastObservedAt(nodeConditions(met), this.#conditionsLastObservedAt, now);
    const conditions = nodeConditionsObservedSince(lastObservedAt, config.pressureTransitionPeriodMs, now);
    const due = thresholdsMetGracePeriod(met, firstObservedAt, now);
    const changed = conditions.join() !== this.#conditions.join();
    this.#conditions = conditions;
    this.#thresholdsFirstObservedAt = firstObservedAt;
    this.#conditionsLastObservedAt = lastObservedAt;
    const fresh = thresholdsUpdatedStats(due, observations, this.#lastObservations);
    this.#lastObservations = observations;
    if (changed) deps.logger.info({ nodeConditions: conditions }, 'Eviction manager: node conditions changed');
    let active = deps.activePods();
    let stats = cachedStatsFunc(summary);
    // localStorageEviction first: pods over an emptyDir sizeLimit or an ephemeral-storage limit, all at once.
    const local = this.#localStorageEviction(active, stats);
    if (local.length > 0) return local[0];
    if (fresh.length === 0) return null;
    const [toReclaim] = sortByEvictionPriority(fresh);
    const resource = kSignalToResource[toReclaim.signal];
    deps.logger.info({ resourceName: resource, signal: toReclaim.signal }, 'Eviction manager: attempting to reclaim');
    if (resource !== 'memory' && deps.reclaimDisk) {
      // reclaimNodeLevelResources: GC first; no eviction when that relieved every threshold.
      const after = await this.#reclaimDisk();
      if (after === null) {
        deps.logger.info({ resourceName: resource }, 'Eviction manager: able to reduce resource pressure without evicting pods.');
        return null;
      }
      active = deps.activePods();
      if (after) stats = cachedStatsFunc(after);
    }
    if (active.length === 0) {
      deps.logger.warn(
        { signal: toReclaim.signal },
        'Eviction manager: eviction thresholds have been met, but no pods are active to evict',
      );
      return null;
    }
    // Ranking compares every active pod: take their figures now (a quiet period's Summary has the
    // node's and the local-storage-limited pods' only: stats-provider.ts). Without them the pass
    // ends, as upstream's synchronize does when the summary provider fails: ranking on a partial
    // sample would evict whichever pods happen to lack figures.
    try {
      await deps.collect('all');
    } catch (err) {
      deps.logger.warn({ err, signal: toReclaim.signal }, "Eviction manager: failed to collect every pod's stats, no eviction this pass");
      return null;
    }
    const all = deps.summary();
    if (all) stats = cachedStatsFunc(all);
    const ranked = rankPods(active, stats, resource);
    deps.logger.info(
      { pods: ranked.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`) },
      'Eviction manager: pods ranked for eviction',
    );
    // At most one pod per pass; a critical pod is skipped (evictPod refuses it upstream).
    for (const pod of ranked) {
      if (isCriticalPod(pod)) {
        deps.logger.warn(podFields(pod), 'Eviction manager: cannot evict a critical pod');
        continue;
      }
      const { message, annotations } = evictionMessage(resource, pod, stats, fresh, observations);
      const podGrace = podTerminationGracePeriodSeconds(pod);
      const gracePeriodSeconds = !toReclaim.soft
        ? kImmediateEvictionGracePeriodSeconds
        : config.maxPodGracePeriodSeconds > 0
          ? Math.min(config.maxPodGracePeriodSeconds, podGrace)
          : podGrace;
      if (!deps.evictPod(pod, { message, gracePeriodSeconds, annotations })) continue;
      deps.onEviction?.(toReclaim.signal);
      deps.logger.info({ ...podFields(pod), signal: toReclaim.signal, gracePeriodSeconds, message }, 'Eviction manager: pod is evicted');
      this.#cleanup = { uids: [pod.metadata?.uid ?? ''], untilMs: this.#clock.now() + kPodCleanupTimeoutMs };
      return pod;
    }
    deps.logger.warn({ signal: toReclaim.signal }, 'Eviction manager: unable to evict any pods from the node');
    return null;
  }

  /**
   * #reclaimDisk: runs the disk reclaim, takes fresh stats and answers null when no threshold is
   * met any more (grace periods ignored, as upstream), else the fresh Summary.
   */
  async #reclaimDisk(): Promise<Summary | undefined | null> {
    const { deps } = this;
    await deps.reclaimDisk!().catch((err: unknown) =>
      deps.logger.warn({ err }, 'Eviction manager: unexpected error when attempting to reduce resource pressure'),
    );
    await deps.collect().catch(() => undefined);
    const fresh = deps.summary();
    if (!fresh) return undefined;
    return thresholdsMet(this.config.thresholds, makeSignalObservations(fresh, deps.memoryCapacityBytes)).length === 0 ? null : fresh;
  }

  /**
   * #localStorageEviction (localStorageEviction): evicts, with the immediate grace period, every
   * active pod over a local storage limit (local-storage.ts), except critical ones; the pass then
   * waits for them all. Returns the evicted pods.
   */
  #localStorageEviction(active: Pod[], stats: StatsFunc): Pod[] {
    const { deps } = this;
    const evicted: Pod[] = [];
    for (const pod of active) {
      const v = localStorageViolation(pod, stats(pod));
      if (!v || isCriticalPod(pod)) continue;
      if (!deps.evictPod(pod, { message: v.message, gracePeriodSeconds: kImmediateEvictionGracePeriodSeconds, annotations: {} })) continue;
      deps.onEviction?.(v.signal);
      deps.logger.info({ ...podFields(pod), signal: v.signal, message: v.message }, 'Eviction manager: pod is evicted');
      evicted.push(pod);
    }
    if (evicted.length > 0)
      this.#cleanup = { uids: evicted.map((p) => p.metadata?.uid ?? ''), untilMs: this.#clock.now() + kPodCleanupTimeoutMs };
    return evicted;
  }
}

/**
 * newEvictionManager builds the manager (see file doc); nothing runs until start().
 * @throws RangeError for a monitoring interval below 1 ms or a negative transition period.
 */
export function newEvictionManager(config: EvictionConfig, deps: EvictionManagerDeps): EvictionManager {
  const interval = config.monitoringIntervalMs ?? kDefaultEvictionMonitoringIntervalMs;
  if (!(interval >= 1)) throw new RangeError(`--eviction-monitoring-interval must be > 0, got ${interval} ms`);
  if (!(config.pressureTransitionPeriodMs >= 0))
    throw new RangeError(`--eviction-pressure-transition-period must be >= 0, got ${config.pressureTransitionPeriodMs} ms`);
  return new EvictionManagerImpl(config, deps);
}
