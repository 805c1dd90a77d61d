// The CRI calls one syncPodCri makes (issue #42 item 1): after starts alone, the pod is not read
// again whole — the sandbox status RunPodSandbox's step read is not asked twice, only the containers
// the sync created get a ContainerStatus, and each image one ImageStatus per sync — and what it returns is
// what a whole read (getCriRuntimePod) returns. On the Docker implementation of the CRI over the
// in-memory fake engine (no engine needed), the runtime's calls counted through a Proxy.
import { describe, expect, it } from 'vitest';
import { criFakeDeps } from './fake-deps.js';
import type { Pod } from '../../../src/shared/api.js';
import type { CriSyncDeps } from '../../../src/workers/kuberuntime/kill-pod.js';
import { getCriRuntimePod } from '../../../src/workers/kuberuntime/runtime-pod.js';
import { syncPodCri } from '../../../src/workers/kuberuntime/sync-pod.js';
import { imageStatusOnce } from '../../../src/workers/kuberuntime/image-status-once.js';
import { realClock } from '../../../src/shared/clock.js';
import { syncPodTask } from '../../support/sync-worker.js';

/** `target` with each method call's name pushed on `calls`. */
function counted<T extends object>(target: T, calls: string[]): T {
  return new Proxy(target, {
    get(t, k) {
      const v = Reflect.get(t, k) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(String(k));
        return (v as (...a: unknown[]) => unknown).apply(t, args);
      };
    },
  });
}

async function setUp() {
  const { fake, nr, deps: base } = await criFakeDeps('kts-sync-cri-calls-');
  const calls: string[] = [];
  const deps: CriSyncDeps = { ...base, runtime: counted(nr.runtime, calls), images: counted(nr.images, calls), clock: realClock };
  /** The calls since the last take, sorted (their order is the syncer's; parallel reads may interleave). */
  const take = () => calls.splice(0).sort();
  return { fake, deps, nr, take };
}

const container = (name: string) => ({
  name,
  image: 'kubelet-ts/busybox:1.35',
  imagePullPolicy: 'IfNotPresent' as const,
  command: ['sleep', '3600'],
});
const pod: Pod = {
  metadata: { name: 'web', namespace: 'prod', uid: 'uid-calls' },
  spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 7, containers: [container('app'), container('side')] },
};

describe('syncPodCri reads back only what it started', () => {
  it('a first start: one read of the pod before, the sandbox status once, one ContainerStatus per created container, one ImageStatus of their one image', async () => {
    const { deps, nr, take } = await setUp();
    const r = await syncPodCri(deps, syncPodTask(pod));
    expect(r.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual([
      'CreatePodSandbox POD true',
      'StartContainer app true',
      'StartContainer side true',
    ]);
    expect(take()).toEqual(
      [
        'listPodSandbox',
        'listContainers',
        'runPodSandbox',
        'podSandboxStatus',
        'imageStatus',
        'createContainer',
        'startContainer',
        'containerStatus',
        'createContainer',
        'startContainer',
        'containerStatus',
      ].sort(),
    );
    // What it returned is what a whole read of the pod says.
    const whole = await getCriRuntimePod(nr.runtime, 'node-a', 'uid-calls');
    expect(r.runtimePod).toEqual(whole.runtimePod);
    expect(r.runtimePod).toMatchObject({ name: 'web', namespace: 'prod', terminationGracePeriodSeconds: 7 });
  });

  it('a new pod the main thread knows absent (knownAbsent): no list calls before the start, the same pod after it', async () => {
    const { deps, nr, take } = await setUp();
    const r = await syncPodCri(deps, syncPodTask(pod, { knownAbsent: true }));
    expect(r.steps.filter((s) => !s.ok)).toEqual([]);
    const calls = take();
    expect(calls.filter((c) => c === 'listContainers' || c === 'listPodSandbox')).toEqual([]);
    expect(calls.filter((c) => c === 'containerStatus')).toHaveLength(2);
    expect(r.runtimePod).toEqual((await getCriRuntimePod(nr.runtime, 'node-a', 'uid-calls')).runtimePod);
  });

  it('a restart of one container: ContainerStatus of the new one only, the running one and the exited one kept from the first read', async () => {
    const { fake, deps, nr, take } = await setUp();
    const first = await syncPodCri(deps, syncPodTask(pod));
    const app = first.runtimePod!.containers.find((c) => c.name === 'app')!;
    fake.exit(app.id, 3);
    take();
    const second = await syncPodCri(deps, syncPodTask(pod));
    expect(second.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['StartContainer app true']);
    const calls = take();
    // The read before the sync: the sandbox and the two containers; after it: the new container alone.
    expect(calls.filter((c) => c === 'containerStatus')).toHaveLength(3);
    expect(calls.filter((c) => c === 'podSandboxStatus')).toHaveLength(1);
    expect(calls.filter((c) => c === 'listContainers' || c === 'listPodSandbox')).toHaveLength(2);
    const whole = await getCriRuntimePod(nr.runtime, 'node-a', 'uid-calls');
    expect(second.runtimePod).toEqual(whole.runtimePod);
    expect(second.runtimePod!.containers.filter((c) => c.name === 'app').map((c) => [c.restartCount, c.state, c.exitCode])).toEqual([
      [1, 'running', 0],
      [0, 'exited', 3],
    ]);
  });

  it('a sync that kills reads the whole pod again', async () => {
    const { deps, take } = await setUp();
    await syncPodCri(deps, syncPodTask(pod));
    take();
    const changed: Pod = {
      ...pod,
      spec: { ...pod.spec!, containers: [{ ...container('app'), command: ['sleep', '3601'] }, container('side')] },
    };
    const r = await syncPodCri(deps, syncPodTask(changed));
    expect(r.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['KillContainer app true', 'StartContainer app true']);
    const calls = take();
    expect(calls.filter((c) => c === 'listPodSandbox')).toHaveLength(2);
    expect(r.runtimePod!.containers.filter((c) => c.name === 'app').map((c) => c.state)).toEqual(['running', 'exited']);
  });
});

describe('imageStatusOnce', () => {
  it('answers an image once, forgets it after a pull, and does not keep a failure', async () => {
    const { nr } = await setUp();
    const calls: string[] = [];
    let fail = true;
    const base = counted(nr.images, calls);
    const images = imageStatusOnce({
      ...base,
      imageStatus: (spec, verbose, opts) => {
        if (spec.image === 'flaky' && fail) {
          calls.push('imageStatus');
          return Promise.reject(new Error('flaky'));
        }
        return base.imageStatus(spec, verbose, opts);
      },
      pullImage: async (i) => {
        calls.push('pullImage');
        return i.image ?? '';
      },
    });
    const a = await images.imageStatus({ image: 'kubelet-ts/busybox:1.35' });
    const b = await images.imageStatus({ image: 'kubelet-ts/busybox:1.35' });
    expect(b).toBe(a);
    expect(calls).toEqual(['imageStatus']);
    expect((await images.imageStatus({ image: 'kubelet-ts/pause:1.0' })).image).not.toBeNull();
    expect(calls).toHaveLength(2);
    await images.pullImage({ image: 'kubelet-ts/busybox:1.35' });
    await images.imageStatus({ image: 'kubelet-ts/busybox:1.35' });
    expect(calls.filter((c) => c === 'imageStatus')).toHaveLength(3);
    await expect(images.imageStatus({ image: 'flaky' })).rejects.toThrow('flaky');
    fail = false;
    await images.imageStatus({ image: 'flaky' });
    expect(calls.filter((c) => c === 'imageStatus')).toHaveLength(5);
  });

  it('does not keep an answer that the image is absent: another thread may pull it meanwhile', async () => {
    // The cross-thread pull lock re-checks presence once the other thread's pull is over
    // (pullUnderLock): a kept "absent" made every waiting thread pull the image again (CI, containerd).
    const { nr } = await setUp();
    const calls: string[] = [];
    const images = imageStatusOnce(counted(nr.images, calls));
    expect((await images.imageStatus({ image: 'not-here:1' })).image).toBeNull();
    expect((await images.imageStatus({ image: 'not-here:1' })).image).toBeNull();
    expect(calls).toEqual(['imageStatus', 'imageStatus']);
  });
});
