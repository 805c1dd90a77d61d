// Counterpart of the eviction flags of cmd/kubelet/app/options (KubeletConfiguration evictionHard, evictionSoft, …).
/**
 * The eviction options' descriptors, spread into kAgentOptionDescriptors (agent-option-descriptors.ts)
 * so that the flags, the `--config` fields, `--help` and the checks come from the one table.
 * Value checks live in eviction/thresholds.ts, as does `evictionThresholds`, which turns resolved
 * options into the manager's Threshold list.
 */
import { InvalidArgumentError } from '../../shared/errors.js';
import type { AgentOptionDescriptor } from './agent-option-descriptors.js';
import { integerIn, positiveMs } from './agent-option-checks.js';
import { checkGracePeriodMap, checkThresholdMap, kDefaultEvictionHard } from '../eviction/thresholds.js';

export { hardEvictionReservation } from '../eviction/thresholds.js';

function option<T>(d: AgentOptionDescriptor<T>): AgentOptionDescriptor<T> {
  return d;
}

/** kEvictionOptionDescriptors: the eviction options (see each field's TSDoc). */
export const kEvictionOptionDescriptors = {
  /**
   * Hard eviction thresholds (`--eviction-hard`, evictionHard), signal → value: a quantity or a
   * percentage of the signal's capacity (`memory.available<100Mi,nodefs.available<10%`; the flag
   * takes `signal<value` items, comma-separated and repeatable; the config file a map). Default
   * memory.available<100Mi, nodefs.available<10%, imagefs.available<15%. A value given replaces
   * the whole default map, as the kubelet's flag does.
   */
  evictionHard: option<Record<string, string>>({
    flag: 'eviction-hard',
    parse: 'list',
    config: { field: 'evictionHard' },
    default: { ...kDefaultEvictionHard },
    defaultText: Object.entries(kDefaultEvictionHard)
      .map(([signal, value]) => `${signal}<${value}`)
      .join(','),
    check: checkThresholdMap,
    help: 'Hard eviction thresholds, signal<value items (memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree; a quantity or a percentage)',
  }),
  /** Soft eviction thresholds (`--eviction-soft`, evictionSoft), as evictionHard; each needs a grace period. Default none. */
  evictionSoft: option<Record<string, string>>({
    flag: 'eviction-soft',
    parse: 'list',
    config: { field: 'evictionSoft' },
    default: {},
    defaultText: '(none)',
    check: checkThresholdMap,
    help: 'Soft eviction thresholds, signal<value items; each needs --eviction-soft-grace-period',
  }),
  /** Grace period of each soft threshold (`--eviction-soft-grace-period`, evictionSoftGracePeriod), signal → milliseconds (flag: `signal=1m30s` items). */
  evictionSoftGracePeriodMs: option<Record<string, number>>({
    flag: 'eviction-soft-grace-period',
    parse: 'list',
    config: { field: 'evictionSoftGracePeriod' },
    default: {},
    defaultText: '(none)',
    check: checkGracePeriodMap,
    help: 'How long a soft eviction threshold must hold before pods are evicted, signal=duration items (Go durations)',
  }),
  /** How long a pressure condition stays True after its threshold was last met, ms (`--eviction-pressure-transition-period`, 5m). */
  evictionPressureTransitionPeriodMs: option({
    flag: 'eviction-pressure-transition-period',
    parse: 'duration',
    config: { field: 'evictionPressureTransitionPeriod', parse: 'duration' },
    default: 300_000,
    check: (l, v) => {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        throw new InvalidArgumentError(`${l} must be a duration >= 0, got ${JSON.stringify(v)}`);
      return v;
    },
    help: 'How long the kubelet waits before leaving an eviction pressure condition (Go duration)',
  }),
  /** Longest grace period of a pod evicted for a soft threshold, seconds (`--eviction-max-pod-grace-period`, 0 = the pod's own). */
  evictionMaxPodGracePeriodSeconds: option({
    flag: 'eviction-max-pod-grace-period',
    parse: 'number',
    config: { field: 'evictionMaxPodGracePeriod' },
    default: 0,
    check: integerIn(0, 2 ** 31 - 1),
    help: "Longest grace period (seconds) of a pod evicted for a soft threshold; 0 = the pod's terminationGracePeriodSeconds",
  }),
  /** Period of the eviction manager's pass, ms (`--eviction-monitoring-interval`, 10s, the kubelet's fixed evictionMonitoringPeriod; kubelet-ts only). */
  evictionMonitoringIntervalMs: option({
    flag: 'eviction-monitoring-interval',
    parse: 'duration',
    ours: true,
    default: 10_000,
    check: positiveMs,
    help: "Period of the eviction manager's pass (Go duration)",
  }),
} as const;
