// bench/thread-cpu.ts: the density benches' "main thread" CPU row counts the main thread's own CPU
// time, not the time its event loop was busy (which also holds waits: a blocked or descheduled
// thread), nor the worker threads' CPU.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { mainThreadCpuMs, startMainThreadCpu } from '../../bench/thread-cpu.js';

/** Spin the calling thread until it has used `ms` of CPU by process.cpuUsage (user + system). */
function spin(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const d = process.cpuUsage(start);
    if ((d.user + d.system) / 1000 >= ms) return;
  }
}

describe('startMainThreadCpu', () => {
  it('reads the main thread from /proc on Linux', () => {
    expect(mainThreadCpuMs()).toBeGreaterThanOrEqual(0);
  });

  it("counts the main thread's CPU, not a blocked main thread's wait, nor a worker thread's CPU", async () => {
    const busy = startMainThreadCpu();
    spin(300);
    const spun = busy();
    expect(spun.source).toBe('proc');
    // /proc counts in 10 ms ticks.
    expect(spun.ms).toBeGreaterThanOrEqual(250);

    const blocked = startMainThreadCpu();
    // The event loop is busy (not idle) for 300 ms, but the thread sleeps.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    expect(blocked().ms).toBeLessThan(100);

    const beside = startMainThreadCpu();
    const worker = new Worker(
      `const s = process.cpuUsage(); for (;;) { const d = process.cpuUsage(s); if ((d.user + d.system) / 1000 >= 300) break; }`,
      { eval: true },
    );
    try {
      await new Promise((resolve, reject) => {
        worker.once('exit', resolve);
        worker.once('error', reject);
      });
    } finally {
      await worker.terminate();
    }
    expect(beside().ms).toBeLessThan(150);
  });
});
