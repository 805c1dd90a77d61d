import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { podContentHash, stableHash } from '../../src/shared/hash.js';

// Golden values computed with the separate hashes before podContentHash was shared (commit
// 4e876e0: pod-config.ts and source-intake.ts contentHash). A changed intake config.hash would make
// every stored intake pod look edited. The static pod side is pinned in static-pod.test.ts.
const intakePod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'api',
    namespace: 'default',
    uid: '0b4c2a52-1d4e-4f5c-9a43-7d6f00c1e001',
    annotations: {
      a: 'b',
      'kubernetes.io/config.seen': '2024-05-01T10:00:00.000Z',
      'kubernetes.io/config.hash': 'stale',
      'kubernetes.io/config.source': 'api',
    },
  },
  spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
  status: { phase: 'Running' },
} as Pod;

describe('podContentHash', () => {
  it('gives the values the separate hashes gave (PodConfig, the intake config.hash)', () => {
    expect(podContentHash(intakePod)).toBe('d984c8de1213a657');
    const { 'kubernetes.io/config.hash': _old, ...annotations } = intakePod.metadata!.annotations!;
    expect(podContentHash({ ...intakePod, metadata: { ...intakePod.metadata, annotations } }, 32)).toBe('b7075d8b92be289867324ea80b4e5e34');
  });

  it('ignores config.seen and status, and nothing else', () => {
    const pod = intakePod;
    const seenLater = {
      ...pod,
      metadata: { ...pod.metadata, annotations: { ...pod.metadata!.annotations, 'kubernetes.io/config.seen': '2025-01-01T00:00:00.000Z' } },
    };
    expect(podContentHash(seenLater)).toBe(podContentHash(pod));
    expect(podContentHash({ ...pod, status: { phase: 'Failed' } } as Pod)).toBe(podContentHash(pod));
    expect(podContentHash({ ...pod, metadata: { ...pod.metadata, labels: { app: 'other' } } })).not.toBe(podContentHash(pod));
    expect(podContentHash(pod, 32)).toHaveLength(32);
    expect(podContentHash(pod, 32).startsWith(podContentHash(pod))).toBe(true);
    expect(stableHash({ ...pod, status: undefined })).not.toBe(podContentHash(pod)); // config.seen counts for stableHash
  });
});
