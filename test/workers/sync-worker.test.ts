/** The worker entry and syncPod driven in-process over the in-memory FakeRuntime (no Docker). */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/shared/api.js';
import { PROTOCOL_VERSION, type WorkerBootstrap } from '../../src/shared/thread-wire.js';
import type { PodSyncResult, SyncPodTask, WorkerTask } from '../../src/shared/sync-tasks.js';
import { kNodeNameLabel, kPodUidLabel } from '../../src/workers/kubetypes/label-keys.js';
import { newFakeRuntime, type FakeRuntime } from '../../src/workers/runtime/fake/fake-runtime.js';
import { kDeadlineRequeueMs } from '../../src/workers/kuberuntime/sync-pod.js';
import runTask, { createWorkerHandler, type WorkerHandler } from '../../src/workers/sync.worker.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { fakeWorkerBootstrap, syncPodTask } from '../support/sync-worker.js';

const NODE = 'node-fake';
let rootDir: string;
let fake: FakeRuntime;
let handler: WorkerHandler;
let clock: FakeClock;

function bootstrap(over: Partial<WorkerBootstrap> = {}): WorkerBootstrap {
  return fakeWorkerBootstrap(rootDir, { nodeName: NODE, ...over });
}

function mkPod(containers: Container[], spec: Partial<Pod['spec']> = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
    spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 5, containers, ...spec },
  };
}
const app = (name: string, extra: Partial<Container> = {}): Container => ({
  name,
  image: 'busybox:1',
  imagePullPolicy: 'IfNotPresent',
  ...extra,
});

/** A syncPod task for `pod` (syncPodTask) with its deadline a minute ahead on the worker's fake clock. */
const syncTask = (pod: Pod, over: Partial<SyncPodTask> = {}): SyncPodTask =>
  syncPodTask(pod, { deadlineMs: clock.now() + 60_000, ...over });

async function sync(pod: Pod, over: Partial<SyncPodTask> = {}): Promise<PodSyncResult> {
  const r = await handler(syncTask(pod, over));
  if (!r.ok) throw new Error(r.error.message);
  return r.value as PodSyncResult;
}

beforeEach(() => {
  rootDir = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-fake-'));
  clock = new FakeClock(1_700_000_000_000);
  fake = newFakeRuntime({ images: ['pause:1', 'busybox:1'], clock });
  handler = createWorkerHandler(bootstrap(), fake, { clock });
});
afterEach(() => rmSync(rootDir, { recursive: true, force: true }));

describe('sync.worker handler', () => {
  it('refuses a task of another protocol version without throwing', async () => {
    const r = await handler({ kind: 'relist', protocol: PROTOCOL_VERSION + 1 } as WorkerTask);
    expect(r).toMatchObject({ ok: false, kind: 'relist', error: { code: 'ERR_PROTOCOL' } });
  });

  it('answers an unknown kind with ERR_PROTOCOL', async () => {
    const r = await handler({ kind: 'bogus', protocol: PROTOCOL_VERSION } as unknown as WorkerTask);
    expect(r).toMatchObject({ ok: false, kind: 'bogus', error: { code: 'ERR_PROTOCOL' } });
  });

  it('names the bad workerData field', () => {
    expect(() => createWorkerHandler(bootstrap({ rootDir: 'relative' }))).toThrow(/workerData\.rootDir/);
    expect(() => createWorkerHandler(bootstrap({ nodeName: '' }))).toThrow(/workerData\.nodeName/);
    expect(() => createWorkerHandler(bootstrap({ protocol: 99 }))).toThrow(/workerData\.protocol/);
  });

  it('the default export returns an error result when there is no valid workerData (main thread)', async () => {
    const r = await runTask({ kind: 'relist', protocol: PROTOCOL_VERSION });
    expect(r).toMatchObject({ ok: false, kind: 'relist', error: { code: 'ERR_INVALID_ARGUMENT' } });
  });

  it('maps an unreachable Docker socket to a retriable ERR_RUNTIME_UNAVAILABLE', async () => {
    const h = createWorkerHandler(bootstrap({ runtime: 'docker', dockerSocketPath: path.join(rootDir, 'no-such.sock') }));
    const r = await h({ kind: 'relist', protocol: PROTOCOL_VERSION });
    expect(r).toMatchObject({ ok: false, kind: 'relist', error: { code: 'ERR_RUNTIME_UNAVAILABLE', retriable: true } });
  });

  it('refuses a killPod whose UID is not a path segment, before touching anything', async () => {
    const r = await handler({ kind: 'killPod', protocol: PROTOCOL_VERSION, podUid: '../x', gracePeriodSeconds: 0, remove: true });
    expect(r).toMatchObject({ ok: false, error: { code: 'ERR_INVALID_ARGUMENT' } });
    expect(fake.calls).toEqual([]);
  });
});

describe('syncPod over the fake runtime', () => {
  it('creates the sandbox, then containers in spec order, with $(VAR) expansion', async () => {
    const pod = mkPod([
      app('a', {
        command: ['echo', '$(GREETING)'],
        env: [
          { name: 'GREETING', value: 'hi $(POD)' },
          { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        ],
      }),
      app('b'),
    ]);
    const r = await sync(pod);
    expect(fake.calls.filter((c) => c.startsWith('create:'))).toEqual([
      'create:k8s_POD_web_default_uid-1_0',
      'create:k8s_a_web_default_uid-1_0',
      'create:k8s_b_web_default_uid-1_0',
    ]);
    const a = r.runtimePod!.containers.find((c) => c.name === 'a')!;
    expect(fake.specOf(a.id)).toMatchObject({ entrypoint: ['echo', 'hi $(POD)'], env: ['GREETING=hi $(POD)', 'POD=web'] });
    expect(r.runtimePod!.sandboxes.map((s) => s.state)).toEqual(['running']);
    expect(r.requeueAfterMs).toBe(0);
  });

  it('stops at the deadline and asks for a requeue instead of overrunning', async () => {
    const r = await sync(mkPod([app('a')]), { deadlineMs: clock.now() - 1 });
    expect(r.steps).toEqual([]);
    expect(r.requeueAfterMs).toBe(kDeadlineRequeueMs);
    expect(fake.calls.some((c) => c.startsWith('create:'))).toBe(false);
  });

  it('reports CreateContainerConfigError for a hostPath Directory that does not exist, and starts the others', async () => {
    const pod = mkPod([app('bad', { volumeMounts: [{ name: 'h', mountPath: '/h' }] }), app('good')], {
      volumes: [{ name: 'h', hostPath: { path: path.join(rootDir, 'missing'), type: 'Directory' } }],
    });
    const r = await sync(pod);
    expect(r.waiting.bad.reason).toBe('CreateContainerConfigError');
    expect(r.waiting.bad.message).toMatch(/hostPath type check failed: .*missing is not a directory/);
    expect(r.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'Failed', fieldPath: 'spec.containers{bad}' }));
    expect(r.runtimePod!.containers.map((c) => c.name)).toEqual(['good']);
  });

  it('reports ErrImagePull when the image is absent and cannot be pulled', async () => {
    const r = await sync(mkPod([app('a', { image: 'absent:1' })]));
    expect(r.waiting.a.reason).toBe('ErrImagePull');
    expect(fake.calls).toContain('pull:absent:1');
  });

  it('restarts an exited container under Always with restartCount + 1 and keeps one dead attempt', async () => {
    const pod = mkPod([app('a')]);
    let r = await sync(pod);
    for (let attempt = 0; attempt < 2; attempt++) {
      fake.exit(r.runtimePod!.containers[0].id, 2);
      clock.step(600_000); // past any backoff
      r = await sync(pod, { backoff: r.backoff });
    }
    expect(r.runtimePod!.containers.map((c) => [c.restartCount, c.state])).toEqual([
      [2, 'running'],
      [1, 'exited'],
    ]);
    expect(fake.calls.filter((c) => c.startsWith('create:k8s_a'))).toEqual([
      'create:k8s_a_web_default_uid-1_0',
      'create:k8s_a_web_default_uid-1_1',
      'create:k8s_a_web_default_uid-1_2',
    ]);
  });

  it('never lists or touches containers of another node, even with the same pod UID', async () => {
    const foreign = await fake.createContainer({
      name: 'foreign',
      image: 'busybox:1',
      labels: { [kPodUidLabel]: 'uid-1', [kNodeNameLabel]: 'other' },
      hostConfig: {},
    });
    await fake.startContainer(foreign);
    const r = await sync(mkPod([app('a')]));
    expect(r.runtimePod!.containers.map((c) => c.name)).toEqual(['a']);
    const k = await handler({ kind: 'killPod', protocol: PROTOCOL_VERSION, podUid: 'uid-1', gracePeriodSeconds: 0, remove: true });
    expect(k).toMatchObject({ ok: true, value: { runtimePod: null } });
    expect((await fake.inspectContainer(foreign)).running).toBe(true);
  });
  it('recovers from a name conflict with a dead container of the same pod (created by a lost earlier call)', async () => {
    const pod = mkPod([app('a')]);
    let conflicted = false;
    const racing: FakeRuntime = {
      ...fake,
      async createContainer(spec) {
        if (!conflicted && spec.name.startsWith('k8s_a_')) {
          conflicted = true;
          // Another create of the same name landed (and died) just before ours.
          const id = await fake.createContainer(spec);
          await fake.startContainer(id);
          fake.exit(id, 0);
        }
        return fake.createContainer(spec);
      },
    };
    const h = createWorkerHandler(bootstrap(), racing, { clock });
    const r = await h(syncTask(pod));
    expect(r.ok).toBe(true);
    const v = (r as { value: PodSyncResult }).value;
    expect(v.steps.filter((s) => !s.ok)).toEqual([]);
    expect(v.runtimePod!.containers.map((c) => [c.name, c.state])).toEqual([['a', 'running']]);
  });
});

describe("syncPod with the main thread's cached runtime state", () => {
  it('answers from the cache without a runtime call when there is nothing to do', async () => {
    const pod = mkPod([app('a')]);
    const first = await sync(pod);
    fake.calls.length = 0;
    const r = await sync(pod, { cachedRuntimePod: first.runtimePod! });
    expect(fake.calls).toEqual([]);
    expect(r.steps).toEqual([]);
    expect(r.runtimePod).toEqual(first.runtimePod);
  });

  it('reads the runtime and acts when the cache shows work (a dead container to restart)', async () => {
    const pod = mkPod([app('a')]);
    const first = await sync(pod);
    fake.exit(first.runtimePod!.containers[0].id, 1);
    const dead = {
      ...first.runtimePod!,
      containers: first.runtimePod!.containers.map((c) => ({ ...c, state: 'exited' as const, exitCode: 1 })),
    };
    fake.calls.length = 0;
    const r = await sync(pod, { cachedRuntimePod: dead });
    expect(fake.calls).toContain('list');
    expect(r.steps.filter((s) => s.action === 'StartContainer' && s.ok)).toHaveLength(1);
    expect(r.runtimePod!.containers[0].restartCount).toBe(1);
  });

  it('a spec change is planned from the cache but carried out after reading the runtime', async () => {
    const pod = mkPod([app('a')]);
    const first = await sync(pod);
    fake.calls.length = 0;
    const changed = mkPod([app('a', { command: ['sleep', '1'] })]);
    const r = await sync(changed, { cachedRuntimePod: first.runtimePod! });
    expect(fake.calls).toContain('list');
    expect(r.steps.some((s) => s.action === 'KillContainer')).toBe(true);
  });
});

describe('syncPod: whether its next sync would change nothing (PodSyncResult.settled)', () => {
  it("a start sync that started everything is settled, and so is a sync from its result's cache", async () => {
    const pod = mkPod([app('a'), app('b')]);
    const first = await sync(pod);
    expect(first.steps.filter((s) => s.action === 'StartContainer' && s.ok)).toHaveLength(2);
    expect(first.settled).toBe(true);
    const again = await sync(pod, { cachedRuntimePod: first.runtimePod!, backoff: first.backoff });
    expect(again).toMatchObject({ steps: [], settled: true });
  });

  it('a start sync that leaves the next container to its next sync is not (a sidecar started first)', async () => {
    const pod = mkPod([app('a')], { initContainers: [app('proxy', { restartPolicy: 'Always' } as Partial<Container>)] });
    const first = await sync(pod);
    expect(first.runtimePod!.containers.map((c) => c.name)).toEqual(['proxy']);
    expect(first.settled).toBe(false);
    const second = await sync(pod, { cachedRuntimePod: first.runtimePod!, backoff: first.backoff });
    expect(second.runtimePod!.containers.map((c) => c.name).sort()).toEqual(['a', 'proxy']);
    expect(second.settled).toBe(true);
  });

  it('a sync that holds a container back in its restart backoff is not', async () => {
    const pod = mkPod([app('a')]);
    const first = await sync(pod);
    fake.exit(first.runtimePod!.containers[0].id, 1);
    const restarted = await sync(pod, { backoff: first.backoff });
    fake.exit(restarted.runtimePod!.containers.find((c) => c.state === 'running')!.id, 1);
    const held = await sync(pod, { backoff: restarted.backoff });
    expect(held.waiting.a?.reason).toBe('CrashLoopBackOff');
    expect(held.settled).toBe(false);
  });
});
