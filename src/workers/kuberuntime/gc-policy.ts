/**
 * Counterpart of pkg/kubelet/kuberuntime/kuberuntime_gc.go (evictContainers, evictSandboxes): the
 * pure decision of container GC — which dead containers and sandboxes go. gc.ts lists them
 * through the CRI and removes them.
 */
import type { RuntimeContainerState } from '../../shared/runtime-pod.js';

/** One container as container GC sees it (from a list call; no inspect needed). */
export interface GcContainer {
  id: string;
  podUid: string;
  /** Spec container name; `POD` for a sandbox. */
  name: string;
  sandbox: boolean;
  /** For app containers: the sandbox they joined (`io.kubernetes.sandbox.id`); '' for sandboxes. */
  sandboxId: string;
  state: RuntimeContainerState;
  /** Epoch ms. */
  createdAtMs: number;
  /** The attempt (CRI metadata.attempt): the tie-breaker when created at the same millisecond. */
  attempt: number;
}

/** Options of selectContainersToRemove. */
export interface ContainerGcPolicy {
  /** --maximum-dead-containers-per-container: dead containers kept per (pod, container name); >= 0. */
  maxPerPodContainer: number;
  /**
   * UIDs of the pods the agent knows (its pod manager). When given, every dead container of a pod
   * not in it is evictable (kuberuntime_gc.go: containers of deleted pods). Absent = treat all
   * pods as known (only the per-container limit applies).
   */
  activePodUids?: ReadonlySet<string>;
}

/** What container GC decided to remove: container and sandbox IDs. */
export interface ContainerGcPlan {
  containers: string[];
  sandboxes: string[];
}

function newestFirst(a: GcContainer, b: GcContainer): number {
  return b.createdAtMs - a.createdAtMs || b.attempt - a.attempt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * selectContainersToRemove decides container GC, as kuberuntime_gc.go evictContainers /
 * evictSandboxes (with MinAge 0, as the kubelet's default):
 * - only `exited` containers are evictable; `running`, `created` and `unknown` ones never are;
 * - per (pod UID, container name), the newest `maxPerPodContainer` dead containers are kept and
 *   older ones removed; for a pod not in `activePodUids` (when given), every dead one is removed;
 * - sandboxes: the newest sandbox of a known pod is always kept; an older one is removed when it is
 *   dead and no remaining (not removed) app container belongs to it. For a pod not known, every
 *   dead sandbox without remaining containers is removed.
 * Pure; returns IDs in a stable order (pod, then newest first).
 * @throws RangeError if `maxPerPodContainer` is not an integer >= 0.
 */
export function selectContainersToRemove(all: readonly GcContainer[], policy: ContainerGcPolicy): ContainerGcPlan {
  const max = policy.maxPerPodContainer;
  if (!Number.isInteger(max) || max < 0) throw new RangeError(`maximumDeadContainersPerContainer must be an integer >= 0, got ${max}`);
  const byPod = new Map<string, GcContainer[]>();
  for (const c of all) {
    if (!c.podUid) continue;
    let l = byPod.get(c.podUid);
    if (!l) byPod.set(c.podUid, (l = []));
    l.push(c);
  }
  const plan: ContainerGcPlan = { containers: [], sandboxes: [] };
  for (const uid of [...byPod.keys()].sort()) {
    const list = byPod.get(uid)!.slice().sort(newestFirst);
    const known = policy.activePodUids ? policy.activePodUids.has(uid) : true;
    const keepPerName = known ? max : 0;
    const deadSeen = new Map<string, number>();
    const removed = new Set<string>();
    for (const c of list) {
      if (c.sandbox || c.state !== 'exited') continue;
      const n = deadSeen.get(c.name) ?? 0;
      deadSeen.set(c.name, n + 1);
      if (n >= keepPerName) {
        plan.containers.push(c.id);
        removed.add(c.id);
      }
    }
    const usedSandboxes = new Set(list.filter((c) => !c.sandbox && !removed.has(c.id)).map((c) => c.sandboxId));
    const sandboxes = list.filter((c) => c.sandbox);
    sandboxes.forEach((s, i) => {
      if (known && i === 0) return;
      if (s.state !== 'exited' || usedSandboxes.has(s.id)) return;
      plan.sandboxes.push(s.id);
    });
  }
  return plan;
}
