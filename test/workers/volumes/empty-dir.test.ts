// The volume manager's emptyDir (workers/volumes/pod-volumes.ts): it sets a disk emptyDir up and
// never judges its usage. An emptyDir over its sizeLimit is the eviction manager's verdict alone
// (main/eviction/local-storage.ts, from the stats worker's figures), as upstream's
// emptyDirLimitEviction (pkg/kubelet/eviction/eviction_manager.go): issue #41 item 1.
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { emptyDirPath } from '../../../src/workers/kubetypes/pod-dirs.js';
import { diskUsageBytes, setUpPodVolumes } from '../../../src/workers/volumes/pod-volumes.js';
import { makeVolumeMounts } from '../../../src/workers/kuberuntime/run-container-options.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const pod: Pod = {
  metadata: { name: 'fill', namespace: 'default', uid: 'pod-uid-ed' },
  spec: { containers: [], volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1Mi' } }] },
};

describe('disk emptyDir with a sizeLimit (worker)', () => {
  it('is set up 0777 and, over its limit, still reports only what was set up: no eviction verdict from the worker', async () => {
    const rootDir = await mkdtemp(join(tmpdir(), 'kts-empty-dir-'));
    dirs.push(rootDir);
    const ctx = { rootDir, nodeName: 'n', hostIp: '127.0.0.1' };
    expect(await setUpPodVolumes(pod, undefined, ctx)).toEqual({ unmounted: {}, events: [] });
    const dir = emptyDirPath(rootDir, 'pod-uid-ed', 'scratch');
    expect((await stat(dir)).mode & 0o777).toBe(0o777);
    await writeFile(join(dir, 'big'), Buffer.alloc(3 * 2 ** 20, 1));
    // The usage is over the limit (the stats worker reports it so: workers/stats/node.ts)…
    expect(await diskUsageBytes(dir)).toBeGreaterThan(2 ** 20);
    // …and the sync's volume set-up says nothing about it: the eviction manager decides.
    expect(await setUpPodVolumes(pod, undefined, ctx)).toEqual({ unmounted: {}, events: [] });
  });
});

describe('a disk emptyDir under an fsGroup, synced again (pkg/volume/emptydir setupDir)', () => {
  it("keeps the setgid bit the container start's SetVolumeOwnership gave it, so that files made later still get the group", async () => {
    const rootDir = await mkdtemp(join(tmpdir(), 'kts-empty-dir-'));
    dirs.push(rootDir);
    const ctx = { rootDir, nodeName: 'n', hostIp: '127.0.0.1' };
    const p: Pod = {
      metadata: { name: 'grp', namespace: 'default', uid: 'pod-uid-grp' },
      spec: {
        securityContext: { fsGroup: 2345 },
        containers: [{ name: 'a', image: 'i', volumeMounts: [{ name: 'd', mountPath: '/d' }] }],
        volumes: [{ name: 'd', emptyDir: {} }],
      },
    };
    expect(await setUpPodVolumes(p, undefined, ctx)).toEqual({ unmounted: {}, events: [] });
    await makeVolumeMounts(p, p.spec!.containers[0], rootDir, 'spec.containers[0]');
    const dir = emptyDirPath(rootDir, 'pod-uid-grp', 'd');
    expect((await stat(dir)).mode & 0o7777).toBe(0o2777);
    // The periodic sync of the running pod.
    expect(await setUpPodVolumes(p, undefined, ctx)).toEqual({ unmounted: {}, events: [] });
    expect((await stat(dir)).mode & 0o7777).toBe(0o2777);
  });
});
