/**
 * The pod lifecycle's wiring, as pkg/kubelet/kubelet.go NewMainKubelet builds it: the prober
 * manager, the PLEG, the pod workers' lifecycle table, admission, the pod-status publisher, the pod
 * syncer, the pod workers, the sync handler, housekeeping, the eviction manager, the sync loop, the
 * runtime state and the container/image GC manager —
 * each built once, handed the ones it uses, in the order they need each other. Wiring only: every
 * decision is in the component it builds (agent.ts says where each one lives). Main thread.
 */
import { availableParallelism, totalmem } from 'node:os';

import type { Logger } from '../shared/logging.js';
import type { Clock } from '../shared/clock.js';
import { PROTOCOL_VERSION } from '../shared/thread-wire.js';
import type { PodConfigObjects } from '../shared/sync-tasks.js';
import type { RuntimePod } from '../shared/runtime-pod.js';
import type { Pod } from '../shared/api.js';

import type { AgentOptions } from './options/agent-options.js';
import { runtimeEndpointOf } from './options/runtime-endpoint-options.js';
import type { PodConfig } from './config/pod-config.js';
import type { EventRecorder } from './events/recorder.js';
import type { EvictionManager } from './eviction/eviction-manager.js';
import { newNodeEvictionManager } from './eviction/node-eviction.js';
import { kHousekeepingPeriodMs, newHousekeeping, type Housekeeping } from './lifecycle/housekeeping.js';
import type { KubeletMetrics } from './metrics/kubelet-metrics.js';
import type { NodeNetwork } from './network/network-setup.js';
import { nodeLabels } from './node/node-status.js';
import { newEventedPleg } from './pleg/event-pleg.js';
import { newGcManager, type GcManager } from './gc/gc-manager.js';
import { newRuntimeState, type RuntimeState } from './node/runtime-state.js';
import { newGenericPleg, type Pleg, type PodLifecycleEvent } from './pleg/generic-pleg.js';
import { oldestSandboxCreatedAtMs, type PodCache } from './pleg/pod-cache.js';
import { newPlegMetrics } from './pleg/pleg-metrics.js';
import { newPodAdmission } from './pod/pod-admission.js';
import type { PodManager } from './pod/pod-manager.js';
import { detectHostSecurity } from './pod/security-admission.js';
import { newPodSyncStatuses } from './lifecycle/pod-sync-statuses.js';
import { newPodSyncer } from './lifecycle/pod-syncer.js';
import { newPodWorkers, type PodWorkers } from './lifecycle/pod-workers.js';
import type { PodSyncRunner } from './pool/worker-pool.js';
import { newProberManager, type ProberManager } from './prober/prober-manager.js';
import type { StatsProvider } from './stats/stats-provider.js';
import type { ProbeMetrics } from './stats/probe-metrics.js';
import { newPodStatusPublisher } from './status/pod-status-publisher.js';
import type { StatusManager } from './status/status-manager.js';
import { newSyncHandler, type SyncHandler } from './lifecycle/sync-handler.js';
import { newSyncLoop, type SyncLoop } from './lifecycle/sync-loop.js';

/** Tasks each worker thread runs at once: they wait on the runtime, not on the CPU. */
export const kTasksPerWorker = 16;
/**
 * Kills each worker thread runs at once, beside its syncs: a kill mostly waits out a grace period
 * in the runtime (a stop with `t=gracePeriodSeconds`), so 40 static pods removed at once must not wait
 * for one another's grace periods (the kubelet bounds them not at all: a goroutine per pod).
 */
export const kKillsPerWorker = 64;

/** What {@link wirePodLifecycle} needs: the agent's long-lived parts, built before start(). */
export interface PodLifecycleDeps {
  options: AgentOptions;
  logger: Logger;
  clock: Clock;
  /** The worker pool (instrumented). */
  runner: PodSyncRunner;
  /** True when a test or bench injected the runner: no runtime events thread then (the generic PLEG). */
  injectedRunner: boolean;
  config: PodConfig;
  podManager: PodManager;
  podCache: PodCache;
  statusManager: StatusManager;
  events: EventRecorder;
  metrics: KubeletMetrics;
  probeMetrics: ProbeMetrics;
  stats: StatsProvider;
  network: NodeNetwork;
  /** The PodStatus container ID scheme, once the runtime answered (node-api.ts). */
  idScheme: () => string;
  /** The ConfigMaps, Secrets, claims and service-account volumes a sync task of `pod` gets. */
  configObjects: (pod: Pod) => PodConfigObjects | undefined;
  /** Intake pods held because every stored copy is unreadable: their containers are left alone (issue #38 finding 9). */
  heldUids: () => ReadonlySet<string>;
  /** Called each time the runtime answers its status check: the node learns the runtime's Version (node-api.ts). */
  learnRuntime: () => void;
}

/** The pod lifecycle's parts, for the agent's start/stop, its server host and its health. */
export interface PodLifecycle {
  prober: ProberManager;
  pleg: Pleg;
  podWorkers: PodWorkers;
  handler: SyncHandler;
  housekeeping: Housekeeping;
  eviction: EvictionManager;
  syncLoop: SyncLoop;
  /** Is the container runtime up (the `runtime` health check and the node's Ready). */
  runtimeState: RuntimeState;
  /** Container and image garbage collection. */
  gc: GcManager;
}

/**
 * wirePodLifecycle builds the pod lifecycle's components and connects them (no component runs
 * until the agent starts it). The event-driven PLEG with the relist as safety net (event-pleg.ts:
 * the generic PLEG at 1 s when the runtime has no events); with the fake runtime or an injected
 * runner, the generic PLEG at `--relist-period` (the fake keeps its state per pool thread, so
 * another thread's events would tell nothing). Never throws.
 */
export function wirePodLifecycle(d: PodLifecycleDeps): PodLifecycle {
  const { options: o, logger: log, clock, runner, podManager, statusManager, events } = d;
  let syncLoop: SyncLoop | undefined;
  const loop = (event: Parameters<SyncLoop['iteration']>[0]) => syncLoop!.iteration(event);
  const prober = newProberManager(
    { hostIp: o.nodeIp, maxInFlight: Math.max(4, o.workers * 8) },
    {
      runner: {
        run: (t) =>
          t.kind === 'execProbe'
            ? runner.run<'execProbe'>(t)
            : t.kind === 'grpcProbe'
              ? runner.run<'grpcProbe'>(t)
              : runner.run<'netProbe'>(t),
      },
      recordEvent: (pod, e) => events.record(pod, e),
      logger: log.child({ component: 'prober' }),
      onStatusChange: (uid) => void loop({ kind: 'probe', uid, result: 'status' }),
      onKill: (uid) => void loop({ kind: 'probe', uid, result: 'kill' }),
      probeMetrics: d.probeMetrics,
      clock,
    },
  );
  const plegDeps = {
    runner,
    logger: log,
    observer: newPlegMetrics(d.metrics.registry),
    onEvents: (byPod: Map<string, PodLifecycleEvent[]>) => void loop({ kind: 'pleg', byPod }),
    onRuntimePods: (pods: RuntimePod[]) => {
      for (const p of pods) d.podCache.seed(p.uid, p);
    },
    clock,
  };
  const pleg =
    o.runtime !== 'fake' && !d.injectedRunner
      ? newEventedPleg({ relistPeriodMs: o.relistPeriodMs, endpoint: runtimeEndpointOf(o), nodeName: o.nodeName }, plegDeps)
      : newGenericPleg({ relistPeriodMs: o.relistPeriodMs }, plegDeps);
  // The syncer and the status publisher read the pod workers' lifecycle table (pod_workers.go
  // podSyncStatuses), built first; the sync handler, housekeeping and eviction, built after the pod
  // workers in that order, get them (and their start gate) outright.
  const lifecycle = newPodSyncStatuses();
  const admission = newPodAdmission({
    capacity: { pods: o.maxPods, cpuMilli: availableParallelism() * 1000, memoryBytes: totalmem() },
    security: detectHostSecurity(o.allowedUnsafeSysctls),
    podNetwork: d.network.settings.plugin === 'cni',
    node: { name: o.nodeName, labels: nodeLabels(o.nodeName, undefined, undefined, o.nodeLabels) },
  });
  const statusPublisher = newPodStatusPublisher({
    logger: log,
    nodeIp: o.nodeIp,
    podCache: d.podCache,
    prober,
    statusManager,
    events,
    lifecycle,
    clock,
    idScheme: d.idScheme,
  });
  const syncer = newPodSyncer({
    logger: log,
    nodeIp: o.nodeIp,
    runner,
    podManager,
    podCache: d.podCache,
    prober,
    statusManager,
    statusPublisher,
    events,
    admission,
    runtimeView: pleg,
    lifecycle,
    configObjects: d.configObjects,
    networkError: () => d.network.nodeMessage(),
    clock,
  });
  const podWorkers = newPodWorkers(
    { maxInFlight: o.workers * kTasksPerWorker, maxKillsInFlight: o.workers * kKillsPerWorker },
    {
      logger: log,
      syncer,
      instrument: (run) => d.metrics.timePodWork(run),
      clock,
      statuses: lifecycle,
      startGate: { podManager, runtime: pleg },
    },
  );
  const handler = newSyncHandler({
    logger: log,
    config: d.config,
    podManager,
    statusManager,
    events,
    prober,
    podWorkers,
    admission,
    statusPublisher,
    runtimeStartTimeMs: (uid) => oldestSandboxCreatedAtMs(d.podCache.get(uid)),
    clock,
  });
  const housekeeping = newHousekeeping({
    logger: log,
    seenAllSources: () => d.config.seenAllSources(),
    changesPending: () => handler.pending,
    isDesired: (uid) => podManager.get(uid) !== undefined || d.heldUids().has(uid),
    runtimePodUids: () => pleg.runtimePodUids(),
    podWorkers,
    desiredPodUids: () => [...[...podManager.all()].map((r) => r.uid), ...d.heldUids()],
    mergedPodUids: () => d.config.pods().map((p) => p.metadata?.uid ?? ''),
  });
  const eviction = newNodeEvictionManager(o, {
    logger: log.child({ component: 'eviction' }),
    stats: d.stats,
    podManager,
    podWorkers,
    admission,
    statusPublisher,
    registry: d.metrics.registry,
    clock,
    // The kubelet's DeleteAllUnusedContainers + DeleteUnusedImages: one gc task, image GC with thresholds 0.
    reclaimDisk: () =>
      runner
        .run<'gc'>({
          kind: 'gc',
          protocol: PROTOCOL_VERSION,
          maximumDeadContainersPerContainer: o.maximumDeadContainersPerContainer,
          activePodUids: housekeeping.activePodUids(),
          imageGc: { highThresholdPercent: 0, lowThresholdPercent: 0 },
        })
        .then(() => undefined),
  });
  // The kubelet's admitHandlers.AddPodAdmitHandler(evictionAdmitHandler): refuses pods under pressure.
  admission.addAdmitHandler(eviction);
  syncLoop = newSyncLoop(
    { syncFrequencyMs: o.syncFrequencyMs, housekeepingPeriodMs: kHousekeepingPeriodMs },
    { logger: log, handler, housekeeping, podManager, podCache: d.podCache, podWorkers, statusPublisher, clock },
  );
  const runtimeState = newRuntimeState(
    {},
    {
      // Once the runtime answers, its Version names the PodStatus ID scheme (asked until it answered once).
      check: () =>
        runner.run<'runtimeStatus'>({ kind: 'runtimeStatus', protocol: PROTOCOL_VERSION }).then((r) => {
          d.learnRuntime();
          return r;
        }),
      logger: log.child({ component: 'runtime-state' }),
      // Pods whose syncs failed while the runtime was away are synced now, not after their error backoff.
      onRuntimeUp: () => void loop({ kind: 'resync' }),
      clock,
    },
  );
  const gc = newGcManager(
    {
      maximumDeadContainersPerContainer: o.maximumDeadContainersPerContainer,
      imageGcHighThresholdPercent: o.imageGcHighThresholdPercent,
      imageGcLowThresholdPercent: o.imageGcLowThresholdPercent,
    },
    {
      run: (t) => runner.run<'gc'>(t),
      activePodUids: () => housekeeping.activePodUids(),
      logger: log.child({ component: 'gc' }),
      clock,
    },
  );
  return { prober, pleg, podWorkers, handler, housekeeping, eviction, syncLoop, runtimeState, gc };
}
