// The read-back after a sync or kill (src/workers/kuberuntime/sync-read-back.ts) and SyncPodTask.knownAbsent:
// the worker handler over the FakeRuntime, with every list and inspect counted. Each case compares
// the runtime pod the task returned with a full read of the runtime afterwards (getRuntimePod), so
// a read-back that misses a change fails here.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../src/shared/api.js';
import { AgentError } from '../../../src/shared/errors.js';
import { PROTOCOL_VERSION, type PodSyncResult, type WorkerTask } from '../../../src/shared/messages.js';
import { newFakeRuntime, type FakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import { withOverrides } from '../../../src/workers/runtime/override.js';
import type { ContainerRuntime } from '../../../src/workers/runtime/runtime.js';
import { getRuntimePod } from '../../../src/workers/kuberuntime/runtime-pod.js';
import { recordSyncChanges } from '../../../src/workers/kuberuntime/sync-read-back.js';
import { createWorkerHandler, type WorkerHandler } from '../../../src/workers/sync.worker.js';

const NODE = 'node-fake';
let rootDir: string;
let fake: FakeRuntime;
let counted: ContainerRuntime;
let reads: { list: number; inspect: number };
let handler: WorkerHandler;
const now = 1_700_000_000_000;

const app = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: 'busybox:1', imagePullPolicy: 'IfNotPresent', ...extra });
function mkPod(containers: Container[]): Pod {
  return { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 5, containers } };
}

/** `runtime` with its list and inspect calls counted in `reads`. */
function counting(runtime: ContainerRuntime): ContainerRuntime {
  return withOverrides(runtime, {
    listContainers: (f) => { reads.list++; return runtime.listContainers(f); },
    inspectContainer: (id) => { reads.inspect++; return runtime.inspectContainer(id); },
  });
}

function handlerOver(runtime: ContainerRuntime): WorkerHandler {
  return createWorkerHandler({ protocol: PROTOCOL_VERSION, runtime: 'fake', dockerSocketPath: '', nodeName: NODE, rootDir, podInfraContainerImage: 'pause:1', logLevel: 'silent' }, runtime, { now: () => now });
}

async function run(task: object, h = handler): Promise<PodSyncResult> {
  const r = await h({ protocol: PROTOCOL_VERSION, ...task } as WorkerTask);
  if (!r.ok) throw new Error(r.error.message);
  return r.value as PodSyncResult;
}
const sync = (pod: Pod, over: object = {}, h = handler) => run({ kind: 'syncPod', pod, backoff: {}, hostIp: '127.0.0.1', deadlineMs: now + 60_000, ...over }, h);

/** What a full read (list and inspect of everything) shows of the pod now. */
const fullRead = () => getRuntimePod(fake, NODE, 'uid-1');

beforeEach(() => {
  rootDir = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-read-back-'));
  fake = newFakeRuntime({ images: ['pause:1', 'busybox:1'], now: () => now });
  reads = { list: 0, inspect: 0 };
  counted = counting(fake);
  handler = handlerOver(counted);
});
afterEach(() => rmSync(rootDir, { recursive: true, force: true }));

describe('the read-back of a sync', () => {
  it('a new pod known absent: no list call, one inspect per container it made, the same pod a full read shows', async () => {
    const r = await sync(mkPod([app('a'), app('b')]), { knownAbsent: true });
    expect(reads).toEqual({ list: 0, inspect: 3 });
    expect(r.runtimePod!.containers.map((c) => `${c.name}:${c.state}`).sort()).toEqual(['a:running', 'b:running']);
    expect(r.runtimePod!.sandboxes.map((c) => c.state)).toEqual(['running']);
    expect(r.runtimePod).toEqual(await fullRead());
  });

  it('a new pod not known absent: one list (the first read), none after its changes', async () => {
    const r = await sync(mkPod([app('a')]));
    expect(reads).toEqual({ list: 1, inspect: 2 });
    expect(r.runtimePod).toEqual(await fullRead());
  });

  it('a restart: the new attempt is inspected, the untouched sandbox keeps its first read, the dead attempt stays', async () => {
    const pod = mkPod([app('a'), app('b')]);
    const first = await sync(pod, { knownAbsent: true });
    fake.exit(first.runtimePod!.containers.find((c) => c.name === 'a')!.id, 2);
    reads = { list: 0, inspect: 0 };
    const r = await sync(pod);
    // The first read: one list and three inspects; the read-back: the new attempt of `a` only.
    expect(reads).toEqual({ list: 1, inspect: 4 });
    expect(r.runtimePod!.containers.filter((c) => c.name === 'a').map((c) => [c.attempt, c.state])).toEqual([[1, 'running'], [0, 'exited']]);
    expect(r.runtimePod).toEqual(await fullRead());
  });

  it('a create that failed falls back to a full read (Docker may have made the container)', async () => {
    const lossy = withOverrides(counted, {
      createContainer: async (spec) => {
        if (!spec.name.startsWith('k8s_a_')) return counted.createContainer(spec);
        await counted.createContainer(spec);
        throw new AgentError('ERR_RUNTIME', 'the answer to the create was lost');
      },
    });
    const r = await sync(mkPod([app('a')]), { knownAbsent: true }, handlerOver(lossy));
    expect(reads.list).toBe(1);
    expect(r.runtimePod!.containers.map((c) => [c.name, c.state])).toEqual([['a', 'created']]);
    expect(r.runtimePod).toEqual(await fullRead());
  });

  it('a kill with remove reads nothing back after the removals', async () => {
    await sync(mkPod([app('a')]), { knownAbsent: true });
    reads = { list: 0, inspect: 0 };
    const r = await run({ kind: 'killPod', podUid: 'uid-1', gracePeriodSeconds: 0, remove: true, hostIp: '127.0.0.1' });
    expect(r.runtimePod).toBeNull();
    expect(reads).toEqual({ list: 1, inspect: 2 });
    expect(await fullRead()).toBeNull();
  });

  it('a kill without remove inspects what it stopped and shows it exited', async () => {
    await sync(mkPod([app('a')]), { knownAbsent: true });
    const r = await run({ kind: 'killPod', podUid: 'uid-1', gracePeriodSeconds: 0, remove: false, hostIp: '127.0.0.1' });
    expect(r.runtimePod!.containers.map((c) => c.state)).toEqual(['exited']);
    expect(r.runtimePod).toEqual(await fullRead());
  });
});

describe('recordSyncChanges', () => {
  it('keeps an inspect made after the last change and drops one made while a change was under way', async () => {
    let releaseStop!: () => void;
    const slowStop = withOverrides(counted, {
      stopContainer: async (id, t) => { await new Promise<void>((r) => (releaseStop = r)); return counted.stopContainer(id, t); },
    });
    const id = await fake.createContainer({ name: 'k8s_a_web_default_uid-1_0', image: 'busybox:1', labels: { 'io.kubernetes.pod.uid': 'uid-1' }, hostConfig: {} } as never);
    await fake.startContainer(id);
    const rec = recordSyncChanges(slowStop);
    const first = [await fake.inspectContainer(id)];
    await rec.runtime.inspectContainer(id); // before any change: kept, and nothing touched yet
    expect(await rec.readBack(first)).toEqual(first);
    const stopping = rec.runtime.stopContainer(id, 0);
    await rec.runtime.inspectContainer(id); // mid-stop: shows it running, must not be kept
    releaseStop();
    await stopping;
    reads = { list: 0, inspect: 0 };
    const back = await rec.readBack(first);
    expect(reads.inspect).toBe(1);
    expect(back!.map((d) => d.status)).toEqual(['exited']);
  });
});
