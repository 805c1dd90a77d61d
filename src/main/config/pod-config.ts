/**
 * Counterpart of pkg/kubelet/config/config.go (PodConfig / podStorage): merges the pods of every
 * source into one desired set and turns each source's update into ADD / UPDATE / REMOVE changes
 * keyed by pod UID.
 *
 * Sources always hand whole pods; a source may send SET (its complete set) or ADD / UPDATE /
 * REMOVE (a delta). The same full name (`namespace/name`) from two places: the first one seen
 * wins and the other is rejected with a warning (docs/contracts.md "Pod sources and pod identity"); when the winner goes away the
 * next candidate in arrival order takes its place. A pod UID belongs to one source: a pod whose UID
 * another source's pod holds is refused, as a conflict too (two pods may never share a UID; the
 * kubelet keys everything by it).
 */
import { podContentHash } from '../../shared/hash.js';
import { podFullName } from '../../shared/annotations.js';
import type { Pod, PodSourceName } from '../../shared/api.js';
import type { PodUpdate } from '../../shared/pod-update.js';

/** The effect of one source update on the merged desired set. */
export interface PodConfigChanges {
  /** Pods new to the merged set. */
  adds: Pod[];
  /** Pods whose content changed under the same UID. */
  updates: Pod[];
  /** Pods gone from the merged set (the last version the merge held). */
  removes: Pod[];
  /**
   * Pods refused because another pod already holds their full name or (`uid: true`) their UID,
   * with the holder's source and UID.
   */
  conflicts: { pod: Pod; source: PodSourceName; heldBy: { source: PodSourceName; uid: string }; uid?: boolean }[];
}

/** PodConfig: the merge. Main thread only; `apply` is synchronous and cheap per changed pod. */
export interface PodConfig {
  /** apply merges one source update and returns what changed in the merged set. */
  apply(update: PodUpdate): PodConfigChanges;
  /** seenAllSources: every source named at construction has delivered at least one update. */
  seenAllSources(): boolean;
  /** The merged desired pods. */
  pods(): Pod[];
  /** One merged pod by UID. */
  get(uid: string): Pod | undefined;
  /**
   * owner: which merged pod holds the full name `namespace/name`, if any: its UID and source. The
   * merge is ahead of the pod manager while the agent still handles a big update in chunks
   * (sync-handler.ts), so this answers for pods whose SyncLoop ADD is still queued.
   */
  owner(fullName: string): { uid: string; source: PodSourceName } | undefined;
}

interface Entry {
  pod: Pod;
  source: PodSourceName;
  uid: string;
  fullName: string;
  /** Arrival order: the earliest candidate for a full name wins. */
  seq: number;
}

class PodConfigImpl implements PodConfig {
  readonly #bySource = new Map<PodSourceName, Map<string, Entry>>();
  readonly #candidates = new Map<string, Map<string, Entry>>(); // fullName → `${source}/${uid}` → entry
  readonly #owner = new Map<string, Entry>(); // fullName → winning entry
  readonly #effective = new Map<string, Entry>(); // uid → winning entry
  readonly #uidSource = new Map<string, PodSourceName>(); // uid → the one source that holds it
  readonly #seen = new Set<PodSourceName>();
  readonly #expected: PodSourceName[];
  #seq = 0;
  /**
   * podContentHash (config.seen and status ignored) by pod object, computed only when a pod must be compared
   * with the previous version of its UID. Sources replace pods, never mutate them in place
   * (src/server/host/agent-host.ts), so an object is hashed at most once, and the very object handed
   * over again needs no hash at all: the file source sends its unchanged pods as the same objects
   * in every SET (source-file.ts readManifest keeps the previous object of an unchanged pod).
   * Hashing every pod of each SET cost 110–190 ms of main thread at 10,000 pods (bench scale).
   */
  readonly #hashes = new WeakMap<Pod, string>();

  constructor(sources: PodSourceName[]) {
    this.#expected = [...sources];
  }

  apply(update: PodUpdate): PodConfigChanges {
    this.#seen.add(update.source);
    let current = this.#bySource.get(update.source);
    if (!current) this.#bySource.set(update.source, (current = new Map()));
    const touched = new Set<string>();
    const uidConflicts: PodConfigChanges['conflicts'] = [];

    const put = (pod: Pod) => {
      const uid = pod.metadata?.uid ?? '';
      const holder = this.#uidSource.get(uid);
      if (holder !== undefined && holder !== update.source) {
        uidConflicts.push({ pod, source: update.source, heldBy: { source: holder, uid }, uid: true });
        return;
      }
      this.#uidSource.set(uid, update.source);
      const old = current!.get(uid);
      const entry: Entry = { pod, source: update.source, uid, fullName: podFullName(pod), seq: old?.seq ?? ++this.#seq };
      if (old && old.fullName !== entry.fullName) this.#dropCandidate(old, touched);
      current!.set(uid, entry);
      let byName = this.#candidates.get(entry.fullName);
      if (!byName) this.#candidates.set(entry.fullName, (byName = new Map()));
      byName.set(`${entry.source}/${uid}`, entry);
      touched.add(entry.fullName);
    };
    /** `deleted`: the REMOVE's own version of the pod; when it carries a deletionTimestamp (a DELETE's, with deletionGracePeriodSeconds) `removes` reports it. */
    const drop = (uid: string, deleted?: Pod) => {
      const old = current!.get(uid);
      if (!old) return;
      if (deleted?.metadata?.deletionTimestamp) old.pod = deleted;
      current!.delete(uid);
      this.#uidSource.delete(uid);
      this.#dropCandidate(old, touched);
    };

    switch (update.op) {
      case 'SET': {
        const keep = new Set(update.pods.map((p) => p.metadata?.uid ?? ''));
        for (const uid of [...current.keys()]) if (!keep.has(uid)) drop(uid);
        for (const pod of update.pods) put(pod);
        break;
      }
      case 'ADD':
      case 'UPDATE':
        for (const pod of update.pods) put(pod);
        break;
      case 'REMOVE':
        for (const pod of update.pods) drop(pod.metadata?.uid ?? '', pod);
        break;
    }
    const changes = this.#resolve(touched);
    changes.conflicts.push(...uidConflicts);
    return changes;
  }

  #contentHash(pod: Pod): string {
    let hash = this.#hashes.get(pod);
    if (hash === undefined) this.#hashes.set(pod, (hash = podContentHash(pod)));
    return hash;
  }

  #dropCandidate(entry: Entry, touched: Set<string>): void {
    const byName = this.#candidates.get(entry.fullName);
    byName?.delete(`${entry.source}/${entry.uid}`);
    if (byName && byName.size === 0) this.#candidates.delete(entry.fullName);
    touched.add(entry.fullName);
  }

  /** Re-decides the winner of each touched full name and diffs against the previous winner. */
  #resolve(touched: Set<string>): PodConfigChanges {
    const changes: PodConfigChanges = { adds: [], updates: [], removes: [], conflicts: [] };
    for (const fullName of touched) {
      const byName = this.#candidates.get(fullName);
      const previous = this.#owner.get(fullName);
      let winner: Entry | undefined;
      if (byName) {
        // The holder keeps its name while it is still offered (possibly updated).
        winner = previous ? byName.get(`${previous.source}/${previous.uid}`) : undefined;
        if (!winner) for (const e of byName.values()) if (!winner || e.seq < winner.seq) winner = e;
      }
      if (winner) this.#owner.set(fullName, winner);
      else this.#owner.delete(fullName);

      if (previous && (!winner || winner.uid !== previous.uid)) {
        this.#effective.delete(previous.uid);
        changes.removes.push(previous.pod);
      }
      if (winner) {
        const before = this.#effective.get(winner.uid);
        this.#effective.set(winner.uid, winner);
        if (!before || !previous || previous.uid !== winner.uid) changes.adds.push(winner.pod);
        else if (before.pod !== winner.pod && this.#contentHash(before.pod) !== this.#contentHash(winner.pod))
          changes.updates.push(winner.pod);
        for (const e of byName!.values()) {
          if (e !== winner) changes.conflicts.push({ pod: e.pod, source: e.source, heldBy: { source: winner.source, uid: winner.uid } });
        }
      }
    }
    return changes;
  }

  seenAllSources(): boolean {
    return this.#expected.every((s) => this.#seen.has(s));
  }

  pods(): Pod[] {
    return [...this.#effective.values()].map((e) => e.pod);
  }

  get(uid: string): Pod | undefined {
    return this.#effective.get(uid)?.pod;
  }

  owner(fullName: string): { uid: string; source: PodSourceName } | undefined {
    const e = this.#owner.get(fullName);
    return e ? { uid: e.uid, source: e.source } : undefined;
  }
}

/**
 * newPodConfig creates the merge for the named sources (those that must report before
 * `seenAllSources()` is true; the kubelet's housekeeping waits for it before it removes
 * containers of pods it does not know).
 */
export function newPodConfig(sources: PodSourceName[]): PodConfig {
  return new PodConfigImpl(sources);
}
