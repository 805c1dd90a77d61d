// Unit tests of persistentVolumeClaim volumes on the worker side (src/workers/volumes/local-path.ts
// through setUpPodVolumes): the claim's directory linked into the pod, a missing claim a FailedMount
// that blocks the pod, a claim gone after the volume was set up a FailedMount that does not.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { normalizeConfigObject } from '../../../src/shared/config-objects.js';
import type { PodConfigObjects } from '../../../src/shared/sync-tasks.js';
import { claimDir, type PersistentVolumeClaim } from '../../../src/shared/pvc.js';
import { claimVolumeHostPath } from '../../../src/workers/volumes/local-path.js';
import { setUpPodVolumes } from '../../../src/workers/volumes/pod-volumes.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const claim = {
  ...(normalizeConfigObject({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  }).object as PersistentVolumeClaim),
};
claim.metadata = { ...claim.metadata, uid: '0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b' };
const pod: Pod = {
  metadata: { name: 'p', namespace: 'default', uid: 'pod-uid-1' },
  spec: { containers: [], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] },
};
const objects = (c: PersistentVolumeClaim | null): PodConfigObjects => ({ configMaps: {}, secrets: {}, claims: { data: c } });

describe('persistentVolumeClaim volumes (worker)', () => {
  it('links the claim directory into the pod; a claim gone later is a FailedMount that does not block the pod', async () => {
    const rootDir = await mkdtemp(join(tmpdir(), 'kts-local-path-'));
    dirs.push(rootDir);
    const ctx = { rootDir, nodeName: 'n', hostIp: '127.0.0.1' };
    const r = await setUpPodVolumes(pod, objects(claim), ctx);
    expect(r).toEqual({ unmounted: {}, events: [] });
    expect(await claimVolumeHostPath(rootDir, 'pod-uid-1', 'v')).toBe(claimDir(rootDir, claim));
    await writeFile(join(await claimVolumeHostPath(rootDir, 'pod-uid-1', 'v'), 'f'), 'x');
    // Again: idempotent, the data kept.
    expect(await setUpPodVolumes(pod, objects(claim), ctx)).toEqual({ unmounted: {}, events: [] });
    expect(await readFile(join(claimDir(rootDir, claim), 'f'), 'utf8')).toBe('x');
    const gone = await setUpPodVolumes(pod, objects(null), ctx);
    expect(gone.unmounted).toEqual({});
    expect(gone.events).toEqual([
      {
        type: 'Warning',
        reason: 'FailedMount',
        message: 'MountVolume.SetUp failed for volume "v" : persistentvolumeclaim "data" not found',
      },
    ]);
  });

  it('a missing claim, one being deleted, or one another pod holds blocks the pod with the reason', async () => {
    const rootDir = await mkdtemp(join(tmpdir(), 'kts-local-path-'));
    dirs.push(rootDir);
    const ctx = { rootDir, nodeName: 'n', hostIp: '127.0.0.1' };
    expect((await setUpPodVolumes(pod, objects(null), ctx)).unmounted).toEqual({
      v: 'MountVolume.SetUp failed for volume "v" : persistentvolumeclaim "data" not found',
    });
    expect((await setUpPodVolumes(pod, undefined, ctx)).unmounted).toEqual({
      v: 'MountVolume.SetUp failed for volume "v" : persistentvolumeclaim "data" not found',
    });
    const deleting = { ...claim, metadata: { ...claim.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
    expect((await setUpPodVolumes(pod, objects(deleting), ctx)).unmounted).toEqual({
      v: 'MountVolume.SetUp failed for volume "v" : persistentvolumeclaim "data" is being deleted',
    });
    const held = { ...objects(claim), claimsRefused: { data: 'held by pod "x"' } };
    expect((await setUpPodVolumes(pod, held, ctx)).unmounted).toEqual({ v: 'MountVolume.SetUp failed for volume "v" : held by pod "x"' });
  });
});
