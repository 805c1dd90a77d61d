/**
 * Counterpart of pkg/kubelet/pleg/evented.go (the Evented PLEG, KEP-3386): container lifecycle
 * events from the runtime's events stream (Docker's) become pod lifecycle events for just the pods concerned, so a
 * container's death reaches the status manager without waiting for a relist. The generic PLEG
 * keeps running underneath as the safety net, as upstream does:
 *
 * - while the stream is up, the relist runs every `relistPeriodMs` (long: it only catches what the
 *   stream missed); upstream lengthens genericPlegRelistPeriod to 300 s in the same situation;
 * - when the stream is lost (the runtime restarted, socket cut), the relist falls back to
 *   `fallbackRelistPeriodMs` (1 s, the kubelet's genericPlegRelistPeriod) until it is back;
 * - when the runtime has no container events at all (the worker answers `unsupported`:
 *   containerd 1.6 has no GetContainerEvents), it is the generic PLEG at `fallbackRelistPeriodMs`
 *   for good, as evented.go falls back to the generic PLEG — the PLEG is chosen by the runtime's
 *   capability, not by its name;
 * - every (re)connect triggers a relist at once, so a transition that happened while the stream was
 *   down is never lost.
 *
 * Events also update the generic PLEG's cache (GenericPleg.observe), so the next relist does not
 * report them a second time. The stream lives in a dedicated worker_threads Worker
 * (src/workers/container-events.worker.ts): no runtime I/O on the main thread, and the piscina pool keeps all
 * its task slots for syncs. Main thread only.
 */
import { realClock, type Clock } from '../../shared/clock.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { RuntimeContainerEvent, ContainerEventsBootstrap, ContainerEventsMessage } from '../../shared/container-events.js';
import { checkRuntimeEndpoint, type RuntimeEndpoint } from '../../shared/runtime-endpoint.js';
import type { Pod } from '../../shared/api.js';
import type { RuntimeContainerState, RuntimePod } from '../../shared/runtime-pod.js';
import { shouldRestartExitedContainer } from '../../shared/pod-policy.js';
import type { PodSyncRunner } from '../pool/worker-pool.js';
import { startWorker } from '../pool/worker-entry.js';
import {
  newGenericPleg,
  type ContainerExit,
  type GenericPleg,
  type Pleg,
  type PlegObserver,
  type PlegStats,
  type PodLifecycleEvent,
  type PodLifecycleEventType,
} from './generic-pleg.js';

/** Options of `newEventedPleg` (milliseconds). */
export interface EventedPlegOptions {
  /** Relist period while the events stream is up (--relist-period). */
  relistPeriodMs?: number;
  /** Relist period while the stream is down (the kubelet's 1 s). */
  fallbackRelistPeriodMs?: number;
  /** No successful relist for this long makes the PLEG unhealthy (kubelet: 3 min). */
  healthThresholdMs?: number;
  /** The runtime to watch (every thread's RuntimeEndpoint). */
  endpoint: RuntimeEndpoint;
  /** Only this node's containers are watched. */
  nodeName: string;
}

/** kDefaultEventedPlegOptions: relist every 60 s while streaming, every 1 s while the stream is down, unhealthy after 3 min. */
export const kDefaultEventedPlegOptions = { relistPeriodMs: 60_000, fallbackRelistPeriodMs: 1_000, healthThresholdMs: 180_000 } as const;

/** ContainerEventSource: the events worker as the PLEG sees it (a Worker, or a fake in tests). */
export interface ContainerEventSource {
  onMessage(handler: (m: ContainerEventsMessage) => void): void;
  /** Ends the stream; resolves when the source is gone. */
  close(): Promise<void>;
}

/** Dependencies of `newEventedPleg`. */
export interface EventedPlegDeps {
  runner: PodSyncRunner;
  logger: Logger;
  /** As GenericPlegDeps.onEvents: pod lifecycle events grouped by pod UID. */
  onEvents(byPod: Map<string, PodLifecycleEvent[]>): void;
  /** As GenericPlegDeps.onRelist (optional). */
  onRelist?(podUids: Set<string>): void;
  /** As GenericPlegDeps.onRuntimePods (optional): the first relist's full pods, for the pod cache. */
  onRuntimePods?(pods: RuntimePod[]): void;
  observer?: PlegObserver;
  /** Opens the events stream (default: a Worker running src/workers/container-events.worker.ts). */
  openEventSource?(bootstrap: ContainerEventsBootstrap): ContainerEventSource;
  /** The clock (epoch ms) of the event lag (now − the event's time) and of the generic PLEG's relists; default the real clock. */
  clock?: Clock;
}

/**
 * toLifecycleEvent maps a runtime container event (Docker's words) to the pod lifecycle event it implies and the
 * container state it leaves (pure): start → ContainerStarted/running, die → ContainerDied/exited,
 * destroy → ContainerRemoved/gone, oom → ContainerChanged (the die that follows carries the state),
 * create → no pod event (created/state only: the sync that created it already knows; the Docker
 * stream no longer carries it, docker-streams.ts kForwardedActions). A `die` with an
 * exit code carries it as `event.exit` (`oomKilled` says whether an `oom` came first). Returns null
 * for events without a pod UID.
 */
export function toLifecycleEvent(
  e: RuntimeContainerEvent,
  oomKilled = false,
): { event: PodLifecycleEvent | null; state: RuntimeContainerState | null | undefined } | null {
  if (!e.podUid || !e.containerId) return null;
  const ev = (type: PodLifecycleEventType): PodLifecycleEvent => ({ uid: e.podUid, type, containerId: e.containerId });
  switch (e.action) {
    case 'start':
      return { event: ev('ContainerStarted'), state: 'running' };
    case 'die': {
      const event = ev('ContainerDied');
      if (e.exitCode !== undefined && Number.isInteger(e.exitCode))
        event.exit = { exitCode: e.exitCode, finishedAtMs: e.timeMs, oomKilled };
      return { event, state: 'exited' };
    }
    case 'destroy':
      return { event: ev('ContainerRemoved'), state: null };
    case 'oom':
      return { event: ev('ContainerChanged'), state: undefined };
    case 'create':
      return { event: null, state: 'created' };
    default:
      return null;
  }
}

/**
 * applyContainerExit returns `runtimePod` with app container `containerId` marked exited as `exit`
 * says, or null when nothing is to be published from the event (pure; the input is not changed):
 * the container is unknown or not running, it is not an app container of `pod` (init containers,
 * sidecars and the sandbox are left to the sync), or its death ends it for good — restartPolicy
 * Never, or OnFailure with exit code 0 (kuberuntime ShouldContainerBeRestarted). A final status
 * must carry the termination message, which only the sync reads (file or log tail), so those
 * deaths are published by the sync as before. The agent publishes a status from the result at
 * once, so a restarting container's death reaches watchers without waiting for the sync that
 * follows (whose result then replaces it): evented.go's processCRIEvents likewise updates the pod
 * cache from the event before the pod worker runs. The reason follows the runtime's: `OOMKilled` after
 * an `oom` event, else `Completed` for exit code 0 and `Error` otherwise.
 */
export function applyContainerExit(runtimePod: RuntimePod, pod: Pod, containerId: string, exit: ContainerExit): RuntimePod | null {
  const i = runtimePod.containers.findIndex((c) => c.id === containerId);
  if (i < 0 || runtimePod.containers[i].state !== 'running') return null;
  const c = runtimePod.containers[i];
  if (!pod.spec?.containers?.some((s) => s.name === c.name)) return null;
  if (!shouldRestartExitedContainer(pod, exit.exitCode)) return null;
  const containers = [...runtimePod.containers];
  containers[i] = {
    ...c,
    state: 'exited',
    exitCode: exit.exitCode,
    finishedAtMs: exit.finishedAtMs,
    reason: exit.oomKilled ? 'OOMKilled' : exit.exitCode === 0 ? 'Completed' : 'Error',
  };
  return { ...runtimePod, containers };
}

/** openWorkerEventSource starts the events Worker (the default `openEventSource`). */
export function openWorkerEventSource(bootstrap: ContainerEventsBootstrap): ContainerEventSource {
  const worker = startWorker('container-events', bootstrap);
  worker.unref();
  let exited = false;
  const gone = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  return {
    onMessage(handler) {
      worker.on('message', handler);
    },
    async close() {
      if (exited) return;
      worker.postMessage({ type: 'stop' });
      const timer = setTimeout(() => void worker.terminate(), 2000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** EventedPleg: a Pleg whose stats say whether the stream is up. */
export type EventedPleg = Pleg;

/**
 * newEventedPleg creates the event-driven PLEG over a generic PLEG; start() opens the stream and
 * starts relisting (at the fallback period until the stream is up).
 * @throws InvalidArgumentError for a relist period below 1 ms, a missing node name or a bad endpoint.
 */
export function newEventedPleg(options: EventedPlegOptions, deps: EventedPlegDeps): EventedPleg {
  const opts = { ...kDefaultEventedPlegOptions, ...options };
  for (const k of ['relistPeriodMs', 'fallbackRelistPeriodMs', 'healthThresholdMs'] as const) {
    if (!Number.isFinite(opts[k]) || opts[k] < 1)
      throw new InvalidArgumentError(`options.${k} must be a positive number of milliseconds, got ${opts[k]}`);
  }
  if (!opts.nodeName) throw new InvalidArgumentError('options.nodeName must be a non-empty string');
  checkRuntimeEndpoint(opts.endpoint ?? {}, 'options.endpoint');
  const log = deps.logger.child({ component: 'pleg' });
  const clock = deps.clock ?? realClock;
  const lags: number[] = [];
  /** Containers whose `oom` event came and whose `die` has not yet (bounded: one per dying container). */
  const oomKilled = new Set<string>();
  let streaming = false;
  let source: ContainerEventSource | null = null;
  let stopped = false;
  const generic: GenericPleg = newGenericPleg(
    { relistPeriodMs: opts.fallbackRelistPeriodMs, healthThresholdMs: opts.healthThresholdMs },
    {
      runner: deps.runner,
      logger: deps.logger,
      onEvents: deps.onEvents,
      observer: deps.observer,
      onRelist: deps.onRelist,
      onRuntimePods: deps.onRuntimePods,
      clock,
      relisted: () => {
        // Only a successful relist after a (re)connect lets the period grow: until then nothing
        // guarantees that what happened while the stream was down has been seen.
        if (streaming) generic.setRelistPeriod(opts.relistPeriodMs);
      },
    },
  );

  const handleEvents = (events: RuntimeContainerEvent[]) => {
    const t = clock.now();
    const byPod = new Map<string, PodLifecycleEvent[]>();
    for (const e of events) {
      const lag = Math.max(0, t - e.timeMs);
      lags.push(lag);
      if (lags.length > 10_000) lags.shift();
      deps.observer?.eventLag?.(lag / 1000);
      if (e.action === 'oom' && e.containerId) oomKilled.add(e.containerId);
      const mapped = toLifecycleEvent(e, oomKilled.has(e.containerId));
      if (e.action === 'die' || e.action === 'destroy') oomKilled.delete(e.containerId);
      if (!mapped) continue;
      if (mapped.state !== undefined)
        generic.observe({ id: e.containerId, podUid: e.podUid, name: e.containerName, state: mapped.state ?? 'unknown' }, mapped.state);
      if (!mapped.event) continue;
      let list = byPod.get(e.podUid);
      if (!list) byPod.set(e.podUid, (list = []));
      list.push(mapped.event);
    }
    if (byPod.size) deps.onEvents(byPod);
  };

  const handleMessage = (m: ContainerEventsMessage) => {
    if (stopped) return;
    switch (m.type) {
      case 'connected':
        streaming = true;
        log.info({ relistPeriodMs: opts.relistPeriodMs }, 'Container events stream connected; relisting to catch up');
        // Catch up at once; stay at the fallback period until a relist succeeds (relisted above).
        generic.setRelistPeriod(opts.fallbackRelistPeriodMs);
        void generic.relist();
        break;
      case 'disconnected':
        if (streaming)
          log.warn(
            { message: m.message, relistPeriodMs: opts.fallbackRelistPeriodMs },
            'Container events stream lost; relisting at the fallback period until it returns',
          );
        streaming = false;
        oomKilled.clear();
        deps.observer?.streamError?.();
        generic.setRelistPeriod(opts.fallbackRelistPeriodMs);
        break;
      case 'unsupported':
        // No stream will come: the generic PLEG at its own period (the fallback), for good.
        log.info(
          { message: m.message, relistPeriodMs: opts.fallbackRelistPeriodMs },
          'The container runtime has no container events; relisting (generic PLEG)',
        );
        streaming = false;
        generic.setRelistPeriod(opts.fallbackRelistPeriodMs);
        break;
      case 'events':
        handleEvents(m.events);
        break;
    }
  };

  return {
    start() {
      const open = deps.openEventSource ?? openWorkerEventSource;
      source = open({ kind: 'container-events', ...opts.endpoint, nodeName: opts.nodeName });
      source.onMessage(handleMessage);
      generic.start();
    },
    async stop() {
      stopped = true;
      await Promise.all([source?.close(), generic.stop()]);
    },
    relist: () => generic.relist(),
    healthy: () => generic.healthy(),
    lastRelistDurationMs: () => generic.lastRelistDurationMs(),
    runtimePodUids: () => generic.runtimePodUids(),
    oldRuntimeCopies: (fullName, uid) => generic.oldRuntimeCopies(fullName, uid),
    observePodRemoved: (uid) => generic.observePodRemoved(uid),
    observeRuntimePod: (pod) => generic.observeRuntimePod(pod),
    lastRelistObservedAtMs: () => generic.lastRelistObservedAtMs(),
    hasContainersOf: (uid) => generic.hasContainersOf(uid),
    stats(): PlegStats {
      return { ...generic.stats(), eventLagsMs: [...lags], streaming };
    },
  };
}
