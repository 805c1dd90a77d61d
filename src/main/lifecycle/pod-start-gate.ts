/**
 * The pod workers' start gate: the kubelet's allowPodStart and its wait for an older pod of the
 * same full name (pkg/kubelet/pod_workers.go: allowPodStart, allowStaticPodStart,
 * startedStaticPodsByFullname, waitingToStartStaticPodsByFullname). A pod may not start while an
 * older pod with its full name (`namespace/name`) is still stopping — one this agent knows, or one
 * found only in the runtime (a static pod edited while the agent was down keeps its old UID's
 * containers: they are killed first, with the grace period on their labels, so the two never run
 * side by side; the kubelet leaves those to HandlePodCleanups). The same UID coming back (a
 * manifest removed and restored) is the kubelet's static pod restartRequested: it starts again once
 * the old instance is gone. Upstream keeps every pod, static or not, behind the gate in the same
 * way for its full name.
 *
 * The pod workers own it (PodWorkers.startGate) and open it when a pod they removed is forgotten
 * (after PodSyncer.syncTerminatedPod told the PLEG, so an old runtime copy is not found again).
 * The sync handler asks it at each ADD and is told, through the listener it registers
 * (onStartAllowed), when a pod that waited may start. Main thread only.
 */
import { podFullName } from '../../shared/annotations.js';
import type { Pod } from '../../shared/api.js';
import { podFields, type Logger } from '../../shared/logging.js';
import { kGracePeriodFromLabels } from '../../shared/pod-policy.js';
import type { PodManager } from '../pod/pod-manager.js';

/** The pod workers' side the gate uses: their lifecycle query, and the kill of an old runtime copy. */
export interface StartGateLifecycle {
  /** shouldPodContentBeRemoved: `uid` left the desired set and is stopping (PodWorkers.shouldPodContentBeRemoved). */
  shouldPodContentBeRemoved(uid: string): boolean;
  /** killOldCopy asks the pod workers to kill and remove `uid` with the grace period on its containers' labels. */
  killOldCopy(uid: string): void;
}

/** Dependencies of {@link newPodStartGate}. */
export interface PodStartGateDeps {
  logger: Logger;
  /** The desired pods by full name (pod/pod-manager.ts): the older pod a new one may wait for. */
  podManager: Pick<PodManager, 'get' | 'getByFullName'>;
  /**
   * The PLEG's index of the runtime's pods found at start: oldRuntimeCopies answers the UIDs other
   * than `uid` with containers of full name `namespace/name` (Pleg.oldRuntimeCopies); default none.
   */
  runtime?: { oldRuntimeCopies(fullName: string, uid: string): string[] };
}

/** PodStartGate: allowPodStart and the pods waiting for an older pod of their full name. Main thread only. */
export interface PodStartGate {
  /**
   * allowPodStart: true when `pod` may start now. False when an older pod of its full name is
   * still stopping, or the runtime holds an old copy of it under another UID that no source wants
   * (those are killed now): `pod` then waits, and the onStartAllowed listener gets it once that
   * pod is gone. A newer pod of the same full name replaces a waiting one.
   */
  allowPodStart(pod: Pod): boolean;
  /** onStartAllowed sets the one listener told when a waiting pod may start (the sync handler's ADD). */
  onStartAllowed(listener: (pod: Pod) => void): void;
  /**
   * podTerminated: the pod workers forgot pod `uid` (its containers are gone and the PLEG was
   * told). A pod that waited for it is handed to the listener now.
   */
  podTerminated(uid: string): void;
  /** forgetPod: `pod` left the desired set; it no longer waits (when it did). */
  forgetPod(pod: Pod): void;
  /** waiting: how many pods wait (each will want a pod slot). */
  waiting(): number;
}

class PodStartGateImpl implements PodStartGate {
  /** Pods waiting, by full name, with the UID they wait for (waitingToStartStaticPodsByFullname). */
  readonly #waitingByFullName = new Map<string, { pod: Pod; blockedBy: string }>();
  /** The full name each blocking UID holds up, to find the waiting pod when it is gone. */
  readonly #blocking = new Map<string, string>();
  #listener: (pod: Pod) => void = () => {};

  constructor(
    private readonly deps: PodStartGateDeps,
    private readonly lifecycle: StartGateLifecycle,
  ) {}

  allowPodStart(pod: Pod): boolean {
    const { podManager, logger } = this.deps;
    const uid = pod.metadata?.uid ?? '';
    const fullName = podFullName(pod);
    const holder = podManager.getByFullName(fullName);
    if (holder && this.lifecycle.shouldPodContentBeRemoved(holder.uid)) {
      this.#wait(fullName, pod, holder.uid);
      logger.info({ ...podFields(pod), blockedBy: holder.uid }, 'Pod waits for the previous pod with its name to terminate');
      return false;
    }
    if (holder) return true;
    const old = (this.deps.runtime?.oldRuntimeCopies(fullName, uid) ?? []).filter((u) => !podManager.get(u));
    if (old.length === 0) return true;
    for (const u of old) this.lifecycle.killOldCopy(u);
    this.#wait(fullName, pod, old[0]);
    logger.info({ ...podFields(pod), blockedBy: old[0] }, 'Pod waits for an old copy with its name, found in the runtime, to terminate');
    return false;
  }

  onStartAllowed(listener: (pod: Pod) => void): void {
    this.#listener = listener;
  }

  podTerminated(uid: string): void {
    const fullName = this.#blocking.get(uid);
    if (fullName === undefined) return;
    this.#blocking.delete(uid);
    const waiting = this.#waitingByFullName.get(fullName);
    if (waiting?.blockedBy !== uid) return;
    this.#waitingByFullName.delete(fullName);
    this.#listener(waiting.pod);
  }

  forgetPod(pod: Pod): void {
    const fullName = podFullName(pod);
    if (this.#waitingByFullName.get(fullName)?.pod.metadata?.uid === pod.metadata?.uid) this.#waitingByFullName.delete(fullName);
  }

  waiting(): number {
    return this.#waitingByFullName.size;
  }

  #wait(fullName: string, pod: Pod, blockedBy: string): void {
    this.#waitingByFullName.set(fullName, { pod, blockedBy });
    this.#blocking.set(blockedBy, fullName);
  }
}

/**
 * newPodStartGate builds the gate over the pod workers' lifecycle (`lifecycle`); the pod workers
 * build theirs (newPodWorkers with `startGate` deps) and expose it as PodWorkers.startGate.
 */
export function newPodStartGate(deps: PodStartGateDeps, lifecycle: StartGateLifecycle): PodStartGate {
  return new PodStartGateImpl(deps, lifecycle);
}

/** killOldCopyWork: the pod work that kills an old runtime copy (a pod whose spec is gone: its labels' grace period). */
export const kKillOldCopyWork = { type: 'kill', gracePeriodSeconds: kGracePeriodFromLabels, remove: true } as const;
