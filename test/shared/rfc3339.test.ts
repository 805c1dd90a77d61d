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
  it('formats each second once when calls alternate between seconds, as a pod start does (startTime, now, startedAt) (issue #42)', () => {
    const accepted = Date.parse('2026-12-08T01:02:03.250Z');
    const started = Date.parse('2026-12-08T01:02:04.100Z');
    const now = Date.parse('2026-12-08T01:02:05.900Z');
    const spy = vi.spyOn(Date.prototype, 'toISOString');
    for (let i = 0; i < 300; i++) {
      expect(rfc3339Seconds(accepted + (i % 7))).toBe('2026-12-08T01:02:03Z');
      expect(rfc3339Seconds(started)).toBe('2026-12-08T01:02:04Z');
      expect(rfc3339Seconds(now)).toBe('2026-12-08T01:02:05Z');
    }
    // One format per second asked, not one per change of second (a one-entry cache: 900 here).
    expect(spy).toHaveBeenCalledTimes(3);
    // Seconds whose slots collide (16 apart) replace each other and still answer right.
    const later = accepted + 16_000;
    expect(rfc3339Seconds(later)).toBe('2026-12-08T01:02:19Z');
    expect(rfc3339Seconds(accepted)).toBe('2026-12-08T01:02:03Z');
    expect(rfc3339Seconds(-1)).toBe('1969-12-31T23:59:59Z');
    expect(rfc3339Seconds(15_000)).toBe('1970-01-01T00:00:15Z');
  });
});
