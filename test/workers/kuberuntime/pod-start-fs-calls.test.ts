// The file-system calls of a pod start (issue #42 item 1): a first sync of a one-container BestEffort
// pod on the Docker implementation of the CRI over the in-memory fake engine makes each of the pod's
// directories and files once, synchronously on the worker thread (no FileHandle, no threadpool hop:
// workers/kubetypes/pod-files.ts), writes only the pod cgroup's limits that differ from a fresh
// cgroup's, and a second sync of the running pod touches nothing. Every node:fs and node:fs/promises
// call is recorded through vi.mock, with its path relative to the test's root dir and cgroup mount.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { syncPodCri } from '../../../src/workers/kuberuntime/sync-pod.js';
import { removePodCgroup } from '../../../src/workers/cm/pod-cgroup.js';
import { syncPodTask } from '../../support/sync-worker.js';
import { criFakeDepsWithSandbox, fakeCgroupMount, oneContainerPod } from './fake-deps.js';

const fsCalls = vi.hoisted(() => {
  const state = { on: false, calls: [] as string[] };
  /** `mod` with each lower-case function recording `<tag>.<name> <first argument>` while `state.on`. */
  const wrap = (mod: Record<string, unknown>, tag: string): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(mod).map(([k, v]) => [
        k,
        typeof v === 'function' && /^[a-z]/.test(k)
          ? (...a: unknown[]) => {
              if (state.on) state.calls.push(`${tag}.${k} ${typeof a[0] === 'string' ? a[0] : `<${typeof a[0]}>`}`);
              return (v as (...x: unknown[]) => unknown)(...a);
            }
          : v,
      ]),
    );
  return { state, wrap };
});
vi.mock('node:fs/promises', async (orig) => {
  const w = fsCalls.wrap(await orig<Record<string, unknown>>(), 'promises');
  return { ...w, default: w };
});
vi.mock('node:fs', async (orig) => {
  const m = await orig<Record<string, unknown>>();
  const w = { ...fsCalls.wrap(m, 'fs'), promises: fsCalls.wrap(m.promises as Record<string, unknown>, 'promises') };
  return { ...w, default: w };
});

afterEach(() => {
  fsCalls.state.on = false;
});

const pod: Pod = oneContainerPod('uid-fs');

async function setUp() {
  const { deps, mount } = await criFakeDepsWithSandbox('kts-fs-calls-');
  /** The calls recorded while `fn` ran, paths relative to the root dir ($ROOT) and the cgroup mount ($CG), temporary names as `.tmp-*`. */
  const record = async (fn: () => Promise<unknown>): Promise<string[]> => {
    fsCalls.state.calls.length = 0;
    fsCalls.state.on = true;
    try {
      await fn();
    } finally {
      fsCalls.state.on = false;
    }
    return fsCalls.state.calls.map((c) =>
      c
        .replaceAll(deps.rootDir, '$ROOT')
        .replaceAll(mount, '$CG')
        .replace(/\.tmp-[^/]*$/, '.tmp-*'),
    );
  };
  return { deps, mount, record };
}

describe('the file-system calls of a pod start', () => {
  it('a first start makes each directory and file of the pod once, synchronously, and writes only the cgroup limits a fresh cgroup lacks', async () => {
    const { deps, record } = await setUp();
    // The thread's one-off reads (cgroup support of the mount, /proc/self for the oom_score_adj floor) come before.
    await record(() => syncPodCri(deps, syncPodTask({ ...pod, metadata: { ...pod.metadata, uid: 'uid-warm' } })));
    const calls = await record(() => syncPodCri(deps, syncPodTask(pod)));
    expect(calls).toEqual([
      // The pod cgroup in each hierarchy (kubepods/besteffort is there from the first pod), cpu.shares 2 its one limit.
      'fs.mkdirSync $CG/cpu/kts/kubepods/besteffort/poduid-fs',
      'fs.mkdirSync $CG/memory/kts/kubepods/besteffort/poduid-fs',
      'fs.mkdirSync $CG/pids/kts/kubepods/besteffort/poduid-fs',
      'fs.writeFileSync $CG/cpu/kts/kubepods/besteffort/poduid-fs/cpu.shares',
      // The node's resolv.conf (its size checked first), the pod's log directory.
      'fs.openSync $ROOT/node-resolv.conf',
      'fs.fstatSync <number>',
      'fs.readFileSync <number>',
      'fs.closeSync <number>',
      'fs.mkdirSync $ROOT/pod-logs/prod_web_uid-fs',
      // resolv.conf: the pod directory made when the create says it is missing.
      'fs.openSync $ROOT/pods/uid-fs/resolv.conf',
      'fs.mkdirSync $ROOT/pods/uid-fs',
      'fs.openSync $ROOT/pods/uid-fs/resolv.conf',
      'fs.writeSync <number>',
      'fs.fchmodSync <number>',
      'fs.closeSync <number>',
      // etc-hosts, created in place: no container mounts it yet.
      'fs.openSync $ROOT/pods/uid-fs/etc-hosts',
      'fs.writeSync <number>',
      'fs.fchmodSync <number>',
      'fs.closeSync <number>',
      // The termination-message file of attempt 0.
      'fs.openSync $ROOT/pods/uid-fs/containers/app/0',
      'fs.mkdirSync $ROOT/pods/uid-fs/containers/app',
      'fs.openSync $ROOT/pods/uid-fs/containers/app/0',
      'fs.fchmodSync <number>',
      'fs.closeSync <number>',
      // The container's log directory.
      'fs.mkdirSync $ROOT/pod-logs/prod_web_uid-fs/app',
    ]);
  });

  it("an emptyDir is made and given its mode once, by the volume manager, not again at the container's start", async () => {
    const { deps, record } = await setUp();
    const withVolume: Pod = {
      ...pod,
      spec: {
        ...pod.spec!,
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [{ ...pod.spec!.containers[0], volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
      },
    };
    const calls = await record(() => syncPodCri(deps, syncPodTask(withVolume)));
    // Each directory's mkdir tried first, its missing parents made when it says ENOENT (the
    // syscalls of a recursive mkdir), then the emptyDir's chmod to 0777 whatever the umask.
    expect(calls.filter((c) => c.includes('/volumes'))).toEqual([
      'fs.mkdirSync $ROOT/pods/uid-fs/volumes',
      'fs.mkdirSync $ROOT/pods/uid-fs/volumes',
      'fs.mkdirSync $ROOT/pods/uid-fs/volumes/kubernetes.io~empty-dir/scratch',
      'fs.mkdirSync $ROOT/pods/uid-fs/volumes/kubernetes.io~empty-dir',
      'fs.mkdirSync $ROOT/pods/uid-fs/volumes/kubernetes.io~empty-dir/scratch',
      'fs.chmodSync $ROOT/pods/uid-fs/volumes/kubernetes.io~empty-dir/scratch',
    ]);
  });

  it("a second sync of a running pod with a configMap volume reads the volume's payload and makes no directory", async () => {
    const { deps, record } = await setUp();
    const withConfig: Pod = {
      ...pod,
      spec: {
        ...pod.spec!,
        volumes: [{ name: 'conf', configMap: { name: 'app-conf' } }],
        containers: [{ ...pod.spec!.containers[0], volumeMounts: [{ name: 'conf', mountPath: '/conf' }] }],
      },
    };
    const configObjects = {
      configMaps: { 'app-conf': { metadata: { name: 'app-conf', namespace: 'prod' }, data: { a: '1' } } },
      secrets: {},
    };
    const first = await syncPodCri(deps, syncPodTask(withConfig, { configObjects }));
    expect(first.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['CreatePodSandbox POD true', 'StartContainer app true']);
    const calls = await record(() => syncPodCri(deps, syncPodTask(withConfig, { configObjects })));
    expect(calls.filter((c) => /mkdir|write|open|chmod|rename|symlink/i.test(c))).toEqual(['fs.mkdirSync $ROOT/pods/uid-fs/volumes']);
  });

  it('a second sync of the running pod makes no file-system call', async () => {
    const { deps, record } = await setUp();
    const first = await syncPodCri(deps, syncPodTask(pod));
    expect(first.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['CreatePodSandbox POD true', 'StartContainer app true']);
    expect(await record(() => syncPodCri(deps, syncPodTask(pod)))).toEqual([]);
  });
});

describe("the file-system calls of a pod cgroup's removal", () => {
  it('one rmdir per hierarchy and QoS tier, synchronously: the child cgroups are looked for only where the rmdir says there are some', async () => {
    const mount = fakeCgroupMount();
    for (const c of ['cpu', 'memory', 'pids']) mkdirSync(join(mount, c, 'kts', 'kubepods', 'besteffort', 'poduid-rm'), { recursive: true });
    fsCalls.state.calls.length = 0;
    fsCalls.state.on = true;
    expect(await removePodCgroup('uid-rm', '/kts', mount)).toEqual([]);
    fsCalls.state.on = false;
    const tiers = (c: string) => ['', 'burstable/', 'besteffort/'].map((t) => `fs.rmdirSync $CG/${c}/kts/kubepods/${t}poduid-rm`);
    // Sorted: the hierarchies come in the order readdir gives them.
    expect(fsCalls.state.calls.map((c) => c.replaceAll(mount, '$CG')).sort()).toEqual(
      ['fs.readdirSync $CG', ...tiers('cpu'), ...tiers('memory'), ...tiers('pids')].sort(),
    );
  });
});
