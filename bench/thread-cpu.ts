// The main thread's own CPU time, for the density benches' "main thread" row. Event-loop
// utilisation × elapsed (what the row used before) is wall time while the loop is busy: on a loaded
// machine it also counts the time the thread waited for a core (a 2026-12-07 run at load average 30
// gave 549 ms per pod start by it against about 40 ms of CPU). Linux keeps each thread's CPU time in
// /proc/self/task/<tid>/stat (utime and stime, fields 14 and 15, in clock ticks); the main thread's
// tid is the process ID.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

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
