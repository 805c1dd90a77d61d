/**
 * Counterpart of the deciding half of pkg/kubelet/eviction/helpers.go: signal observations from
 * the Summary (makeSignalObservations), thresholds met (thresholdsMet, with the grace periods of
 * soft thresholds: thresholdsFirstObservedAt / thresholdsMetGracePeriod), node conditions with the
 * pressure transition period (nodeConditions, nodeConditionsLastObservedAt,
 * nodeConditionsObservedSince), thresholds with fresh stats (thresholdsUpdatedStats), pod ranking
 * (rankMemoryPressure, rankDiskPressureFunc) and the eviction message (evictionMessage). Pure:
 * every input is a parameter, times are epoch milliseconds.
 */
import type { Pod } from '../../shared/api.js';
import { parseQuantity } from '../../shared/quantity.js';
import type { PodStats, Summary } from '../../shared/stats.js';
import { podRequests } from '../pod/admission.js';
import {
  formatQuantity,
  kEvictionSignals,
  kSignalToNodeCondition,
  kSignalToResource,
  thresholdQuantity,
  type EvictionResource,
  type EvictionSignal,
  type Threshold,
} from './thresholds.js';

/** SignalObservation: a signal's available amount and capacity (bytes, or inodes), and when it was observed (epoch ms). */
export interface SignalObservation {
  available: number;
  capacity: number;
  timeMs: number;
}

/** SignalObservations: what one Summary shows, by signal; a signal without figures is absent. */
export type SignalObservations = Partial<Record<EvictionSignal, SignalObservation>>;

/** NodeConditionType: the conditions the eviction manager sets. */
export type PressureCondition = 'MemoryPressure' | 'DiskPressure';

function timeOf(t: string | undefined): number {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : 0;
}

/**
 * makeSignalObservations, as the kubelet's: memory.available = `memoryCapacityBytes` (MemTotal)
 * − the node's working set (the kubelet's formula, not MemAvailable); nodefs from Summary
 * node.fs (statfs of --root-dir), imagefs from node.runtime.imageFs (statfs of the runtime's image
 * root): bytes available/capacity and inodes free/total. Pure.
 */
export function makeSignalObservations(summary: Summary, memoryCapacityBytes: number): SignalObservations {
  const out: SignalObservations = {};
  const mem = summary.node.memory;
  if (mem?.workingSetBytes !== undefined && memoryCapacityBytes > 0) {
    out['memory.available'] = {
      available: Math.max(0, memoryCapacityBytes - mem.workingSetBytes),
      capacity: memoryCapacityBytes,
      timeMs: timeOf(mem.time),
    };
  }
  const fsPair = (fs: typeof summary.node.fs, bytes: EvictionSignal, inodes: EvictionSignal) => {
    if (!fs) return;
    if (fs.availableBytes !== undefined && fs.capacityBytes !== undefined)
      out[bytes] = { available: fs.availableBytes, capacity: fs.capacityBytes, timeMs: timeOf(fs.time) };
    if (fs.inodesFree !== undefined && fs.inodes !== undefined)
      out[inodes] = { available: fs.inodesFree, capacity: fs.inodes, timeMs: timeOf(fs.time) };
  };
  fsPair(summary.node.fs, 'nodefs.available', 'nodefs.inodesFree');
  fsPair(summary.node.runtime?.imageFs, 'imagefs.available', 'imagefs.inodesFree');
  return out;
}

/** thresholdsMet, as the kubelet's (without min-reclaim): the thresholds whose signal's available amount is below the threshold's amount. */
export function thresholdsMet(thresholds: readonly Threshold[], observations: SignalObservations): Threshold[] {
  return thresholds.filter((t) => {
    const o = observations[t.signal];
    return o !== undefined && thresholdQuantity(t.value, o.capacity) > o.available;
  });
}

/** thresholdKey: a threshold's identity across passes (signal, hard/soft). */
export function thresholdKey(t: Threshold): string {
  return `${t.soft ? 'soft' : 'hard'}:${t.signal}`;
}

/** thresholdsFirstObservedAt, as the kubelet's: when each met threshold was first seen met (kept from `previous`, else `nowMs`). */
export function thresholdsFirstObservedAt(
  met: readonly Threshold[],
  previous: ReadonlyMap<string, number>,
  nowMs: number,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of met) out.set(thresholdKey(t), previous.get(thresholdKey(t)) ?? nowMs);
  return out;
}

/** thresholdsMetGracePeriod, as the kubelet's: the met thresholds whose grace period has passed (hard ones at once). */
export function thresholdsMetGracePeriod(
  met: readonly Threshold[],
  firstObservedAt: ReadonlyMap<string, number>,
  nowMs: number,
): Threshold[] {
  return met.filter((t) => nowMs - (firstObservedAt.get(thresholdKey(t)) ?? nowMs) >= t.gracePeriodMs);
}

/** nodeConditions, as the kubelet's: the conditions the met thresholds imply (each once). */
export function nodeConditions(met: readonly Threshold[]): PressureCondition[] {
  return [...new Set(met.map((t) => kSignalToNodeCondition[t.signal]))];
}

/** nodeConditionsLastObservedAt: `conditions` observed at `nowMs`, the others as `previous` had them. */
export function nodeConditionsLastObservedAt(
  conditions: readonly PressureCondition[],
  previous: ReadonlyMap<PressureCondition, number>,
  nowMs: number,
): Map<PressureCondition, number> {
  const out = new Map(previous);
  for (const c of conditions) out.set(c, nowMs);
  return out;
}

/** nodeConditionsObservedSince, as the kubelet's: the conditions observed within the last `periodMs` (the pressure transition period). */
export function nodeConditionsObservedSince(
  lastObservedAt: ReadonlyMap<PressureCondition, number>,
  periodMs: number,
  nowMs: number,
): PressureCondition[] {
  return [...lastObservedAt].filter(([, at]) => nowMs - at < periodMs).map(([c]) => c);
}

/**
 * thresholdsUpdatedStats, as the kubelet's: the thresholds whose observation is newer than the
 * one of the last pass (a pass on the same stats evicts nothing more).
 */
export function thresholdsUpdatedStats(met: readonly Threshold[], observations: SignalObservations, last: SignalObservations): Threshold[] {
  return met.filter((t) => {
    const o = observations[t.signal];
    const l = last[t.signal];
    return o !== undefined && (l === undefined || o.timeMs > l.timeMs);
  });
}

/** byEvictionPriority: memory signals first, then the rest in kEvictionSignals order. */
export function sortByEvictionPriority(met: readonly Threshold[]): Threshold[] {
  return [...met].sort((a, b) => kEvictionSignals.indexOf(a.signal) - kEvictionSignals.indexOf(b.signal));
}

/** podPriority, as corev1helpers.PodPriority: spec.priority, 0 when unset. */
function podPriority(pod: Pod): number {
  return typeof pod.spec?.priority === 'number' ? pod.spec.priority : 0;
}

/** ephemeralStorageRequest: the pod's `ephemeral-storage` requests, bytes (app containers summed, or the largest init container). */
export function ephemeralStorageRequest(pod: Pod): number {
  const q = (c: { resources?: { requests?: Record<string, unknown> } }) => {
    const v = c.resources?.requests?.['ephemeral-storage'];
    return v === undefined || v === null ? 0 : parseQuantity(v as string | number);
  };
  const sum = (pod.spec?.containers ?? []).reduce((n, c) => n + q(c), 0);
  const init = Math.max(0, ...(pod.spec?.initContainers ?? []).map(q));
  return Math.max(sum, init);
}

/** podMemoryUsage: the pod's working set, bytes (0 without figures). */
function podMemoryUsage(s: PodStats): number {
  return s.memory?.workingSetBytes ?? s.containers.reduce((n, c) => n + (c.memory?.workingSetBytes ?? 0), 0);
}

/** podDiskUsage: the pod's ephemeral storage in use (logs and emptyDir volumes; writable layers are not measured), bytes. */
function podDiskUsage(s: PodStats): number {
  return s['ephemeral-storage']?.usedBytes ?? 0;
}

/** podInodeUsage: inodes the pod's emptyDir volumes use. */
function podInodeUsage(s: PodStats): number {
  return s['ephemeral-storage']?.inodesUsed ?? 0;
}

/** cmpBool, as the kubelet's: true before false. */
function cmpBool(a: boolean, b: boolean): number {
  return a === b ? 0 : a ? -1 : 1;
}

/** StatsFunc: a pod's stats by UID (cachedStatsFunc), undefined when the Summary has none. */
export type StatsFunc = (pod: Pod) => PodStats | undefined;

/** cachedStatsFunc, as the kubelet's: look-up of the Summary's pods by UID. */
export function cachedStatsFunc(summary: Summary): StatsFunc {
  const byUid = new Map(summary.pods.map((p) => [p.podRef.uid, p]));
  return (pod) => byUid.get(pod.metadata?.uid ?? '');
}

/**
 * rankPods orders `pods` for eviction for `resource` (a new array; the input is kept), as
 * rankMemoryPressure / rankDiskPressureFunc: pods without stats first, then those whose usage
 * exceeds their requests, then lower spec.priority, then the larger usage above requests. Memory
 * usage is the working set; ephemeral-storage usage the logs and emptyDir volumes; inodes those
 * of the volumes. A BestEffort pod (requests 0) exceeds its requests as soon as it uses anything,
 * so it comes before a pod within its requests. Stable for ties.
 */
export function rankPods(pods: readonly Pod[], stats: StatsFunc, resource: EvictionResource): Pod[] {
  const usage = (s: PodStats) => (resource === 'memory' ? podMemoryUsage(s) : resource === 'inodes' ? podInodeUsage(s) : podDiskUsage(s));
  const request = (p: Pod) => (resource === 'memory' ? podRequests(p).memoryBytes : resource === 'inodes' ? 0 : ephemeralStorageRequest(p));
  const keyed = pods.map((pod, i) => {
    const s = stats(pod);
    const used = s ? usage(s) : 0;
    const req = request(pod);
    return { pod, i, found: s !== undefined, exceeds: used > req, priority: podPriority(pod), above: used - req };
  });
  keyed.sort(
    (a, b) => cmpBool(!a.found, !b.found) || cmpBool(a.exceeds, b.exceeds) || a.priority - b.priority || b.above - a.above || a.i - b.i,
  );
  return keyed.map((k) => k.pod);
}

/**
 * evictionMessage, as the kubelet's (texts of nodeLowMessageFmt, thresholdMetMessageFmt,
 * containerMessageFmt, each ending in ". " as upstream's do):
 * `The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. Container
 * big was using 1Gi, request is 0, has larger consumption of memory. ` — the threshold part from
 * the first met threshold of that resource with an observation; one container part per container
 * whose usage (memory: working set; ephemeral-storage: logs, the rootfs is not measured) exceeds
 * its request. Quantities as resource.Quantity prints them (formatQuantity). Also the event
 * annotations (`offending_containers`, `offending_containers_usage`, `starved_resource`).
 */
export function evictionMessage(
  resource: EvictionResource,
  pod: Pod,
  stats: StatsFunc,
  met: readonly Threshold[],
  observations: SignalObservations,
): { message: string; annotations: Record<string, string> } {
  let message = `The node was low on resource: ${resource}. `;
  const binary = resource !== 'inodes';
  for (const t of met) {
    const o = observations[t.signal];
    if (kSignalToResource[t.signal] !== resource || !o) continue;
    message += `Threshold quantity: ${formatQuantity(thresholdQuantity(t.value, o.capacity), binary)}, available: ${formatQuantity(o.available, binary)}. `;
    break;
  }
  const offending: string[] = [];
  const usages: string[] = [];
  const s = stats(pod);
  for (const cs of s?.containers ?? []) {
    const c = (pod.spec?.containers ?? []).find((x) => x.name === cs.name);
    if (!c || resource === 'inodes') continue;
    const reqRaw = c.resources?.requests?.[resource];
    const req = reqRaw === undefined ? 0 : parseQuantity(reqRaw as string | number);
    const used = resource === 'memory' ? cs.memory?.workingSetBytes : cs.logs?.usedBytes;
    if (used === undefined || !(used > req)) continue;
    const reqText = reqRaw === undefined ? '0' : String(reqRaw);
    message += `Container ${c.name} was using ${formatQuantity(used)}, request is ${reqText}, has larger consumption of ${resource}. `;
    offending.push(c.name);
    usages.push(formatQuantity(used));
  }
  return {
    message,
    annotations: { offending_containers: offending.join(','), offending_containers_usage: usages.join(','), starved_resource: resource },
  };
}

/**
 * admitUnderPressure, as the eviction manager's Admit: with no pressure condition every pod is
 * admitted; a critical pod (`critical`) always is; with MemoryPressure alone a pod that is not
 * BestEffort is, and a BestEffort one that tolerates the `node.kubernetes.io/memory-pressure`
 * NoSchedule taint; anything else is refused with reason `Evicted` and message
 * `The node had condition: [MemoryPressure]. ` (nodeConditionMessageFmt, conditions as Go prints a slice).
 */
export function admitUnderPressure(
  pod: Pod,
  conditions: readonly PressureCondition[],
  qos: string,
  critical: boolean,
): { admit: true } | { admit: false; reason: string; message: string } {
  if (conditions.length === 0 || critical) return { admit: true };
  if (conditions.length === 1 && conditions[0] === 'MemoryPressure') {
    if (qos !== 'BestEffort') return { admit: true };
    const tolerates = (pod.spec?.tolerations ?? []).some((t) => {
      const keyOk =
        t.operator === 'Exists'
          ? (t.key ?? '') === '' || t.key === 'node.kubernetes.io/memory-pressure'
          : t.key === 'node.kubernetes.io/memory-pressure';
      return keyOk && (!t.effect || t.effect === 'NoSchedule');
    });
    if (tolerates) return { admit: true };
  }
  return { admit: false, reason: 'Evicted', message: `The node had condition: [${conditions.join(' ')}]. ` };
}
