// The Docker implementation of the CRI (docker-node-runtime.ts) over the in-memory fake, node-scoped as the workers use it: the sandbox and container lifecycle, the answers in the CRI's words, images by ID; the role of dockershim's docker_service_test.go / docker_sandbox_test.go with its fake client.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isNotFound } from '../../../../src/shared/errors.js';
import { kNoopPodNetwork, type PodNetwork } from '../../../../src/workers/network/pod-network.js';
import type { CriInput, PodSandboxConfig } from '../../../../src/workers/runtime/cri/types.js';
import { newDockerNodeRuntime } from '../../../../src/workers/runtime/docker/docker-node-runtime.js';
import { newFakeRuntime, type FakeRuntime } from '../../../../src/workers/runtime/fake/fake-runtime.js';
import { scopeToNode } from '../../../../src/workers/runtime/node-scope.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function setUp(network: PodNetwork = kNoopPodNetwork, images?: string[]) {
  const rootDir = await mkdtemp(join(tmpdir(), 'kts-dockershim-'));
  dirs.push(rootDir);
  const fake = newFakeRuntime({ images });
  const nr = newDockerNodeRuntime(scopeToNode(fake, 'node-a'), {
    network,
    rootDir,
    podInfraImage: 'kubelet-ts/pause:1.0',
    nodeIp: '127.0.0.1',
    podPidsLimit: 0,
    oomScoreAdjFloor: async () => -1000,
  });
  return { fake, nr, rootDir };
}

function sandboxConfig(uid: string, more: CriInput<PodSandboxConfig> = {}): CriInput<PodSandboxConfig> {
  return {
    metadata: { name: 'web', namespace: 'prod', uid, attempt: 0 },
    hostname: 'web',
    labels: {
      'io.kubernetes.pod.uid': uid,
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'prod',
      'kubelet-ts.node-name': 'node-a',
      app: 'web',
    },
    annotations: { 'io.kubernetes.container.hash': 'h1' },
    dns_config: { servers: ['10.0.0.10'], searches: ['prod.svc.cluster.local'], options: ['ndots:5'] },
    ...more,
  };
}

function containerConfig(sb: CriInput<PodSandboxConfig>, name = 'app') {
  return {
    metadata: { name, attempt: 0 },
    image: { image: 'kubelet-ts/busybox:1.35' },
    command: ['sleep', '3600'],
    labels: { ...sb.labels, 'io.kubernetes.container.name': name },
    annotations: { 'io.kubernetes.container.restartCount': '0' },
  };
}

describe('the Docker CRI over the fake runtime', () => {
  it('runs a sandbox: the pause container with its labels, resolv.conf from dns_config, status and list in CRI words', async () => {
    const { fake, nr, rootDir } = await setUp();
    const sb = sandboxConfig('u-1');
    const id = await nr.runtime.runPodSandbox(sb);
    expect(fake.specOf(id)).toMatchObject({
      name: 'k8s_POD_web_prod_u-1_0',
      image: 'kubelet-ts/pause:1.0',
      labels: { 'io.kubernetes.docker.type': 'podsandbox', 'annotation.io.kubernetes.container.hash': 'h1' },
    });
    expect(await readFile(join(rootDir, 'pods/u-1/resolv.conf'), 'utf8')).toBe(
      'nameserver 10.0.0.10\nsearch prod.svc.cluster.local\noptions ndots:5\n',
    );

    const { status } = await nr.runtime.podSandboxStatus(id);
    expect(status).toMatchObject({
      id,
      state: 'SANDBOX_READY',
      metadata: { name: 'web', namespace: 'prod', uid: 'u-1', attempt: 0 },
      network: { ip: '' },
      labels: sb.labels,
      annotations: sb.annotations,
      linux: { namespaces: { options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
    });
    expect(status!.created_at).toBeGreaterThan(1.6e18);
    expect((await nr.runtime.listPodSandbox({ label_selector: { app: 'web' } })).map((s) => s.id)).toEqual([id]);
    expect(await nr.runtime.listPodSandbox({ label_selector: { app: 'other' } })).toEqual([]);
    expect(await nr.runtime.listPodSandbox({ state: { state: 'SANDBOX_NOTREADY' } })).toEqual([]);

    await nr.runtime.stopPodSandbox(id);
    expect((await nr.runtime.podSandboxStatus(id)).status!.state).toBe('SANDBOX_NOTREADY');
    await nr.runtime.removePodSandbox(id);
    await nr.runtime.removePodSandbox(id); // idempotent
    await nr.runtime.stopPodSandbox(id);
    expect(isNotFound(await nr.runtime.podSandboxStatus(id).catch((e: unknown) => e))).toBe(true);
  });

  it('creates, starts, stops and removes a container in the sandbox, with the pod resolv.conf bound and CRI states, times and reasons', async () => {
    const { fake, nr, rootDir } = await setUp();
    const sb = sandboxConfig('u-2');
    const sandboxId = await nr.runtime.runPodSandbox(sb);
    const id = await nr.runtime.createContainer(sandboxId, containerConfig(sb), sb);
    expect(fake.specOf(id)).toMatchObject({
      name: 'k8s_app_web_prod_u-2_0',
      entrypoint: ['sleep', '3600'],
      labels: {
        'io.kubernetes.docker.type': 'container',
        'io.kubernetes.sandbox.id': sandboxId,
        'annotation.io.kubernetes.container.restartCount': '0',
      },
      hostConfig: {
        networkMode: `container:${sandboxId}`,
        ipcMode: `container:${sandboxId}`,
        binds: [`${rootDir}/pods/u-2/resolv.conf:/etc/resolv.conf`],
      },
    });
    expect((await nr.runtime.containerStatus(id)).status).toMatchObject({ state: 'CONTAINER_CREATED', started_at: 0, reason: '' });
    await nr.runtime.startContainer(id);
    const listed = await nr.runtime.listContainers({ pod_sandbox_id: sandboxId });
    expect(listed).toMatchObject([
      {
        id,
        pod_sandbox_id: sandboxId,
        state: 'CONTAINER_RUNNING',
        metadata: { name: 'app', attempt: 0 },
        labels: { 'io.kubernetes.container.name': 'app' },
      },
    ]);
    expect(await nr.runtime.listContainers({ state: { state: 'CONTAINER_EXITED' } })).toEqual([]);
    expect(await nr.runtime.listContainers({ id: id.slice(0, 12) })).toHaveLength(1);

    fake.exit(id, 3);
    const { status } = await nr.runtime.containerStatus(id);
    expect(status).toMatchObject({
      state: 'CONTAINER_EXITED',
      exit_code: 3,
      reason: 'Error',
      metadata: { name: 'app', attempt: 0 },
      annotations: { 'io.kubernetes.container.restartCount': '0' },
    });
    expect(status!.mounts).toMatchObject([
      { container_path: '/etc/resolv.conf', host_path: `${rootDir}/pods/u-2/resolv.conf`, readonly: false },
    ]);
    expect(status!.finished_at).toBeGreaterThanOrEqual(status!.started_at);
    // A sandbox is not a container, and a container is not a sandbox.
    expect(isNotFound(await nr.runtime.containerStatus(sandboxId).catch((e: unknown) => e))).toBe(true);
    expect(isNotFound(await nr.runtime.podSandboxStatus(id).catch((e: unknown) => e))).toBe(true);

    await nr.runtime.removePodSandbox(sandboxId);
    expect(await nr.runtime.listContainers({})).toEqual([]);
    await nr.runtime.removeContainer(id); // already gone: not an error
  });

  it('answers ExecSync with the exit code as data, and refuses the streaming calls naming direct streaming', async () => {
    const { fake, nr } = await setUp();
    const sb = sandboxConfig('u-3');
    const sandboxId = await nr.runtime.runPodSandbox(sb);
    const id = await nr.runtime.createContainer(sandboxId, containerConfig(sb), sb);
    await nr.runtime.startContainer(id);
    fake.setExecResult(id, { exitCode: 2, output: 'nope\n', timedOut: false });
    const r = await nr.runtime.execSync(id, ['false'], 5);
    expect({ ...r, stdout: r.stdout.toString() }).toMatchObject({ exit_code: 2, stdout: 'nope\n' });
    fake.setExecResult(id, { exitCode: -1, output: '', timedOut: true });
    await expect(nr.runtime.execSync(id, ['sleep', '10'], 1)).rejects.toThrow('ExecSync: command "sleep 10" timed out after 1s');
    await expect(nr.runtime.exec({ container_id: id, cmd: ['sh'] })).rejects.toMatchObject({
      code: 'ERR_RUNTIME',
      message: expect.stringContaining('direct streaming'),
    });
    await expect(nr.runtime.attach({ container_id: id })).rejects.toThrow(/^Attach: .*direct streaming/);
    await expect(nr.runtime.portForward({ pod_sandbox_id: sandboxId })).rejects.toThrow(/^PortForward: .*direct streaming/);
    await nr.runtime.reopenContainerLog(id);
    expect(nr.idScheme).toBe('docker');
  });

  it('sets up the pod network after the start (port mappings with --node-ip), answers the IP, tears it down on stop; a failed ADD removes the sandbox', async () => {
    const calls: string[] = [];
    let fail = false;
    const ips = new Map<string, string[]>();
    const network: PodNetwork = {
      ...kNoopPodNetwork,
      enabled: true,
      async setUpPod(t) {
        calls.push(`add:${t.podName}:${t.netnsPath === '' ? 'no-netns' : 'netns'}:${JSON.stringify(t.portMappings)}`);
        if (fail) throw new Error('plugin bridge failed');
        ips.set(t.sandboxId, ['10.222.0.5']);
        return { ips: ['10.222.0.5'] };
      },
      async tearDownPod(t) {
        calls.push(`del:${t.podName}`);
        ips.delete(t.sandboxId);
      },
      async podNetworkStatus(id) {
        return ips.has(id) ? { ips: ips.get(id)! } : null;
      },
      async checkPod() {
        return true;
      },
    };
    const { fake, nr } = await setUp(network);
    // The fake has no processes: give its sandbox a pid as Docker's inspect would.
    const inspect = fake.inspectContainer.bind(fake);
    fake.inspectContainer = async (id) => ({ ...(await inspect(id)), pid: 4242 });
    const sb = sandboxConfig('u-4', { port_mappings: [{ protocol: 'TCP', container_port: 80, host_port: 8080 }, { container_port: 81 }] });
    const id = await nr.runtime.runPodSandbox(sb);
    expect(calls).toEqual(['add:web:netns:[{"hostPort":8080,"containerPort":80,"protocol":"tcp","hostIP":"127.0.0.1"}]']);
    expect((await nr.runtime.podSandboxStatus(id)).status).toMatchObject({ state: 'SANDBOX_READY', network: { ip: '10.222.0.5' } });
    await nr.runtime.stopPodSandbox(id);
    expect(calls.at(-1)).toBe('del:web');

    fail = true;
    const err = await nr.runtime.runPodSandbox(sandboxConfig('u-5')).catch((e: unknown) => e as Error);
    expect(err).toMatchObject({
      code: 'ERR_NETWORK',
      message: expect.stringMatching(
        /^failed to set up sandbox container "[0-9a-f]{64}" network for pod "web": networkPlugin cni failed to set up pod "web_prod" network: plugin bridge failed$/,
      ),
    });
    expect(await nr.runtime.listPodSandbox({ label_selector: { 'io.kubernetes.pod.uid': 'u-5' } })).toEqual([]);
  });

  it('answers a running sandbox NOTREADY once its network is lost (no cached result, or checkPod false), a full check first and quick ones after', async () => {
    const checks: string[] = [];
    let cached = true;
    let healthy: boolean | 'throws' = true;
    const network: PodNetwork = {
      ...kNoopPodNetwork,
      enabled: true,
      async setUpPod() {
        return { ips: ['10.222.0.9'] };
      },
      async podNetworkStatus() {
        return cached ? { ips: ['10.222.0.9'] } : null;
      },
      async checkPod(_t, netns, mode) {
        checks.push(`${mode}:${netns === '' ? 'no-netns' : 'netns'}`);
        if (healthy === 'throws') throw new Error('plugin CHECK crashed');
        return healthy;
      },
    };
    const { fake, nr } = await setUp(network);
    const inspect = fake.inspectContainer.bind(fake);
    fake.inspectContainer = async (id) => ({ ...(await inspect(id)), pid: 4242 });
    const id = await nr.runtime.runPodSandbox(sandboxConfig('u-6'));
    const state = async () => (await nr.runtime.podSandboxStatus(id)).status!.state;
    expect(await state()).toBe('SANDBOX_READY');
    expect(checks).toEqual(['quick:no-netns']); // set up here: quick checks only
    // A second service (an agent restarted) adopts the sandbox: a full CHECK in its netns first.
    const adopted = newDockerNodeRuntime(scopeToNode(fake, 'node-a'), {
      network,
      rootDir: '/nonexistent',
      oomScoreAdjFloor: async () => -1000,
    });
    expect((await adopted.runtime.podSandboxStatus(id)).status!.state).toBe('SANDBOX_READY');
    expect((await adopted.runtime.podSandboxStatus(id)).status!.state).toBe('SANDBOX_READY');
    expect(checks.slice(1)).toEqual(['full:netns', 'quick:no-netns']);
    healthy = false;
    expect(await state()).toBe('SANDBOX_NOTREADY');
    healthy = 'throws'; // a broken plugin does not recreate every sandbox
    expect(await state()).toBe('SANDBOX_READY');
    healthy = true;
    cached = false;
    expect(await state()).toBe('SANDBOX_NOTREADY');
  });

  it('answers images by ID: status with the user, removal of every tag, the pause image pinned', async () => {
    const { nr } = await setUp(kNoopPodNetwork, ['kubelet-ts/pause:1.0', 'kubelet-ts/busybox:1.35']);
    const st = await nr.images.imageStatus({ image: 'kubelet-ts/busybox:1.35' });
    expect(st.image).toMatchObject({
      id: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      repo_tags: ['kubelet-ts/busybox:1.35'],
      uid: null,
      username: '',
    });
    expect((await nr.images.imageStatus({ image: 'nope:1' })).image).toBeNull();
    const list = await nr.images.listImages();
    expect(list.find((i) => i.repo_tags.includes('kubelet-ts/pause:1.0'))?.pinned).toBe(true);
    await nr.images.removeImage({ image: st.image!.id });
    expect((await nr.images.imageStatus({ image: 'kubelet-ts/busybox:1.35' })).image).toBeNull();
    expect((await nr.images.imageStatus({ image: 'kubelet-ts/pause:1.0' })).image).not.toBeNull();
    await nr.images.removeImage({ image: 'kubelet-ts/busybox:1.35' }); // gone: not an error
    expect(await nr.images.imageFsInfo()).toEqual({ image_filesystems: [], container_filesystems: [] });
    expect(await nr.runtime.version('0.1.0')).toMatchObject({ version: '0.1.0', runtime_name: 'fake' });
    expect((await nr.runtime.status()).status!.conditions.map((c) => [c.type, c.status])).toEqual([
      ['RuntimeReady', true],
      ['NetworkReady', true],
    ]);
  });
});

export type { FakeRuntime };
