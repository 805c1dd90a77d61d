/**
 * Counterpart of pkg/kubelet/pod/pod_manager.go: the desired-state table. Holds, per pod UID, the
 * desired pod and what its last sync decided (waiting reasons, restart backoff, status). Sharded by UID (DESIGN.md §1) so that sweeps such as the periodic resync can
 * walk one shard at a time and no single Map grows to every pod of a 10,000-pod node.
 *
 * Main thread only; every method is synchronous.
 */
import { podFullName } from '../../shared/annotations.js';
import type { Pod, PodStatus } from '../../shared/api.js';
import type { BackoffEntry, WaitingReason } from '../../shared/messages.js';
import { InvalidArgumentError } from '../../shared/errors.js';

/**
 * PodRecord: one pod in the table. Times are epoch milliseconds. What Docker shows of the pod is
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

/** PodManager: the sharded table. */
export interface PodManager {
  get(uid: string): PodRecord | undefined;
  /** The record holding `namespace/name`, if any (the newest one set). */
  getByFullName(fullName: string): PodRecord | undefined;
  /** Inserts or replaces a record. */
  set(record: PodRecord): void;
  delete(uid: string): void;
  /** All records, shard by shard. */
  all(): IterableIterator<PodRecord>;
  readonly size: number;
  /** Records per shard, for benches. */
  shardSizes(): number[];
}

/** FNV-1a over the UID's characters: cheap and well spread for hex and UUID strings. */
function shardOf(uid: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < uid.length; i++) {
    h ^= uid.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

class PodManagerImpl implements PodManager {
  readonly #shards: Map<string, PodRecord>[];
  readonly #byFullName = new Map<string, string>();
  #size = 0;

  constructor(shards: number) {
    this.#shards = Array.from({ length: shards }, () => new Map());
  }

  get(uid: string): PodRecord | undefined {
    return this.#shards[shardOf(uid, this.#shards.length)].get(uid);
  }

  getByFullName(fullName: string): PodRecord | undefined {
    const uid = this.#byFullName.get(fullName);
    return uid === undefined ? undefined : this.get(uid);
  }

  set(record: PodRecord): void {
    const shard = this.#shards[shardOf(record.uid, this.#shards.length)];
    if (!shard.has(record.uid)) this.#size++;
    shard.set(record.uid, record);
    this.#byFullName.set(podFullName(record.pod), record.uid);
  }

  delete(uid: string): void {
    const shard = this.#shards[shardOf(uid, this.#shards.length)];
    const record = shard.get(uid);
    if (!record) return;
    shard.delete(uid);
    this.#size--;
    const fullName = podFullName(record.pod);
    if (this.#byFullName.get(fullName) === uid) this.#byFullName.delete(fullName);
  }

  *all(): IterableIterator<PodRecord> {
    for (const shard of this.#shards) yield* shard.values();
  }

  get size(): number {
    return this.#size;
  }

  shardSizes(): number[] {
    return this.#shards.map((s) => s.size);
  }
}

/**
 * newPodManager creates an empty table with `shards` shards (--pod-shards).
 * @throws InvalidArgumentError if `shards` is not an integer ≥ 1.
 */
export function newPodManager(shards = 16): PodManager {
  if (!Number.isInteger(shards) || shards < 1) throw new InvalidArgumentError(`--pod-shards must be an integer >= 1, got ${shards}`);
  return new PodManagerImpl(shards);
}
