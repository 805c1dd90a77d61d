/**
 * syncPod / killPod / relist against the real dockerd (skipped when Docker is unreachable). Each
 * test uses its own node name, so it only ever sees containers it created, and removes them after.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../src/shared/api.js';
import { PROTOCOL_VERSION, type WorkerBootstrap, type WorkerResult } from '../../../src/shared/thread-wire.js';
import type { PodSyncResult, RelistResult } from '../../../src/shared/sync-tasks.js';
import type { RuntimePod } from '../../../src/shared/runtime-pod.js';
import { emptyDirPath } from '../../../src/workers/kubetypes/pod-dirs.js';
import { kNodeNameLabel, kPodUidLabel } from '../../../src/workers/kubetypes/label-keys.js';
import { getDockerRuntime } from '../../../src/workers/runtime/docker/docker-runtime.js';
import { getCriRuntimePod } from '../../../src/workers/kuberuntime/runtime-pod.js';
import { newDockerNodeRuntime } from '../../../src/workers/runtime/docker/docker-node-runtime.js';
import { scopeToNode } from '../../../src/workers/runtime/node-scope.js';
import { createWorkerHandler, type WorkerHandler } from '../../../src/workers/sync.worker.js';
import { syncPodTask } from '../../support/sync-worker.js';

const SOCKET = '/var/run/docker.sock';
const BUSYBOX = 'kubelet-ts/busybox:1.35';
const PAUSE = 'kubelet-ts/pause:1.0';
const docker = getDockerRuntime(SOCKET);

async function dockerReady(): Promise<boolean> {
  try {
    await docker.listContainers({ labels: ['kubelet-ts.test-probe'] });
    return (await docker.imageExists(BUSYBOX)) !== null && (await docker.imageExists(PAUSE)) !== null;
  } catch {
    return false;
  }
}
const ready = await dockerReady();

/** A container that runs until stopped (exits at once on SIGTERM). */
const kForever = 'trap "exit 0" TERM; while true; do sleep 0.2; done';

function ctr(name: string, script: string, extra: Partial<Container> = {}): Container {
  return { name, image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], ...extra };
}

function mkPod(containers: Container[], spec: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${randomBytes(3).toString('hex')}`, namespace: 'default', uid: randomUUID() },
    spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 2, containers, ...spec },
  };
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!ready)('workers against dockerd', () => {
  let node: string;
  let rootDir: string;
  let handler: WorkerHandler;
  const extraNodes: string[] = [];

  async function removeNodeContainers(n: string): Promise<void> {
    const list = await docker.listContainers({ labels: [`${kNodeNameLabel}=${n}`] });
    await Promise.all(list.map((c) => docker.removeContainer(c.id).catch(() => undefined)));
  }

  beforeEach(() => {
    node = `test-workers-${randomBytes(4).toString('hex')}`;
    rootDir = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-workers-'));
    const bootstrap: WorkerBootstrap = {
      protocol: PROTOCOL_VERSION,
      runtime: 'docker',
      dockerSocketPath: SOCKET,
      nodeName: node,
      rootDir,
      podInfraContainerImage: PAUSE,
      logLevel: 'silent',
    };
    handler = createWorkerHandler(bootstrap);
  });

  afterEach(async () => {
    await removeNodeContainers(node);
    for (const n of extraNodes.splice(0)) await removeNodeContainers(n);
    rmSync(rootDir, { recursive: true, force: true });
  });

  afterAll(() => undefined);

  async function sync(pod: Pod, backoff: PodSyncResult['backoff'] = {}): Promise<PodSyncResult> {
    const r = await handler(syncPodTask(pod, { backoff }));
    if (!r.ok) throw new Error(`syncPod failed: ${r.error.code} ${r.error.message}`);
    return r.value as PodSyncResult;
  }

  async function kill(uid: string, remove: boolean): Promise<PodSyncResult> {
    const r = await handler({ kind: 'killPod', protocol: PROTOCOL_VERSION, podUid: uid, gracePeriodSeconds: 2, remove });
    if (!r.ok) throw new Error(`killPod failed: ${r.error.message}`);
    return r.value as PodSyncResult;
  }

  function current(rp: RuntimePod | null, name: string) {
    return rp?.containers.find((c) => c.name === name);
  }

  /** A full read of the pod, as the syncer reads it (the CRI over Docker). */
  async function readPod(uid: string) {
    return (await getCriRuntimePod(newDockerNodeRuntime(scopeToNode(docker, node), { rootDir }).runtime, node, uid)).runtimePod;
  }

  it('starts a two-container pod sharing an emptyDir, with dockershim names and labels', async () => {
    const pod = mkPod(
      [
        ctr('writer', `echo hello > /data/greeting; ${kForever}`, { volumeMounts: [{ name: 'shared', mountPath: '/data' }] }),
        ctr('reader', `while [ ! -f /data/greeting ]; do sleep 0.1; done; cp /data/greeting /data/seen-by-reader; ${kForever}`, {
          volumeMounts: [{ name: 'shared', mountPath: '/data' }],
        }),
      ],
      { volumes: [{ name: 'shared', emptyDir: {} }] },
    );
    const uid = pod.metadata!.uid!;
    const r = await sync(pod);
    expect(r.steps.filter((s) => !s.ok)).toEqual([]);
    expect(r.steps.map((s) => `${s.action}:${s.target}`)).toEqual([
      'CreatePodSandbox:POD',
      'StartContainer:writer',
      'StartContainer:reader',
    ]);
    expect(r.events.filter((e) => e.reason === 'Created' || e.reason === 'Started').map((e) => e.message)).toEqual([
      'Created container writer',
      'Started container writer',
      'Created container reader',
      'Started container reader',
    ]);
    const rp = r.runtimePod!;
    expect(rp.sandboxes).toHaveLength(1);
    expect(rp.sandboxes[0].state).toBe('running');
    expect(rp.containers.map((c) => c.state)).toEqual(['running', 'running']);

    const name = pod.metadata!.name!;
    const sandbox = await docker.inspectContainer(rp.sandboxes[0].id);
    expect(sandbox.name).toBe(`k8s_POD_${name}_default_${uid}_0`);
    expect(sandbox.networkMode).toBe('none');
    expect(sandbox.labels).toMatchObject({
      'io.kubernetes.pod.name': name,
      'io.kubernetes.pod.namespace': 'default',
      'io.kubernetes.pod.uid': uid,
      'io.kubernetes.container.name': 'POD',
      'io.kubernetes.docker.type': 'podsandbox',
      'annotation.io.kubernetes.pod.terminationGracePeriod': '2',
      'kubelet-ts.node-name': node,
    });
    const writer = await docker.inspectContainer(current(rp, 'writer')!.id);
    expect(writer.name).toBe(`k8s_writer_${name}_default_${uid}_0`);
    expect(writer.networkMode).toBe(`container:${sandbox.id}`);
    expect(writer.labels).toMatchObject({
      'io.kubernetes.container.name': 'writer',
      'io.kubernetes.docker.type': 'container',
      'io.kubernetes.sandbox.id': sandbox.id,
      'annotation.io.kubernetes.container.hash': current(rp, 'writer')!.hash,
      'annotation.io.kubernetes.container.restartCount': '0',
      'io.kubernetes.pod.uid': uid,
      'kubelet-ts.node-name': node,
    });

    // The reader saw the writer's file through the shared emptyDir.
    const dir = emptyDirPath(rootDir, uid, 'shared');
    await waitFor('the reader to copy the file', async () => existsSync(path.join(dir, 'seen-by-reader')));
    expect(readFileSync(path.join(dir, 'seen-by-reader'), 'utf8')).toBe('hello\n');

    // A second sync has nothing to do.
    const again = await sync(pod, r.backoff);
    expect(again.steps).toEqual([]);
    expect(again.runtimePod!.containers.map((c) => c.id).sort()).toEqual(rp.containers.map((c) => c.id).sort());
  });

  it('does not restart a restartPolicy Never container that exited 1; leaves the sandbox to the kill that follows the final status', async () => {
    const pod = mkPod([ctr('once', 'exit 1')], { restartPolicy: 'Never' });
    const uid = pod.metadata!.uid!;
    await sync(pod);
    await waitFor('the container to exit', async () => current(await readPod(uid), 'once')?.state === 'exited');
    // The pod has finished: the sync reports it at once and does not stop the sandbox itself
    // (the agent publishes the final status, then sends killPod, as SyncTerminatingPod does).
    const r = await sync(pod);
    expect(r.steps).toEqual([]);
    expect(r.runtimePod!.containers).toHaveLength(1);
    expect(r.runtimePod!.containers[0]).toMatchObject({ state: 'exited', exitCode: 1, reason: 'Error', restartCount: 0 });
    expect(r.runtimePod!.sandboxes[0].state).toBe('running');
    const k = await kill(uid, false);
    expect(k.steps.map((s) => s.action)).toEqual(['KillPodSandbox']);
    const after = (await readPod(uid))!;
    expect(after.sandboxes.map((s) => s.state)).toEqual(['exited']);
    expect(after.containers.map((c) => c.state)).toEqual(['exited']);
    // The dead sandbox is not recreated either.
    const r3 = await sync(pod);
    expect(r3.steps).toEqual([]);
    expect((await readPod(uid))!.sandboxes).toHaveLength(1);
  });

  it('restarts an OnFailure container that exited 1 once, then holds it in CrashLoopBackOff', async () => {
    const pod = mkPod([ctr('crash', 'exit 1')], { restartPolicy: 'OnFailure' });
    const uid = pod.metadata!.uid!;
    const r1 = await sync(pod);
    await waitFor('the first attempt to exit', async () => current(await readPod(uid), 'crash')?.state === 'exited');
    const r2 = await sync(pod, r1.backoff);
    expect(r2.steps.map((s) => `${s.action}:${s.target}:${s.ok}`)).toEqual(['StartContainer:crash:true']);
    expect(Object.values(r2.backoff).map((e) => e.backoffMs)).toEqual([10_000]);
    const name = pod.metadata!.name!;
    expect((await docker.inspectContainer(current(r2.runtimePod, 'crash')!.id)).name).toBe(`k8s_crash_${name}_default_${uid}_1`);
    await waitFor('the second attempt to exit', async () => {
      const c = current(await readPod(uid), 'crash');
      return c?.restartCount === 1 && c.state === 'exited';
    });
    const r3 = await sync(pod, r2.backoff);
    expect(r3.steps).toEqual([]);
    expect(r3.waiting.crash.reason).toBe('CrashLoopBackOff');
    expect(r3.waiting.crash.message).toBe(`back-off 10s restarting failed container=crash pod=${name}_default(${uid})`);
    expect(r3.events.map((e) => e.reason)).toEqual(['BackOff']);
    expect(r3.requeueAfterMs).toBeGreaterThan(0);
    expect(r3.requeueAfterMs).toBeLessThanOrEqual(10_000);
    expect(r3.backoff).toEqual(r2.backoff);
    // Both attempts exist: the current dead one and the previous one.
    expect(r3.runtimePod!.containers.map((c) => c.restartCount)).toEqual([1, 0]);
  });

  it('what a sync and a kill read back of what they touched is what a full read shows (a new pod known absent, a restart, a stop)', async () => {
    const pod = mkPod([ctr('stay', kForever), ctr('crash', 'exit 3')], { restartPolicy: 'OnFailure' });
    const uid = pod.metadata!.uid!;
    const r = await handler(syncPodTask(pod, { knownAbsent: true }));
    if (!r.ok) throw new Error(r.error.message);
    const r1 = r.value as PodSyncResult;
    // `crash` may have exited already by the full read: compare everything but its state.
    const noCrashState = (rp: RuntimePod | null) => ({
      ...rp,
      containers: rp?.containers.map((c) => (c.name === 'crash' ? { ...c, state: '', finishedAtMs: 0, exitCode: 0, reason: '' } : c)),
    });
    expect(r1.steps.filter((s) => !s.ok)).toEqual([]);
    expect(noCrashState(r1.runtimePod)).toEqual(noCrashState(await readPod(uid)));
    await waitFor('crash to exit', async () => current(await readPod(uid), 'crash')?.state === 'exited');
    const r2 = await sync(pod, r1.backoff);
    expect(r2.steps.map((s) => `${s.action}:${s.target}:${s.ok}`)).toEqual(['StartContainer:crash:true']);
    expect(noCrashState(r2.runtimePod)).toEqual(noCrashState(await readPod(uid)));
    expect(r2.runtimePod!.containers.filter((c) => c.name === 'crash').map((c) => c.restartCount)).toEqual([1, 0]);
    const k = await kill(uid, false);
    expect(k.runtimePod!.containers.map((c) => c.state)).toEqual(['exited', 'exited', 'exited']);
    // But the sandbox's creation time: the kill keeps the exact one its first read took from the
    // running sandbox's status; a whole read lists a stopped sandbox's in whole seconds.
    const noSandboxTime = (rp: RuntimePod | null) => ({ ...rp, sandboxes: rp?.sandboxes.map((s) => ({ ...s, createdAtMs: 0 })) });
    expect(noSandboxTime(k.runtimePod)).toEqual(noSandboxTime(await readPod(uid)));
  });

  it('recreates only the container whose command changed', async () => {
    const pod = mkPod([ctr('stay', kForever), ctr('change', kForever)]);
    const r1 = await sync(pod);
    const before = r1.runtimePod!;
    const changed: Pod = structuredClone(pod);
    changed.spec!.containers[1].command = ['sh', '-c', `echo v2; ${kForever}`];
    const r2 = await sync(changed, r1.backoff);
    expect(r2.steps.filter((s) => !s.ok)).toEqual([]);
    expect(r2.steps.map((s) => `${s.action}:${s.target}`)).toEqual(['KillContainer:change', 'StartContainer:change']);
    expect(r2.events.find((e) => e.reason === 'Killing')?.message).toBe('Stopping container change');
    const after = r2.runtimePod!;
    expect(current(after, 'stay')!.id).toBe(current(before, 'stay')!.id);
    expect(after.sandboxes[0].id).toBe(before.sandboxes[0].id);
    expect(current(after, 'change')!.id).not.toBe(current(before, 'change')!.id);
    expect(current(after, 'change')).toMatchObject({ state: 'running', restartCount: 1 });
  });

  it('killPod stops and removes every container of the pod and its directory, idempotently', async () => {
    const pod = mkPod([ctr('a', kForever, { volumeMounts: [{ name: 'v', mountPath: '/v' }] })], { volumes: [{ name: 'v', emptyDir: {} }] });
    const uid = pod.metadata!.uid!;
    await sync(pod);
    expect(existsSync(emptyDirPath(rootDir, uid, 'v'))).toBe(true);

    const stopped = await kill(uid, false);
    expect(stopped.events.map((e) => e.message)).toEqual(['Stopping container a']);
    expect([...stopped.runtimePod!.containers, ...stopped.runtimePod!.sandboxes].map((c) => c.state)).toEqual(['exited', 'exited']);

    const removed = await kill(uid, true);
    expect(removed.runtimePod).toBeNull();
    expect(await docker.listContainers({ labels: [`${kPodUidLabel}=${uid}`] })).toEqual([]);
    expect(existsSync(path.join(rootDir, 'pods', uid))).toBe(false);

    const again = await kill(uid, true);
    expect(again).toMatchObject({ runtimePod: null, steps: [] });
  });

  it('leaves foreign containers alone: relist and killPod see only this node', async () => {
    const pod = mkPod([ctr('a', kForever)]);
    const uid = pod.metadata!.uid!;
    await sync(pod);
    const other = `${node}-other`;
    extraNodes.push(other);
    // Same pod UID, another node's label; and one without any pod labels (cleanup label only).
    const otherNode = await docker.createContainer({
      name: `${other}-a`,
      image: BUSYBOX,
      cmd: ['sh', '-c', kForever],
      labels: { [kPodUidLabel]: uid, [kNodeNameLabel]: other },
      hostConfig: { networkMode: 'none' },
    });
    const unlabelled = await docker.createContainer({
      name: `${other}-b`,
      image: BUSYBOX,
      cmd: ['sh', '-c', kForever],
      labels: { [kNodeNameLabel]: other },
      hostConfig: { networkMode: 'none' },
    });
    await docker.startContainer(otherNode);
    await docker.startContainer(unlabelled);

    const rl = await handler({ kind: 'relist', protocol: PROTOCOL_VERSION });
    expect(rl.ok).toBe(true);
    const containers = (rl as WorkerResult<'relist'> & { ok: true }).value.containers as RelistResult['containers'];
    expect(containers.map((c) => c.name).sort()).toEqual(['POD', 'a']);
    expect(containers.every((c) => c.podUid === uid && c.state === 'running')).toBe(true);

    const removed = await kill(uid, true);
    expect(removed.runtimePod).toBeNull();
    expect((await docker.inspectContainer(otherNode)).running).toBe(true);
    expect((await docker.inspectContainer(unlabelled)).running).toBe(true);

    // The guard refuses to touch a foreign container even when asked by ID.
    await expect(scopeToNode(docker, node).stopContainer(otherNode, 0)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    expect((await docker.inspectContainer(otherNode)).running).toBe(true);
  });

  it('reports ErrImageNeverPull for an absent image with pull policy Never, without pulling', async () => {
    const image = `kubelet-ts/absent-${randomBytes(4).toString('hex')}:1.0`;
    const pod = mkPod([ctr('a', kForever, { image, imagePullPolicy: 'Never' })]);
    const r = await sync(pod);
    expect(r.waiting.a).toEqual({
      reason: 'ErrImageNeverPull',
      message: `Container image "${image}" is not present with pull policy of Never`,
    });
    expect(r.steps.map((s) => `${s.action}:${s.ok}:${s.reason ?? ''}`)).toEqual([
      'CreatePodSandbox:true:',
      'PullImage:false:ErrImageNeverPull',
    ]);
    expect(r.events.some((e) => e.reason === 'Pulling')).toBe(false);
    expect(r.runtimePod!.containers).toEqual([]);
  });
});
