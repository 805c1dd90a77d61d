// PodConfig hashes a pod only to compare it with the previous version of its UID, once per pod
// object (src/main/config/pod-config.ts): new pods and the very objects handed over again (the file
// source does that for every unchanged pod in each SET) cost no hashing; a new object with the same
// content is hashed and still seen as unchanged.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';

const hashed = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../../../src/shared/hash.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../src/shared/hash.js')>();
  return {
    ...actual,
    stableHash: (...args: Parameters<typeof actual.stableHash>) => {
      hashed.calls++;
      return actual.stableHash(...args);
    },
    // PodConfig hashes through podContentHash (one call = one hash of a pod).
    podContentHash: (...args: Parameters<typeof actual.podContentHash>) => {
      hashed.calls++;
      return actual.podContentHash(...args);
    },
  };
});
const { newPodConfig } = await import('../../../src/main/config/pod-config.js');

function pod(name: string, image = 'img:1'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations: { 'kubernetes.io/config.seen': String(Math.random()) } },
    spec: { containers: [{ name: 'c', image }] },
  };
}

describe('PodConfig content hash cache', () => {
  beforeEach(() => {
    hashed.calls = 0;
  });

  it('hashes no pod of a SET of new pods, nor the same objects sent again', () => {
    const config = newPodConfig(['file']);
    const set = Array.from({ length: 100 }, (_, i) => pod(`p${i}`));
    expect(config.apply({ op: 'SET', source: 'file', pods: set }).adds).toHaveLength(100);
    const changes = config.apply({ op: 'SET', source: 'file', pods: [...set, pod('new')] });
    expect(changes.adds.map((p) => p.metadata!.name)).toEqual(['new']);
    expect(changes.updates).toEqual([]);
    expect(hashed.calls).toBe(0);
  });

  it('hashes a new object of a known pod once, and its previous version once', () => {
    const config = newPodConfig(['file']);
    config.apply({ op: 'SET', source: 'file', pods: [pod('a'), pod('b')] });
    const a2 = pod('a');
    const changes = config.apply({ op: 'SET', source: 'file', pods: [a2, pod('b', 'img:2')] });
    expect(hashed.calls).toBe(4);
    expect(changes.updates.map((p) => p.metadata!.name)).toEqual(['b']);
    // a2 is held now; the same object again needs no hash, a fresh copy only its own.
    config.apply({ op: 'SET', source: 'file', pods: [a2, pod('b', 'img:2')] });
    expect(hashed.calls).toBe(5);
  });
});
