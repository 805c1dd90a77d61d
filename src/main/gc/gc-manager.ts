// Counterpart of the kubelet's GC loops in pkg/kubelet/kubelet.go StartGarbageCollection (container GC every minute, image GC every 5 minutes).
import { PROTOCOL_VERSION } from '../../shared/thread-wire.js';
import type { GcResult, GcTask } from '../../shared/sync-tasks.js';
import type { Logger } from '../../shared/logging.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/** Options of newGcManager. */
export interface GcManagerOptions {
  /** Period of the GC timer, milliseconds (the kubelet's ContainerGCPeriod: 60 000). */
  periodMs?: number;
  /** --maximum-dead-containers-per-container. */
  maximumDeadContainersPerContainer: number;
  /** imageGCHighThresholdPercent (--image-gc-high-threshold, 85). */
  imageGcHighThresholdPercent: number;
  /** imageGCLowThresholdPercent (--image-gc-low-threshold, 80). */
  imageGcLowThresholdPercent: number;
}

/** Dependencies of newGcManager. */
export interface GcManagerDeps {
  /** Runs the `gc` task on the worker pool. */
  run: (task: GcTask) => Promise<GcResult>;
  /** UIDs of the pods the agent knows (its pod manager), taken at each run. */
  activePodUids: () => string[];
  logger: Logger;
  /** The clock of the GC timer; default the real clock. */
  clock?: Clock;
}

/** GcManager runs container and image GC periodically; at most one run at a time. */
export interface GcManager {
  /** Starts the timer (first run after one period, as the kubelet). */
  start(): void;
  /** Runs GC now (joins a run in progress) and resolves with what was removed. */
  runOnce(): Promise<GcResult>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** kDefaultGcPeriodMs: the kubelet's ContainerGCPeriod (1 minute). */
export const kDefaultGcPeriodMs = 60_000;

/**
 * newGcManager builds the GC loop. Each run sends one `gc` task with the flag values and the
 * known pod UIDs; errors are logged, never thrown from the timer.
 * @throws RangeError for a period below 1 ms.
 */
export function newGcManager(opts: GcManagerOptions, deps: GcManagerDeps): GcManager {
  const periodMs = opts.periodMs ?? kDefaultGcPeriodMs;
  if (!(periodMs >= 1)) throw new RangeError(`gc periodMs must be >= 1, got ${periodMs}`);
  const clock = deps.clock ?? realClock;
  let timer: TimerHandle | undefined;
  let inFlight: Promise<GcResult> | null = null;
  const runOnce = (): Promise<GcResult> => {
    if (inFlight) return inFlight;
    inFlight = deps
      .run({
        kind: 'gc',
        protocol: PROTOCOL_VERSION,
        maximumDeadContainersPerContainer: opts.maximumDeadContainersPerContainer,
        activePodUids: deps.activePodUids(),
        imageGc: { highThresholdPercent: opts.imageGcHighThresholdPercent, lowThresholdPercent: opts.imageGcLowThresholdPercent },
      })
      .then((r) => {
        if (r.removedContainers.length + r.removedSandboxes.length + r.removedImages.length > 0 || r.errors.length > 0) {
          deps.logger.info(
            {
              containers: r.removedContainers.length,
              sandboxes: r.removedSandboxes.length,
              images: r.removedImages.length,
              errors: r.errors,
              diskUsagePercent: r.diskUsagePercent,
            },
            'Garbage collection',
          );
        }
        return r;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
  return {
    start() {
      if (timer) return;
      timer = clock.setInterval(() => {
        runOnce().catch((err: unknown) => deps.logger.warn({ err }, 'Garbage collection failed'));
      }, periodMs);
    },
    runOnce,
    async stop() {
      clock.clearInterval(timer);
      timer = undefined;
      await inFlight?.catch(() => undefined);
    },
  };
}
