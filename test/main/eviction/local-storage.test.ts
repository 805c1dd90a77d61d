// The eviction manager's local-storage verdict (main/eviction/local-storage.ts), the one place an
// emptyDir's usage is judged against its sizeLimit (emptyDirLimitEviction,
// pkg/kubelet/eviction/eviction_manager.go): table tests (issue #41 item 1).
import { describe, expect, it } from 'vitest';
import type { Pod, Volume } from '../../../src/shared/api.js';
import type { PodStats } from '../../../src/shared/stats.js';
import { emptyDirOverLimitMessage, localStorageViolation } from '../../../src/main/eviction/local-storage.js';

const vol = (sizeLimit?: unknown, name = 'scratch') => ({ name, emptyDir: sizeLimit === undefined ? {} : { sizeLimit } }) as Volume;

describe('emptyDirOverLimitMessage', () => {
  it.each([
    ['over', vol('1Mi'), 1024 * 1024 + 1, 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". '],
    ['at the limit', vol('1Mi'), 1024 * 1024, null],
    ['not measured', vol('1Mi'), undefined, null],
    ['no limit', vol(), 1e12, null],
    ['zero limit', vol('0'), 1e12, null],
  ] as const)('%s → %j', (_what, v, used, want) => {
    expect(emptyDirOverLimitMessage(v, used)).toBe(want);
  });
});

describe('localStorageViolation on an emptyDir', () => {
  const pod: Pod = {
    metadata: { name: 'fill', namespace: 'default', uid: 'u' },
    spec: { containers: [{ name: 'c', image: 'i' }], volumes: [vol('1Mi')] },
  };
  const stats = (usedBytes: number) => ({ volume: [{ name: 'scratch', usedBytes }], containers: [] }) as unknown as PodStats;
  it.each([
    [
      'over its limit',
      stats(2 * 2 ** 20),
      { signal: 'emptydirfs.limit', message: 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ' },
    ],
    ['under its limit', stats(1000), null],
    ['without stats', undefined, null],
  ] as const)('%s → %j', (_what, s, want) => {
    expect(localStorageViolation(pod, s)).toEqual(want);
  });
});
