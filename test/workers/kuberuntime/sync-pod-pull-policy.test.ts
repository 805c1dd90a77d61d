// Tests of src/workers/kuberuntime/sync-pod.ts's image pull policy for a container whose imagePullPolicy is unset: the worker falls back to the shared core/v1 default (SetDefaults_Container, src/shared/defaults.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import type { PodSyncResult } from '../../../src/shared/sync-tasks.js';
import { newFakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import { createWorkerHandler } from '../../../src/workers/sync.worker.js';
import { fakeWorkerBootstrap, syncPodTask } from '../../support/sync-worker.js';

const kDigest = `sha256:${'1'.repeat(64)}`;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('syncPod with imagePullPolicy unset', () => {
  // Every image below is present in the fake runtime, whose pulls always fail: a pull shows as
  // ErrImagePull, no pull as a started container.
  it.each([
    ['busybox:1', 'IfNotPresent: no pull'],
    [`busybox@${kDigest}`, 'IfNotPresent: no pull'],
    [`busybox:latest@${kDigest}`, 'Always: pull'],
    ['busybox:latest', 'Always: pull'],
    ['busybox', 'Always: pull'],
  ])('%s → %s', async (image, expected) => {
    const rootDir = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-pull-policy-'));
    dirs.push(rootDir);
    const fake = newFakeRuntime({ images: ['pause:1', image] });
    const handler = createWorkerHandler(fakeWorkerBootstrap(rootDir), fake);
    const pod: Pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
      spec: { restartPolicy: 'Always', containers: [{ name: 'a', image }] },
    };
    const r = await handler(syncPodTask(pod));
    if (!r.ok) throw new Error(r.error.message);
    const value = r.value as PodSyncResult;
    if (expected.endsWith(': pull')) {
      expect(fake.calls).toContain(`pull:${image}`);
      expect(value.waiting.a?.reason).toBe('ErrImagePull');
    } else {
      expect(fake.calls.filter((c) => c.startsWith('pull:'))).toEqual([]);
      expect(value.runtimePod!.containers.map((c) => c.name)).toEqual(['a']);
    }
  });
});
