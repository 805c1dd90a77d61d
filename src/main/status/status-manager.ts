/**
 * Counterpart of pkg/kubelet/status/status_manager.go: the versioned cache of each pod's
 * PodStatus. A status is stored only when it differs from the last one (ignoring nothing but
 * object identity), and every stored change gets the next resourceVersion, which is what the
 * WebSocket watch and the etcd writer follow. Content is compared in place (jsonEqual: the
 * canonical JSON's equality without building it), as the kubelet compares statuses with
 * apiequality.Semantic.DeepEqual; nothing is serialized or hashed here (issue #42 item 1: a pod
 * start's two statuses cost two canonical JSONs and SHA-256s before). Main thread only.
 */
import { jsonEqual } from '../../shared/json-equal.js';
import type { Pod, PodStatus } from '../../shared/api.js';

/** A change the status manager publishes. `resourceVersion` increases by one per change. */
export interface PodStatusChange {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  uid: string;
  /** The pod with its status (for DELETED: the last one known). */
  pod: Pod;
  resourceVersion: number;
}

/** StatusManager: the cache plus its change feed. */
export interface StatusManager {
  /**
   * setPodStatus stores `status` for `pod`; returns true if it differed from the stored one (a
   * change was published). Also publishes ADDED the first time a pod is seen. "Differed" is by
   * content: the pod's metadata and spec and the status are compared by content (jsonEqual: key
   * order and `undefined` fields do not count; nothing is serialized), so an equal status in a new
   * object is no change. The caller must replace a pod's `metadata`/`spec` objects rather than
   * mutate them in place (AgentHost.resourceVersion's contract, src/server/host/agent-host.ts):
   * when they are the same objects as last time (and when the pod is first seen), only the status
   * is compared.
   */
  setPodStatus(pod: Pod, status: PodStatus): boolean;
  /**
   * updatePod: a write to the pod object itself (SyncLoop UPDATE of its spec, labels or
   * annotations; SyncLoop REMOVE setting `deletionTimestamp` and `deletionGracePeriodSeconds`; a
   * shorter grace period of a second DELETE) publishes MODIFIED at once with the stored status, as
   * the apiserver's watch cache sees every write of the object, not only status writes
   * (staging/src/k8s.io/apiserver/pkg/storage/cacher). Same content rule as setPodStatus (equal
   * metadata and spec: no change). A pod with no stored status yet (not yet admitted) is left to
   * its first setPodStatus: returns false and publishes nothing.
   * @returns true when a change was published.
   */
  updatePod(pod: Pod): boolean;
  /** getPodStatus returns the last stored status of `uid`. */
  getPodStatus(uid: string): PodStatus | undefined;
  /** deletePodStatus forgets `uid` and publishes DELETED. */
  deletePodStatus(uid: string): void;
  /** The current resourceVersion (the last change's, 0 before any). */
  resourceVersion(): number;
  /** subscribe calls `fn` synchronously for each change; returns the unsubscribe function. */
  subscribe(fn: (change: PodStatusChange) => void): () => void;
}

interface Stored {
  pod: Pod;
  status: PodStatus;
}

/** Options of `newStatusManager`. */
export interface StatusManagerOptions {
  /**
   * The resourceVersion before the first change (default 0). The agent passes its start time in
   * epoch ms × 1000, so a restarted agent's versions are above any an earlier instance handed out
   * (fewer than 1,000 changes per millisecond assumed) and a watch resumed from one of those gets
   * 410 Gone and relists, as the apiserver's versions, which etcd keeps across restarts, allow.
   */
  initialResourceVersion?: number;
}

/** newStatusManager creates an empty status manager. */
export function newStatusManager(options: StatusManagerOptions = {}): StatusManager {
  const stored = new Map<string, Stored>();
  const listeners = new Set<(change: PodStatusChange) => void>();
  let version = options.initialResourceVersion ?? 0;
  const publish = (type: PodStatusChange['type'], uid: string, pod: Pod) => {
    version++;
    for (const fn of listeners) fn({ type, uid, pod, resourceVersion: version });
  };
  const manager: StatusManager = {
    setPodStatus(pod, status) {
      const uid = pod.metadata?.uid ?? '';
      const before = stored.get(uid);
      if (!before) {
        stored.set(uid, { pod, status });
        publish('ADDED', uid, { ...pod, status });
        return true;
      }
      const podUnchanged =
        (before.pod.metadata === pod.metadata || jsonEqual(before.pod.metadata, pod.metadata)) &&
        (before.pod.spec === pod.spec || jsonEqual(before.pod.spec, pod.spec));
      if (podUnchanged && jsonEqual(before.status, status)) {
        // Equal content in new objects: keep the newer pod objects, so that the next call finds them identical.
        before.pod = pod;
        return false;
      }
      stored.set(uid, { pod, status });
      publish('MODIFIED', uid, { ...pod, status });
      return true;
    },
    updatePod(pod) {
      const before = stored.get(pod.metadata?.uid ?? '');
      return before ? manager.setPodStatus(pod, before.status) : false;
    },
    getPodStatus(uid) {
      return stored.get(uid)?.status;
    },
    deletePodStatus(uid) {
      const before = stored.get(uid);
      if (!before) return;
      stored.delete(uid);
      publish('DELETED', uid, { ...before.pod, status: before.status });
    },
    resourceVersion: () => version,
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
  return manager;
}
