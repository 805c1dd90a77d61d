/**
 * Restart backoff (CrashLoopBackOff), as k8s.io/client-go/util/flowcontrol.Backoff is used by the
 * kubelet (pkg/kubelet/kuberuntime: doBackOff): per container key, starts at 10 s, doubles on every
 * restart up to 300 s, and an entry idle for more than twice the cap (10 min) starts over.
 *
 * Pure functions over `BackoffEntry` data so the state can live on the main thread and travel
 * to a worker inside a task.
 */
import type { BackoffEntry } from './sync-tasks.js';

/** Initial restart backoff, milliseconds (kubelet: 10 s). */
export const kInitialBackoffMs = 10_000;
/** Maximum restart backoff, milliseconds (kubelet: MaxContainerBackOff, 300 s). */
export const kMaxBackoffMs = 300_000;

/**
 * backoffKey names one container's backoff entry, as the kubelet's getStableKey:
 * `<pod>_<namespace>_<uid>_<container>_<hash>`. A new spec (new hash) starts a fresh backoff.
 */
export function backoffKey(podName: string, namespace: string, uid: string, containerName: string, hash: string): string {
  return `${podName}_${namespace}_${uid}_${containerName}_${hash}`;
}

function expired(entry: BackoffEntry, nowMs: number, maxMs: number): boolean {
  return nowMs - entry.lastUpdateMs > 2 * maxMs;
}

/**
 * isInBackoffSince: true while `sinceMs` (the container's finishedAt, epoch ms) plus the current
 * backoff is still in the future (flowcontrol.Backoff.IsInBackOffSince).
 */
export function isInBackoffSince(entry: BackoffEntry | undefined, sinceMs: number, nowMs: number, maxMs = kMaxBackoffMs): boolean {
  if (!entry) return false;
  if (expired(entry, nowMs, maxMs)) return false;
  return nowMs - sinceMs < entry.backoffMs;
}

/**
 * nextBackoff: the entry after one more restart at `nowMs` (flowcontrol.Backoff.Next):
 * new or expired → initial; else doubled, capped at `maxMs`.
 */
export function nextBackoff(
  entry: BackoffEntry | undefined,
  nowMs: number,
  initialMs = kInitialBackoffMs,
  maxMs = kMaxBackoffMs,
): BackoffEntry {
  if (!entry || expired(entry, nowMs, maxMs)) return { backoffMs: initialMs, lastUpdateMs: nowMs };
  return { backoffMs: Math.min(entry.backoffMs * 2, maxMs), lastUpdateMs: nowMs };
}
