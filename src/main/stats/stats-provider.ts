/**
 * Counterpart of the kubelet's stats provider as the Summary API and the resource metrics read it
 * (pkg/kubelet/stats Provider + pkg/kubelet/server/stats summary provider), with cAdvisor's
 * housekeeping loop (every --housekeeping-interval, 10 s): the main thread sends one `stats` task
 * per period to the worker pool and keeps the latest two samples; the Summary and the metric texts
 * are built from them on request. At most one collection at a time; the main thread does no I/O.
 */
import type { Logger } from '../../shared/logging.js';
import { PROTOCOL_VERSION, type StatsTask } from '../../shared/messages.js';
import type { StatsSample, Summary } from '../../shared/stats.js';
import { cadvisorMetricsText, resourceMetricsText } from './resource-metrics.js';
import { buildSummary } from './summary.js';

/** Options of newStatsProvider. */
export interface StatsProviderOptions {
  /** Period of the collection, milliseconds (--housekeeping-interval, default 10 000). */
  periodMs?: number;
  /** This node's name (Summary node.nodeName). */
  nodeName: string;
}

/** Dependencies of newStatsProvider. */
export interface StatsProviderDeps {
  /** Runs the `stats` task on the worker pool. */
  run: (task: StatsTask) => Promise<StatsSample>;
  logger: Logger;
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
  /** Starts the timer: a first collection at once, then one per period. Idempotent. */
  start(): void;
  /** Collects now (joins one in progress); resolves with the sample. Rejects with the task's error. */
  collect(): Promise<StatsSample>;
  /** The Summary of the latest sample, or undefined before the first one. */
  summary(): Summary | undefined;
  /** GET /metrics/resource's text (scrape_error 1 before the first sample or after a failed collection). */
  resourceMetrics(): Promise<{ contentType: string; body: string }>;
  /** GET /metrics/cadvisor's text. */
  cadvisorMetrics(): Promise<{ contentType: string; body: string }>;
  /** The collector's cost so far. */
  cost(): CollectorCost;
  /** Stops the timer and waits for a collection in progress. */
  stop(): Promise<void>;
}

/** kDefaultHousekeepingIntervalMs: cAdvisor's housekeeping interval as the kubelet sets it (10 s). */
export const kDefaultHousekeepingIntervalMs = 10_000;

/**
 * newStatsProvider builds the collector (see file doc). Errors of a collection are logged (warn,
 * once per distinct message) and make scrape_error 1 until the next good one; the last good
 * sample is kept.
 * @throws RangeError for a period below 1 ms.
 */
export function newStatsProvider(opts: StatsProviderOptions, deps: StatsProviderDeps): StatsProvider {
  const periodMs = opts.periodMs ?? kDefaultHousekeepingIntervalMs;
  if (!(periodMs >= 1)) throw new RangeError(`--housekeeping-interval must be > 0, got ${periodMs} ms`);
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<StatsSample> | null = null;
  let latest: StatsSample | undefined;
  let previous: StatsSample | undefined;
  let cached: Summary | undefined;
  let failed = false;
  let lastError = '';
  const cost: CollectorCost = { collections: 0, totalTaskMs: 0, totalRenderMs: 0 };
  const timed = <T>(fn: () => T): T => {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      cost.totalRenderMs += performance.now() - t0;
    }
  };
  const collect = (): Promise<StatsSample> => {
    if (inFlight) return inFlight;
    const t0 = performance.now();
    inFlight = deps.run({ kind: 'stats', protocol: PROTOCOL_VERSION })
      .then((s) => {
        previous = latest;
        latest = s;
        cached = undefined;
        failed = s.errors.length > 0;
        if (s.errors.length) deps.logger.debug({ errors: s.errors.slice(0, 5), count: s.errors.length }, 'Stats collection had errors');
        lastError = '';
        return s;
      }, (err: unknown) => {
        failed = true;
        const msg = (err as Error)?.message ?? String(err);
        if (msg !== lastError) deps.logger.warn({ err }, 'Stats collection failed');
        lastError = msg;
        throw err;
      })
      .finally(() => {
        cost.collections++;
        cost.totalTaskMs += performance.now() - t0;
        inFlight = null;
      });
    return inFlight;
  };
  const summary = (): Summary | undefined => {
    if (!latest) return undefined;
    cached ??= timed(() => buildSummary(opts.nodeName, latest!, previous));
    return cached;
  };
  return {
    start() {
      if (timer) return;
      collect().catch(() => undefined);
      timer = setInterval(() => { collect().catch(() => undefined); }, periodMs);
      timer.unref();
    },
    collect,
    summary,
    async resourceMetrics() {
      const t0 = performance.now();
      const out = await resourceMetricsText(summary(), failed);
      cost.totalRenderMs += performance.now() - t0;
      return out;
    },
    async cadvisorMetrics() {
      const t0 = performance.now();
      const out = await cadvisorMetricsText(latest);
      cost.totalRenderMs += performance.now() - t0;
      return out;
    },
    cost: () => ({ ...cost }),
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await inFlight?.catch(() => undefined);
    },
  };
}
