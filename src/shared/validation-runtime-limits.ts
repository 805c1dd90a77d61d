// Counterpart of the limits the container runtime puts on pkg/kubelet/kuberuntime's resource conversion (MilliCPUToQuota, memory limit bytes).
/**
 * Resource quantities the apiserver accepts but the container runtime cannot run. resource.Quantity
 * holds any magnitude, and the kubelet hands the runtime an int64 of bytes and a CFS quota in
 * microseconds; past those the engine refuses the container (Docker's API decodes `Memory` as an
 * int64 and refuses less than 6 MiB; the kernel refuses a `cpu.cfs_quota_us` above 2^44-1 µs; all
 * checked on this machine with Docker 20.10), and the pod would sit in CreateContainerError /
 * RunContainerError, retried every 10 s, forever. Refused up front by {@link validatePodForNode}
 * instead, naming the field. Pure functions over decoded JSON.
 */
import { parseQuantity, quantityError } from './quantity.js';
import { child, ErrorList, index, isObj, type Obj } from './validation-util.js';

/** kMaxMemoryBytes: memory limits and requests must be below 2^63 bytes (8Ei): Docker's `Memory` is an int64. */
export const kMaxMemoryBytes = 2 ** 63;
/** kMinMemoryLimitBytes: Docker refuses a memory limit below 6 MiB (`Minimum memory limit allowed is 6MB`); 0 is no limit. */
export const kMinMemoryLimitBytes = 6 * 1024 * 1024;
/**
 * kMaxCpuLimitMilli: the largest cpu limit, millicores, whose CFS quota (milliCPU × 100 ms period
 * / 1000, in µs) the kernel takes: 2^44-1 µs (its max_cfs_runtime) / 100 µs per millicore.
 */
export const kMaxCpuLimitMilli = Math.floor((2 ** 44 - 1) / 100);

/**
 * validateRuntimeLimits reports every container's (and init container's) memory limit or request
 * of 2^63 bytes or more, memory limit between 0 and 6Mi (exclusive), and cpu limit above {@link kMaxCpuLimitMilli} millicores, e.g.
 * `spec.containers[0].resources.limits.memory: Invalid value: "1e20": must be less than 8Ei
 * (2^63 bytes), the most the container runtime takes`. Quantities that do not parse are left to
 * validatePod. Never throws.
 */
export function validateRuntimeLimits(el: ErrorList, spec: Obj): void {
  for (const list of ['containers', 'initContainers']) {
    const items = spec[list];
    if (!Array.isArray(items)) continue;
    items.forEach((c, i) => {
      if (!isObj(c) || !isObj(c.resources)) return;
      const rPath = child(`spec.${list}[${i}]`, 'resources');
      for (const kind of ['limits', 'requests']) {
        const rl = c.resources[kind];
        if (!isObj(rl)) continue;
        const kPath = child(rPath, kind);
        // A request defaulted from its limit (applyPodDefaults) repeats the limit's value: reported once.
        const sameAsLimit = kind === 'requests' && isObj(c.resources.limits) && c.resources.limits.memory === rl.memory;
        const memory = value(rl.memory);
        if (memory !== undefined && memory >= kMaxMemoryBytes && !sameAsLimit) {
          el.invalid(index(kPath, 'memory'), String(rl.memory), 'must be less than 8Ei (2^63 bytes), the most the container runtime takes');
        } else if (kind === 'limits' && memory !== undefined && memory > 0 && Math.ceil(memory) < kMinMemoryLimitBytes) {
          el.invalid(
            index(kPath, 'memory'),
            String(rl.memory),
            'must be 0 (no limit) or at least 6Mi, the least the container runtime takes',
          );
        }
        const cpu = value(rl.cpu);
        if (kind === 'limits' && cpu !== undefined && Math.ceil(cpu * 1000) > kMaxCpuLimitMilli) {
          el.invalid(
            index(kPath, 'cpu'),
            String(rl.cpu),
            `must be at most ${kMaxCpuLimitMilli}m, the largest CFS quota the kernel takes (2^44-1 µs per 100 ms period)`,
          );
        }
      }
    });
  }
}

/** A quantity's value, or undefined when absent or not a quantity (validatePod reports those). */
function value(q: unknown): number | undefined {
  if ((typeof q !== 'string' && typeof q !== 'number') || quantityError(q) !== null) return undefined;
  return parseQuantity(q);
}
