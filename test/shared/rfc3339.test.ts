import { afterEach, describe, expect, it, vi } from 'vitest';
import { rfc3339Seconds } from '../../src/shared/rfc3339.js';

describe('rfc3339Seconds (metav1.Time: RFC 3339, UTC, whole seconds)', () => {
  afterEach(() => vi.restoreAllMocks());
  it('writes what toISOString writes without the milliseconds, truncated', () => {
    for (const ms of [0, 999, 1000, -1, -1001, Date.parse('2026-12-07T20:11:48.999Z'), 253402300799999]) {
      expect(rfc3339Seconds(ms)).toBe(new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    }
    expect(rfc3339Seconds(Date.parse('2026-12-07T20:11:48.999Z'))).toBe('2026-12-07T20:11:48Z');
    expect(() => rfc3339Seconds(Number.NaN)).toThrow(RangeError);
  });
  it('formats a second once: the times of one second after the first cost no Date formatting (issue #42)', () => {
    const t = Date.parse('2026-12-07T20:11:48Z');
    rfc3339Seconds(t);
    const spy = vi.spyOn(Date.prototype, 'toISOString');
    for (let i = 0; i < 1000; i++) expect(rfc3339Seconds(t + i)).toBe('2026-12-07T20:11:48Z');
    expect(spy).not.toHaveBeenCalled();
    expect(rfc3339Seconds(t + 1000)).toBe('2026-12-07T20:11:49Z');
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
