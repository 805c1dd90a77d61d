/**
 * Counterpart of pkg/kubelet/container/cache.go (container.Cache): the one runtime pod cache. Per
 * pod UID it holds what the runtime last showed of the pod (a `RuntimePod`), versioned by a per-pod
 * generation that every PLEG event moves on — the role of the kubelet cache's timestamps, without
 * a clock: a sync reads the cache at a generation, and what it then writes back is "as of" that
 * generation, so a newer observation is never overwritten by an older one.
 *
 * Two kinds of write, each in one method here (the merge rule lives nowhere else):
 * - {@link PodCache.observeEvent}, from the PLEG's events (sync-loop.ts): the pod is no longer known
 *   to match the runtime; a container death the event fully describes is applied at once (as
 *   evented.go fills the cache from the CRI event's own status), so watchers see it before the sync;
 * - {@link PodCache.set}, from the pod syncer with what its runtime read returned: it replaces the
 *   entry, except deaths observed by events after the read's generation, which stay (an older read
 *   that still shows the container running must not bring it back to life).
 * The kubelet's PLEG is the only writer because its PLEG does the runtime reads; ours are done by
 * the sync task in the worker pool (the sync reads the runtime anyway), and handed here with the
 * generation they were read at.
 *
 * Readers: the status generator, the probe manager, the logs endpoint, metrics, and the next sync
 * (which plans from the cache without reading the runtime only while {@link PodCacheSnapshot.current},
 * and, when only PLEG events asked for it, is left out while {@link PodCacheSnapshot.settled}: the
 * sync that stored the entry found that a sync from it would change nothing).
 * Main thread only; every method is synchronous and O(containers of the pod).
 */
import type { Pod } from '../../shared/api.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import { applyContainerExit } from './event-pleg.js';
import type { PodLifecycleEvent } from './generic-pleg.js';

/** PodCacheSnapshot: one pod's entry as a sync reads it before it runs. */
export interface PodCacheSnapshot {
  /** What the runtime last showed of the pod (null before the first read, or nothing of it is left). */
  runtimePod: RuntimePod | null;
  /** The pod's generation now: pass it back to {@link PodCache.set} with the read's result. */
  generation: number;
  /** True when no PLEG event came since the last read, so `runtimePod` still matches the runtime. */
  current: boolean;
  /**
   * True when `current` and the sync that stored `runtimePod` found that a sync planned from it
   * would change nothing (PodSyncResult.settled): a sync asked only by PLEG events may be left out.
   */
  settled: boolean;
}

/** PodCache: the runtime pod cache (see the file comment for who writes it and how). */
export interface PodCache {
  /** get returns what the runtime last showed of pod `uid`, or null when nothing is cached. */
  get(uid: string): RuntimePod | null;
  /** snapshot returns the entry of `uid` with its generation (an empty one for an unknown UID). */
  snapshot(uid: string): PodCacheSnapshot;
  /**
   * set stores the result of a runtime read of `uid` taken at `generation` (from {@link snapshot}
   * before the read). Deaths applied by {@link observeEvent} after that generation are kept on top
   * of it. The entry is current again only when no event came since `generation` — or only
   * ContainerStarted events of containers `runtimePod` shows running (it was read after them).
   * `settled`: the read's sync says a sync from `runtimePod` would change nothing (kept only while
   * the entry is `runtimePod` itself, no death applied on top).
   */
  set(uid: string, runtimePod: RuntimePod | null, generation: number, settled?: boolean): void;
  /**
   * observeEvent records one PLEG event of pod `uid`: the entry is no longer current, and a
   * `ContainerDied` with its exit is applied when `desired` says the container will restart
   * (applyContainerExit: a death that ends the container waits for the sync's termination message).
   * Except a `ContainerStarted` the current entry already shows (the sync that started the
   * container read it back running; the engine's event comes after): it says nothing new, so the
   * entry stays current and the sync it triggers plans from the cache without a runtime call
   * (upstream's pod cache compares the event's timestamp with the entry's; ours compares state).
   * Likewise {@link set}: a read taken while only ContainerStarted events came, that shows each of
   * those containers running, is current — the starts a sync makes itself cost no second read.
   * @returns true when the cached runtime pod changed (publish a status from it).
   */
  observeEvent(uid: string, desired: Pod, event: PodLifecycleEvent): boolean;
  /**
   * seed stores `runtimePod` (the first relist's read, PLEG onRuntimePods) for a UID the cache has
   * no entry of; never current, so the pod's first sync still reads the runtime itself. Status
   * generation reads it at once: a pod restored at start shows its running containers.
   */
  seed(uid: string, runtimePod: RuntimePod): void;
  /** delete forgets `uid` (its record was removed). */
  delete(uid: string): void;
  /** runtimePods: every cached runtime pod (for metrics). */
  runtimePods(): IterableIterator<RuntimePod | null>;
}

interface Entry {
  runtimePod: RuntimePod | null;
  /** Moved on by every event of the pod. */
  generation: number;
  /** The generation the last set() was read at (-1: never read). */
  readAt: number;
  /** Deaths applied from events, by container ID, with the generation they came at. */
  exits: Map<string, { generation: number; event: PodLifecycleEvent; desired: Pod }> | undefined;
  /** ContainerStarted events by container ID, with the generation they came at (until a read covers them). */
  starts: Map<string, number> | undefined;
  /** The generation of the latest event that was not a ContainerStarted (0: none). */
  otherAt: number;
  /** The last set() was settled (PodCacheSnapshot.settled while current). */
  settled: boolean;
}

/** showsRunning: true when `pod` has container (or sandbox) `id` running. */
function showsRunning(pod: RuntimePod | null, id: string): boolean {
  const c = pod?.containers.find((x) => x.id === id) ?? pod?.sandboxes.find((x) => x.id === id);
  return c?.state === 'running';
}

class PodCacheImpl implements PodCache {
  readonly #entries = new Map<string, Entry>();

  #entry(uid: string): Entry {
    let e = this.#entries.get(uid);
    if (!e)
      this.#entries.set(
        uid,
        (e = { runtimePod: null, generation: 0, readAt: -1, exits: undefined, starts: undefined, otherAt: 0, settled: false }),
      );
    return e;
  }

  get(uid: string): RuntimePod | null {
    return this.#entries.get(uid)?.runtimePod ?? null;
  }

  snapshot(uid: string): PodCacheSnapshot {
    const e = this.#entries.get(uid);
    if (!e) return { runtimePod: null, generation: 0, current: false, settled: false };
    const current = e.runtimePod !== null && e.readAt === e.generation;
    return { runtimePod: e.runtimePod, generation: e.generation, current, settled: current && e.settled };
  }

  set(uid: string, runtimePod: RuntimePod | null, generation: number, settled = false): void {
    const e = this.#entry(uid);
    let pod = runtimePod;
    if (e.exits) {
      for (const [id, x] of e.exits) {
        if (x.generation <= generation) e.exits.delete(id);
        else if (pod) pod = applyContainerExit(pod, x.desired, id, x.event.exit!) ?? pod;
      }
      if (e.exits.size === 0) e.exits = undefined;
    }
    e.runtimePod = pod;
    e.readAt = generation;
    e.settled = settled && pod === runtimePod;
    if (e.starts) {
      for (const [id, g] of e.starts) if (g <= generation) e.starts.delete(id);
      // Only starts came since the read's generation, and the read shows each of them running: it
      // was taken after them, so it is as new as the events — current (no re-read for them).
      if (e.otherAt <= generation && [...e.starts.keys()].every((id) => showsRunning(runtimePod, id))) e.readAt = e.generation;
      if (e.starts.size === 0 || e.readAt === e.generation) e.starts = undefined;
    }
  }

  observeEvent(uid: string, desired: Pod, event: PodLifecycleEvent): boolean {
    const e = this.#entry(uid);
    const isStart = event.type === 'ContainerStarted' && !event.exit;
    if (isStart && e.readAt === e.generation && !e.exits && showsRunning(e.runtimePod, event.containerId)) return false;
    e.generation++;
    if (isStart) (e.starts ??= new Map()).set(event.containerId, e.generation);
    else e.otherAt = e.generation;
    if (!event.exit) return false;
    // Kept until a read at this generation or later: a sync in flight may bring back an older view.
    (e.exits ??= new Map()).set(event.containerId, { generation: e.generation, event, desired });
    const next = e.runtimePod ? applyContainerExit(e.runtimePod, desired, event.containerId, event.exit) : null;
    if (!next) return false;
    e.runtimePod = next;
    return true;
  }

  seed(uid: string, runtimePod: RuntimePod): void {
    if (!this.#entries.has(uid)) this.#entry(uid).runtimePod = runtimePod;
  }

  delete(uid: string): void {
    this.#entries.delete(uid);
  }

  *runtimePods(): IterableIterator<RuntimePod | null> {
    for (const e of this.#entries.values()) yield e.runtimePod;
  }
}

/** newPodCache creates an empty pod cache. */
export function newPodCache(): PodCache {
  return new PodCacheImpl();
}

/**
 * oldestSandboxCreatedAtMs: when the runtime says a pod began, its oldest sandbox's creation (epoch
 * ms), or undefined for a pod the runtime holds no sandbox of (`null`: not read or gone). What a
 * restarted agent keeps as the status.startTime of a pod it adopts. Pure.
 */
export function oldestSandboxCreatedAtMs(runtimePod: RuntimePod | null): number | undefined {
  let oldest: number | undefined;
  for (const s of runtimePod?.sandboxes ?? [])
    if (s.createdAtMs > 0 && (oldest === undefined || s.createdAtMs < oldest)) oldest = s.createdAtMs;
  return oldest;
}
