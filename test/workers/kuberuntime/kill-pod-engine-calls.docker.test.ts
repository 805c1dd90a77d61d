// The Docker Engine calls of a pod's removal (issue #42), by route, through the bench's counting
// proxy (bench/docker-calls.ts) in front of the real dockerd: the two killPod tasks the pod syncer
// sends for a deleted pod (src/main/lifecycle/pod-syncer.ts: the stop, from the pod cache's runtime
// pod; then the removal, from what the stop returned), run by the sync worker's own handler, with
// what they leave and return. Skipped when Docker is unreachable (KUBELET_TS_REQUIRE_DOCKER=1: fails).
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startDockerCallCounter, type DockerCallCounter } from '../../../bench/docker-calls.js';
import type { Pod } from '../../../src/shared/api.js';
import type { KillPodTask, PodSyncResult } from '../../../src/shared/sync-tasks.js';
import { PROTOCOL_VERSION, type WorkerBootstrap } from '../../../src/shared/thread-wire.js';
import { kNodeNameLabel, kPodUidLabel } from '../../../src/workers/kubetypes/label-keys.js';
import { podLogsDirectory, podLogsRoot } from '../../../src/workers/kubetypes/pod-dirs.js';
import { getCriRuntimePod } from '../../../src/workers/kuberuntime/runtime-pod.js';
import { dockerEngineRequests, getDockerRuntime } from '../../../src/workers/runtime/docker/docker-runtime.js';
import { newDockerNodeRuntime } from '../../../src/workers/runtime/docker/docker-node-runtime.js';
import { scopeToNode } from '../../../src/workers/runtime/node-scope.js';
import { createWorkerHandler, type WorkerHandler } from '../../../src/workers/sync.worker.js';
import { BUSYBOX_IMAGE, DOCKER_SOCKET, PAUSE_IMAGE, docker as dockerode, dockerProblem, waitFor } from '../../support/docker.js';
import { syncPodTask } from '../../support/sync-worker.js';

const problem = await dockerProblem();
if (problem && process.env.KUBELET_TS_REQUIRE_DOCKER === '1') throw new Error(`KUBELET_TS_REQUIRE_DOCKER=1: ${problem}`);
const docker = getDockerRuntime(DOCKER_SOCKET);

describe.skipIf(problem !== undefined)("a pod's removal on Docker: its Engine calls", { timeout: 60_000 }, () => {
  let node: string;
  let dir: string;
  let counter: DockerCallCounter;
  let handler: WorkerHandler;
  let bootstrap: WorkerBootstrap;

  beforeEach(async () => {
    node = `test-removal-${randomBytes(4).toString('hex')}`;
    dir = mkdtempSync(path.join(os.tmpdir(), 'kts-removal-calls-'));
    counter = await startDockerCallCounter(path.join(dir, 'docker.sock'), DOCKER_SOCKET);
    bootstrap = {
      protocol: PROTOCOL_VERSION,
      runtime: 'docker',
      dockerSocketPath: counter.socketPath,
      nodeName: node,
      rootDir: path.join(dir, 'root'),
      podInfraContainerImage: PAUSE_IMAGE,
      logLevel: 'silent',
    };
    handler = createWorkerHandler(bootstrap);
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    const left = await docker.listContainers({ labels: [`${kNodeNameLabel}=${node}`] });
    await Promise.all(left.map((c) => docker.removeContainer(c.id).catch(() => undefined)));
    await counter.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `task` on `thread` (default: the handler that started the pod, a worker thread of its own). */
  async function run(task: Parameters<WorkerHandler>[0], thread = handler): Promise<PodSyncResult> {
    const r = await thread(task);
    if (!r.ok) throw new Error(`${task.kind} failed: ${r.error.code} ${r.error.message}`);
    return r.value as PodSyncResult;
  }

  /** A running pod of one container that writes a termination message and exits 3 on SIGTERM. */
  async function startPod(): Promise<{ pod: Pod; started: PodSyncResult }> {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${randomBytes(3).toString('hex')}`, namespace: 'default', uid: randomUUID() },
      spec: {
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 5,
        containers: [
          {
            name: 'app',
            image: BUSYBOX_IMAGE,
            imagePullPolicy: 'IfNotPresent',
            terminationMessagePath: '/dev/termination-log',
            command: ['sh', '-c', 'trap "echo bye > /dev/termination-log; exit 3" TERM; echo trap-set; while true; do sleep 0.1; done'],
          },
        ],
      },
    };
    const started = await run(syncPodTask(pod));
    expect(started.steps.filter((s) => !s.ok)).toEqual([]);
    // PID 1 ignores a SIGTERM it has no handler for: a stop that came before the shell's trap was set
    // waited out the grace period and ended in SIGKILL (137, seen under load). Its log says when it is set.
    const id = started.runtimePod!.containers[0]!.id;
    // Read with the docker CLI: the last test counts every dockerode request of this file.
    await waitFor(() => execFileSync('docker', ['logs', id], { encoding: 'latin1' }).includes('trap-set'), {
      description: 'the container has set its TERM trap',
    });
    return { pod, started };
  }

  const kill = (pod: Pod, extra: Partial<KillPodTask>, thread = handler): Promise<PodSyncResult> =>
    run(
      {
        kind: 'killPod',
        protocol: PROTOCOL_VERSION,
        podUid: pod.metadata!.uid!,
        gracePeriodSeconds: 5,
        remove: false,
        hostIp: '127.0.0.1',
        pod,
        ...extra,
      },
      thread,
    );

  const counts = () => Object.fromEntries([...counter.counts()].sort(([a], [b]) => (a < b ? -1 : 1)));

  it('a stop from the cached pod and the removal from its result: 2 stops, 2 removes, an inspect of the stopped container, a list in each sandbox call', async () => {
    const { pod, started } = await startPod();
    const uid = pod.metadata!.uid!;
    counter.reset();

    const stopped = await kill(pod, { cachedRuntimePod: started.runtimePod! });
    expect(stopped.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['KillContainer app true', 'KillPodSandbox POD true']);
    // The stop: StopContainer; StopPodSandbox (the list of its running containers, the pause container's
    // stop; no inspect without the pod network); the stopped container's ContainerStatus for its exit.
    expect(counts()).toEqual({
      'GET /containers/json': 1,
      'GET /containers/{id}/json': 1,
      'POST /containers/{id}/stop': 2,
    });
    // What the status shows of it is what a whole read says (but the sandbox's creation time: a whole
    // read lists a stopped sandbox's in whole seconds; the kill keeps the exact one it started from).
    const whole = (await getCriRuntimePod(newDockerNodeRuntime(scopeToNode(docker, node), { rootDir: dir }).runtime, node, uid))
      .runtimePod!;
    expect(stopped.runtimePod!.containers[0]).toMatchObject({ state: 'exited', exitCode: 3, reason: 'Error', message: 'bye\n' });
    expect(stopped.runtimePod!.containers[0].finishedAtMs).toBeGreaterThan(0);
    expect({ ...stopped.runtimePod, sandboxes: stopped.runtimePod!.sandboxes.map((s) => ({ ...s, createdAtMs: 0 })) }).toEqual({
      ...whole,
      containers: whole.containers.map((c) => ({ ...c, message: 'bye\n' })),
      sandboxes: whole.sandboxes.map((s) => ({ ...s, createdAtMs: 0 })),
    });

    const logsDir = podLogsDirectory(podLogsRoot(path.join(dir, 'root')), 'default', pod.metadata!.name!, uid);
    expect(existsSync(logsDir)).toBe(true);
    counter.reset();
    const removed = await kill(pod, { remove: true, cachedRuntimePod: stopped.runtimePod! });
    expect(removed.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['RemoveContainer app true', 'RemoveContainer POD true']);
    expect(removed.runtimePod).toBeNull();
    // The removal: RemoveContainer; RemovePodSandbox (the list of its containers, the pause container's
    // removal). No read before (the stop's result) or after (all removed), no ContainerStatus for the
    // log path (the pod's log directory goes whole).
    expect(counts()).toEqual({ 'DELETE /containers/{id}': 2, 'GET /containers/json': 1 });
    expect(await docker.listContainers({ labels: [`${kPodUidLabel}=${uid}`] })).toEqual([]);
    expect(existsSync(path.join(dir, 'root', 'pods', uid))).toBe(false);
    expect(existsSync(logsDir)).toBe(false);
  });

  it("a pod's start, stop and removal: every call the engine saw came from the keep-alive Engine client, none from dockerode (issue #42 item 1)", async () => {
    // The handler's runtime for the proxy's socket (behind its admission wrapper); docker-modem's dial is dockerode's every request.
    const runtime = getDockerRuntime(counter.socketPath);
    const dial = vi.spyOn(Object.getPrototypeOf(dockerode.modem) as { dial: (...a: unknown[]) => unknown }, 'dial');
    counter.reset();
    const before = dockerEngineRequests(runtime)!;
    const { pod, started } = await startPod();
    const stopped = await kill(pod, { cachedRuntimePod: started.runtimePod! });
    await kill(pod, { remove: true, cachedRuntimePod: stopped.runtimePod! });
    expect(dial).not.toHaveBeenCalled();
    // The creates, starts and read-back inspects of a start; the stops, lists and removes after it.
    expect(counter.total()).toBeGreaterThanOrEqual(10);
    expect(dockerEngineRequests(runtime)! - before).toBe(counter.total());
  });

  it('without what the main thread knows, the kill reads the pod first, and the removal of a pod with nothing left makes no call', async () => {
    const { pod } = await startPod();
    counter.reset();
    const stopped = await kill(pod, {});
    expect(stopped.runtimePod!.containers[0]).toMatchObject({ state: 'exited', exitCode: 3, message: 'bye\n' });
    // The read first: one list for both kinds, ContainerStatus of the container, PodSandboxStatus of the running sandbox.
    expect(counts()).toEqual({ 'GET /containers/json': 2, 'GET /containers/{id}/json': 3, 'POST /containers/{id}/stop': 2 });

    const removed = await kill(pod, { remove: true, cachedRuntimePod: stopped.runtimePod! });
    expect(removed.runtimePod).toBeNull();
    counter.reset();
    const again = await kill(pod, { remove: true, knownAbsent: true });
    expect(again).toMatchObject({ runtimePod: null, steps: [] });
    expect(counter.total()).toBe(0);
  });

  it("on another worker thread: the node scope's ownership inspect before each stop of a container that thread never listed, none after its relist", async () => {
    const { pod, started } = await startPod();
    const stop = (thread: WorkerHandler) => kill(pod, { cachedRuntimePod: started.runtimePod! }, thread);
    counter.reset();
    await stop(createWorkerHandler(bootstrap));
    expect(counts()).toEqual({ 'GET /containers/json': 1, 'GET /containers/{id}/json': 3, 'POST /containers/{id}/stop': 2 });
    // The PLEG's relist runs on every thread of the pool in turn; once it listed the pod there, a stop costs the same as on the thread that made it.
    const listed = createWorkerHandler(bootstrap);
    expect(await listed({ kind: 'relist', protocol: PROTOCOL_VERSION })).toMatchObject({ ok: true });
    counter.reset();
    await stop(listed);
    expect(counts()).toEqual({ 'GET /containers/json': 1, 'GET /containers/{id}/json': 1, 'POST /containers/{id}/stop': 2 });
  });
});
