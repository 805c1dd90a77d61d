// Issue 38 finding 10: a malformed image reference waits with InvalidImageName before any runtime
// call, as the kubelet's EnsureImageExists (applyDefaultImageTag → ErrInvalidImageName), with its
// events recorded once per pod and image.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import type { PodSyncResult } from '../../../src/shared/sync-tasks.js';
import { newFakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import { createWorkerHandler } from '../../../src/workers/sync.worker.js';
import { imageReferenceError } from '../../../src/workers/images/image-reference.js';
import { fakeWorkerBootstrap, syncPodTask } from '../../support/sync-worker.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('imageReferenceError', () => {
  it.each([
    'busybox',
    'kubelet-ts/busybox:1.35',
    '127.0.0.1:5000/a/b:t',
    'localhost/x',
    '[::1]:5000/x',
    'registry.k8s.io/pause:3.9',
    `x@sha256:${'a'.repeat(64)}`,
    `x:t@sha256:${'a'.repeat(64)}`,
    'a__b',
    'a--b',
    'Registry.IO/x',
  ])('%s parses', (image) => {
    expect(imageReferenceError(image)).toBeUndefined();
  });

  it.each<[string, string]>([
    ['kubelet-ts/BusyBox:1.35', 'invalid reference format: repository name (kubelet-ts/BusyBox) must be lowercase'],
    ['Busybox', 'invalid reference format: repository name (library/Busybox) must be lowercase'],
    ['a::b', 'invalid reference format'],
    ['x:', 'invalid reference format'],
    [':t', 'invalid reference format'],
    ['a___b', 'invalid reference format'],
    ['-x', 'invalid reference format'],
    ['x@sha256:abc', 'invalid reference format'],
    [`x:${'t'.repeat(129)}`, 'invalid reference format'],
    ['a'.repeat(64), `invalid repository name (${'a'.repeat(64)}), cannot specify 64-byte hexadecimal strings`],
    [`r.io/${'a'.repeat(260)}`, 'repository name must not be more than 255 characters'],
  ])('%s is refused: %s', (image, why) => {
    expect(imageReferenceError(image)).toBe(`couldn't parse image name ${JSON.stringify(image)}: ${why}`);
  });
});

describe('syncPod with a malformed image reference', () => {
  it('waits with InvalidImageName, calls the runtime for no inspect or pull of it, and records its events on the first sync only', async () => {
    const rootDir = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-bad-ref-'));
    dirs.push(rootDir);
    const image = 'Bad::Ref';
    const fake = newFakeRuntime({ images: ['pause:1'] });
    const handler = createWorkerHandler(fakeWorkerBootstrap(rootDir), fake);
    const pod: Pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
      spec: { restartPolicy: 'Always', containers: [{ name: 'a', image }] },
    };
    const sync = async (backoff: PodSyncResult['backoff']) => {
      const r = await handler(syncPodTask(pod, { backoff }));
      if (!r.ok) throw new Error(r.error.message);
      return r.value as PodSyncResult;
    };
    const first = await sync({});
    const message = `Failed to apply default image tag "Bad::Ref": couldn't parse image name "Bad::Ref": invalid reference format: repository name (library/Bad) must be lowercase`;
    expect(first.waiting.a).toEqual({ reason: 'InvalidImageName', message });
    expect(first.events.filter((e) => e.type === 'Warning')).toEqual([
      { type: 'Warning', reason: 'InspectFailed', message, fieldPath: 'spec.containers{a}' },
      { type: 'Warning', reason: 'Failed', message: 'Error: InvalidImageName', fieldPath: 'spec.containers{a}' },
    ]);
    const second = await sync(first.backoff);
    expect(second.waiting.a).toEqual({ reason: 'InvalidImageName', message });
    expect(second.events.filter((e) => e.type === 'Warning')).toEqual([]);
    expect(fake.calls.filter((c) => c.includes(image))).toEqual([]);
  });
});
