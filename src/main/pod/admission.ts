/**
 * Counterpart of pkg/kubelet/lifecycle/predicate.go (PredicateAdmitHandler with the scheduler's
 * AdmissionCheck: noderesources fit, then node affinity): decides, before a pod starts, whether
 * this node can take it. A pod that does not fit is rejected whole — phase Failed with reason
 * `OutOfpods`, `OutOfcpu`, `OutOfmemory`, `OutOf<extended resource>` or `NodeAffinity` — and never
 * half-started. Pure functions; main thread.
 */
import type { Pod } from '../../shared/api.js';
import { isRestartableInitContainer } from '../../shared/pod-policy.js';
import { parseQuantity } from '../../shared/quantity.js';
import { isExtendedResourceName, isHugePageResourceName } from '../../shared/validation-container-resources.js';
import { kNodeAffinityMessage, kNodeAffinityReason, podMatchesNodeAffinity, type NodeIdentity } from './node-affinity.js';

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

/**
 * Admission result: admitted, or the kubelet's reason and message. `reason` is `OutOfpods`,
 * `OutOfcpu`, `OutOfmemory`, `OutOf<name>` for an extended or hugepages resource, or `NodeAffinity`.
 */
export type AdmitResult = { admit: true } | { admit: false; reason: string; message: string };

function request(resources: Record<string, unknown> | undefined, name: 'cpu' | 'memory'): number {
  const v = resources?.[name];
  if (v === undefined || v === null) return 0;
  const q = parseQuantity(v as string | number);
  return name === 'cpu' ? Math.ceil(q * 1000) : Math.ceil(q);
}

/** podRequests' answer for each pod spec object already summed (a pod's admission asked it twice, eviction ranking once per pod). */
const kRequestsBySpec = new WeakMap<object, Readonly<{ cpuMilli: number; memoryBytes: number }>>();

/**
 * podRequests: the pod's effective requests as the scheduler's resource helpers compute them:
 * the sum over app containers and sidecars, or the largest init container's if that is more.
 * Requests default to limits (the apiserver's defaulting does that before we get here). Kept per
 * `pod.spec` object (a pod's spec is replaced, never changed in place, once accepted: the status
 * manager's contract), so asking again for the same spec reads nothing; the answer is frozen.
 */
export function podRequests(pod: Pod): Readonly<{ cpuMilli: number; memoryBytes: number }> {
  const spec = pod.spec;
  if (typeof spec !== 'object' || spec === null) return sumPodRequests(pod);
  let req = kRequestsBySpec.get(spec);
  if (req === undefined) kRequestsBySpec.set(spec, (req = Object.freeze(sumPodRequests(pod))));
  return req;
}

function sumPodRequests(pod: Pod): { cpuMilli: number; memoryBytes: number } {
  let cpu = 0;
  let mem = 0;
  for (const c of pod.spec?.containers ?? []) {
    const requests = c.resources?.requests;
    cpu += request(requests, 'cpu');
    mem += request(requests, 'memory');
  }
  let initCpu = 0;
  let initMem = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    const requests = c.resources?.requests;
    const r = { cpu: request(requests, 'cpu'), mem: request(requests, 'memory') };
    if (isRestartableInitContainer(c)) {
      cpu += r.cpu;
      mem += r.mem;
    } // sidecars run beside the app containers
    else {
      initCpu = Math.max(initCpu, r.cpu);
      initMem = Math.max(initMem, r.mem);
    }
  }
  return { cpuMilli: Math.max(cpu, initCpu), memoryBytes: Math.max(mem, initMem) };
}

/**
 * podScalarRequests: the pod's requests of extended (`example.com/foo`, integer counts) and
 * hugepages (`hugepages-2Mi`, bytes) resources, by name, summed as podRequests sums cpu (app
 * containers and sidecars, or the largest init container's). Never throws on a validated pod.
 */
export function podScalarRequests(pod: Pod): Map<string, number> {
  const sum = new Map<string, number>();
  const initMax = new Map<string, number>();
  const each = (c: { resources?: { requests?: Record<string, unknown> } }, into: Map<string, number>, max: boolean) => {
    for (const [name, q] of Object.entries(c.resources?.requests ?? {})) {
      if (!isExtendedResourceName(name) && !isHugePageResourceName(name)) continue;
      const v = Math.ceil(parseQuantity(q as string | number));
      into.set(name, max ? Math.max(into.get(name) ?? 0, v) : (into.get(name) ?? 0) + v);
    }
  };
  for (const c of pod.spec?.containers ?? []) each(c, sum, false);
  for (const c of pod.spec?.initContainers ?? []) each(c, isRestartableInitContainer(c) ? sum : initMax, !isRestartableInitContainer(c));
  for (const [name, v] of initMax) sum.set(name, Math.max(sum.get(name) ?? 0, v));
  return sum;
}

/**
 * admitPod checks `pod` against the node's capacity given what admitted pods already use
 * (`used`), then against the node's labels and name (`node`: nodeSelector and required node
 * affinity), in the order of the kubelet's generalFilter: pods, cpu, memory, extended resources,
 * then NodeAffinity; the first failure is the answer. Message text as the kubelet's: `Node didn't
 * have enough resource: cpu, requested: 1000000, used: 0, capacity: 2000`; `Predicate NodeAffinity
 * failed: node(s) didn't match Pod's node affinity/selector`. The node offers no extended or
 * hugepages resources (no device plugins; capacity 0), so any request of one is refused with
 * `OutOf<name>` — where upstream would drop a resource the node does not list from a static pod
 * and run it without the device (predicate.go removeMissingExtendedResources, which its own
 * comment calls a caveat), this agent refuses rather than run it silently without. `node`
 * absent: no affinity check.
 */
export function admitPod(pod: Pod, used: PodUsage, capacity: NodeCapacity, node?: NodeIdentity): AdmitResult {
  if (used.pods + 1 > capacity.pods) {
    return {
      admit: false,
      reason: 'OutOfpods',
      message: `Node didn't have enough resource: pods, requested: 1, used: ${used.pods}, capacity: ${capacity.pods}`,
    };
  }
  const req = podRequests(pod);
  if (req.cpuMilli > 0 && used.cpuMilli + req.cpuMilli > capacity.cpuMilli) {
    return {
      admit: false,
      reason: 'OutOfcpu',
      message: `Node didn't have enough resource: cpu, requested: ${req.cpuMilli}, used: ${used.cpuMilli}, capacity: ${capacity.cpuMilli}`,
    };
  }
  if (req.memoryBytes > 0 && used.memoryBytes + req.memoryBytes > capacity.memoryBytes) {
    return {
      admit: false,
      reason: 'OutOfmemory',
      message: `Node didn't have enough resource: memory, requested: ${req.memoryBytes}, used: ${used.memoryBytes}, capacity: ${capacity.memoryBytes}`,
    };
  }
  for (const [name, requested] of [...podScalarRequests(pod)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (requested > 0)
      return {
        admit: false,
        reason: `OutOf${name}`,
        message: `Node didn't have enough resource: ${name}, requested: ${requested}, used: 0, capacity: 0`,
      };
  }
  if (node && !podMatchesNodeAffinity(pod, node)) return { admit: false, reason: kNodeAffinityReason, message: kNodeAffinityMessage };
  return { admit: true };
}

/** kHostPortReason: the admission reason of a hostPort pod on a node without a pod network. */
export const kHostPortReason = 'HostPortNotSupported';

/**
 * admitHostPorts: a pod that is not hostNetwork and declares a `hostPort` needs the pod network
 * (the CNI portmap plugin publishes it on --node-ip); with `--network-plugin none` nothing would
 * listen, so it is refused whole with {@link kHostPortReason} and a message naming the first such
 * port and what to do — where the kubelet has no such check because a cluster always has a network.
 * `podNetwork` true: every hostPort is admitted (ports clashing between pods are left to portmap,
 * whose rules the later pod wins; the scheduler's NodePorts filter is not run here). Pure.
 */
export function admitHostPorts(pod: Pod, podNetwork: boolean): AdmitResult {
  if (podNetwork || pod.spec?.hostNetwork === true) return { admit: true };
  const lists = [
    ['initContainers', pod.spec?.initContainers],
    ['containers', pod.spec?.containers],
  ] as const;
  for (const [field, list] of lists) {
    for (const [i, c] of (list ?? []).entries()) {
      for (const [j, port] of (c.ports ?? []).entries()) {
        if (typeof port.hostPort === 'number' && port.hostPort !== 0) {
          return {
            admit: false,
            reason: kHostPortReason,
            message: `spec.${field}[${i}].ports[${j}].hostPort ${port.hostPort}: hostPort needs the pod network, and this node runs with --network-plugin none; use hostNetwork: true (where hostPort equals containerPort) or --network-plugin cni`,
          };
        }
      }
    }
  }
  return { admit: true };
}
