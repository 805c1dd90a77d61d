/**
 * CPU quantities as cgroups take them, as the kubelet's pkg/kubelet/cm/helper_linux.go
 * (MilliCPUToShares, MilliCPUToQuota, QuotaPeriod): for a container's Docker config and for the pod
 * cgroup alike. Millicores in, cgroup units out (shares; quota and period in microseconds).
 */
import { parseQuantity } from '../../shared/quantity.js';

/** kubelet's CPU period for CFS quota, microseconds. */
export const kCpuPeriodUs = 100_000;
const kMinQuotaPeriodUs = 1000;
const kMinShares = 2;
/** The kubelet's maxShares: runc refuses more (`the maximum allowed cpu-shares is 262144`). */
const kMaxShares = 262_144;
const kSharesPerCpu = 1024;

/**
 * milliCpu: a CPU quantity in millicores, rounded up (cores → millicores, as resource.Quantity.MilliValue);
 * 0 when undefined.
 * @throws AgentError from parseQuantity, naming `field`, when `q` is not a quantity.
 */
export function milliCpu(q: string | number | undefined, field: string): number {
  if (q === undefined) return 0;
  return Math.ceil(parseQuantity(q, field) * 1000);
}

/**
 * cpuSharesFromRequest, as the kubelet's MilliCPUToShares: milliCPU×1024/1000, at least 2 (also
 * when there is no request) and at most 262144 (a request of 256 cpus or more).
 */
export function cpuSharesFromRequest(milli: number): number {
  if (milli <= 0) return kMinShares;
  return Math.min(kMaxShares, Math.max(kMinShares, Math.floor((milli * kSharesPerCpu) / 1000)));
}

/** cpuQuotaFromLimit, as MilliCPUToQuota: milliCPU×period/1000, at least 1000 µs; 0 = no limit. */
export function cpuQuotaFromLimit(milli: number, periodUs = kCpuPeriodUs): number {
  if (milli <= 0) return 0;
  return Math.max(kMinQuotaPeriodUs, Math.floor((milli * periodUs) / 1000));
}
