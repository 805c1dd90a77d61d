import { describe, expect, it } from 'vitest';
import { kMaxStopTimeoutSeconds, stopTimeoutSeconds } from '../../../../src/workers/runtime/docker/docker-engine-shapes.js';

describe('stopTimeoutSeconds (Docker stop `t` from a grace period in seconds)', () => {
  it.each([
    [0, 0],
    [-3, 0],
    [Number.NaN, 0],
    [1.9, 1],
    [30, 30],
    // Docker makes a Go time.Duration of t seconds (int64 ns): past ~292 years it wraps and kills at once.
    [2 ** 31 - 1, kMaxStopTimeoutSeconds],
    [1e12, kMaxStopTimeoutSeconds],
    [Number.MAX_SAFE_INTEGER, kMaxStopTimeoutSeconds],
  ])('%d s → t=%d', (grace, t) => {
    expect(stopTimeoutSeconds(grace)).toBe(t);
  });
});
