// Counterpart of nothing upstream (the kubelet is one Go process; Go's profiler names goroutines, not threads).
/**
 * Which OS thread of the process is which of the agent's threads: each worker entry announces its
 * role and its Linux thread ID (the `tid` of `/proc/self/task/<tid>`) once, at load, on a
 * BroadcastChannel of this process. A listener in the same process (the density bench's CPU-by-thread
 * row, bench/thread-cpu.ts) can then read each thread's own CPU time from /proc. Nothing in the
 * agent listens; an announcement nobody hears costs one message. Any thread; pure but for the post.
 */
import { readlinkSync } from 'node:fs';
import { BroadcastChannel, isMainThread } from 'node:worker_threads';

/** The roles a thread of the agent announces: the worker entries of src/workers/ (`<role>.worker.ts`). */
export type ThreadRole = 'sync' | 'container-events' | 'container-logs' | 'container-streams' | 'manifest';

/** The BroadcastChannel name the announcements go out on. */
export const kThreadRolesChannel = 'kubelet-ts.thread-roles';

/** One announcement: a thread's role and its Linux thread ID. */
export interface ThreadRoleAnnouncement {
  role: ThreadRole;
  tid: number;
}

/**
 * currentTid: this thread's Linux thread ID, from the `/proc/thread-self` link (`<pid>/task/<tid>`);
 * undefined where there is no /proc (not Linux).
 */
export function currentTid(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * announceThreadRole posts this worker thread's role and tid once on {@link kThreadRolesChannel}; on
 * the main thread (a test that imports a worker entry) or without /proc it posts nothing. Never throws.
 */
export function announceThreadRole(role: ThreadRole): void {
  if (isMainThread) return;
  const tid = currentTid();
  if (tid === undefined) return;
  const channel = new BroadcastChannel(kThreadRolesChannel);
  try {
    channel.postMessage({ role, tid } satisfies ThreadRoleAnnouncement);
  } finally {
    channel.close();
  }
}
