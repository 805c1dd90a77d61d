// The thread's NodeRuntime on a CRI runtime (src/workers/runtime/node-runtime.ts getRuntime, node-scope-cri.ts), the PLEG's capability answer (container-events.worker.ts) and the CRI stats collector (workers/stats/collect-cri-stats.ts), against the real containerd of tools/lib/containerd.sh.
import { randomBytes } from 'node:crypto';
import { readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContainerEventsMessage } from '../../../src/shared/container-events.js';
import { runEventsLoop } from '../../../src/workers/container-events.worker.js';
import { PROTOCOL_VERSION, type WorkerBootstrap } from '../../../src/shared/thread-wire.js';
import { createWorkerHandler } from '../../../src/workers/sync.worker.js';
import type { ContainerConfig, CriInput, PodSandboxConfig } from '../../../src/workers/runtime/cri/types.js';
import { getRuntime } from '../../../src/workers/runtime/node-runtime.js';
import { collectCriStats } from '../../../src/workers/stats/collect-cri-stats.js';
import { criEndpointOrSkip, useCriRun } from '../../support/cri.js';
import { BUSYBOX_IMAGE, waitFor } from '../../support/docker.js';
import { realClock } from '../../../src/shared/clock.js';

const endpoint = criEndpointOrSkip();
const kCgroupParent = `/kubelet-ts-cri-nr-${randomBytes(3).toString('hex')}`;

describe.skipIf(!endpoint)('the NodeRuntime of a CRI runtime (containerd)', { timeout: 120_000 }, () => {
  const run = useCriRun(endpoint);
  const node = `cri-node-${randomBytes(4).toString('hex')}`;
  const nr = getRuntime({
    runtime: 'remote',
    dockerSocketPath: '',
    containerRuntimeEndpoint: endpoint ?? 'unix:///nonexistent.sock',
    nodeName: node,
    runtimeRequestTimeoutMs: 60_000,
  });

  /** A sandbox config owned by `owner` (the labels kuberuntime puts on every config), with the run label for cleanup. */
  function sandbox(name: string, logDir: string, owner = node, more: CriInput<PodSandboxConfig> = {}): CriInput<PodSandboxConfig> {
    const c = run.sandboxConfig(name, logDir, more);
    return { ...c, labels: { ...c.labels, 'io.kubernetes.pod.uid': c.metadata?.uid ?? '', 'kubelet-ts.node-name': owner } };
  }
  function container(config: CriInput<PodSandboxConfig>, name: string, command: string[]): CriInput<ContainerConfig> {
    return {
      metadata: { name, attempt: 0 },
      image: { image: BUSYBOX_IMAGE },
      command,
      log_path: `${name}/0.log`,
      labels: {
        ...run.label,
        'io.kubernetes.pod.uid': config.metadata?.uid ?? '',
        'io.kubernetes.container.name': name,
        'kubelet-ts.node-name': node,
      },
    };
  }

  it('is one bundle per thread and endpoint; answers Version and Status; its ID scheme is containerd; it has no events', async () => {
    expect(
      getRuntime({
        runtime: 'remote',
        dockerSocketPath: '',
        containerRuntimeEndpoint: endpoint!,
        nodeName: node,
        runtimeRequestTimeoutMs: 60_000,
      }),
    ).toBe(nr);
    expect(nr.events).toBeUndefined();
    const v = await nr.runtime.version('0.1.0');
    expect(v.runtime_name).toBe('containerd');
    expect(nr.idScheme).toBe('containerd');
    const conditions = (await nr.runtime.status()).status?.conditions ?? [];
    expect(conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'RuntimeReady', status: true })]));
    expect((await nr.images.imageStatus({ image: BUSYBOX_IMAGE })).image).not.toBeNull();
    // Logs and streams are the CRI's (log files, the streaming server): an unknown container is NotFound, never a hang.
    await expect(nr.logs.tailLogs('a'.repeat(64), 10, 1000)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    await expect(
      nr.streams.openContainerStream(
        'a'.repeat(64),
        { kind: 'exec', command: ['true'], stdin: false, stdout: true, stderr: true, tty: false },
        { onOutput: () => undefined, onExit: () => undefined },
      ),
    ).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
  });

  it('the events worker answers `unsupported` for it: the PLEG relists', () => {
    const got: ContainerEventsMessage[] = [];
    const loop = runEventsLoop({ runtime: 'remote', dockerSocketPath: '', containerRuntimeEndpoint: endpoint!, nodeName: node }, (m) =>
      got.push(m),
    );
    loop.stop();
    expect(got).toEqual([{ type: 'unsupported', message: expect.stringContaining('no container events') }]);
  });

  it("is scoped to its node: lists only its own sandboxes and containers, refuses another node's and unlabelled configs", async () => {
    const logs = await run.logDirectory();
    const mine = sandbox('scope-mine', logs);
    const theirs = sandbox('scope-theirs', logs, `${node}-other`);
    try {
      const sm = await nr.runtime.runPodSandbox(mine);
      // Another agent's sandbox on the same containerd (made with the unscoped client).
      const st = await run.runtime.runPodSandbox(theirs);
      const cm = await nr.runtime.createContainer(sm, container(mine, 'main', ['sleep', '3600']), mine);
      expect((await nr.runtime.listPodSandbox()).map((s) => s.id)).toEqual([sm]);
      expect((await nr.runtime.listContainers()).map((c) => c.id)).toEqual([cm]);
      await expect(nr.runtime.stopPodSandbox(st)).rejects.toMatchObject({
        code: 'ERR_INVALID_ARGUMENT',
        message: expect.stringContaining(`refusing to stop sandbox ${st}`),
      });
      await expect(nr.runtime.createContainer(st, container(theirs, 'x', ['true']), theirs)).rejects.toMatchObject({
        code: 'ERR_INVALID_ARGUMENT',
      });
      await expect(nr.runtime.runPodSandbox(run.sandboxConfig('unlabelled', logs))).rejects.toThrow(
        /labels io.kubernetes.pod.uid and kubelet-ts.node-name=cri-node-/,
      );
      // Theirs is untouched.
      expect((await run.runtime.podSandboxStatus(st)).status?.state).toBe('SANDBOX_READY');
    } finally {
      await run.cleanup();
    }
  });

  it("collects the pods' CPU, memory and log usage from ListContainerStats/ListPodSandboxStats, in the StatsSample shape", async () => {
    const logs = await run.logDirectory();
    const config = sandbox('stats', logs, node, { linux: { cgroup_parent: kCgroupParent } });
    const other = sandbox('stats-other', logs, `${node}-other`, { linux: { cgroup_parent: kCgroupParent } });
    try {
      const sb = await nr.runtime.runPodSandbox(config);
      await run.runtime.runPodSandbox(other);
      const busy = await nr.runtime.createContainer(
        sb,
        container(config, 'busy', ['sh', '-c', 'echo started; x=; while :; do x="$x.."; [ ${#x} -gt 100000 ] && x=; done']),
        config,
      );
      await nr.runtime.startContainer(busy);
      const deps = { runtime: nr.runtime, images: nr.images, rootDir: logs, cgroupRoot: '', clock: realClock };
      const sample = await waitFor(
        async () => {
          const s = await collectCriStats(deps, { kind: 'stats', protocol: 1 });
          const c = s.pods[0]?.containers[0];
          return (c?.cgroup?.cpuUsageNs ?? 0) > 0 && (c?.cgroup?.workingSetBytes ?? 0) > 0 && (c?.logsUsedBytes ?? 0) > 0 ? s : null;
        },
        { timeoutMs: 30_000, description: 'CPU, memory and log figures of the busy container' },
      );
      expect(sample.pods.map((p) => p.name)).toEqual(['stats']);
      const [pod] = sample.pods;
      expect(pod).toMatchObject({ uid: config.metadata?.uid, namespace: 'kts-cri-test', volumes: [] });
      expect(pod!.startedAtMs).toBeGreaterThan(Date.now() - 120_000);
      // The image as ContainerStatus names it (containerd: the image's first repo tag, normalized).
      expect(pod!.containers.map((c) => [c.id, c.name, c.image])).toEqual([[busy, 'busy', `docker.io/${BUSYBOX_IMAGE}`]]);
      expect(pod!.containers[0]!.cgroupPath).toMatch(/^\//);
      expect(pod!.cgroup?.cpuUsageNs).toBeGreaterThan(0);
      expect(sample.node.memoryCapacityBytes).toBeGreaterThan(0);
      expect(sample.node.imageFs?.capacityBytes).toBeGreaterThan(0);
      // Narrowed to no pods: the node alone, no runtime calls.
      expect((await collectCriStats(deps, { kind: 'stats', protocol: 1, pods: [] })).pods).toEqual([]);
    } finally {
      await run.cleanup();
      const controllers = await readdir('/sys/fs/cgroup').catch(() => [] as string[]);
      await Promise.all(controllers.map((c) => rmdir(join('/sys/fs/cgroup', c, kCgroupParent)).catch(() => undefined)));
    }
  });

  it('the pool thread of a CRI runtime answers the status check, stats and a relist (the tasks of the CRI syncer, kuberuntime/worker-tasks.ts)', async () => {
    const b: WorkerBootstrap = {
      protocol: PROTOCOL_VERSION,
      runtime: 'remote',
      dockerSocketPath: '',
      containerRuntimeEndpoint: endpoint!,
      nodeName: node,
      rootDir: await run.logDirectory(),
      podInfraContainerImage: 'kubelet-ts/pause:1.0',
      logLevel: 'silent',
    };
    const handle = createWorkerHandler(b);
    expect(await handle({ kind: 'runtimeStatus', protocol: PROTOCOL_VERSION })).toMatchObject({ ok: true, kind: 'runtimeStatus' });
    const stats = await handle({ kind: 'stats', protocol: PROTOCOL_VERSION, pods: [] });
    expect(stats).toMatchObject({ ok: true, kind: 'stats', value: { pods: [] } });
    expect((stats as { value: { node: { memoryCapacityBytes: number } } }).value.node.memoryCapacityBytes).toBeGreaterThan(0);
    // A relist on the node label: this run's node has no sandbox, so none is listed.
    expect(await handle({ kind: 'relist', protocol: PROTOCOL_VERSION })).toMatchObject({ ok: true, kind: 'relist' });
  });
});
