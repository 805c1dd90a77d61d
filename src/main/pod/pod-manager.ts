/**
 * Counterpart of pkg/kubelet/pod/pod_manager.go: the desired-state table. Holds, per pod UID, the
 * desired pod and what its last sync decided (waiting reasons, restart backoff, status).
 *
 * Main thread only; every method is synchronous.
 */
import { podFullName } from '../../shared/annotations.js';
import type { Pod, PodStatus } from '../../shared/api.js';
import type { BackoffEntry, WaitingReason } from '../../shared/sync-tasks.js';

/**
 * PodRecord: one pod in the table. Times are epoch milliseconds. What the runtime shows of the pod is
 * in the pod cache (pleg/pod-cache.ts) and its lifecycle (terminating, terminal) in the pod
 * workers, each kept in one place.
 */
export interface PodRecord {
  uid: string;
  /** The desired pod (defaulted, validated). */
  pod: Pod;
  /** Waiting reasons of the last sync, by container name. */
  waiting: Record<string, WaitingReason>;
  /** Restart backoff entries of its containers (see shared/backoff.ts). */
  backoff: Record<string, BackoffEntry>;
  /** When the agent first accepted it (status.startTime). */
  startTimeMs: number;
  /** The last PodStatus generated for it, if any sync finished yet. */
  status?: PodStatus;
}

/** PodManager: the table, by UID and by full name. */
export interface PodManager {
  get(uid: string): PodRecord | undefined;
  /** The record holding `namespace/name`, if any (the newest one set). */
  getByFullName(fullName: string): PodRecord | undefined;
  /** Inserts or replaces a record. */
  set(record: PodRecord): void;
  delete(uid: string): void;
  /** All records, in insertion order. */
  all(): IterableIterator<PodRecord>;
  readonly size: number;
}

class PodManagerImpl implements PodManager {
  readonly #byUid = new Map<string, PodRecord>();
  readonly #byFullName = new Map<string, string>();

  get(uid: string): PodRecord | undefined {
    return this.#byUid.get(uid);
  }

  getByFullName(fullName: string): PodRecord | undefined {
    const uid = this.#byFullName.get(fullName);
    return uid === undefined ? undefined : this.get(uid);
  }

  set(record: PodRecord): void {
    this.#byUid.set(record.uid, record);
    this.#byFullName.set(podFullName(record.pod), record.uid);
  }

  delete(uid: string): void {
    const record = this.#byUid.get(uid);
    if (!record) return;
    this.#byUid.delete(uid);
    const fullName = podFullName(record.pod);
    if (this.#byFullName.get(fullName) === uid) this.#byFullName.delete(fullName);
  }

  all(): IterableIterator<PodRecord> {
    return this.#byUid.values();
  }

  get size(): number {
    return this.#byUid.size;
  }
}

/** newPodManager creates an empty table. */
export function newPodManager(): PodManager {
  return new PodManagerImpl();
}
