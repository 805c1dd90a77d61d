// The runtime state (src/main/node/runtime-state.ts): down after 30 s without a successful status
// check, up again at the first success, which fires onRuntimeUp once. Time is a FakeClock.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { kRuntimeDownMessage, newRuntimeState } from '../../../src/main/node/runtime-state.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';

function setup() {
  const clock = new FakeClock(1_700_000_000_000);
  let up = true;
  let checks = 0;
  let ups = 0;
  const state = newRuntimeState(
    {},
    {
      clock,
      logger: pino({ level: 'silent' }),
      check: async () => {
        checks++;
        if (!up) throw new Error('docker ping: container runtime is unavailable: connect ENOENT');
      },
      onRuntimeUp: () => ups++,
    },
  );
  return { clock, state, setUp: (v: boolean) => (up = v), checks: () => checks, ups: () => ups };
}

describe('runtime state', () => {
  it('stays healthy through a cut shorter than 30 s, turns down past it, and recovers at the first good check', async () => {
    const t = setup();
    t.state.start();
    await flush();
    expect(t.state.healthy()).toEqual({ ok: true });
    t.setUp(false);
    await t.clock.advance(25_000);
    expect(t.state.runtimeErrors()).toEqual([]);
    await t.clock.advance(10_000);
    expect(t.state.runtimeErrors()).toEqual([kRuntimeDownMessage]);
    expect(t.state.healthy().message).toMatch(/^container runtime is down: no answer for \d+s: docker ping/);
    expect(t.ups()).toBe(0);
    t.setUp(true);
    await t.clock.advance(1_000); // checked every second while failing
    expect(t.state.healthy()).toEqual({ ok: true });
    expect(t.ups()).toBe(1);
    await t.clock.advance(20_000);
    expect(t.ups()).toBe(1);
  });

  it('fires onRuntimeUp after a short failure too (pods that failed then are synced at once)', async () => {
    const t = setup();
    t.setUp(false);
    t.state.start();
    await flush();
    expect(t.state.healthy().ok).toBe(true); // the start is the baseline
    t.setUp(true);
    await t.clock.advance(1_000);
    expect(t.ups()).toBe(1);
  });

  it('counts a check that does not answer as failed', async () => {
    const clock = new FakeClock(0);
    const state = newRuntimeState({}, { clock, logger: pino({ level: 'silent' }), check: () => new Promise(() => {}) });
    state.start();
    await clock.advance(40_000);
    expect(state.healthy().ok).toBe(false);
    expect(state.healthy().message).toContain('no answer in 5000 ms');
    state.stop();
  });

  it('rejects a bad option by name', () => {
    expect(() => newRuntimeState({ thresholdMs: 0 }, { logger: pino({ level: 'silent' }), check: async () => {} })).toThrow(
      /options\.thresholdMs/,
    );
  });
});

describe('runtime state, slow answers', () => {
  it('counts an answer that comes after the check timed out', async () => {
    const clock = new FakeClock(0);
    let answer: (() => void) | undefined;
    let ups = 0;
    const state = newRuntimeState(
      {},
      {
        clock,
        logger: pino({ level: 'silent' }),
        onRuntimeUp: () => ups++,
        check: () => (answer ? Promise.resolve() : new Promise<void>((resolve) => (answer = resolve))),
      },
    );
    state.start();
    await clock.advance(6_000); // the first check timed out and is still open
    answer!();
    await flush();
    expect(ups).toBe(1);
    await clock.advance(40_000);
    expect(state.healthy()).toEqual({ ok: true });
    state.stop();
  });
});
