/**
 * Counterpart of pkg/kubelet/kubelet.go's SyncHandler for config changes — HandlePodAdditions /
 * HandlePodUpdates / HandlePodRemoves (the configCh branch of syncLoopIteration), asking admission
 * (pod/pod-admission.ts, the kubelet's canAdmitPod) at each ADD: turns one source update into
 * SyncLoop ADD / UPDATE / REMOVE on the desired-state table.
 *
 * A big update (a 2,000-pod SET from the file source) is handled in chunks of
 * {@link kChangesPerChunk} pods with a macrotask (setImmediate) between them, so the main thread
 * keeps serving the server, the PLEG and the pod workers' results meanwhile; change sets are
 * handled strictly in arrival order (a FIFO), as the kubelet's configCh is read one update per
 * syncLoopIteration. A small update with nothing queued ahead is handled at once, synchronously.
 *
 * What it owns: the queue of change sets not yet handled. A pod that must wait for an older pod of
 * its full name is the pod workers' start gate's (pod-start-gate.ts, the kubelet's allowPodStart):
 * asked at each ADD, it hands the pod back (onStartAllowed) once it may start. What it may touch: the PodConfig merge (apply), the pod manager (records are created
 * here; the pod syncer deletes them), the status manager (a pod admission rejects; every admitted
 * pod's first status goes through the status publisher; updatePod for a write of the pod object itself),
 * events, admission (admit at ADD, release at REMOVE), the pod workers (`sync` on ADD/UPDATE, `kill` on REMOVE; their start gate) and
 * the prober (forget a removed pod). It runs no pod worker task itself (pod-syncer.ts does).
 * Main thread only.
 */
import { podFullName } from '../../shared/annotations.js';
import type { Pod } from '../../shared/api.js';
import { boundedErr, podFields, type Logger } from '../../shared/logging.js';
import type { PodUpdate } from '../../shared/pod-update.js';

import type { PodConfig, PodConfigChanges } from '../config/pod-config.js';
import type { EventRecorder } from '../events/recorder.js';
import type { PodWorkers } from './pod-workers.js';
import type { ProberManager } from '../prober/prober-manager.js';
import type { PodStatusPublisher } from '../status/pod-status-publisher.js';
import type { StatusManager } from '../status/status-manager.js';
import { removalGracePeriodSeconds } from '../pod/graceful-deletion.js';
import type { PodAdmission } from '../pod/pod-admission.js';
import type { PodManager, PodRecord } from '../pod/pod-manager.js';
import { realClock, type Clock } from '../../shared/clock.js';

/**
 * kChangesPerChunk: pod changes (conflict events, removes, updates, adds) handled per macrotask
 * when an update is handled in chunks. Chosen with `bench scale` (10,000 pods, 2 threads, quiet
 * machine): 200 gave event-loop delay p99 41–70 ms and max 243–391 ms; 50 gave p99 33–40 ms and
 * max 111–129 ms with the same convergence time (25 and 100 were no better). What remains of the
 * max is mostly the relist's diff at 10,000 pods (80–115 ms), not the chunks.
 */
export const kChangesPerChunk = 50;

/** Dependencies of {@link newSyncHandler}: the agent's subsystems it feeds. */
export interface SyncHandlerDeps {
  logger: Logger;
  /** The merge of every source; `handleUpdate` applies each update to it. */
  config: PodConfig;
  podManager: PodManager;
  statusManager: StatusManager;
  events: EventRecorder;
  /** The pod workers: `sync` on ADD/UPDATE, `kill` on REMOVE, and their start gate (allowPodStart) asked at each ADD. */
  podWorkers: Pick<PodWorkers, 'update' | 'setTerminated' | 'startGate'>;
  prober: ProberManager;
  /** The admission chain and the ledger of admitted pods (pod/pod-admission.ts), asked at each ADD. */
  admission: Pick<PodAdmission, 'admit' | 'release' | 'freeSlots'>;
  /** Generates and publishes an admitted pod's first status (status/pod-status-publisher.ts). */
  statusPublisher: Pick<PodStatusPublisher, 'publish'>;
  /**
   * When the runtime says pod `uid` began: its oldest sandbox's creation (epoch ms), or undefined
   * when the runtime holds nothing of it. For a pod the agent adopts after a restart, its
   * status.startTime stays what it was (the kubelet gets it back from the apiserver's stored status;
   * here the runtime keeps it), not the new agent's admission; default: none (admission time).
   */
  runtimeStartTimeMs?(uid: string): number | undefined;
  /** The clock (epoch ms) of a pod's admission (status.startTime); default the real clock. */
  clock?: Clock;
}

/** SyncHandler: SyncLoop ADD / UPDATE / REMOVE, asking admission (pod/pod-admission.ts) at each ADD. Main thread only. */
export interface SyncHandler {
  /**
   * handleUpdate merges one source update (PodConfig.apply, at once) and handles what changed, in
   * this order: a DuplicatePod warning event per conflict, then REMOVE, UPDATE and ADD per pod.
   * With no change set queued and at most kChangesPerChunk changes it is all done before it
   * returns; otherwise the change set joins the FIFO and is handled kChangesPerChunk at a time,
   * one chunk per macrotask from the next one on, after every change set queued before it.
   * @returns resolves once every change of this update has been handled (already resolved when
   *   that happened synchronously), or once stop() dropped it. Never rejects: a change whose
   *   handling throws is logged at error and skipped. After stop() updates are ignored.
   */
  handleUpdate(update: PodUpdate): Promise<void>;
  /** pending: true while change sets wait in the FIFO (housekeeping waits for them to be handled). */
  readonly pending: boolean;
  /** settled resolves once every change set queued so far has been handled (or dropped by stop()). */
  settled(): Promise<void>;
  /**
   * stop drops the change sets not yet handled (their handleUpdate promises resolve), cancels the
   * next chunk and ignores later updates. Idempotent. The agent calls it first when it stops.
   */
  stop(): void;
  /**
   * freePodSlots: pods the node can still admit — --max-pods minus the admitted, still active
   * pods, the pods whose ADD is queued and not yet handled, and the pods waiting for an older
   * pod of their name to terminate (never below 0). The intake refuses a batch that needs more
   * (config/source-intake.ts); admission itself still decides each pod (OutOfpods).
   */
  freePodSlots(): number;
}

/** One change of a change set, in the order it is handled. */
type Change = { op: 'conflict'; conflict: PodConfigChanges['conflicts'][number] } | { op: 'remove' | 'update' | 'add'; pod: Pod };

/** A change set waiting in the FIFO: its changes, how far it got, and its handleUpdate promise. */
interface QueuedChanges {
  changes: Change[];
  next: number;
  done: Promise<void>;
  resolve: () => void;
}

function flatten(changes: PodConfigChanges): Change[] {
  const out: Change[] = [];
  for (const conflict of changes.conflicts) out.push({ op: 'conflict', conflict });
  for (const pod of changes.removes) out.push({ op: 'remove', pod });
  for (const pod of changes.updates) out.push({ op: 'update', pod });
  for (const pod of changes.adds) out.push({ op: 'add', pod });
  return out;
}

class SyncHandlerImpl implements SyncHandler {
  /** Change sets not yet (fully) handled, oldest first. */
  readonly #queue: QueuedChanges[] = [];
  /** The next chunk, while one is scheduled. */
  #immediate: NodeJS.Immediate | undefined;
  #stopped = false;
  /** ADD changes queued in the FIFO and not yet handled (they will each want a pod slot). */
  #queuedAdds = 0;

  constructor(private readonly deps: SyncHandlerDeps) {
    // A pod that waited for an older pod of its full name is added once the gate lets it start.
    deps.podWorkers.startGate.onStartAllowed((pod) => this.#handleChange({ op: 'add', pod }));
  }

  handleUpdate(update: PodUpdate): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    const merged = this.deps.config.apply(update);
    const changes = flatten(merged);
    const queued = this.#queue.length;
    this.deps.logger.debug(
      {
        source: update.source,
        op: update.op,
        adds: merged.adds.length,
        updates: merged.updates.length,
        removes: merged.removes.length,
        queued,
      },
      'SyncLoop config update',
    );
    if (queued === 0 && changes.length <= kChangesPerChunk) {
      for (const change of changes) this.#handleChange(change);
      return Promise.resolve();
    }
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    this.#queue.push({ changes, next: 0, done, resolve });
    this.#queuedAdds += merged.adds.length;
    // Nothing ahead of it: start with the next macrotask (this one already paid for the merge).
    if (queued === 0) this.#immediate = setImmediate(() => this.#handleChunk());
    return done;
  }

  get pending(): boolean {
    return this.#queue.length > 0;
  }

  settled(): Promise<void> {
    return this.#queue.at(-1)?.done ?? Promise.resolve();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#immediate = undefined;
    const dropped = this.#queue.splice(0);
    this.#queuedAdds = 0;
    if (dropped.length > 0)
      this.deps.logger.info(
        { changeSets: dropped.length, changes: dropped.reduce((n, q) => n + q.changes.length - q.next, 0) },
        'Dropping pod changes not yet handled: the agent stops',
      );
    for (const q of dropped) q.resolve();
  }

  /** #handleChunk handles up to kChangesPerChunk changes from the head of the FIFO, then yields. */
  #handleChunk(): void {
    this.#immediate = undefined;
    let budget = kChangesPerChunk;
    while (budget > 0 && this.#queue.length > 0) {
      const head = this.#queue[0];
      const start = head.next;
      const end = Math.min(head.changes.length, start + budget);
      while (head.next < end) {
        const change = head.changes[head.next++];
        if (change.op === 'add') this.#queuedAdds--;
        this.#handleChange(change);
      }
      budget -= end - start;
      if (head.next === head.changes.length) {
        this.#queue.shift();
        head.resolve();
      }
    }
    if (this.#queue.length > 0 && !this.#stopped) this.#immediate = setImmediate(() => this.#handleChunk());
  }

  #handleChange(change: Change): void {
    try {
      switch (change.op) {
        case 'conflict':
          return this.#handleConflict(change.conflict);
        case 'remove':
          return this.#handlePodRemove(change.pod);
        case 'update':
          return this.#handlePodUpdate(change.pod);
        case 'add':
          return this.#handlePodAdd(change.pod);
      }
    } catch (err) {
      // A bug, not bad input (sources validate): skip this pod, keep the loop and the agent going.
      const pod = change.op === 'conflict' ? change.conflict.pod : change.pod;
      this.deps.logger.error({ ...podFields(pod), op: change.op, err: boundedErr(err) }, 'Failed to handle a pod change');
    }
  }

  freePodSlots(): number {
    return Math.max(0, this.deps.admission.freeSlots() - this.#queuedAdds - this.deps.podWorkers.startGate.waiting());
  }

  #handleConflict(c: PodConfigChanges['conflicts'][number]): void {
    const taken = c.uid
      ? `its uid ${c.heldBy.uid} is already taken by a pod from source ${c.heldBy.source}`
      : `${podFullName(c.pod)} is already taken by a pod from source ${c.heldBy.source} (uid ${c.heldBy.uid})`;
    this.deps.events.record(c.pod, { type: 'Warning', reason: 'DuplicatePod', message: `Rejected pod from source ${c.source}: ${taken}` });
  }

  #handlePodAdd(pod: Pod): void {
    const { podManager, logger } = this.deps;
    const uid = pod.metadata!.uid!;
    // podWorkers.allowPodStart: not while an older pod of its full name is stopping (it waits).
    if (!this.deps.podWorkers.startGate.allowPodStart(pod)) return;
    const nowMs = (this.deps.clock ?? realClock).now();
    const adoptedFromMs = this.deps.runtimeStartTimeMs?.(uid);
    const record: PodRecord = {
      uid,
      pod,
      waiting: {},
      backoff: {},
      startTimeMs: adoptedFromMs !== undefined && adoptedFromMs > 0 && adoptedFromMs < nowMs ? adoptedFromMs : nowMs,
    };
    const admitted = this.deps.admission.admit(record);
    podManager.set(record);
    if (!admitted.admit) {
      // kubelet admission (lifecycle.PredicateAdmitHandler): reject whole, never half-start.
      this.deps.podWorkers.setTerminated(uid);
      record.status = {
        phase: 'Failed',
        reason: admitted.reason,
        message: admitted.message,
        startTime: new Date(record.startTimeMs).toISOString(),
      };
      this.deps.statusManager.setPodStatus(pod, record.status);
      this.deps.events.record(pod, { type: 'Warning', reason: admitted.reason, message: admitted.message });
      return;
    }
    // At debug, as the kubelet logs SyncLoop ADD/UPDATE/REMOVE at V(2) (kubelet.go syncLoopIteration):
    // at the default --v=0 a pod start writes no line from here (issue #42: a log line per pod on the main thread).
    if (logger.isLevelEnabled('debug'))
      logger.debug({ ...podFields(pod), source: pod.metadata?.annotations?.['kubernetes.io/config.source'] }, 'SyncLoop ADD');
    this.deps.statusPublisher.publish(record);
    this.deps.podWorkers.update(uid, { type: 'sync' });
  }

  #handlePodUpdate(pod: Pod): void {
    const record = this.deps.podManager.get(pod.metadata!.uid!);
    if (!record) return this.#handlePodAdd(pod);
    record.pod = pod;
    // The write is on the pods' watch now, under its own resourceVersion (the API's reply carries it).
    this.deps.statusManager.updatePod(pod);
    this.deps.logger.debug(podFields(pod), 'SyncLoop UPDATE');
    this.deps.podWorkers.update(record.uid, { type: 'sync' });
  }

  #handlePodRemove(pod: Pod): void {
    const uid = pod.metadata!.uid!;
    this.deps.podWorkers.startGate.forgetPod(pod);
    const record = this.deps.podManager.get(uid);
    if (!record) return;
    this.deps.logger.debug(podFields(pod), 'SyncLoop REMOVE');
    // A DELETE's version carries deletionTimestamp and deletionGracePeriodSeconds: list it so.
    if (pod.metadata?.deletionTimestamp) {
      record.pod = {
        ...record.pod,
        metadata: {
          ...record.pod.metadata,
          deletionTimestamp: pod.metadata.deletionTimestamp,
          deletionGracePeriodSeconds: pod.metadata.deletionGracePeriodSeconds,
        },
      };
      // Terminating is on the pods' watch at once (a MODIFIED with both marks), as the apiserver's graceful delete.
      this.deps.statusManager.updatePod(record.pod);
    }
    this.deps.admission.release(record);
    this.deps.prober.removePod(uid);
    this.deps.podWorkers.update(uid, { type: 'kill', gracePeriodSeconds: removalGracePeriodSeconds(pod), remove: true });
  }
}

/**
 * newSyncHandler builds the SyncLoop ADD / UPDATE / REMOVE handlers over the agent's subsystems.
 * The agent builds it in start(), once the pod workers and the prober exist.
 */
export function newSyncHandler(deps: SyncHandlerDeps): SyncHandler {
  return new SyncHandlerImpl(deps);
}
