/**
 * Counterpart of the eviction manager's localStorageEviction (pkg/kubelet/eviction
 * eviction_manager.go: emptyDirLimitEviction, podEphemeralStorageLimitEviction,
 * containerEphemeralStorageLimitEviction): a pod over a local storage limit, judged from the same
 * Summary as the thresholds, whatever the node's pressure. Messages as upstream's
 * emptyDirMessageFmt, podEphemeralStorageMessageFmt and containerEphemeralStorageMessageFmt (each
 * ending in ". "). The one place that judges an emptyDir's usage against its sizeLimit: the
 * workers only report the usage (workers/stats). A container's usage is its logs only: the writable layers are not measured
 * (see summary.ts), where the kubelet adds the rootfs on a node without a dedicated imagefs. Pure.
 */
import type { Pod, Volume } from '../../shared/api.js';
import { emptyDirSizeLimitBytes } from '../../shared/pod-policy.js';
import { parseQuantity } from '../../shared/quantity.js';
import type { PodStats } from '../../shared/stats.js';

/** LocalStorageViolation: why the pod is to be evicted, and the `eviction_signal` label it is counted under. */
export interface LocalStorageViolation {
  message: string;
  signal: 'emptydirfs.limit' | 'ephemeralpodfs.limit' | 'ephemeralcontainerfs.limit';
}

function quantity(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  try {
    return parseQuantity(v as string | number);
  } catch {
    return undefined;
  }
}

/**
 * emptyDirOverLimitMessage: the eviction message when the emptyDir volume `vol` uses more than its
 * positive sizeLimit (`usedBytes`, bytes; undefined: not measured), else null. The text is
 * upstream's emptyDirMessageFmt with its trailing space, `Usage of EmptyDir volume "x" exceeds the
 * limit "1Mi". ` (pkg/kubelet/eviction/eviction_manager.go emptyDirLimitEviction). Pure.
 */
export function emptyDirOverLimitMessage(vol: Volume, usedBytes: number | undefined): string | null {
  const limit = emptyDirSizeLimitBytes(vol);
  if (limit === undefined || usedBytes === undefined || !(usedBytes > limit)) return null;
  return `Usage of EmptyDir volume ${JSON.stringify(vol.name)} exceeds the limit ${JSON.stringify(String(vol.emptyDir?.sizeLimit))}. `;
}

/**
 * hasLocalStorageLimit: whether `pod` sets a limit localStorageViolation checks (a positive
 * emptyDir `sizeLimit` or a container's `ephemeral-storage` limit): the pods whose figures the
 * stats provider reads every period even while nobody reads the Summary. Pure.
 */
export function hasLocalStorageLimit(pod: Pod): boolean {
  if ((pod.spec?.volumes ?? []).some((v) => emptyDirSizeLimitBytes(v) !== undefined)) return true;
  return (pod.spec?.containers ?? []).some((c) => quantity(c.resources?.limits?.['ephemeral-storage']) !== undefined);
}

/**
 * localStorageViolation: the first local storage limit `pod` is over, in the kubelet's order: an
 * emptyDir volume's usage above its positive `sizeLimit`; the pod's ephemeral storage (logs and
 * emptyDir volumes) above the sum of its containers' `ephemeral-storage` limits (when one sets
 * it); a container's logs above its own limit. null when none (or without stats).
 */
export function localStorageViolation(pod: Pod, stats: PodStats | undefined): LocalStorageViolation | null {
  if (!stats) return null;
  const used = new Map((stats.volume ?? []).map((v) => [v.name, v.usedBytes ?? 0]));
  for (const vol of pod.spec?.volumes ?? []) {
    const message = emptyDirOverLimitMessage(vol, used.get(vol.name));
    if (message) return { signal: 'emptydirfs.limit', message };
  }
  const limits = (pod.spec?.containers ?? [])
    .map((c) => ({ name: c.name, raw: c.resources?.limits?.['ephemeral-storage'] }))
    .map((c) => ({ ...c, bytes: quantity(c.raw) }));
  const withLimit = limits.filter((c) => c.bytes !== undefined);
  if (withLimit.length > 0) {
    const total = withLimit.reduce((n, c) => n + c.bytes!, 0);
    const podUsed = stats['ephemeral-storage']?.usedBytes ?? 0;
    if (podUsed > total) {
      const text = withLimit.length === 1 ? String(withLimit[0].raw) : String(total);
      return {
        signal: 'ephemeralpodfs.limit',
        message: `Pod ephemeral local storage usage exceeds the total limit of containers ${text}. `,
      };
    }
  }
  for (const cs of stats.containers) {
    const l = limits.find((c) => c.name === cs.name);
    if (!l || l.bytes === undefined || l.bytes === 0) continue;
    if ((cs.logs?.usedBytes ?? 0) > l.bytes) {
      return {
        signal: 'ephemeralcontainerfs.limit',
        message: `Container ${cs.name} exceeded its local ephemeral storage limit ${JSON.stringify(String(l.raw))}. `,
      };
    }
  }
  return null;
}
