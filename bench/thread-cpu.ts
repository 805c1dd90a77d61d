// The main thread's own CPU time, for the density benches' "main thread" row. Event-loop
// utilisation × elapsed (what the row used before) is wall time while the loop is busy: on a loaded
// machine it also counts the time the thread waited for a core (a 2026-12-07 run at load average 30
// gave 549 ms per pod start by it against about 40 ms of CPU). Linux keeps each thread's CPU time in
// /proc/self/task/<tid>/stat (utime and stime, fields 14 and 15, in clock ticks); the main thread's
// tid is the process ID.
import { readdirSync, readFileSync } from 'node:fs';
import { BroadcastChannel } from 'node:worker_threads';
import { kThreadRolesChannel, type ThreadRoleAnnouncement } from '../src/workers/thread-roles.js';
import { performance } from 'node:perf_hooks';
import { kBenchWatchRole } from './watch-frames.js';

/** Clock ticks per second of /proc's utime and stime (sysconf(_SC_CLK_TCK): 100 on Linux). */
const kClockTicksPerSecond = 100;

/**
 * mainThreadCpuMs: the CPU time (user + system) the process's main thread has used, milliseconds, at
 * 10 ms resolution (/proc/self/task/<pid>/stat); where /proc is not there, undefined.
 */
export function mainThreadCpuMs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state is field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[14 - 3]) + Number(fields[15 - 3]);
    return Number.isFinite(ticks) ? (ticks * 1000) / kClockTicksPerSecond : undefined;
  } catch {
    return undefined;
  }
}

/**
 * startMainThreadCpu: a window of the main thread's CPU time; the returned function gives the
 * milliseconds used since, from /proc, or event-loop utilisation's active milliseconds where /proc is
 * not there (then wall time while busy, and it says so by `source`).
 */
export function startMainThreadCpu(): () => { ms: number; source: 'proc' | 'elu' } {
  const cpu0 = mainThreadCpuMs();
  const elu0 = performance.eventLoopUtilization();
  return () => {
    const cpu = mainThreadCpuMs();
    if (cpu0 !== undefined && cpu !== undefined) return { ms: cpu - cpu0, source: 'proc' };
    return { ms: performance.eventLoopUtilization(elu0).active, source: 'elu' };
  };
}

/** CPU time (user + system) of every thread of this process now, milliseconds by tid, from /proc/self/task/<tid>/stat (10 ms ticks); empty without /proc. */
function threadCpuMs(): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), ((Number(fields[14 - 3]) + Number(fields[15 - 3])) * 1000) / kClockTicksPerSecond);
    } catch {
      // The thread ended between the listing and the read: its CPU is gone from /proc (and from the row).
    }
  }
  return out;
}

/**
 * V8's platform threads: Node starts them before any script, right after the main thread — a delayed
 * task scheduler and `--v8-pool-size` (default 4) workers that run the GC's parallel and concurrent
 * phases and the optimizing compiler for every isolate of the process —, so they are the lowest
 * thread IDs after the main thread's. The threads started later (libuv's threadpool, where the async
 * fs calls run; the inspector's signal thread) are `other`.
 */
const platformTids = (() => {
  const flag = process.execArgv.find((a) => a.startsWith('--v8-pool-size='));
  const poolSize = flag ? Number(flag.split('=')[1]) : 4;
  const tids = [...threadCpuMs().keys()].filter((tid) => tid !== process.pid).sort((a, b) => a - b);
  return new Set(tids.slice(0, 1 + (Number.isInteger(poolSize) && poolSize > 0 ? poolSize : 4)));
})();
/** Worker threads' roles by tid, as the agent's worker entries announce them (src/workers/thread-roles.ts). */
const roleByTid = new Map<number, string>();
const rolesChannel = new BroadcastChannel(kThreadRolesChannel);
rolesChannel.onmessage = (e) => {
  const { role, tid } = (e as { data: ThreadRoleAnnouncement }).data;
  roleByTid.set(tid, role);
};
rolesChannel.unref();

/**
 * startThreadCpu: a window of this process's CPU time by thread kind. The returned function gives
 * milliseconds since, summed by kind: `main`, each worker role the agent's threads announced (`sync`
 * for the pool's threads together, `container-events`, `manifest` …), `v8-platform` (V8's platform
 * threads: GC helpers and concurrent compilers, shared by every isolate) and `other` (the rest: libuv's
 * threadpool, where the async fs calls run, and any thread that did not announce itself). A thread that ended inside the window is missing (its CPU is no longer in /proc).
 * Empty where /proc is not there.
 */
export function startThreadCpu(): () => Record<string, number> {
  const before = threadCpuMs();
  return () => {
    const out: Record<string, number> = {};
    for (const [tid, ms] of threadCpuMs()) {
      const kind = tid === process.pid ? 'main' : (roleByTid.get(tid) ?? (platformTids.has(tid) ? 'v8-platform' : 'other'));
      out[kind] = (out[kind] ?? 0) + ms - (before.get(tid) ?? 0);
    }
    return out;
  };
}

/**
 * agentCpuMs: of a process's CPU time `processMs` over a window (milliseconds) and that window's
 * CPU by thread kind (startThreadCpu), the agent's: without the bench's own watch client thread
 * (`bench-watch`, bench/watch-client.worker.ts). Pure.
 */
export function agentCpuMs(processMs: number, byKind: Record<string, number>): number {
  return processMs - (byKind[kBenchWatchRole] ?? 0);
}

/** formatThreadCpu: `main 3.0 · sync 8.3 · …` (milliseconds, the largest kinds first after main; the bench's own watch client last, marked as not the agent's); pure. */
export function formatThreadCpu(byKind: Record<string, number>): string {
  const rank = (k: string) => (k === 'main' ? -1 : k === kBenchWatchRole ? 1 : 0);
  const kinds = Object.keys(byKind).sort((a, b) => rank(a) - rank(b) || byKind[b]! - byKind[a]!);
  return kinds.map((k) => `${k} ${byKind[k]!.toFixed(1)}${k === kBenchWatchRole ? " (the bench's, not counted)" : ''}`).join(' · ');
}
