// The sync worker's inputs as the tests that drive it in-process give them (its handler over the
// in-memory fake runtime, syncPodCri, or a pool), in one place: each test says only what differs.
import { kSyncDeadlineMs } from '../../src/main/lifecycle/pod-syncer.js';
import type { Pod } from '../../src/shared/api.js';
import type { SyncPodTask } from '../../src/shared/sync-tasks.js';
import { PROTOCOL_VERSION, type WorkerBootstrap } from '../../src/shared/thread-wire.js';

/**
 * fakeWorkerBootstrap: the WorkerBootstrap of a sync worker on the in-memory fake runtime
 * (`runtime: 'fake'`, no Docker socket) of node `n1`, with its root dir at `rootDir`, the fake's
 * pause image `pause:1` as --pod-infra-container-image and a silent logger; then `overrides` (a
 * test passes what differs on purpose: its node name, a pod network, …). What main/pool hands each
 * thread at start, for a handler made with createWorkerHandler(bootstrap, fake).
 */
export function fakeWorkerBootstrap(rootDir: string, overrides: Partial<WorkerBootstrap> = {}): WorkerBootstrap {
  return {
    protocol: PROTOCOL_VERSION,
    runtime: 'fake',
    dockerSocketPath: '',
    nodeName: 'n1',
    rootDir,
    podInfraContainerImage: 'pause:1',
    logLevel: 'silent',
    ...overrides,
  };
}

/**
 * syncPodTask: the SyncPodTask the main thread's pod syncer (src/main/lifecycle/pod-syncer.ts) sends
 * for `pod` when it is new to the node, then `overrides` over it (a test passes what differs on purpose).
 * Defaults, and why:
 * - `protocol`: PROTOCOL_VERSION, the wire version of this build.
 * - `backoff`: `{}` — a new pod has no restart backoff entry yet.
 * - `hostIp`: `'127.0.0.1'` — the node's address: --node-ip's default, which the test nodes keep.
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
