/**
 * Counterpart of the kubelet's admission (pkg/kubelet/kubelet.go canAdmitPod over
 * pkg/kubelet/lifecycle's PodAdmitHandlers: the sysctl and AppArmor/SELinux handlers, the
 * PredicateAdmitHandler of lifecycle/predicate.go, then the eviction manager's admit handler):
 * the chain of predicates a new pod must pass, and the ledger of what the admitted, still active
 * pods request of the node. The predicates themselves are pure (admission.ts,
 * security-admission.ts, node-affinity.ts); this object keeps the state between them. Where the
 * kubelet recomputes the admitted set from its active pods at each admission, this agent keeps
 * the sum up to date (each admission adds a share, each {@link PodAdmission.release} gives it
 * back), so admitting pod 2,000 costs no walk of the 1,999 before it. Main thread only.
 */
import type { Pod } from '../../shared/api.js';

import { admitHostPorts, admitPod, podRequests, type AdmitResult, type NodeCapacity, type PodUsage } from './admission.js';
import type { NodeIdentity } from './node-affinity.js';
import type { PodRecord } from './pod-manager.js';
import { admitPodSecurity, type NodeSecurity } from './security-admission.js';

/** Settings of {@link newPodAdmission}. */
export interface PodAdmissionDeps {
  /** Allocatable for admission: --max-pods, cores (millicores) and memory (bytes). */
  capacity: NodeCapacity;
  /** The host's AppArmor/SELinux and --allowed-unsafe-sysctls, for the security admit handlers; absent = no sysctls beyond the safe set, neither LSM. */
  security?: NodeSecurity;
  /** The node has a pod network (--network-plugin cni): hostPorts are published; false refuses them (admitHostPorts). Default true. */
  podNetwork?: boolean;
  /** This node's name and labels (well-known plus --node-labels), for nodeSelector / node affinity; absent = not checked. */
  node?: NodeIdentity;
}

/** PodAdmitHandler: one more admit handler after the built-in chain (lifecycle.PodAdmitHandler), e.g. the eviction manager's. */
export interface PodAdmitHandler {
  /** admit: may `pod` start on this node now? Never throws. */
  admit(pod: Pod): AdmitResult;
}

/**
 * PodAdmission: what the sync handler asks before a pod starts, and what the pod syncer and the
 * eviction path give back once a pod stops being active. Main thread only.
 */
export interface PodAdmission {
  /**
   * admit runs record `record`'s pod through the chain — pod security (sysctls, AppArmor,
   * SELinux), hostPorts without a pod network, resources and node affinity against the ledger
   * (admitPod), then each added handler (the eviction manager's) — and stops at the first refusal. Admitted:
   * the pod's requests (podRequests: cpu millicores, memory bytes) and one pod slot join the
   * ledger until {@link release}. Refused: nothing is recorded; the caller fails the pod whole.
   * Never throws on a validated pod.
   */
  admit(record: PodRecord): AdmitResult;
  /**
   * release gives back an admitted pod's share of the node once it stops being active (terminal
   * or removed). Idempotent: a record not (or no longer) admitted is ignored.
   */
  release(record: PodRecord): void;
  /** freeSlots: --max-pods minus the admitted, still active pods (may be read before new ADDs are counted). */
  freeSlots(): number;
  /**
   * addAdmitHandler appends `handler` to the chain, asked after the built-in handlers and those
   * added before it (kubelet.go: admitHandlers.AddPodAdmitHandler; the agent adds the eviction
   * manager's once it is built).
   */
  addAdmitHandler(handler: PodAdmitHandler): void;
}

class PodAdmissionImpl implements PodAdmission {
  /** What admitted, still active pods request; kept up to date by admit and release. */
  #used: PodUsage = { pods: 0, cpuMilli: 0, memoryBytes: 0 };
  readonly #admitted = new WeakMap<PodRecord, { cpuMilli: number; memoryBytes: number }>();
  readonly #handlers: PodAdmitHandler[] = [];

  constructor(private readonly deps: PodAdmissionDeps) {}

  admit(record: PodRecord): AdmitResult {
    const { pod } = record;
    const secure = admitPodSecurity(pod, this.deps.security ?? { allowedUnsafeSysctls: [], appArmorEnabled: false, seLinuxEnabled: false });
    const ports = secure.admit ? admitHostPorts(pod, this.deps.podNetwork ?? true) : secure;
    const fits = ports.admit ? admitPod(pod, this.#used, this.deps.capacity, this.deps.node) : ports;
    let admitted = fits;
    for (const h of this.#handlers) {
      if (!admitted.admit) break;
      admitted = h.admit(pod);
    }
    if (!admitted.admit) return admitted;
    const req = podRequests(pod);
    this.#admitted.set(record, req);
    this.#used = {
      pods: this.#used.pods + 1,
      cpuMilli: this.#used.cpuMilli + req.cpuMilli,
      memoryBytes: this.#used.memoryBytes + req.memoryBytes,
    };
    return admitted;
  }

  release(record: PodRecord): void {
    const req = this.#admitted.get(record);
    if (!req) return;
    this.#admitted.delete(record);
    this.#used = {
      pods: this.#used.pods - 1,
      cpuMilli: this.#used.cpuMilli - req.cpuMilli,
      memoryBytes: this.#used.memoryBytes - req.memoryBytes,
    };
  }

  freeSlots(): number {
    return this.deps.capacity.pods - this.#used.pods;
  }

  addAdmitHandler(handler: PodAdmitHandler): void {
    this.#handlers.push(handler);
  }
}

/** newPodAdmission builds the admission chain and an empty ledger. */
export function newPodAdmission(deps: PodAdmissionDeps): PodAdmission {
  return new PodAdmissionImpl(deps);
}
