/**
 * Counterpart of the kubelet's stats provider as the Summary API and the resource metrics read it
 * (pkg/kubelet/stats Provider + pkg/kubelet/server/stats summary provider), with cAdvisor's
 * housekeeping loop (every --housekeeping-interval, 10 s): the main thread sends one `stats` task
 * per period to the worker pool and keeps the latest samples; the Summary and the metric texts are
 * built from them on request. At most one collection at a time; the main thread does no I/O.
 *
 * Where this differs from the kubelet, on purpose (issue 16: idle CPU at 1,000 pods): cAdvisor
 * reads every container's cgroup every period whether or not anyone looks, and at density that
 * reading was most of an idle agent's CPU. Here per-pod figures are read **while someone reads
 * them**: a read of the Summary, /metrics/resource, /metrics/cadvisor or metrics.k8s.io (the
 * dashboard, kubectl top, Prometheus, metrics-server) marks demand for `demandWindowMs` (5 min),
 * and while demanded each period collects every pod, exactly as before. With no reader for that
 * long a period collects the node's figures (what the eviction manager's thresholds observe) and
 * the pods `watchedPods` names (those with a local-storage limit, which the eviction manager
 * checks every pass), with no runtime call when none is named. The first read after a quiet spell
 * waits for two collections of every pod 1 s apart, so that `usageNanoCores` is a rate over the
 * last second, never over the quiet spell (a read waits at most `readWaitLimitMs`, then answers
 * from the samples it has: a wedged runtime does not hold readers); the eviction manager collects
 * every pod before it ranks pods under pressure.
 */
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import type { Logger } from '../../shared/logging.js';
import { PROTOCOL_VERSION } from '../../shared/thread-wire.js';
import type { StatsTask } from '../../shared/sync-tasks.js';
import type { StatsSample, Summary } from '../../shared/stats.js';
import { cadvisorMetricsText, resourceMetricsText } from './resource-metrics.js';
import { buildSummary } from './summary.js';

/** Options of newStatsProvider. */
export interface StatsProviderOptions {
  /** Period of the collection, milliseconds (--housekeeping-interval, default 10 000). */
  periodMs?: number;
  /** This node's name (Summary node.nodeName). */
  nodeName: string;
  /** How long a read of per-pod figures keeps every period collecting them, milliseconds (default kDefaultStatsDemandWindowMs). */
  demandWindowMs?: number;
  /** The longest a read waits for fresh figures before it answers from the samples it has, milliseconds (default: max(2 periods, 5 s) + 1 s). */
  readWaitLimitMs?: number;
}

/** Dependencies of newStatsProvider. */
export interface StatsProviderDeps {
  /** Runs the `stats` task on the worker pool. */
  run: (task: StatsTask) => Promise<StatsSample>;
  logger: Logger;
  /** UIDs of the pods every period measures even while nobody reads per-pod figures (default: none). Called once per quiet period. */
  watchedPods?: () => string[];
  /** The clock of the demand window, the period timer and the read wait limit (epoch ms); default the real clock. */
  clock?: Clock;
  /** Waits `ms` milliseconds (tests inject one; default a timer of `clock`). */
  sleep?: (ms: number) => Promise<void>;
}

/** CollectorCost: the collector's own cost, for `bench stats`. */
export interface CollectorCost {
  /** Collections that finished (ok or not). */
  collections: number;
  /** Sum of the collections' wall times, milliseconds (task round trips: the worker's time plus queueing). */
  totalTaskMs: number;
  /** Sum of the main thread's time building Summaries and metric texts, milliseconds. */
  totalRenderMs: number;
}

/** StatsProvider: the node's resource figures. Main thread only. */
export interface StatsProvider {
  /** Starts the timer: a first collection at once, then one per period. Idempotent; nothing after stop(). */
  start(): void;
  /**
   * Collects now and resolves with the sample: every pod with 'all', else what a period collects
   * at this moment (every pod while demanded, else the node and the watched pods). Joins a
   * collection in progress that covers as much. Rejects with the task's error.
   */
  collect(scope?: 'all'): Promise<StatsSample>;
  /**
   * The Summary of the latest sample, whatever it covered (outside the demand window: the node and
   * the watched pods only), or undefined before the first one. Marks no demand: the eviction
   * manager's view.
   */
  summary(): Summary | undefined;
  /**
   * The Summary with every pod, for a reader of per-pod figures (GET /stats/summary,
   * metrics.k8s.io): marks demand and, when the latest pair of collections of every pod is older
   * than two periods or more than two periods apart, waits (at most `readWaitLimitMs`) for two
   * new ones 1 s apart (see file doc). Undefined when no collection of every pod succeeded yet.
   * Never rejects.
   */
  podSummary(): Promise<Summary | undefined>;
  /** GET /metrics/resource's text (scrape_error 1 before the first sample or after a failed collection); marks demand as podSummary. */
  resourceMetrics(): Promise<{ contentType: string; body: string }>;
  /** GET /metrics/cadvisor's text; marks demand as podSummary. */
  cadvisorMetrics(): Promise<{ contentType: string; body: string }>;
  /** Whether a read within the demand window keeps every period collecting every pod. */
  demanded(): boolean;
  /** The collector's cost so far. */
  cost(): CollectorCost;
  /** Stops the timer and waits for a collection in progress; reads after it answer from the samples they have, at once. */
  stop(): Promise<void>;
}

/** kDefaultHousekeepingIntervalMs: cAdvisor's housekeeping interval as the kubelet sets it (10 s). */
export const kDefaultHousekeepingIntervalMs = 10_000;
/** kDefaultStatsDemandWindowMs: how long a read of per-pod figures keeps them collected every period (5 min: longer than a Prometheus or metrics-server scrape interval). */
export const kDefaultStatsDemandWindowMs = 5 * 60_000;
/** kRateSampleMs: the gap between the two collections of a cold read, milliseconds (cAdvisor's shortest housekeeping interval, 1 s). */
export const kRateSampleMs = 1000;

/** One Summary built for a (sample, previous sample) pair, kept while the pair is current. */
interface CachedSummary {
  cur: StatsSample;
  prev: StatsSample | undefined;
  summary: Summary;
}

/**
 * newStatsProvider builds the collector (see file doc). Errors of a collection are logged (warn,
 * once per distinct message) and make scrape_error 1 until the next good one; the last good
 * samples are kept.
 * @throws RangeError for a period or demand window below 1 ms.
 */
export function newStatsProvider(opts: StatsProviderOptions, deps: StatsProviderDeps): StatsProvider {
  const periodMs = opts.periodMs ?? kDefaultHousekeepingIntervalMs;
  const demandWindowMs = opts.demandWindowMs ?? kDefaultStatsDemandWindowMs;
  if (!(periodMs >= 1)) throw new RangeError(`--housekeeping-interval must be > 0, got ${periodMs} ms`);
  if (!(demandWindowMs >= 1)) throw new RangeError(`the stats demand window must be > 0, got ${demandWindowMs} ms`);
  const readWaitLimitMs = opts.readWaitLimitMs ?? Math.max(2 * periodMs, 5000) + kRateSampleMs;
  const clock = deps.clock ?? realClock;
  const now = () => clock.now();
  const sleep =
    deps.sleep ??
    ((ms: number) =>
      new Promise<void>((resolve) => {
        clock.setTimeout(resolve, ms);
      }));
  let timer: TimerHandle | undefined;
  let inFlight: { all: boolean; done: Promise<StatsSample> } | null = null;
  /** The latest two samples of any scope (the eviction manager's view). */
  let latest: StatsSample | undefined;
  let previous: StatsSample | undefined;
  /** The latest two samples of every pod (the readers' view). */
  let latestAll: StatsSample | undefined;
  let previousAll: StatsSample | undefined;
  let demandUntilMs = -Infinity;
  let warming: Promise<void> | null = null;
  let cachedLatest: CachedSummary | undefined;
  let cachedAll: CachedSummary | undefined;
  let failed = false;
  let stopped = false;
  let lastError = '';
  const cost: CollectorCost = { collections: 0, totalTaskMs: 0, totalRenderMs: 0 };
  const demanded = () => now() < demandUntilMs;

  const build = (cache: CachedSummary | undefined, cur: StatsSample, prev: StatsSample | undefined): CachedSummary => {
    if (cache && cache.cur === cur && cache.prev === prev) return cache;
    const t0 = clock.monotonicMs();
    const summary = buildSummary(opts.nodeName, cur, prev);
    cost.totalRenderMs += clock.monotonicMs() - t0;
    return { cur, prev, summary };
  };

  const run = (all: boolean): Promise<StatsSample> => {
    const t0 = clock.monotonicMs();
    const task: StatsTask = { kind: 'stats', protocol: PROTOCOL_VERSION };
    if (!all) task.pods = deps.watchedPods?.() ?? [];
    const done = deps
      .run(task)
      .then(
        (s) => {
          previous = latest;
          latest = s;
          if (all) {
            previousAll = latestAll;
            latestAll = s;
          }
          failed = s.errors.length > 0;
          if (s.errors.length) deps.logger.debug({ errors: s.errors.slice(0, 5), count: s.errors.length }, 'Stats collection had errors');
          lastError = '';
          return s;
        },
        (err: unknown) => {
          failed = true;
          const msg = (err as Error)?.message ?? String(err);
          if (msg !== lastError) deps.logger.warn({ err }, 'Stats collection failed');
          lastError = msg;
          throw err;
        },
      )
      .finally(() => {
        cost.collections++;
        cost.totalTaskMs += clock.monotonicMs() - t0;
        inFlight = null;
      });
    inFlight = { all, done };
    return done;
  };

  const collect = (scope?: 'all'): Promise<StatsSample> => {
    const all = scope === 'all' || demanded();
    if (inFlight && (inFlight.all || !all)) return inFlight.done;
    // A narrower collection is under way: the wider one follows it (one collection at a time).
    if (inFlight)
      return inFlight.done.then(
        () => collect('all'),
        () => collect('all'),
      );
    return run(all);
  };

  /** Whether the latest pair of collections of every pod is recent and close enough for a current CPU rate. */
  const current = (): boolean =>
    latestAll !== undefined &&
    previousAll !== undefined &&
    now() - latestAll.observedAtMs < 2 * periodMs &&
    latestAll.observedAtMs - previousAll.observedAtMs <= 2 * periodMs;

  /**
   * Marks demand; resolves once the pair of collections of every pod is current (see file doc) or
   * after `readWaitLimitMs`, whichever comes first; at once after stop().
   */
  const ensureAll = async (): Promise<void> => {
    if (stopped) return;
    demandUntilMs = now() + demandWindowMs;
    if (!warming && current()) return;
    // A cold read under way is joined: its second collection gives the rate.
    warming ??= (async () => {
      await collect('all');
      if (stopped) return;
      await sleep(kRateSampleMs);
      if (!stopped) await collect('all');
    })()
      .catch(() => undefined)
      .finally(() => {
        warming = null;
      });
    let limit: TimerHandle | undefined;
    await Promise.race([
      warming,
      new Promise<void>((resolve) => {
        limit = clock.setTimeout(resolve, readWaitLimitMs);
      }),
    ]);
    clock.clearTimeout(limit);
  };

  const podSummary = (): Summary | undefined => {
    if (!latestAll) return undefined;
    cachedAll = build(cachedAll, latestAll, previousAll);
    return cachedAll.summary;
  };

  return {
    start() {
      if (timer || stopped) return;
      collect().catch(() => undefined);
      timer = clock.setInterval(() => {
        collect().catch(() => undefined);
      }, periodMs);
    },
    collect,
    summary() {
      if (!latest) return undefined;
      cachedLatest = build(cachedLatest, latest, previous);
      return cachedLatest.summary;
    },
    async podSummary() {
      await ensureAll();
      return podSummary();
    },
    async resourceMetrics() {
      await ensureAll();
      const s = podSummary();
      const t0 = clock.monotonicMs();
      const out = await resourceMetricsText(s, failed);
      cost.totalRenderMs += clock.monotonicMs() - t0;
      return out;
    },
    async cadvisorMetrics() {
      await ensureAll();
      const t0 = clock.monotonicMs();
      const out = await cadvisorMetricsText(latestAll);
      cost.totalRenderMs += clock.monotonicMs() - t0;
      return out;
    },
    demanded,
    cost: () => ({ ...cost }),
    async stop() {
      stopped = true;
      clock.clearInterval(timer);
      timer = undefined;
      await warming;
      await inFlight?.done.catch(() => undefined);
    },
  };
}
