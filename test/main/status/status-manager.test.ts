import { beforeEach, describe, expect, it, vi } from 'vitest';
import { newStatusManager, type PodStatusChange } from '../../../src/main/status/status-manager.js';
import type { Pod, PodStatus } from '../../../src/shared/api.js';
import { stableHash } from '../../../src/shared/hash.js';

// Counts what the status manager hashes (the real hash, spied on): it should hash nothing.
vi.mock('../../../src/shared/hash.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../src/shared/hash.js')>();
  return { ...actual, stableHash: vi.fn(actual.stableHash) };
});

const mkPod = (uid: string, image = 'busybox:1'): Pod => ({
  metadata: { name: `p-${uid}`, namespace: 'default', uid },
  spec: { containers: [{ name: 'main', image }] },
});
const running = (): PodStatus => ({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
const pending = (): PodStatus => ({ phase: 'Pending' });

describe('status manager', () => {
  beforeEach(() => vi.mocked(stableHash).mockClear());

  it('updatePod publishes a write of the pod object at once with the stored status; equal content or an unknown pod publishes nothing (issue #39)', () => {
    const m = newStatusManager();
    const changes: PodStatusChange[] = [];
    m.subscribe((c) => changes.push(c));
    expect(m.updatePod(mkPod('a'))).toBe(false); // no status yet: its first setPodStatus publishes ADDED
    m.setPodStatus(mkPod('a'), running());
    const base = mkPod('a');
    const deleting: Pod = {
      ...base,
      metadata: { ...base.metadata, labels: { x: 'y' }, deletionTimestamp: '2026-12-07T00:00:00Z', deletionGracePeriodSeconds: 3 },
    };
    expect(m.updatePod(deleting)).toBe(true);
    expect(m.updatePod({ ...deleting, metadata: { ...deleting.metadata } })).toBe(false);
    expect(changes.map((c) => [c.type, c.resourceVersion])).toEqual([
      ['ADDED', 1],
      ['MODIFIED', 2],
    ]);
    expect(changes[1].pod.metadata).toMatchObject({
      labels: { x: 'y' },
      deletionTimestamp: '2026-12-07T00:00:00Z',
      deletionGracePeriodSeconds: 3,
    });
    expect(changes[1].pod.status).toEqual(running());
    m.deletePodStatus('a');
    // DELETED carries the last object written, deletion marks included.
    expect(changes[2].type).toBe('DELETED');
    expect(changes[2].pod.metadata?.deletionTimestamp).toBe('2026-12-07T00:00:00Z');
  });

  it('stores a status only when it differs by content, publishing ADDED then MODIFIED with the next resourceVersion', () => {
    const m = newStatusManager();
    const changes: PodStatusChange[] = [];
    m.subscribe((c) => changes.push(c));
    const pod = mkPod('a');
    expect(m.setPodStatus(pod, pending())).toBe(true);
    expect(m.setPodStatus(pod, pending())).toBe(false); // an equal status in a new object
    expect(m.setPodStatus(pod, running())).toBe(true);
    expect(m.setPodStatus(pod, running())).toBe(false);
    expect(changes.map((c) => [c.type, c.resourceVersion, c.pod.status?.phase])).toEqual([
      ['ADDED', 1, 'Pending'],
      ['MODIFIED', 2, 'Running'],
    ]);
    expect(m.getPodStatus('a')).toEqual(running());
    expect(m.resourceVersion()).toBe(2);
  });

  it('compares a replaced pod by content: equal metadata and spec in new objects are no change, a changed spec is one', () => {
    const m = newStatusManager();
    const changes: PodStatusChange[] = [];
    m.subscribe((c) => changes.push(c));
    m.setPodStatus(mkPod('a'), running());
    expect(m.setPodStatus(mkPod('a'), running())).toBe(false);
    expect(m.setPodStatus(mkPod('a', 'busybox:2'), running())).toBe(true);
    expect(changes.map((c) => [c.type, c.pod.spec?.containers[0].image])).toEqual([
      ['ADDED', 'busybox:1'],
      ['MODIFIED', 'busybox:2'],
    ]);
    const labelled = mkPod('a', 'busybox:2');
    labelled.metadata!.labels = { app: 'web' };
    expect(m.setPodStatus(labelled, running())).toBe(true);
  });

  it('compares by content without serializing or hashing anything: the same pod, equal pods in new objects, a replaced pod (issue #42)', () => {
    const m = newStatusManager();
    const pod = mkPod('a');
    expect(m.setPodStatus(pod, pending())).toBe(true);
    expect(m.setPodStatus(pod, pending())).toBe(false);
    expect(m.setPodStatus(pod, running())).toBe(true);
    expect(m.setPodStatus(mkPod('a'), running())).toBe(false);
    expect(m.setPodStatus(mkPod('a', 'busybox:2'), running())).toBe(true);
    expect(m.updatePod(mkPod('a', 'busybox:2'))).toBe(false);
    expect(vi.mocked(stableHash)).not.toHaveBeenCalled();
  });

  it('an equal status with its keys in another order or an undefined field is no change; a reordered list is one', () => {
    const m = newStatusManager();
    const pod = mkPod('a');
    const status = (): PodStatus => ({
      phase: 'Running',
      hostIP: '10.0.0.1',
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Initialized', status: 'True' },
      ],
    });
    expect(m.setPodStatus(pod, status())).toBe(true);
    const reordered = { conditions: status().conditions, hostIP: '10.0.0.1', phase: 'Running', message: undefined } as PodStatus;
    expect(m.setPodStatus(pod, reordered)).toBe(false);
    expect(m.setPodStatus(pod, { ...status(), conditions: [...status().conditions!].reverse() })).toBe(true);
    expect(m.setPodStatus(pod, { ...status(), conditions: [...status().conditions!].reverse(), podIP: '' })).toBe(true);
    const relabelled = mkPod('a');
    relabelled.metadata!.labels = {};
    expect(m.setPodStatus(relabelled, { ...status(), conditions: [...status().conditions!].reverse(), podIP: '' })).toBe(true);
  });

  it('publishes DELETED with the last status and forgets the pod', () => {
    const m = newStatusManager();
    const changes: PodStatusChange[] = [];
    m.subscribe((c) => changes.push(c));
    m.setPodStatus(mkPod('a'), running());
    m.deletePodStatus('a');
    m.deletePodStatus('a');
    expect(changes.map((c) => [c.type, c.pod.status?.phase])).toEqual([
      ['ADDED', 'Running'],
      ['DELETED', 'Running'],
    ]);
    expect(m.getPodStatus('a')).toBeUndefined();
    expect(m.setPodStatus(mkPod('a'), running())).toBe(true);
  });
});
