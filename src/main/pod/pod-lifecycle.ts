/**
 * Counterpart of pkg/kubelet/kubelet.go HandlePodAdditions / HandlePodUpdates / HandlePodRemoves
 * (the configCh branch of syncLoopIteration) with the admission bookkeeping of canAdmitPod: turns
 * one source update into SyncLoop ADD / UPDATE / REMOVE on the desired-state table.
 *
 * What it owns: the node's admitted usage (what admitted, still active pods request) and the pods
 * waiting for an older pod of the same full name to finish terminating. What it may touch: the
 * PodConfig merge (apply), the pod manager (records are created here; the agent deletes them),
 * the status manager (only for a pod admission rejects), events, the pod workers (`sync` on
 * ADD/UPDATE, `kill` on REMOVE) and the prober (forget a removed pod). It runs no pod worker task
 * and reads no runtime state: the pod worker bodies stay in agent.ts. Main thread only.
 */
import { podFullName } from '../../shared/annotations.js';
import type { Pod } from '../../shared/api.js';
import { podFields, type Logger } from '../../shared/logging.js';
import type { PodUpdate } from '../../shared/pod-update.js';

import type { PodConfig, PodConfigChanges } from '../config/pod-config.js';
import type { EventRecorder } from '../events/recorder.js';
import type { PodWorkers } from '../pod-workers.js';
import type { ProberManager } from '../prober/prober-manager.js';
import type { StatusManager } from '../status/status-manager.js';
import { admitPod, podRequests, type NodeCapacity, type PodUsage } from './admission.js';
import type { PodManager, PodRecord } from './pod-manager.js';

/** Dependencies of {@link newPodLifecycle}: the agent's subsystems it feeds. */
export interface PodLifecycleDeps {
  logger: Logger;
  /** The merge of every source; `handleUpdate` applies each update to it. */
  config: PodConfig;
  podManager: PodManager;
  statusManager: StatusManager;
  events: EventRecorder;
  podWorkers: PodWorkers;
  prober: ProberManager;
  /** Allocatable for admission: --max-pods, cores (millicores) and memory (bytes). */
  capacity: NodeCapacity;
  /** Generates and publishes the pod's status from its record (the agent's #publishStatus). */
  publishStatus(record: PodRecord): void;
  /** A DELETE's `?gracePeriodSeconds=` for the pod's UID, if any (IntakeHost.takeGraceOverride). */
  takeGraceOverride(uid: string): number | undefined;
}

/** PodLifecycle: SyncLoop ADD / UPDATE / REMOVE and admission. Main thread only. */
export interface PodLifecycle {
  /**
   * handleUpdate merges one source update (PodConfig.apply) and handles what changed, in this
   * order: a DuplicatePod warning event per conflict, then REMOVE, UPDATE and ADD per pod.
   * Synchronous; never throws for pod content (sources validate).
   */
  handleUpdate(update: PodUpdate): void;
  /**
   * release gives back an admitted pod's share of the node once it stops being active (terminal
   * or removed). Idempotent: a record not (or no longer) admitted is ignored.
   */
  release(record: PodRecord): void;
  /**
   * podRemoved: the agent calls it after it deleted a removed pod's record. A pod that waited for
   * this one's full name (podWorkers.allowPodStart) is added now.
   */
  podRemoved(pod: Pod): void;
}

class PodLifecycleImpl implements PodLifecycle {
  /** Pods waiting for an older pod of the same full name to finish terminating (podWorkers.allowPodStart). */
  readonly #blockedByFullName = new Map<string, Pod>();
  /** What admitted, still active pods request; kept up to date by admission and release. */
  #used: PodUsage = { pods: 0, cpuMilli: 0, memoryBytes: 0 };
  readonly #admitted = new WeakMap<PodRecord, { cpuMilli: number; memoryBytes: number }>();

  constructor(private readonly deps: PodLifecycleDeps) {}

  handleUpdate(update: PodUpdate): void {
    const changes = this.deps.config.apply(update);
    this.deps.logger.debug({ source: update.source, op: update.op, adds: changes.adds.length, updates: changes.updates.length, removes: changes.removes.length }, 'SyncLoop config update');
    this.#handleConflicts(changes);
    for (const pod of changes.removes) this.#handlePodRemove(pod);
    for (const pod of changes.updates) this.#handlePodUpdate(pod);
    for (const pod of changes.adds) this.#handlePodAdd(pod);
  }

  release(record: PodRecord): void {
    const req = this.#admitted.get(record);
    if (!req) return;
    this.#admitted.delete(record);
    this.#used = { pods: this.#used.pods - 1, cpuMilli: this.#used.cpuMilli - req.cpuMilli, memoryBytes: this.#used.memoryBytes - req.memoryBytes };
  }

  podRemoved(pod: Pod): void {
    const waiting = this.#blockedByFullName.get(podFullName(pod));
    if (waiting) {
      this.#blockedByFullName.delete(podFullName(pod));
      this.#handlePodAdd(waiting);
    }
  }

  #handleConflicts(changes: PodConfigChanges): void {
    for (const c of changes.conflicts) {
      this.deps.events.record(c.pod, {
        type: 'Warning', reason: 'DuplicatePod',
        message: `Rejected pod from source ${c.source}: ${podFullName(c.pod)} is already taken by a pod from source ${c.heldBy.source} (uid ${c.heldBy.uid})`,
      });
    }
  }

  #handlePodAdd(pod: Pod): void {
    const { podManager, logger } = this.deps;
    const uid = pod.metadata!.uid!;
    const fullName = podFullName(pod);
    const holder = podManager.getByFullName(fullName);
    if (holder && holder.terminating) {
      // Like podWorkers.allowPodStart: a pod may not start while an older pod with its full name
      // is still stopping. The same UID coming back (a manifest removed and restored) is the
      // kubelet's static pod restartRequested: it starts again once the old instance is gone.
      this.#blockedByFullName.set(fullName, pod);
      logger.info({ ...podFields(pod), blockedBy: holder.uid }, 'Pod waits for the previous pod with its name to terminate');
      return;
    }
    const record: PodRecord = { uid, pod, runtimePod: null, waiting: {}, backoff: {}, startTimeMs: Date.now(), terminal: false, terminating: false };
    const admitted = admitPod(pod, this.#used, this.deps.capacity);
    podManager.set(record);
    if (!admitted.admit) {
      // kubelet admission (lifecycle.PredicateAdmitHandler): reject whole, never half-start.
      record.terminal = true;
      record.status = { phase: 'Failed', reason: admitted.reason, message: admitted.message, startTime: new Date(record.startTimeMs).toISOString() };
      this.deps.statusManager.setPodStatus(pod, record.status);
      this.deps.events.record(pod, { type: 'Warning', reason: admitted.reason, message: admitted.message });
      return;
    }
    const req = podRequests(pod);
    this.#admitted.set(record, req);
    this.#used = { pods: this.#used.pods + 1, cpuMilli: this.#used.cpuMilli + req.cpuMilli, memoryBytes: this.#used.memoryBytes + req.memoryBytes };
    logger.info({ ...podFields(pod), source: pod.metadata?.annotations?.['kubernetes.io/config.source'] }, 'SyncLoop ADD');
    this.deps.publishStatus(record);
    this.deps.podWorkers.update(uid, { type: 'sync' });
  }

  #handlePodUpdate(pod: Pod): void {
    const record = this.deps.podManager.get(pod.metadata!.uid!);
    if (!record) return this.#handlePodAdd(pod);
    record.pod = pod;
    this.deps.logger.info(podFields(pod), 'SyncLoop UPDATE');
    if (!record.terminal && !record.terminating) this.deps.podWorkers.update(record.uid, { type: 'sync' });
  }

  #handlePodRemove(pod: Pod): void {
    const uid = pod.metadata!.uid!;
    const blocked = this.#blockedByFullName.get(podFullName(pod));
    if (blocked?.metadata?.uid === uid) this.#blockedByFullName.delete(podFullName(pod));
    const record = this.deps.podManager.get(uid);
    if (!record) return;
    this.deps.logger.info(podFields(pod), 'SyncLoop REMOVE');
    record.terminating = true;
    this.release(record);
    this.deps.prober.removePod(uid);
    this.deps.podWorkers.update(uid, { type: 'kill', gracePeriodSeconds: this.deps.takeGraceOverride(uid) ?? pod.spec?.terminationGracePeriodSeconds ?? 30, remove: true });
  }
}

/**
 * newPodLifecycle builds the SyncLoop ADD / UPDATE / REMOVE handlers over the agent's subsystems.
 * The agent builds it in start(), once the pod workers and the prober exist.
 */
export function newPodLifecycle(deps: PodLifecycleDeps): PodLifecycle {
  return new PodLifecycleImpl(deps);
}
