/**
 * Counterpart of pkg/kubelet/lifecycle/predicate.go (PredicateAdmitHandler with the scheduler's
 * noderesources fit check): decides, before a pod starts, whether this node can take it. A pod
 * that does not fit is rejected whole — phase Failed with reason `OutOfpods`, `OutOfcpu` or
 * `OutOfmemory` — and never half-started. Pure functions; main thread.
 */
import type { Pod } from '../../shared/api.js';
import { parseQuantity } from '../../shared/quantity.js';

/** NodeCapacity: what the node offers to pods (allocatable): cpu in millicores, memory in bytes. */
export interface NodeCapacity {
  pods: number;
  cpuMilli: number;
  memoryBytes: number;
}

/** PodUsage: what admitted pods request: pods, cpu in millicores, memory in bytes. */
export interface PodUsage {
  pods: number;
  cpuMilli: number;
  memoryBytes: number;
}

/** Admission result: admitted, or the kubelet's reason and message. */
export type AdmitResult = { admit: true } | { admit: false; reason: 'OutOfpods' | 'OutOfcpu' | 'OutOfmemory'; message: string };

function request(resources: Record<string, unknown> | undefined, name: 'cpu' | 'memory'): number {
  const v = resources?.[name];
  if (v === undefined || v === null) return 0;
  const q = parseQuantity(v as string | number);
  return name === 'cpu' ? Math.ceil(q * 1000) : Math.ceil(q);
}

/**
 * podRequests: the pod's effective requests as the scheduler's resource helpers compute them:
 * the sum over app containers and sidecars, or the largest init container's if that is more.
 * Requests default to limits (the apiserver's defaulting does that before we get here).
 */
export function podRequests(pod: Pod): { cpuMilli: number; memoryBytes: number } {
  let cpu = 0;
  let mem = 0;
  for (const c of pod.spec?.containers ?? []) {
    cpu += request(c.resources?.requests, 'cpu');
    mem += request(c.resources?.requests, 'memory');
  }
  let initCpu = 0;
  let initMem = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    const r = { cpu: request(c.resources?.requests, 'cpu'), mem: request(c.resources?.requests, 'memory') };
    if (c.restartPolicy === 'Always') { cpu += r.cpu; mem += r.mem; } // sidecars run beside the app containers
    else { initCpu = Math.max(initCpu, r.cpu); initMem = Math.max(initMem, r.mem); }
  }
  return { cpuMilli: Math.max(cpu, initCpu), memoryBytes: Math.max(mem, initMem) };
}

/**
 * admitPod checks `pod` against the node's capacity given what admitted pods already use
 * (`used`). Message text as the kubelet's: `Node didn't have enough resource: cpu, requested:
 * 1000000, used: 0, capacity: 2000`.
 */
export function admitPod(pod: Pod, used: PodUsage, capacity: NodeCapacity): AdmitResult {
  if (used.pods + 1 > capacity.pods) {
    return { admit: false, reason: 'OutOfpods', message: `Node didn't have enough resource: pods, requested: 1, used: ${used.pods}, capacity: ${capacity.pods}` };
  }
  const req = podRequests(pod);
  if (req.cpuMilli > 0 && used.cpuMilli + req.cpuMilli > capacity.cpuMilli) {
    return { admit: false, reason: 'OutOfcpu', message: `Node didn't have enough resource: cpu, requested: ${req.cpuMilli}, used: ${used.cpuMilli}, capacity: ${capacity.cpuMilli}` };
  }
  if (req.memoryBytes > 0 && used.memoryBytes + req.memoryBytes > capacity.memoryBytes) {
    return { admit: false, reason: 'OutOfmemory', message: `Node didn't have enough resource: memory, requested: ${req.memoryBytes}, used: ${used.memoryBytes}, capacity: ${capacity.memoryBytes}` };
  }
  return { admit: true };
}
