/**
 * The eviction manager wired to the agent's subsystems, as pkg/kubelet/kubelet.go's NewMainKubelet
 * wires eviction.NewManager (killPodNow through the pod workers, GetActivePods, the Summary
 * provider, the `kubelet_evictions` counter of pkg/kubelet/metrics). Kept out of agent.ts, which
 * only calls newNodeEvictionManager.
 */
import { totalmem } from 'node:os';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../../shared/logging.js';
import { isPodPhaseTerminal } from '../../shared/pod-policy.js';
import type { StatsProvider } from '../stats/stats-provider.js';
import type { PodAdmission } from '../pod/pod-admission.js';
import type { PodManager, PodRecord } from '../pod/pod-manager.js';
import { newEvictionManager, type EvictionManager } from './eviction-manager.js';
import { evictionThresholds } from './thresholds.js';
import type { Clock } from '../../shared/clock.js';

/** The eviction settings of AgentOptions (options/eviction-options.ts), milliseconds and seconds as named. */
export interface NodeEvictionOptions {
  evictionHard: Record<string, string>;
  evictionSoft: Record<string, string>;
  evictionSoftGracePeriodMs: Record<string, number>;
  evictionPressureTransitionPeriodMs: number;
  evictionMaxPodGracePeriodSeconds: number;
  evictionMonitoringIntervalMs: number;
}

/**
 * The pod workers as eviction uses them (lifecycle/pod-workers.ts PodWorkers satisfies it): the kill
 * of killPodNow, and the lifecycle queries of pod_workers.go. Declared here, as pkg/kubelet/eviction
 * declares the KillPodFunc and ActivePodsFunc it is given, so that eviction/ does not import the pod
 * lifecycle that the agent builds above it.
 */
export interface EvictionPodWorkers {
  /** A kill of pod `uid` within `gracePeriodSeconds` (seconds) that keeps it listed (`remove: false`). */
  update(uid: string, work: { type: 'kill'; gracePeriodSeconds: number; remove: boolean }): void;
  /** True while `uid` has work in flight or waiting. */
  busy(uid: string): boolean;
  /** `uid` was stopped because it finished (or was evicted). */
  isPodTerminal(uid: string): boolean;
  /** A kill was asked for `uid` (it is terminating or terminated). */
  isPodTerminationRequested(uid: string): boolean;
}

/** Fails an evicted pod (status/pod-status-publisher.ts PodStatusPublisher.fail satisfies it), declared here as EvictionPodWorkers. */
export interface EvictionStatusPublisher {
  /** Phase Failed with `failure.reason` and `failure.message`, `failure.condition` True, a `failure.type` event, the status published. */
  fail(
    record: PodRecord,
    failure: { reason: string; message: string; type: 'Warning'; condition: { type: string; reason: string; message: string } },
  ): void;
}

/** Dependencies of newNodeEvictionManager. */
export interface NodeEvictionDeps {
  logger: Logger;
  stats: Pick<StatsProvider, 'summary' | 'collect'>;
  podManager: PodManager;
  podWorkers: EvictionPodWorkers;
  /** The ledger of admitted pods: an evicted pod gives its share back. */
  admission: Pick<PodAdmission, 'release'>;
  /** Fails an evicted pod: Failed/Evicted, DisruptionTarget, event, status. */
  statusPublisher: EvictionStatusPublisher;
  /** Node-level disk reclaim before evicting for a filesystem signal (EvictionManagerDeps.reclaimDisk). */
  reclaimDisk?: () => Promise<void>;
  /** The agent's metrics registry: `kubelet_evictions{eviction_signal}` is registered there. */
  registry: Registry;
  /** The clock of the manager (EvictionManagerDeps.clock); default the real clock. */
  clock?: Clock;
}

/**
 * newNodeEvictionManager builds the eviction manager over the agent's subsystems: active pods are
 * the pod manager's pods whose termination was not requested and whose phase is not Succeeded or
 * Failed; evicting fails the pod (reason `Evicted`) and kills it through the pod workers within
 * the grace period the manager chose (contents kept: an evicted pod stays listed as Failed); a pod
 * is cleaned up once its kill has finished or it is gone.
 * @throws InvalidArgumentError for a soft threshold without a grace period; RangeError for a bad interval.
 */
export function newNodeEvictionManager(o: NodeEvictionOptions, deps: NodeEvictionDeps): EvictionManager {
  const evictions = new Counter({
    name: 'kubelet_evictions',
    help: 'Cumulative number of pod evictions by eviction signal',
    labelNames: ['eviction_signal'],
    registers: [deps.registry],
  });
  const { podManager } = deps;
  // deps.podWorkers is read at each call: the agent builds the pod workers after this manager.
  return newEvictionManager(
    {
      thresholds: evictionThresholds(o),
      pressureTransitionPeriodMs: o.evictionPressureTransitionPeriodMs,
      maxPodGracePeriodSeconds: o.evictionMaxPodGracePeriodSeconds,
      monitoringIntervalMs: o.evictionMonitoringIntervalMs,
    },
    {
      logger: deps.logger,
      clock: deps.clock,
      summary: () => deps.stats.summary(),
      collect: (scope) => deps.stats.collect(scope),
      memoryCapacityBytes: totalmem(),
      activePods: () => {
        const out = [];
        for (const r of podManager.all()) {
          if (deps.podWorkers.isPodTerminationRequested(r.uid)) continue;
          const phase = r.status?.phase;
          if (isPodPhaseTerminal(phase)) continue;
          out.push(r.pod);
        }
        return out;
      },
      evictPod: (pod, e) => {
        const uid = pod.metadata?.uid ?? '';
        const record = podManager.get(uid);
        if (deps.podWorkers.isPodTerminationRequested(uid) || !record) return false;
        // As killPodNow with the eviction manager's status function: Failed/Evicted with the
        // DisruptionTarget condition (reason TerminationByKubelet, PodDisruptionConditions) from now on.
        deps.admission.release(record);
        deps.statusPublisher.fail(record, {
          reason: 'Evicted',
          message: e.message,
          type: 'Warning',
          condition: { type: 'DisruptionTarget', reason: 'TerminationByKubelet', message: e.message },
        });
        deps.podWorkers.update(uid, { type: 'kill', gracePeriodSeconds: e.gracePeriodSeconds, remove: false });
        return true;
      },
      podCleanedUp: (uid) => !podManager.get(uid) || (deps.podWorkers.isPodTerminal(uid) && !deps.podWorkers.busy(uid)),
      onEviction: (signal) => evictions.inc({ eviction_signal: signal }),
      ...(deps.reclaimDisk ? { reclaimDisk: deps.reclaimDisk } : {}),
    },
  );
}
