// The sync worker's own work per pod start (issue #42 item 1), counted, never timed: a first sync
// of a one-container pod on the Docker implementation of the CRI over the in-memory fake engine,
// with the node's sandbox settings (DNS, pod cgroup on a fake cgroup mount). Each spec hash is a
// canonical JSON serialisation (safe-stable-stringify) and a SHA-256; a pod start plans twice (the
// plan, then `settled`) and builds the sandbox's annotations: each spec is hashed once all the same.
// The node's memory capacity is read once per thread, as the kubelet reads its machine info once.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { hashContainer } from '../../../src/shared/hash.js';
import { sandboxHash } from '../../../src/workers/kubetypes/label-keys.js';
import { syncPodCri } from '../../../src/workers/kuberuntime/sync-pod.js';
import { syncPodTask } from '../../support/sync-worker.js';
import { criFakeDepsWithSandbox, oneContainerPod } from './fake-deps.js';

const counted = vi.hoisted(() => ({ on: false, stringify: [] as unknown[], totalmem: 0 }));
vi.mock('node:os', async (orig) => {
  const m = await orig<typeof import('node:os')>();
  const totalmem = () => {
    if (counted.on) counted.totalmem++;
    return m.totalmem();
  };
  return { ...m, totalmem, default: { ...m, totalmem } };
});
vi.mock('safe-stable-stringify', async (orig) => {
  const m = await orig<typeof import('safe-stable-stringify')>();
  const stringify = ((value: unknown, ...rest: unknown[]) => {
    if (counted.on) counted.stringify.push(value);
    return (m.stringify as (...a: unknown[]) => unknown)(value, ...rest);
  }) as typeof m.stringify;
  return { ...m, stringify, default: Object.assign(stringify, m.default) };
});

afterEach(() => {
  counted.on = false;
});

const pod = (uid: string): Pod => oneContainerPod(uid, `web-${uid}`);
/** A new pod's task after a relist showed none of it (knownAbsent), as the main thread sends in a start burst. */
const task = (p: Pod) => syncPodTask(p, { knownAbsent: true });

describe("the sync worker's own work per pod start", () => {
  it('hashes the container spec once and the sandbox once, and labels both with those hashes', async () => {
    const { deps } = await criFakeDepsWithSandbox('kts-pod-start-work-');
    await syncPodCri(deps, task(pod('uid-warm'))); // the thread's one-off reads first
    const p = pod('uid-hash');
    counted.stringify.length = 0;
    counted.totalmem = 0;
    counted.on = true;
    const r = await syncPodCri(deps, task(p));
    counted.on = false;
    expect(r.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['CreatePodSandbox POD true', 'StartContainer app true']);
    expect(r.settled).toBe(true);
    // What was serialised: the container spec once, the sandbox's hashed fields once (before: the
    // container four times — two plans, each for its hash check and its backoff key — and the sandbox twice).
    expect(counted.stringify).toHaveLength(2);
    expect(counted.stringify).toContain(p.spec!.containers[0]);
    // The same hashes as before on what the runtime holds.
    expect(r.runtimePod?.containers.map((c) => c.hash)).toEqual([hashContainer(p.spec!.containers[0])]);
    expect(r.runtimePod?.sandboxes.map((s) => s.hash)).toEqual([sandboxHash(p)]);
    // The node's memory capacity (the container's oom_score_adj) was read by the thread's first
    // start, not again (before: os.totalmem() at every container start).
    expect(counted.totalmem).toBe(0);
  });

  it('a spec changed in place between two syncs is hashed again: the running container is replaced', async () => {
    const { deps } = await criFakeDepsWithSandbox('kts-pod-start-work-');
    const p = pod('uid-change');
    const first = await syncPodCri(deps, task(p));
    expect(first.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['CreatePodSandbox POD true', 'StartContainer app true']);
    p.spec!.containers[0].command = ['sleep', '7200'];
    const second = await syncPodCri(deps, syncPodTask(p, { knownAbsent: false }));
    expect(second.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toContain('StartContainer app true');
    expect(second.runtimePod?.containers.find((c) => c.state === 'running')?.hash).toBe(hashContainer(p.spec!.containers[0]));
  });
});
