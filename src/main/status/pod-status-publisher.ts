/**
 * The pod-status publisher: the kubelet's generateAPIPodStatus followed by statusManager.SetPodStatus
 * (pkg/kubelet/kubelet_pods.go, pkg/kubelet/status/status_manager.go), as one object the sync loop,
 * the sync handler, the pod syncer and the eviction path share, instead of each calling into the
 * pod syncer. It also keeps the failures the agent decided itself (DeadlineExceeded, Evicted: the
 * kubelet's activeDeadlineHandler and eviction manager set them on the status they hand to the
 * status manager), so every later status of that pod keeps them. Main thread only; synchronous.
 */
import { podFields, type Logger } from '../../shared/logging.js';

import type { EventRecorder } from '../events/recorder.js';
import type { PodCache } from '../pleg/pod-cache.js';
import type { PodRecord } from '../pod/pod-manager.js';
import type { ProberManager } from '../prober/prober-manager.js';
import { generatePodStatus } from './generate.js';
import type { StatusManager } from './status-manager.js';
import { realClock, type Clock } from '../../shared/clock.js';

/** Dependencies of {@link newPodStatusPublisher}. */
export interface PodStatusPublisherDeps {
  logger: Logger;
  /** The node's address (--node-ip): status.hostIP. */
  nodeIp: string;
  /** What the runtime last showed of the pod. */
  podCache: Pick<PodCache, 'get'>;
  /** The probes' results (ready, started) of each container. */
  prober: Pick<ProberManager, 'probeStatus'>;
  statusManager: Pick<StatusManager, 'setPodStatus'>;
  events: EventRecorder;
  /**
   * The pod workers' lifecycle table (lifecycle/pod-sync-statuses.ts PodLifecycle satisfies it), asked
   * whether the pod is terminal when a caller does not say. Declared by its one query, so that status/
   * does not import the pod lifecycle that uses it.
   */
  lifecycle: { isPodTerminal(uid: string): boolean };
  /** The clock (epoch ms) of the status's transition times; default the real clock. */
  clock?: Clock;
  /** The runtime's ID scheme now (NodeApi.idScheme): `containerID: <scheme>://<id>`. */
  idScheme: () => string;
}

/** PodFailure: a failure the agent decided itself, kept on every later status of the pod. */
export interface PodFailure {
  /** status.reason, and the event's reason (e.g. `DeadlineExceeded`, `Evicted`). */
  reason: string;
  /** status.message, and the event's message. */
  message: string;
  /** The event's type; default Normal. */
  type?: 'Normal' | 'Warning';
  /** A condition set True with it (`DisruptionTarget` for an eviction, as PodDisruptionConditions). */
  condition?: { type: string; reason: string; message: string };
}

/** PodStatusPublisher: generates a pod's PodStatus and hands it to the status manager. Main thread only. */
export interface PodStatusPublisher {
  /**
   * publish generates pod `record`'s PodStatus from its spec, the pod cache, the probe results and
   * its lifecycle (generateAPIPodStatus), stores it on `record.status` and hands it to the status
   * manager (which keeps it only when it changed). `terminal` absent: the pod workers' view
   * (PodLifecycle.isPodTerminal). Synchronous; never throws on a validated pod.
   */
  publish(record: PodRecord, terminal?: boolean): void;
  /**
   * fail: the agent fails pod `record` itself — phase Failed with `failure.reason` and
   * `failure.message` kept from now on (and `failure.condition`, when given, True), an event of
   * `failure.type` with that reason and message, and the status published as terminal. The
   * caller gives back its admission share and kills it through the pod workers.
   */
  fail(record: PodRecord, failure: PodFailure): void;
}

class PodStatusPublisherImpl implements PodStatusPublisher {
  /** Pods the agent failed itself, with the status reason, message and condition. */
  readonly #failures = new WeakMap<PodRecord, Omit<PodFailure, 'type'>>();

  constructor(private readonly deps: PodStatusPublisherDeps) {}

  publish(record: PodRecord, terminal = this.deps.lifecycle.isPodTerminal(record.uid)): void {
    record.status = generatePodStatus({
      pod: record.pod,
      runtimePod: this.deps.podCache.get(record.uid),
      waiting: record.waiting,
      hostIp: this.deps.nodeIp,
      startTimeMs: record.startTimeMs,
      previous: record.status,
      terminal,
      nowMs: (this.deps.clock ?? realClock).now(),
      failure: this.#failures.get(record),
      probeStatus: (name, id) => this.deps.prober.probeStatus(record.uid, name, id),
      idScheme: this.deps.idScheme(),
    });
    this.deps.statusManager.setPodStatus(record.pod, record.status);
  }

  fail(record: PodRecord, failure: PodFailure): void {
    const { reason, message, condition } = failure;
    this.#failures.set(record, { reason, message, ...(condition ? { condition } : {}) });
    this.deps.events.record(record.pod, { type: failure.type ?? 'Normal', reason, message });
    this.deps.logger.info({ ...podFields(record.pod), reason }, 'Failing pod');
    this.publish(record, true);
  }
}

/** newPodStatusPublisher builds the publisher; it keeps nothing but the agent's own failures. */
export function newPodStatusPublisher(deps: PodStatusPublisherDeps): PodStatusPublisher {
  return new PodStatusPublisherImpl(deps);
}
