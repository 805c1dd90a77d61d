/**
 * Counterpart of pkg/kubelet/kubelet.go syncLoop / syncLoopIteration: the one serial dispatcher of
 * the main thread. Every input that may lead to pod work arrives here as a {@link LoopEvent} and is
 * handled by exactly one handler:
 *
 * - `config`: a source update → the sync handler (SyncLoop ADD / UPDATE / REMOVE, sync-handler.ts);
 * - `pleg`: pod lifecycle events → the pod cache learns them (a restarting container's death is
 *   published at once) and the pod is synced (unless the cache shows every event and the last sync
 *   said a sync would change nothing: the engine's start events of what that sync started);
 * - `probe`: a probe result changed a pod's readiness (`status`: publish) or asks a restart (`kill`: sync);
 * - `resync`: every `--sync-frequency`, every pod is synced;
 * - `objects`: a ConfigMap or Secret the pods `uids` reference appeared, changed or went
 *   (config/object-store.ts) → those pods are synced (a pod waiting on a missing one starts);
 * - `housekeeping`: every 2 s, HandlePodCleanups (housekeeping.ts).
 *
 * It never awaits the container runtime. What it may touch: the pod workers (work), the pod cache (events) and
 * status publication; everything else through the sync handler and housekeeping. It also answers
 * the `syncloop` health check (/healthz), as the kubelet's syncLoop health. Main thread only.
 */
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import type { Logger } from '../../shared/logging.js';
import type { PodUpdate } from '../../shared/pod-update.js';

import type { Housekeeping } from './housekeeping.js';
import type { PodCache } from '../pleg/pod-cache.js';
import type { PodLifecycleEvent } from '../pleg/generic-pleg.js';
import type { PodWorkers } from './pod-workers.js';
import type { PodManager, PodRecord } from '../pod/pod-manager.js';
import type { PodStatusPublisher } from '../status/pod-status-publisher.js';
import type { SyncHandler } from './sync-handler.js';

/** LoopEvent: one input of the sync loop (the channels syncLoopIteration selects on). */
export type LoopEvent =
  | { kind: 'config'; update: PodUpdate }
  | { kind: 'pleg'; byPod: Map<string, PodLifecycleEvent[]> }
  | { kind: 'probe'; uid: string; result: 'status' | 'kill' }
  | { kind: 'resync' }
  | { kind: 'objects'; uids: string[] }
  | { kind: 'housekeeping' };

/** Options of {@link newSyncLoop} (milliseconds). */
export interface SyncLoopOptions {
  /** --sync-frequency: period of the `resync` event. */
  syncFrequencyMs: number;
  /** Period of the `housekeeping` event (kHousekeepingPeriodMs). */
  housekeepingPeriodMs: number;
}

/** Dependencies of {@link newSyncLoop}. */
export interface SyncLoopDeps {
  logger: Logger;
  handler: SyncHandler;
  housekeeping: Housekeeping;
  podManager: PodManager;
  podCache: PodCache;
  podWorkers: Pick<PodWorkers, 'update' | 'isPodTerminationRequested' | 'isPodTerminal'>;
  /** Publishes a pod's status from its record (status/pod-status-publisher.ts). */
  statusPublisher: Pick<PodStatusPublisher, 'publish'>;
  /** The clock of the ticks and of the health check (epoch ms); default the real clock. */
  clock?: Clock;
}

/** SyncLoop: the dispatcher and its two timers. */
export interface SyncLoop {
  /**
   * iteration handles one event (syncLoopIteration). Resolves at once except for `config`, which
   * resolves once the update's changes are handled (a big one is handled in chunks).
   */
  iteration(event: LoopEvent): Promise<void>;
  /** start begins the resync and housekeeping ticks. */
  start(): void;
  /** stop ends the ticks and drops queued config changes. Idempotent. */
  stop(): void;
  /** healthy: false when the loop has not run for 2 × --sync-frequency (at least 5 min), as the kubelet's syncLoop check. */
  healthy(): { ok: boolean; message?: string };
}

class SyncLoopImpl implements SyncLoop {
  readonly #clock: Clock;
  #lastActiveMs: number;
  #timers: TimerHandle[] = [];

  constructor(
    private readonly options: SyncLoopOptions,
    private readonly deps: SyncLoopDeps,
  ) {
    this.#clock = deps.clock ?? realClock;
    this.#lastActiveMs = this.#clock.now();
  }

  iteration(event: LoopEvent): Promise<void> {
    this.#lastActiveMs = this.#clock.now();
    switch (event.kind) {
      case 'config':
        return this.deps.handler.handleUpdate(event.update);
      case 'pleg':
        this.#handlePlegEvents(event.byPod);
        break;
      case 'probe':
        this.#handleProbe(event.uid, event.result);
        break;
      case 'resync':
        for (const r of this.deps.podManager.all()) this.deps.podWorkers.update(r.uid, { type: 'sync' });
        break;
      case 'objects':
        for (const uid of event.uids) if (this.deps.podManager.get(uid)) this.deps.podWorkers.update(uid, { type: 'sync' });
        break;
      case 'housekeeping':
        this.deps.housekeeping.handlePodCleanups();
        break;
    }
    return Promise.resolve();
  }

  #handlePlegEvents(byPod: Map<string, PodLifecycleEvent[]>): void {
    const { podManager, podCache, podWorkers } = this.deps;
    for (const [uid, events] of byPod) {
      const record = podManager.get(uid);
      if (!record || podWorkers.isPodTerminationRequested(uid)) continue;
      let changed = false;
      for (const e of events) changed = podCache.observeEvent(uid, record.pod, e) || changed;
      // The death of a container that will restart is published now, from the event itself, before
      // the sync (evented.go updates the pod cache from the event); the sync that follows publishes
      // the authoritative status. A death that ends the pod waits for the sync's termination message.
      if (changed) this.deps.statusPublisher.publish(record);
      // As syncLoopIteration's plegCh: the pod is synced; a sync only events asked for is left out
      // by the syncer when the pod cache shows them all and says that sync would change nothing.
      podWorkers.update(uid, { type: 'sync', cause: 'pleg' });
    }
  }

  #handleProbe(uid: string, result: 'status' | 'kill'): void {
    const record = this.deps.podManager.get(uid);
    if (!record) return;
    if (result === 'kill') this.deps.podWorkers.update(uid, { type: 'sync' });
    else if (!this.deps.podWorkers.isPodTerminal(uid)) this.deps.statusPublisher.publish(record);
  }

  start(): void {
    const tick = (event: LoopEvent, ms: number) => {
      this.#timers.push(this.#clock.setInterval(() => void this.iteration(event), ms));
    };
    tick({ kind: 'resync' }, this.options.syncFrequencyMs);
    tick({ kind: 'housekeeping' }, this.options.housekeepingPeriodMs);
  }

  stop(): void {
    for (const t of this.#timers) this.#clock.clearInterval(t);
    this.#timers = [];
    this.deps.handler.stop();
  }

  healthy(): { ok: boolean; message?: string } {
    const since = this.#clock.now() - this.#lastActiveMs;
    const threshold = Math.max(2 * this.options.syncFrequencyMs, 300_000);
    return since <= threshold ? { ok: true } : { ok: false, message: `sync loop last active ${Math.round(since / 1000)}s ago` };
  }
}

/** newSyncLoop builds the sync loop; start() begins its ticks. */
export function newSyncLoop(options: SyncLoopOptions, deps: SyncLoopDeps): SyncLoop {
  return new SyncLoopImpl(options, deps);
}
