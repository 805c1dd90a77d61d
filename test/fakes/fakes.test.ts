import { describe, expect, it } from 'vitest';
import { FakeClock } from './fake-clock.js';
import { newFakePodSyncRunner } from './fake-pod-sync-runner.js';

describe('FakeClock', () => {
  it('fires timeouts and intervals in due order, only inside advance', async () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`t@${clock.now()}`), 250);
    const iv = clock.setInterval(() => fired.push(`i@${clock.now()}`), 100);
    const gone = clock.setTimeout(() => fired.push('never'), 50);
    clock.clearTimeout(gone);
    expect(fired).toEqual([]);
    await clock.advance(300);
    expect(fired).toEqual(['i@100', 'i@200', 't@250', 'i@300']);
    clock.clearInterval(iv);
    await clock.advance(1000);
    expect(fired).toHaveLength(4);
    expect(clock.now()).toBe(1300);
    expect(clock.timers.size).toBe(0);
  });

  it('step fires due timers synchronously in due order, also those their callbacks set inside the window', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => {
      fired.push(`a@${clock.now()}`);
      clock.setTimeout(() => fired.push(`c@${clock.now()}`), 30); // due at 130: inside the window
      clock.setTimeout(() => fired.push(`late@${clock.now()}`), 500); // due at 600: not yet
    }, 100);
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 100); // same due time: after a
    clock.step(200);
    expect(fired).toEqual(['a@100', 'b@100', 'c@130']);
    expect(clock.now()).toBe(200);
    expect(clock.hasWaiters()).toBe(true);
    clock.step(400);
    expect(fired.at(-1)).toBe('late@600');
    expect(clock.hasWaiters()).toBe(false);
    expect(() => clock.step(-1)).toThrow(/ms must be/);
  });
});

describe('FakePodSyncRunner', () => {
  it('records tasks, answers per kind (value, function of the n-th call, error), and takes an injected error', async () => {
    const runner = newFakePodSyncRunner({
      relist: (_task, n) => ({ containers: [], observedAtMs: n }),
      execProbe: new Error('exec failed'),
    });
    expect((await runner.run({ kind: 'relist', protocol: 1 })).observedAtMs).toBe(0);
    expect((await runner.run({ kind: 'relist', protocol: 1 })).observedAtMs).toBe(1);
    await expect(runner.run({ kind: 'execProbe' } as never)).rejects.toThrow('exec failed');
    await expect(runner.run({ kind: 'gc' } as never)).rejects.toThrow('no answer for task kind gc');
    runner.err = new Error('docker down');
    await expect(runner.run({ kind: 'relist', protocol: 1 })).rejects.toThrow('docker down');
    expect(runner.calls.map((t) => t.kind)).toEqual(['relist', 'relist', 'execProbe', 'gc', 'relist']);
    expect(runner.callsOf('relist')).toHaveLength(3);
    await runner.close();
    expect(runner.closed).toBe(true);
  });
});
