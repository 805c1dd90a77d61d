// bench/interrupt.ts: a bench stopped by a signal runs the cleanups still registered (its containers
// removed) before it exits with 128 + the signal's number; an unregistered cleanup does not run.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixture = fileURLToPath(new URL('./fixtures/interrupted.ts', import.meta.url));

function runUntilReady(): Promise<{ signal: (s: NodeJS.Signals) => Promise<{ code: number | null; out: string }> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<{ code: number | null; out: string }>((resolve) => child.on('exit', (code) => resolve({ code, out })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the fixture never said ready: ${out}`));
    }, 30_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('ready\n')) {
        clearTimeout(timer);
        resolve({
          signal: (s) => {
            child.kill(s);
            return exited;
          },
        });
      }
    });
  });
}

describe('onInterrupt (bench/interrupt.ts)', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`on ${signal} runs the registered cleanup, not the unregistered one, and exits ${code}`, async () => {
      const child = await runUntilReady();
      const { code: exitCode, out } = await child.signal(signal);
      expect(out).toContain('cleaned\n');
      expect(out).not.toContain('unregistered');
      expect(exitCode).toBe(code);
    }, 40_000);
  }
});
