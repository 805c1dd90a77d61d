// bench/thread-cpu.ts: the density benches' "main thread" CPU row counts the main thread's own CPU
// time, not the time its event loop was busy (which also holds waits: a blocked or descheduled
// thread), nor the worker threads' CPU.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { formatThreadCpu, mainThreadCpuMs, startMainThreadCpu, startThreadCpu } from '../../bench/thread-cpu.js';

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

describe('startThreadCpu', () => {
  it("puts a worker thread's CPU under the role it announced (src/workers/thread-roles.ts), the main thread's under main", async () => {
    const byKind = startThreadCpu();
    // A worker that loads the agent's announcement module (through tsx, as worker-entry.ts does from source), announces `sync` and spins 300 ms.
    const tsx = createRequire(import.meta.url).resolve('tsx/cjs/api');
    const roles = fileURLToPath(new URL('../../src/workers/thread-roles.ts', import.meta.url));
    const worker = new Worker(
      `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(roles)}).announceThreadRole('sync');
       setTimeout(() => { const s = process.cpuUsage(); for (;;) { const d = process.cpuUsage(s); if ((d.user + d.system) / 1000 >= 300) break; }
         require('node:worker_threads').parentPort.postMessage('spun'); setInterval(() => {}, 1000); }, 50);`,
      { eval: true },
    );
    let kinds: Record<string, number>;
    try {
      // Read while the worker is alive: an ended thread's CPU is no longer in /proc.
      await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      spin(100);
      kinds = byKind();
    } finally {
      await worker.terminate();
    }
    // /proc counts in 10 ms ticks; the worker's module loading adds to its 300 ms.
    expect(kinds.sync).toBeGreaterThanOrEqual(250);
    expect(kinds.main).toBeGreaterThanOrEqual(80);
  });

  it('formats main first, then the largest', () => {
    expect(formatThreadCpu({ other: 1.5, sync: 8.25, main: 3 })).toBe('main 3.0 · sync 8.3 · other 1.5');
  });
});
