// Tests of src/workers/kuberuntime/sync-pod.ts's new-pod order: the first container is created while the
// sandbox is still starting (Docker creates a container in a created sandbox's namespaces), and no
// container starts before the sandbox has started; a sandbox that fails to start takes the
// container created meanwhile with it; the sandbox step is recorded before the steps of the
// containers that went on while it started. Fake runtime, the sandbox's start held by the test.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type PodSyncResult, type WorkerTask } from '../../../src/shared/messages.js';
import { newFakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import { withOverrides } from '../../../src/workers/runtime/override.js';
import { createWorkerHandler } from '../../../src/workers/sync.worker.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A worker over the fake runtime whose first start (the sandbox's) waits for `release()`, or fails with `failSandboxStart`; one container `a` of `image`. */
function setup(failSandboxStart = false, image = 'busybox:1', imagePullPolicy = 'IfNotPresent') {
  const rootDir = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-sandbox-overlap-'));
  dirs.push(rootDir);
  const fake = newFakeRuntime({ images: ['pause:1', 'busybox:1'] });
  const order: string[] = [];
  /** The image references checked, in order (kept apart from `order`, whose assertions are about starts). */
  const checked: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  let starts = 0;
  const runtime = withOverrides(fake, {
    imageExists: async (ref) => {
      const found = await fake.imageExists(ref);
      checked.push(ref);
      return found;
    },
    createContainer: async (spec) => {
      const id = await fake.createContainer(spec);
      order.push(`created ${spec.name.includes('_POD_') ? 'sandbox' : 'container'}`);
      return id;
    },
    startContainer: async (id) => {
      if (starts++ === 0) {
        order.push('sandbox start begun');
        await held;
        if (failSandboxStart) throw new Error('OCI runtime create failed: sandbox refused');
        await fake.startContainer(id);
        order.push('sandbox started');
        return;
      }
      await fake.startContainer(id);
      order.push('container started');
    },
  });
  const handler = createWorkerHandler({ protocol: PROTOCOL_VERSION, runtime: 'fake', dockerSocketPath: '', nodeName: 'n1', rootDir, podInfraContainerImage: 'pause:1', logLevel: 'silent' }, runtime);
  const pod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { restartPolicy: 'Always', containers: [{ name: 'a', image, imagePullPolicy }] } };
  const sync = async () => {
    const r = await handler({ kind: 'syncPod', protocol: PROTOCOL_VERSION, pod, backoff: {}, hostIp: '127.0.0.1', deadlineMs: Date.now() + 60_000 } as WorkerTask);
    if (!r.ok) throw new Error(r.error.message);
    return r.value as PodSyncResult;
  };
  /** Resolves once `what` is in `order` (a macrotask at a time; the fake answers in microtasks). */
  const until = async (what: string, list = order) => {
    for (let i = 0; i < 1000 && !list.includes(what); i++) await new Promise((r) => setTimeout(r, 1));
  };
  return { fake, order, checked, release, sync, until };
}

describe('syncPod of a new pod: sandbox start and first container create overlap', () => {
  it('creates the container while the sandbox starts and starts it only after the sandbox has started', async () => {
    const t = setup();
    const result = t.sync();
    await t.until('created container');
    expect(t.order).toEqual(['created sandbox', 'sandbox start begun', 'created container']);
    t.release();
    const r = await result;
    expect(t.order).toEqual(['created sandbox', 'sandbox start begun', 'created container', 'sandbox started', 'container started']);
    expect(r.steps.map((s) => `${s.action}:${s.ok}`)).toEqual(['CreatePodSandbox:true', 'StartContainer:true']);
    expect(r.runtimePod!.containers.map((c) => `${c.name}:${c.state}`)).toEqual(['a:running']);
  });

  it('removes the container created meanwhile when the sandbox fails to start, and records the failed sandbox', async () => {
    const t = setup(true);
    const result = t.sync();
    await t.until('created container');
    t.release();
    const r = await result;
    expect(t.order).not.toContain('container started');
    expect(r.steps.map((s) => `${s.action}:${s.ok}:${s.reason ?? ''}`)).toEqual(['CreatePodSandbox:false:CreatePodSandboxError']);
    expect(r.waiting.a?.reason).toBe('ContainerCreating');
    expect(r.runtimePod!.containers).toEqual([]);
  });

  it('records the sandbox step first when a container failed while the sandbox was starting, and the sandbox then failed too', async () => {
    const t = setup(true, 'absent:1', 'Never');
    const result = t.sync();
    await t.until('absent:1', t.checked); // the container's step fails while the sandbox's start is held
    await new Promise((r) => setTimeout(r, 0));
    t.release();
    const r = await result;
    expect(r.steps.map((s) => `${s.action}:${s.ok}:${s.reason ?? ''}`)).toEqual(['CreatePodSandbox:false:CreatePodSandboxError', 'PullImage:false:ErrImageNeverPull']);
  });
});
