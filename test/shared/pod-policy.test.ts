import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import {
  effectiveGracePeriodSeconds, isGracePeriodFromLabels, kDefaultTerminationGracePeriodSeconds, kGracePeriodFromLabels, podTerminationGracePeriodSeconds,
} from '../../src/shared/pod-policy.js';

const pod = (spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Pod =>
  ({ metadata: { name: 'p', namespace: 'default', uid: 'u', ...metadata }, spec: { containers: [{ name: 'a', image: 'i' }], ...spec } }) as Pod;

describe('grace period (pod_workers.go calculateEffectiveGracePeriod)', () => {
  it('defaults to the apiserver default of 30 s', () => {
    expect(kDefaultTerminationGracePeriodSeconds).toBe(30);
  });

  it.each([
    ['unset', pod(), 30],
    ['no spec', undefined, 30],
    ['null', pod({ terminationGracePeriodSeconds: null }), 30],
    ['0 (kill at once)', pod({ terminationGracePeriodSeconds: 0 }), 0],
    ['set', pod({ terminationGracePeriodSeconds: 7 }), 7],
    ['negative (never admitted) counts as unset', pod({ terminationGracePeriodSeconds: -3 }), 30],
  ])('podTerminationGracePeriodSeconds: %s → %s', (_what, p, want) => {
    expect(podTerminationGracePeriodSeconds(p)).toBe(want);
  });

  it.each([
    ['no override: the pod\'s', pod({ terminationGracePeriodSeconds: 7 }), undefined, 7],
    ['null override: the pod\'s', pod({ terminationGracePeriodSeconds: 7 }), null, 7],
    ['override wins', pod({ terminationGracePeriodSeconds: 7 }), 2, 2],
    ['override 0 wins (force delete)', pod({ terminationGracePeriodSeconds: 7 }), 0, 0],
    ['no override, unset spec: the default', pod(), undefined, 30],
  ])('effectiveGracePeriodSeconds: %s', (_what, p, override, want) => {
    expect(effectiveGracePeriodSeconds(p, override)).toBe(want);
  });

  it('the "use the labels\' grace period" sentinel is any negative number', () => {
    expect(kGracePeriodFromLabels).toBe(-1);
    expect(isGracePeriodFromLabels(kGracePeriodFromLabels)).toBe(true);
    expect(isGracePeriodFromLabels(-5)).toBe(true);
    expect(isGracePeriodFromLabels(0)).toBe(false);
    expect(isGracePeriodFromLabels(30)).toBe(false);
  });
});
