// syncPodCri / killCriPodTask / criRelist (src/workers/kuberuntime/cri-*.ts) on the REAL containerd of tools/lib/containerd.sh, through RemoteRuntimeService / RemoteImageService: the kubelet's SyncPod over the CRI (#40 item 1). Skips without containerd unless KUBELET_TS_REQUIRE_CRI=1.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import type { RuntimePod } from '../../../src/shared/runtime-pod.js';
import { PROTOCOL_VERSION } from '../../../src/shared/thread-wire.js';
import type { PodSyncResult } from '../../../src/shared/sync-tasks.js';
import { kDefaultNodeSandboxSettings } from '../../../src/shared/node-settings.js';
import { killCriPodTask, type CriSyncDeps } from '../../../src/workers/kuberuntime/kill-pod.js';
import { criRelist, getCriRuntimePod } from '../../../src/workers/kuberuntime/runtime-pod.js';
import { runCriGc } from '../../../src/workers/kuberuntime/gc.js';
import { createWorkerHandler } from '../../../src/workers/sync.worker.js';
import type { RelistResult, WorkerTask } from '../../../src/shared/sync-tasks.js';
import type { ProbeOutcome } from '../../../src/shared/probe-tasks.js';
import { syncPodCri } from '../../../src/workers/kuberuntime/sync-pod.js';
import { podLogsDirectory } from '../../../src/workers/kubetypes/pod-dirs.js';
import { criEndpointOrSkip, useCriRun } from '../../support/cri.js';
import { BUSYBOX_IMAGE, waitFor } from '../../support/docker.js';
import { syncPodTask } from '../../support/sync-worker.js';
import { realClock } from '../../../src/shared/clock.js';

const endpoint = criEndpointOrSkip();

describe.skipIf(!endpoint)('syncPod on containerd (the CRI only)', { timeout: 180_000 }, () => {
  const run = useCriRun(endpoint);
  const nodeName = `kts-cri-sync-${randomBytes(4).toString('hex')}`;
  const rootDir = mkdtempSync(path.join(os.tmpdir(), 'kts-cri-sync-root-'));
  const podLogsDir = mkdtempSync(path.join(os.tmpdir(), 'kts-cri-sync-logs-'));
  const deps: CriSyncDeps = {
    runtime: run.runtime,
    images: run.images,
    nodeName,
    rootDir,
    podLogsDir,
    clock: realClock,
    sandbox: { ...kDefaultNodeSandboxSettings },
  };
  const uids: string[] = [];

  afterEach(async () => {
    // Every pod this file made is removed by the code under test first, then by the run label.
    for (const uid of uids.splice(0))
      await killCriPodTask(deps, { kind: 'killPod', protocol: PROTOCOL_VERSION, podUid: uid, gracePeriodSeconds: 0, remove: true }).catch(
        () => undefined,
      );
    await run.cleanup();
  });
  afterAll(() => {
    rmSync(rootDir, { recursive: true, force: true });
    rmSync(podLogsDir, { recursive: true, force: true });
  });

  function mkPod(name: string, spec: Partial<Pod['spec']>): Pod {
    const uid = `${run.label['kubelet-ts.test-run']}-${randomBytes(4).toString('hex')}`;
    uids.push(uid);
    return {
      metadata: { name, namespace: 'kts-cri-test', uid, labels: { ...run.label } },
      spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 2, containers: [], ...spec },
    };
  }
  function failed(r: PodSyncResult): string[] {
    return r.steps.filter((s) => !s.ok).map((s) => `${s.action} ${s.target}: ${s.reason} ${s.message}`);
  }

  it('starts a pod: the runtime makes the sandbox and its network, the container gets the pod IP, relist sees both', async () => {
    const pod = mkPod('web', {
      containers: [
        {
          name: 'main',
          image: BUSYBOX_IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sleep', '3600'],
          env: [
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'GREETING', value: 'hello $(POD_IP)' },
          ],
          lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo started > /tmp/post-start'] } } },
        },
      ],
    });
    const r = await syncPodCri(deps, syncPodTask(pod));
    expect(failed(r)).toEqual([]);
    expect(r.steps.map((s) => `${s.action} ${s.target}`)).toEqual(['CreatePodSandbox POD', 'StartContainer main']);
    const rp = r.runtimePod!;
    expect(rp).toMatchObject({ uid: pod.metadata!.uid, name: 'web', namespace: 'kts-cri-test', terminationGracePeriodSeconds: 2 });
    expect(rp.podIp).toMatch(/^10\.223\./);
    expect(rp.sandboxes).toHaveLength(1);
    expect(rp.sandboxes[0]).toMatchObject({ name: 'POD', sandbox: true, state: 'running', attempt: 0 });
    expect(rp.containers).toHaveLength(1);
    expect(rp.containers[0]).toMatchObject({ name: 'main', state: 'running', restartCount: 0, attempt: 0, sandboxId: rp.sandboxes[0].id });
    expect(rp.containers[0].hash).toMatch(/^[0-9a-f]+$/);
    expect(rp.containers[0].startedAtMs).toBeGreaterThan(Date.now() - 120_000);
    const id = rp.containers[0].id;
    const out = await run.runtime.execSync(id, ['sh', '-c', 'echo "$GREETING"; cat /tmp/post-start; hostname; grep -c web /etc/hosts'], 10);
    expect(out.stdout.toString().split('\n')).toEqual([`hello ${rp.podIp}`, 'started', 'web', '1', '']);
    // The CRI log file under the pod's log directory.
    expect(existsSync(path.join(podLogsDirectory(podLogsDir, 'kts-cri-test', 'web', pod.metadata!.uid!), 'main', '0.log'))).toBe(true);
    // Node scope: every List filters on this node's label; another node sees nothing of it.
    const mine = await criRelist(run.runtime, nodeName, realClock, true);
    expect(
      mine.containers
        .filter((c) => c.podUid === pod.metadata!.uid)
        .map((c) => `${c.name}:${c.state}:${c.podName}`)
        .sort(),
    ).toEqual(['POD:running:web', 'main:running:web']);
    expect((await criRelist(run.runtime, `${nodeName}-other`)).containers).toEqual([]);
    // A second sync with nothing to do changes nothing.
    const again = await syncPodCri(deps, syncPodTask(pod));
    expect(again.steps).toEqual([]);
    expect(again.runtimePod?.containers.map((c) => c.id)).toEqual([id]);
  });

  it('restarts a crashing container with backoff: attempt 1 at once, then CrashLoopBackOff until the backoff expires', async () => {
    const pod = mkPod('crash', {
      containers: [
        {
          name: 'c',
          image: BUSYBOX_IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'echo -n crashed > /dev/termination-log; exit 3'],
          terminationMessagePath: '/dev/termination-log',
        },
      ],
    });
    const first = await syncPodCri(deps, syncPodTask(pod));
    expect(failed(first)).toEqual([]);
    const exited = async (restartCount: number) =>
      waitFor(
        async () => {
          const rp = (await getCriRuntimePod(run.runtime, nodeName, pod.metadata!.uid!)).runtimePod;
          const c = rp?.containers.find((x) => x.restartCount === restartCount);
          return c?.state === 'exited' ? rp : null;
        },
        { timeoutMs: 60_000, description: `attempt ${restartCount} exited` },
      );
    const rp0 = await exited(0);
    expect(rp0!.containers[0]).toMatchObject({ exitCode: 3, reason: 'Error' });
    // The termination message file the container wrote (mounted from <root-dir>/pods/<uid>/containers/c/0).
    const second0 = await syncPodCri(deps, syncPodTask(pod));
    expect(second0.runtimePod?.containers.find((c) => c.restartCount === 0)?.message).toBe('crashed');
    expect(rp0!.containers[0].finishedAtMs).toBeGreaterThan(0);
    const second = second0;
    expect(second.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['StartContainer c true']);
    expect(Object.keys(second.backoff)).toHaveLength(1);
    await exited(1);
    const third = await syncPodCri(deps, syncPodTask(pod, { backoff: second.backoff }));
    expect(third.steps.filter((s) => s.action === 'StartContainer')).toEqual([]);
    expect(third.waiting.c?.reason).toBe('CrashLoopBackOff');
    expect(third.requeueAfterMs).toBeGreaterThan(0);
    // Read back newest first: attempt 1 (its restart count from the annotation), then attempt 0.
    const rp = (await getCriRuntimePod(run.runtime, nodeName, pod.metadata!.uid!)).runtimePod!;
    expect(rp.containers.map((c) => [c.restartCount, c.attempt, c.state])).toEqual([
      [1, 1, 'exited'],
      [0, 0, 'exited'],
    ]);
  });

  it('kills a pod (preStop through ExecSync) and removes it: sandbox, containers, the pod and log directories; relist no longer sees it', async () => {
    const pod = mkPod('gone', {
      containers: [
        {
          name: 'main',
          image: BUSYBOX_IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.1; done'],
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo bye > /proc/1/fd/1'] } } },
        },
      ],
    });
    const r = await syncPodCri(deps, syncPodTask(pod));
    expect(failed(r)).toEqual([]);
    const uid = pod.metadata!.uid!;
    const logDir = podLogsDirectory(podLogsDir, 'kts-cri-test', 'gone', uid);
    const stopped = await killCriPodTask(deps, {
      kind: 'killPod',
      protocol: PROTOCOL_VERSION,
      podUid: uid,
      gracePeriodSeconds: 5,
      remove: false,
      pod,
      hostIp: '127.0.0.1',
    });
    expect(failed(stopped)).toEqual([]);
    expect(stopped.events.some((e) => e.reason === 'FailedPreStopHook')).toBe(false);
    expect(stopped.runtimePod?.sandboxes[0].state).toBe('exited');
    expect(stopped.runtimePod?.containers[0]).toMatchObject({ state: 'exited', exitCode: 0 });
    const removed = await killCriPodTask(deps, {
      kind: 'killPod',
      protocol: PROTOCOL_VERSION,
      podUid: uid,
      gracePeriodSeconds: 0,
      remove: true,
    });
    expect(failed(removed)).toEqual([]);
    expect(removed.runtimePod).toBeNull();
    expect(await run.runtime.listPodSandbox({ label_selector: { 'io.kubernetes.pod.uid': uid } })).toEqual([]);
    expect(existsSync(logDir)).toBe(false);
    expect(existsSync(path.join(rootDir, 'pods', uid))).toBe(false);
    expect((await criRelist(run.runtime, nodeName)).containers.filter((c) => c.podUid === uid)).toEqual([]);
  });

  it("kills from what the main thread knows (the pod cache's pod, then the stop's result): the stop reads back the stopped container alone, the removal reads nothing", async () => {
    const pod = mkPod('known', {
      containers: [
        {
          name: 'main',
          image: BUSYBOX_IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'trap "exit 3" TERM; echo trap-set; while true; do sleep 0.1; done'],
        },
      ],
    });
    const r = await syncPodCri(deps, syncPodTask(pod));
    expect(failed(r)).toEqual([]);
    const uid = pod.metadata!.uid!;
    // PID 1 ignores a SIGTERM it has no handler for: a stop before the shell's trap is set waits out the
    // grace period and ends in SIGKILL (137, seen under load). The container's log says when it is set.
    const log = path.join(podLogsDirectory(podLogsDir, 'kts-cri-test', 'known', uid), 'main', '0.log');
    await waitFor(() => readFileSync(log, 'utf8').includes('trap-set'), { description: `${log} says the TERM trap is set` });
    const calls: string[] = [];
    const runtime = new Proxy(run.runtime, {
      get(t, k) {
        const v = Reflect.get(t, k) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => (calls.push(String(k)), (v as (...a: unknown[]) => unknown).apply(t, args));
      },
    });
    const kill = (remove: boolean, known: RuntimePod) =>
      killCriPodTask(
        { ...deps, runtime },
        {
          kind: 'killPod',
          protocol: PROTOCOL_VERSION,
          podUid: uid,
          gracePeriodSeconds: 5,
          remove,
          pod,
          hostIp: '127.0.0.1',
          cachedRuntimePod: known,
        },
      );
    const stopped = await kill(false, r.runtimePod!);
    expect(failed(stopped)).toEqual([]);
    expect(calls.splice(0).sort()).toEqual(['containerStatus', 'stopContainer', 'stopPodSandbox']);
    expect(stopped.runtimePod!.containers[0]).toMatchObject({ state: 'exited', exitCode: 3 });
    expect(stopped.runtimePod).toEqual((await getCriRuntimePod(run.runtime, nodeName, uid)).runtimePod);
    const logDir = podLogsDirectory(podLogsDir, 'kts-cri-test', 'known', uid);
    expect(existsSync(logDir)).toBe(true);
    const removed = await kill(true, stopped.runtimePod!);
    expect(failed(removed)).toEqual([]);
    expect(removed.runtimePod).toBeNull();
    expect(calls.splice(0).sort()).toEqual(['removeContainer', 'removePodSandbox']);
    expect(existsSync(logDir)).toBe(false);
    expect((await getCriRuntimePod(run.runtime, nodeName, uid)).runtimePod).toBeNull();
  });

  it('garbage-collects a stopped pod the agent no longer knows: containers, then the sandbox, then its log directory', async () => {
    const pod = mkPod('collected', {
      restartPolicy: 'Never',
      containers: [{ name: 'once', image: BUSYBOX_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['true'] }],
    });
    const uid = pod.metadata!.uid!;
    expect(failed(await syncPodCri(deps, syncPodTask(pod)))).toEqual([]);
    const stopped = await killCriPodTask(deps, {
      kind: 'killPod',
      protocol: PROTOCOL_VERSION,
      podUid: uid,
      gracePeriodSeconds: 0,
      remove: false,
    });
    const [sandbox] = stopped.runtimePod!.sandboxes;
    const [container] = stopped.runtimePod!.containers;
    const logDir = podLogsDirectory(podLogsDir, 'kts-cri-test', 'collected', uid);
    expect(existsSync(logDir)).toBe(true);
    // Known: the newest dead container and the newest sandbox are kept.
    const kept = await runCriGc(
      { ...deps, podInfraContainerImage: '' },
      { kind: 'gc', protocol: PROTOCOL_VERSION, maximumDeadContainersPerContainer: 1, activePodUids: [uid] },
    );
    expect(kept).toMatchObject({ removedContainers: [], removedSandboxes: [], errors: [] });
    expect(existsSync(logDir)).toBe(true);
    // Gone from the agent: everything of it goes.
    const gc = await runCriGc(
      { ...deps, podInfraContainerImage: '' },
      { kind: 'gc', protocol: PROTOCOL_VERSION, maximumDeadContainersPerContainer: 1, activePodUids: [] },
    );
    expect(gc).toMatchObject({ removedContainers: [container.id], removedSandboxes: [sandbox.id], errors: [] });
    expect(existsSync(logDir)).toBe(false);
    expect((await getCriRuntimePod(run.runtime, nodeName, uid)).runtimePod).toBeNull();
  });

  it('starts a container again that was removed behind its back (status not found: NotPresent)', async () => {
    const pod = mkPod('removed', {
      containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
    });
    const first = await syncPodCri(deps, syncPodTask(pod));
    expect(failed(first)).toEqual([]);
    const id = first.runtimePod!.containers[0]!.id;
    await run.runtime.stopContainer(id, 0);
    await run.runtime.removeContainer(id);
    const again = await syncPodCri(deps, syncPodTask(pod));
    expect(failed(again)).toEqual([]);
    expect(again.steps.map((s) => `${s.action} ${s.target}`)).toContain('StartContainer main');
    expect(again.runtimePod?.containers.find((c) => c.state === 'running')?.id).not.toBe(id);
  });

  it('GC removes a dead container of a running pod with its log files, the rotated ones too (removeContainerLog); the live attempt keeps its log', async () => {
    const pod = mkPod('logs-gc', {
      containers: [{ name: 'c', image: BUSYBOX_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo attempt; exit 1'] }],
    });
    const uid = pod.metadata!.uid!;
    const exited = (attempt: number) =>
      waitFor(
        async () => {
          const rp = (await getCriRuntimePod(run.runtime, nodeName, uid)).runtimePod;
          return rp?.containers.find((c) => c.attempt === attempt && c.state === 'exited') ?? null;
        },
        { timeoutMs: 60_000, description: `attempt ${attempt} exited` },
      );
    expect(failed(await syncPodCri(deps, syncPodTask(pod)))).toEqual([]);
    const first = await exited(0);
    expect(failed(await syncPodCri(deps, syncPodTask(pod)))).toEqual([]);
    const second = await exited(1);
    const firstLog = (await run.runtime.containerStatus(first.id)).status!.log_path;
    const secondLog = (await run.runtime.containerStatus(second.id)).status!.log_path;
    expect(existsSync(firstLog) && existsSync(secondLog)).toBe(true);
    // What the log manager leaves beside a rotated log: a plain and a compressed rotated file.
    const rotated = [`${firstLog}.20261207-101010`, `${firstLog}.20261207-101009.gz`];
    for (const f of rotated) writeFileSync(f, 'old\n');
    const gc = await runCriGc(
      { ...deps, podInfraContainerImage: '' },
      { kind: 'gc', protocol: PROTOCOL_VERSION, maximumDeadContainersPerContainer: 1, activePodUids: [uid] },
    );
    expect(gc).toMatchObject({ removedContainers: [first.id], removedSandboxes: [], errors: [] });
    expect([firstLog, ...rotated].filter((f) => existsSync(f))).toEqual([]);
    expect(existsSync(secondLog)).toBe(true);
  });

  it('the sync worker on runtime "remote": syncPod, relist with runtime pods, an exec probe by ExecSync, killPod — all through the CRI', async () => {
    const workerRoot = mkdtempSync(path.join(os.tmpdir(), 'kts-cri-worker-root-'));
    const workerNode = `${nodeName}-w`;
    const handler = createWorkerHandler({
      protocol: PROTOCOL_VERSION,
      runtime: 'remote',
      dockerSocketPath: '',
      containerRuntimeEndpoint: endpoint!,
      nodeName: workerNode,
      rootDir: workerRoot,
      podInfraContainerImage: 'kubelet-ts/pause:1.0',
      logLevel: 'silent',
    });
    const pod = mkPod('worker', {
      containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
    });
    const uid = pod.metadata!.uid!;
    const call = async <T>(t: Omit<WorkerTask, 'protocol'>): Promise<T> => {
      const r = await handler({ protocol: PROTOCOL_VERSION, ...t } as WorkerTask);
      if (!r.ok) throw new Error(`${r.kind}: ${r.error.message}`);
      return r.value as T;
    };
    try {
      const synced = await call<PodSyncResult>(syncPodTask(pod));
      expect(failed(synced)).toEqual([]);
      const id = synced.runtimePod!.containers[0].id;
      const relisted = await call<RelistResult>({ kind: 'relist', withRuntimePods: true } as Omit<WorkerTask, 'protocol'>);
      expect(
        relisted.containers
          .filter((c) => c.podUid === uid)
          .map((c) => c.name)
          .sort(),
      ).toEqual(['POD', 'main']);
      expect(relisted.runtimePods?.find((p) => p.uid === uid)?.containers[0].id).toBe(id);
      expect(
        await call<ProbeOutcome>({ kind: 'execProbe', containerId: id, command: ['sh', '-c', 'exit 0'], timeoutMs: 5000 } as Omit<
          WorkerTask,
          'protocol'
        >),
      ).toMatchObject({ result: 'success' });
      expect(
        await call<ProbeOutcome>({ kind: 'execProbe', containerId: id, command: ['sh', '-c', 'echo no; exit 1'], timeoutMs: 5000 } as Omit<
          WorkerTask,
          'protocol'
        >),
      ).toMatchObject({ result: 'failure', output: 'no\n' });
      const killed = await call<PodSyncResult>({ kind: 'killPod', podUid: uid, gracePeriodSeconds: 0, remove: true } as Omit<
        WorkerTask,
        'protocol'
      >);
      expect(killed.runtimePod).toBeNull();
      expect(existsSync(path.join(workerRoot, 'pod-logs', `kts-cri-test_worker_${uid}`))).toBe(false);
    } finally {
      await killCriPodTask(
        { ...deps, nodeName: workerNode },
        { kind: 'killPod', protocol: PROTOCOL_VERSION, podUid: uid, gracePeriodSeconds: 0, remove: true },
      ).catch(() => undefined);
      rmSync(workerRoot, { recursive: true, force: true });
    }
  });
});
