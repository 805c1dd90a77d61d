/**
 * Counterpart of pkg/apis/core/v1/helper/qos (GetPodQOS), pkg/kubelet/qos/policy.go
 * (GetContainerOOMScoreAdjust), pkg/kubelet/types/pod_update.go (IsCriticalPod,
 * IsNodeCriticalPod) and the Priority admission plugin's system classes
 * (plugin/pkg/admission/priority, pkg/apis/scheduling SystemPriorityClasses).
 * Pure functions over a defaulted pod; safe in any thread.
 */
import type { Container, Pod } from './api.js';
import { isStaticPod } from './annotations.js';
import { isRestartableInitContainer } from './pod-policy.js';
import { parseQuantity } from './quantity.js';

/** PodQOSClass values (core/v1 PodQOSClass). */
export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** The oom_score_adj of every sandbox (pause) container: the kubelet's PodInfraOOMAdj. */
export const kPodInfraOOMAdj = -998;
/** oom_score_adj of Guaranteed containers and of node-critical pods (guaranteedOOMScoreAdj). */
export const kGuaranteedOOMScoreAdj = -997;
/** oom_score_adj of BestEffort containers (besteffortOOMScoreAdj). */
export const kBestEffortOOMScoreAdj = 1000;

/** SystemCriticalPriority: priorities at or above it make a pod critical (IsCriticalPodBasedOnPriority). */
export const kSystemCriticalPriority = 2_000_000_000;

/**
 * kSystemPriorityClasses: the PriorityClasses a node without an apiserver knows — the two the
 * apiserver always creates (scheduling.SystemPriorityClasses), with their values and the default
 * preemptionPolicy `PreemptLowerPriority`.
 */
export const kSystemPriorityClasses: Readonly<Record<string, number>> = {
  'system-node-critical': kSystemCriticalPriority + 1000,
  'system-cluster-critical': kSystemCriticalPriority,
};

const kQOSResources = ['cpu', 'memory'];

function allContainers(pod: Pod): Container[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
}

function quantity(v: unknown): number {
  if (typeof v !== 'string' && typeof v !== 'number') return 0;
  try {
    return parseQuantity(v);
  } catch {
    return 0;
  }
}

/** The class of each pod spec object already classed (issue #42: a pod start classed its spec 3–4 times on the main thread). */
const kQOSBySpec = new WeakMap<object, PodQOSClass>();

/**
 * getPodQOS, as GetPodQOS (pkg/apis/core/v1/helper/qos): over all containers and init
 * containers, only cpu and memory count, zero quantities are ignored. No request and no limit →
 * BestEffort; every container limits both cpu and memory and the summed requests equal the
 * summed limits → Guaranteed; else Burstable. Never throws (an unparsable quantity counts as 0).
 * Kept per `pod.spec` object (a WeakMap): a pod's spec is replaced, never changed in place, once
 * the pod is accepted (the status manager's contract, as the apiserver's objects are immutable
 * once read), so each status generation and admission of the same spec reads its resources once.
 */
export function getPodQOS(pod: Pod): PodQOSClass {
  const spec = pod.spec;
  if (typeof spec !== 'object' || spec === null) return computePodQOS(pod);
  let qos = kQOSBySpec.get(spec);
  if (qos === undefined) kQOSBySpec.set(spec, (qos = computePodQOS(pod)));
  return qos;
}

function computePodQOS(pod: Pod): PodQOSClass {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let isGuaranteed = true;
  for (const c of allContainers(pod)) {
    for (const [name, v] of Object.entries(c.resources?.requests ?? {})) {
      const q = quantity(v);
      if (kQOSResources.includes(name) && q > 0) requests.set(name, (requests.get(name) ?? 0) + q);
    }
    const found = new Set<string>();
    for (const [name, v] of Object.entries(c.resources?.limits ?? {})) {
      const q = quantity(v);
      if (kQOSResources.includes(name) && q > 0) {
        found.add(name);
        limits.set(name, (limits.get(name) ?? 0) + q);
      }
    }
    if (!kQOSResources.every((r) => found.has(r))) isGuaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (isGuaranteed) {
    for (const [name, req] of requests) if (limits.get(name) !== req) isGuaranteed = false;
  }
  return isGuaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/** isCriticalPod, as kubetypes.IsCriticalPod: a static pod, or spec.priority ≥ 2000000000. */
export function isCriticalPod(pod: Pod): boolean {
  if (isStaticPod(pod)) return true;
  const p = pod.spec?.priority;
  return typeof p === 'number' && p >= kSystemCriticalPriority;
}

/** isNodeCriticalPod, as kubetypes.IsNodeCriticalPod: critical and of class `system-node-critical`. */
export function isNodeCriticalPod(pod: Pod): boolean {
  return isCriticalPod(pod) && pod.spec?.priorityClassName === 'system-node-critical';
}

function memoryRequest(c: Container | undefined): number {
  return quantity(c?.resources?.requests?.memory);
}

/**
 * containerOOMScoreAdjust, as GetContainerOOMScoreAdjust (pkg/kubelet/qos/policy.go): -997 for a
 * node-critical pod or a Guaranteed one, 1000 for BestEffort; Burstable: 1000 − 1000×request/capacity
 * (integer division, as Go's int64), a sidecar (init container with restartPolicy Always) no higher
 * than the regular container with the smallest memory request, then clamped to [3, 999]
 * (1000 + guaranteedOOMScoreAdj is the floor upstream: 3, not 2). `memoryCapacityBytes`: the
 * node's memory (bytes). Never throws.
 */
export function containerOOMScoreAdjust(pod: Pod, container: Container, memoryCapacityBytes: number): number {
  if (isNodeCriticalPod(pod)) return kGuaranteedOOMScoreAdj;
  const qos = getPodQOS(pod);
  if (qos === 'Guaranteed') return kGuaranteedOOMScoreAdj;
  if (qos === 'BestEffort') return kBestEffortOOMScoreAdj;
  const capacity = Math.max(1, Math.floor(memoryCapacityBytes));
  const adj = (req: number) => 1000 - Math.trunc((1000 * Math.floor(req)) / capacity);
  let score = adj(memoryRequest(container));
  const isSidecar = isRestartableInitContainer(container) && (pod.spec?.initContainers ?? []).some((c) => c.name === container.name);
  if (isSidecar) {
    const regular = pod.spec?.containers ?? [];
    const minRequest = regular.length ? Math.min(...regular.map(memoryRequest)) : 0;
    score = Math.min(score, adj(minRequest));
  }
  if (score < 1000 + kGuaranteedOOMScoreAdj) return 1000 + kGuaranteedOOMScoreAdj;
  if (score === kBestEffortOOMScoreAdj) return score - 1;
  return score;
}
