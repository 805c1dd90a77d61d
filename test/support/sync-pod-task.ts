// The syncPod task of the tests that drive the sync worker (its handler, syncPodCri, or a pool) as
// the main thread does, in one place: each test says only how its task differs.
import { kSyncDeadlineMs } from '../../src/main/lifecycle/pod-syncer.js';
import type { Pod } from '../../src/shared/api.js';
import type { SyncPodTask } from '../../src/shared/sync-tasks.js';
import { PROTOCOL_VERSION } from '../../src/shared/thread-wire.js';

/**
 * syncPodTask: the SyncPodTask the main thread's pod syncer (src/main/lifecycle/pod-syncer.ts) sends
 * for `pod` when it is new to the node, then `overrides` over it (a test passes what differs on purpose).
 * Defaults, and why:
 * - `protocol`: PROTOCOL_VERSION, the wire version of this build.
 * - `backoff`: `{}` — a new pod has no restart backoff entry yet.
 * - `hostIp`: `'127.0.0.1'` — the test nodes' address (their --node-ip is loopback).
 * - `deadlineMs`: now on the real clock (epoch ms) plus kSyncDeadlineMs (120 s), the time the pod
 *   syncer gives a sync; a test on a fake clock passes its own.
 * - no `livenessFailed`, `startedSidecars` (no probe has run yet), no `cachedRuntimePod` (the pod
 *   cache holds nothing of it), no `configObjects` (the pod references no ConfigMap, Secret or
 *   claim), no `knownAbsent` (the sync reads the runtime, as before the first relist covers the pod).
 */
export function syncPodTask(pod: Pod, overrides: Partial<Omit<SyncPodTask, 'kind'>> = {}): SyncPodTask {
  return {
    kind: 'syncPod',
    protocol: PROTOCOL_VERSION,
    pod,
    backoff: {},
    hostIp: '127.0.0.1',
    deadlineMs: Date.now() + kSyncDeadlineMs,
    ...overrides,
  };
}
