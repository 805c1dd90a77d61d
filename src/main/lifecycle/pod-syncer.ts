/**
 * Counterpart of the kubelet's podSyncer (pkg/kubelet/kubelet.go SyncPod, SyncTerminatingPod,
 * SyncTerminatedPod, behind pod_workers.go's podSyncer interface): the bodies the pod workers run.
 *
 * - syncPod: fails a pod past its activeDeadlineSeconds (activeDeadlineHandler); waits (an error,
 *   a NetworkNotReady event) while the pod network is not ready for a pod that is not hostNetwork; else runs one
 *   `syncPod` task in the worker pool (from the pod cache when nothing happened since the last
 *   read), stores what it read in the pod cache and publishes the status; tells the pod workers
 *   whether the pod is now terminal and when to sync again.
 * - syncTerminatingPod: one `killPod` task (preStop hooks, SIGTERM, SIGKILL after the grace period)
 *   and the status with the stopped containers published; with `remove`, a second `killPod` then
 *   removes the containers and the pod directory (one task only for a pod the agent has no record of).
 * - syncTerminatedPod: forgets a removed pod — record, cache, status, admission share (the pod
 *   workers then open their start gate, pod-start-gate.ts, for a pod that waited for its full name).
 *
 * What it may touch: the pod manager's records (never creates one), the pod cache (the syncer's
 * runtime reads), the status publisher (and the status manager, to forget a removed pod), events, the prober (which probes run)
 * the admission ledger (a share given back), and the
 * PLEG's view of the runtime (told when a removal finished). It schedules nothing: the pod workers do.
 * Main thread only; every runtime call is a pool task.
 */
import { PodAbsence, type RuntimeView } from './pod-absence.js';
import { performance } from 'node:perf_hooks';

import type { Pod } from '../../shared/api.js';
import { AgentError } from '../../shared/errors.js';
import { podFields, type Logger } from '../../shared/logging.js';
import { PROTOCOL_VERSION } from '../../shared/thread-wire.js';
import type { KillPodTask, PodConfigObjects, PodEventRecord, PodSyncResult } from '../../shared/sync-tasks.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import { isPodFinished, podTerminationGracePeriodSeconds } from '../../shared/pod-policy.js';

import type { EventRecorder } from '../events/recorder.js';
import type { PodCache, PodCacheSnapshot } from '../pleg/pod-cache.js';
import type { PodSyncer, SyncPodOutcome } from './pod-workers.js';
import type { PodLifecycle } from './pod-sync-statuses.js';
import { kNetworkNotReadyErrorMsg } from '../network/network-setup.js';
import { activeDeadlineRemainingMs, kDeadlineExceededMessage, kDeadlineExceededReason } from '../pod/active-deadline.js';
import type { PodAdmission } from '../pod/pod-admission.js';
import type { PodManager, PodRecord } from '../pod/pod-manager.js';
import type { PodSyncRunner } from '../pool/worker-pool.js';
import type { ProberManager } from '../prober/prober-manager.js';
import type { PodStatusPublisher } from '../status/pod-status-publisher.js';
import type { StatusManager } from '../status/status-manager.js';
import { realClock, type Clock } from '../../shared/clock.js';

/** kSyncDeadlineMs: how long one sync task may spend on runtime calls before it yields (milliseconds). */
export const kSyncDeadlineMs = 120_000;

/** Dependencies of {@link newPodSyncer}. */
export interface PodSyncerDeps {
  logger: Logger;
  /** The node's address (--node-ip): hostIP in statuses, probe and hook target of hostNetwork pods. */
  nodeIp: string;
  runner: PodSyncRunner;
  podManager: PodManager;
  podCache: PodCache;
  /** The pod workers' lifecycle table (pod-sync-statuses.ts), asked whether the pod's termination was requested. */
  lifecycle: Pick<PodLifecycle, 'isPodTerminationRequested'>;
  prober: ProberManager;
  /** Forgets a removed pod's status (deletePodStatus). */
  statusManager: Pick<StatusManager, 'deletePodStatus'>;
  /** Generates and publishes the pod's status (status/pod-status-publisher.ts); fails a pod the agent gives up on. */
  statusPublisher: PodStatusPublisher;
  events: EventRecorder;
  /**
   * The PLEG's view of the runtime: told when a removal finished (Pleg.observePodRemoved); asked
   * whether a new pod has containers (pod-absence.ts).
   */
  runtimeView: RuntimeView & { observePodRemoved(uid: string): void; observeRuntimePod?(pod: RuntimePod): void };
  /**
   * The ConfigMaps and Secrets `pod` references (ObjectStore.configObjectsFor), put into its sync
   * task as `configObjects`; absent = none (the kubelet's configmap/secret managers' Get).
   */
  configObjects?: (pod: Pod) => PodConfigObjects | undefined;
  /**
   * The pod network's error while it is not ready (NodeNetwork.nodeMessage), '' when ready; absent
   * = always ready. Pods that are not hostNetwork are not synced meanwhile.
   */
  networkError?: () => string;
  /** The ledger of admitted pods (pod/pod-admission.ts): a pod that stops being active gives its share back. */
  admission: Pick<PodAdmission, 'release'>;
  /** The clock (epoch ms) of activeDeadlineSeconds and of the sync tasks' deadlines; default the real clock. */
  clock?: Clock;
}

/** The task form of each pod object that had fields to leave out (the pod object is replaced, never changed in place, once accepted). */
const taskPods = new WeakMap<Pod, Pod>();

/**
 * taskPod: `pod` as a sync or kill task carries it to a worker — without `metadata.managedFields`,
 * which no worker reads (they read the name, namespace, UID, labels, annotations and the deletion
 * marks) and which a server-side apply fills with a field set per manager, often more bytes than
 * the rest of the pod, cloned across the thread boundary with each task (issue #42 item 1). A pod
 * without it is given as it is; the copy is made once per pod object.
 */
export function taskPod(pod: Pod): Pod {
  if (pod.metadata?.managedFields === undefined) return pod;
  let lean = taskPods.get(pod);
  if (!lean) {
    const { managedFields: _dropped, ...metadata } = pod.metadata;
    taskPods.set(pod, (lean = { ...pod, metadata }));
  }
  return lean;
}

class PodSyncerImpl implements PodSyncer {
  /** Which pods have no container for certain (their sync task's knownAbsent); every task runs through it. */
  readonly #absence: PodAbsence;
  readonly #clock: Clock;

  constructor(private readonly deps: PodSyncerDeps) {
    this.#clock = deps.clock ?? realClock;
    this.#absence = new PodAbsence(deps.runtimeView, this.#clock);
  }

  async syncPod(uid: string, cause?: 'pleg'): Promise<SyncPodOutcome> {
    const { podManager, podCache, runner, events } = this.deps;
    const record = podManager.get(uid);
    if (!record) return {};
    const deadlineLeftMs = activeDeadlineRemainingMs(record.pod, record.startTimeMs, this.#clock.now());
    if (deadlineLeftMs === 0) return this.#failPod(record, kDeadlineExceededReason, kDeadlineExceededMessage);
    const networkError = record.pod.spec?.hostNetwork ? '' : (this.deps.networkError?.() ?? '');
    if (networkError !== '') return this.#waitForNetwork(record, networkError);
    const started = this.#clock.monotonicMs();
    const cached = podCache.snapshot(uid);
    // Asked only by PLEG events that the cache already shows (the engine's start events of what the
    // last sync started and read back), and that sync found a sync from this entry would change
    // nothing: its result is known — no task, no status to generate again (issue #42). The pod
    // workers ask plegSyncNeeded first and do not run such a sync; a caller that does not ask gets this.
    if (cause === 'pleg' && cached.settled) return this.#outcome(record, deadlineLeftMs, 0);
    const configObjects = this.deps.configObjects?.(record.pod);
    const knownAbsent = !cached.runtimePod && this.#absence.isKnownAbsent(uid);
    const result = await this.#absence
      .run(uid, () =>
        runner.run({
          kind: 'syncPod',
          protocol: PROTOCOL_VERSION,
          pod: taskPod(record.pod),
          backoff: record.backoff,
          hostIp: this.deps.nodeIp,
          deadlineMs: this.#clock.now() + kSyncDeadlineMs,
          livenessFailed: this.deps.prober.probeKills(uid),
          startedSidecars: this.deps.prober.startedSidecars(uid),
          ...(cached.current ? { cachedRuntimePod: cached.runtimePod! } : {}),
          ...(configObjects ? { configObjects } : {}),
          ...(knownAbsent ? { knownAbsent } : {}),
        }),
      )
      .catch((err: unknown) => {
        // kubelet: a failed sync is a FailedSync event on the pod; the pod worker retries it.
        events.record(record.pod, {
          type: 'Warning',
          reason: 'FailedSync',
          message: `error syncing pod: ${(err as Error)?.message ?? String(err)}`,
        });
        throw err;
      });
    podCache.set(uid, result.runtimePod, cached.generation, result.settled);
    // The PLEG's relist cache learns what this sync read (a container started and removed between two relists still makes an event).
    if (result.runtimePod) this.deps.runtimeView.observeRuntimePod?.(result.runtimePod);
    this.#applyResult(record, result);
    this.deps.logger.debug(
      { ...podFields(record.pod), durationMs: Math.round(this.#clock.monotonicMs() - started), steps: result.steps.length },
      'Synced pod',
    );
    if (podManager.get(uid) !== record) return {};
    return this.#outcome(record, deadlineLeftMs, result.requeueAfterMs);
  }

  plegSyncNeeded(uid: string): boolean {
    const record = this.deps.podManager.get(uid);
    if (!record) return false;
    // syncPod's checks before its PLEG skip, in its order: the deadline fails the pod, a pod network not ready is reported.
    if (activeDeadlineRemainingMs(record.pod, record.startTimeMs, this.#clock.now()) === 0) return true;
    if (!record.pod.spec?.hostNetwork && (this.deps.networkError?.() ?? '') !== '') return true;
    return !this.deps.podCache.snapshot(uid).settled;
  }

  /**
   * #outcome: what a sync of `record` tells the pod workers once its status is published — terminal
   * when the pod is done, else a requeue after `requeueAfterMs` (ms; 0 = none) or, sooner, when its
   * active deadline (`deadlineLeftMs`, null = none) passes.
   */
  #outcome(record: PodRecord, deadlineLeftMs: number | null, requeueAfterMs: number): SyncPodOutcome {
    if (isPodFinished(record.pod, record.status?.phase)) {
      // The pod is done: stop its sandbox, keep the dead containers for their status and logs.
      this.deps.admission.release(record);
      return { terminal: { gracePeriodSeconds: podTerminationGracePeriodSeconds(record.pod) } };
    }
    if (deadlineLeftMs !== null) requeueAfterMs = requeueAfterMs > 0 ? Math.min(requeueAfterMs, deadlineLeftMs) : deadlineLeftMs;
    return { requeueAfterMs };
  }

  /**
   * #waitForNetwork: as the kubelet's SyncPod while runtimeState.networkErrors() is set, a pod that
   * is not hostNetwork is not synced: a Warning `NetworkNotReady` event
   * (`network is not ready: <error>`, NetworkNotReadyErrorMsg), its status published as it is
   * (Pending, containers waiting ContainerCreating when nothing ran yet), and the sync fails so the
   * pod worker retries it; the agent also resyncs every pod when the network becomes ready.
   * @throws AgentError ERR_NETWORK with that message.
   */
  #waitForNetwork(record: PodRecord, networkError: string): never {
    const message = `${kNetworkNotReadyErrorMsg}: ${networkError}`;
    this.deps.events.record(record.pod, { type: 'Warning', reason: 'NetworkNotReady', message });
    this.deps.statusPublisher.publish(record);
    throw new AgentError('ERR_NETWORK', message);
  }

  /**
   * #failPod: the kubelet fails the pod itself (activeDeadlineHandler): phase Failed with
   * `reason`/`message`, an event (PodStatusPublisher.fail), its admission share given back, and
   * its containers killed within the grace period (kept for logs).
   */
  #failPod(record: PodRecord, reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal'): SyncPodOutcome {
    this.deps.admission.release(record);
    this.deps.statusPublisher.fail(record, { reason, message, type });
    return { terminal: { gracePeriodSeconds: podTerminationGracePeriodSeconds(record.pod) } };
  }

  async syncTerminatingPod(uid: string, gracePeriodSeconds: number, remove: boolean): Promise<void> {
    const { podManager, podCache, prober, runner } = this.deps;
    const known = podManager.get(uid)?.pod;
    prober.removePod(uid);
    // A deleted pod the agent knows is stopped first and its terminated containers published, then
    // removed: as the kubelet's SyncTerminatingPod sets the status with the final container states
    // before the status manager's final delete (pkg/kubelet/kubelet.go, status/status_manager.go),
    // so the pods' watch shows them before DELETED, and DELETED carries them.
    const stopFirst = remove && known !== undefined;
    const snapshot = podCache.snapshot(uid);
    const generation = snapshot.generation;
    const runtimeKnown = this.#runtimeKnown(uid, snapshot);
    const result = await this.#absence.run(uid, () =>
      runner.run({
        kind: 'killPod',
        protocol: PROTOCOL_VERSION,
        podUid: uid,
        gracePeriodSeconds,
        remove: remove && !stopFirst,
        hostIp: this.deps.nodeIp,
        ...(known ? { pod: taskPod(known) } : {}),
        ...runtimeKnown,
      }),
    );
    const record = podManager.get(uid);
    if (!record) return;
    if (remove && !stopFirst) {
      this.#logEvents(record.pod, result.events);
      return;
    }
    if (stopFirst && !result.runtimePod) {
      // Nothing of it ever ran (admission refused it): its status stays as it is (Failed, with the reason).
      this.#logEvents(record.pod, result.events);
    } else {
      podCache.set(uid, result.runtimePod, generation);
      // Stopped for good (generateAPIPodStatus with podIsTerminal: Succeeded or Failed by the exit codes).
      this.#applyResult(record, result, stopFirst || undefined);
    }
    if (!stopFirst) return;
    // Its containers are stopped already: this kill only removes them (the grace period is kept for anything still running).
    const removed = await this.#absence.run(uid, () =>
      runner.run({
        kind: 'killPod',
        protocol: PROTOCOL_VERSION,
        podUid: uid,
        gracePeriodSeconds,
        remove: true,
        hostIp: this.deps.nodeIp,
        pod: taskPod(record.pod),
        // What the stop just found and left: the removal reads nothing first.
        ...(result.runtimePod ? { cachedRuntimePod: result.runtimePod } : { knownAbsent: true }),
      }),
    );
    this.#logEvents(record.pod, removed.events);
  }

  /**
   * #runtimeKnown: what a kill of pod `uid` may take as the runtime's state instead of reading it
   * (KillPodTask.cachedRuntimePod / knownAbsent): the pod cache's entry while it is current (no PLEG
   * event since its read) and the pod's last task neither failed nor runs (PodAbsence.isSettled); or
   * nothing of the pod, as a new pod's sync is told (PodAbsence.isKnownAbsent). Else nothing: read.
   */
  #runtimeKnown(uid: string, snapshot: PodCacheSnapshot): Pick<KillPodTask, 'cachedRuntimePod' | 'knownAbsent'> {
    if (snapshot.current && snapshot.runtimePod && this.#absence.isSettled(uid)) return { cachedRuntimePod: snapshot.runtimePod };
    if (!snapshot.runtimePod && this.#absence.isKnownAbsent(uid)) return { knownAbsent: true };
    return {};
  }

  /**
   * shortenTermination: one `killPod` task (remove: false, no preStop hook) stopping pod `uid`'s
   * containers within `gracePeriodSeconds` (seconds), beside the kill in flight that used a longer
   * one (PodWorkers: a second DELETE with a shorter `gracePeriodSeconds`). Its events are recorded;
   * the status is left to the kill in flight. Rejects with the task's error.
   */
  async shortenTermination(uid: string, gracePeriodSeconds: number): Promise<void> {
    const result = await this.#absence.run(uid, () =>
      this.deps.runner.run({
        kind: 'killPod',
        protocol: PROTOCOL_VERSION,
        podUid: uid,
        gracePeriodSeconds,
        remove: false,
        hostIp: this.deps.nodeIp,
      }),
    );
    const record = this.deps.podManager.get(uid);
    if (record) this.#logEvents(record.pod, result.events);
  }

  syncTerminatedPod(uid: string): void {
    const record = this.deps.podManager.get(uid);
    this.deps.podCache.delete(uid);
    this.deps.runtimeView.observePodRemoved(uid);
    if (record) {
      this.deps.admission.release(record);
      this.deps.podManager.delete(uid);
      this.deps.statusManager.deletePodStatus(uid);
      this.deps.logger.info(podFields(record.pod), 'Pod removed');
    }
  }

  /** #applyResult stores a task's outcome on `record` and publishes its status (`terminal`: as PodStatusPublisher.publish; default the pod workers' view). */
  #applyResult(record: PodRecord, result: PodSyncResult, terminal?: boolean): void {
    record.waiting = result.waiting;
    record.backoff = result.backoff;
    this.#logEvents(record.pod, result.events);
    const runtimePod = this.deps.podCache.get(record.uid);
    if (this.deps.lifecycle.isPodTerminationRequested(record.uid)) this.deps.prober.removePod(record.uid);
    else this.deps.prober.updatePod(record.pod, runtimePod, runtimePod?.podIp ?? '');
    this.deps.statusPublisher.publish(record, terminal);
  }

  #logEvents(pod: Pod, events: PodEventRecord[]): void {
    for (const e of events) this.deps.events.record(pod, e);
  }
}

/** newPodSyncer builds the pod syncer over the agent's subsystems; it runs nothing by itself. */
export function newPodSyncer(deps: PodSyncerDeps): PodSyncer {
  return new PodSyncerImpl(deps);
}
