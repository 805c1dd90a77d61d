// Issue #38 finding 6: the bound on concurrent watches per user and in all (src/server/http/watch-limits.ts).
import { describe, expect, it } from 'vitest';
import { kDefaultWatchLimits, newWatchLimiter } from '../../../src/server/http/watch-limits.js';

describe('newWatchLimiter', () => {
  it('admits up to maxWatchesPerUser per user, then 429 TooManyRequests with retryAfterSeconds; another user is still admitted', () => {
    const l = newWatchLimiter({ maxWatchesPerUser: 2, maxWatches: 10 });
    const a1 = l.acquire('alice');
    const a2 = l.acquire('alice');
    expect(a1.ok && a2.ok).toBe(true);
    const a3 = l.acquire('alice');
    expect(a3).toMatchObject({
      ok: false,
      retryAfterSeconds: 1,
      status: { code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 1 } },
    });
    expect(l.acquire('bob').ok).toBe(true);
    expect(l.active('alice')).toBe(2);
    expect(l.active()).toBe(3);
  });

  it('a release gives the place back once, however often it is called', () => {
    const l = newWatchLimiter({ maxWatchesPerUser: 1, maxWatches: 10 });
    const a = l.acquire('');
    if (!a.ok) throw new Error('refused');
    expect(l.acquire('').ok).toBe(false);
    a.release();
    a.release();
    expect(l.active()).toBe(0);
    expect(l.acquire('').ok).toBe(true);
    expect(l.active()).toBe(1);
  });

  it('refuses any user once maxWatches are open, naming the flag', () => {
    const l = newWatchLimiter({ maxWatchesPerUser: 5, maxWatches: 2 });
    l.acquire('a');
    l.acquire('b');
    const c = l.acquire('c');
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.status.message).toContain('--max-watches');
  });

  it('has the documented defaults and refuses a limit below 1', () => {
    expect(newWatchLimiter().limits).toEqual(kDefaultWatchLimits);
    expect(kDefaultWatchLimits).toEqual({ maxWatchesPerUser: 100, maxWatches: 500 });
    expect(() => newWatchLimiter({ maxWatches: 0 })).toThrow(/maxWatches must be an integer >= 1/);
  });
});
