// What the density benches' watch client (bench/watch-client.worker.ts) and its caller
// (bench/watch-client.ts) say to each other, and the one pod test the client makes. Pure; not used by src/.
import type { Pod } from '../src/shared/api.js';

/** The role the watch client's thread announces on the agent's thread-roles channel (bench/thread-cpu.ts files its CPU under it). */
export const kBenchWatchRole = 'bench-watch';

/** WatchFrame: one `WS /watch/pods` frame as the bench's client decoded it. */
export interface WatchFrame {
  type: string;
  object: Pod;
}

/** isRunningPod: phase Running and every container ready (what "Running" means in every density figure). */
export const isRunningPod = (pod: Pod): boolean =>
  pod.status?.phase === 'Running' &&
  (pod.status.containerStatuses ?? []).length > 0 &&
  (pod.status.containerStatuses ?? []).every((c) => c.ready);

/** A message from the client's thread: connected, a frame (when it arrived, epoch ms; `frame` only when asked for whole frames), an error, the close. */
export type WatchClientMessage =
  | { kind: 'open' }
  | { kind: 'error'; message: string }
  | { kind: 'close'; code: number }
  | { kind: 'frame'; atEpochMs: number; type: string; uid: string; name: string; running: boolean; frame?: WatchFrame };

/** A message to the client's thread: post whole frames too (or stop), or close the watch. */
export type WatchClientControl = { kind: 'full'; on: boolean } | { kind: 'close' };
