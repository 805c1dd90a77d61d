// The CRI contract suites — what a CRI runtime answers, as the real containerd showed it (docs/cri.md) — run against any implementation of the seam (the gRPC clients on containerd, the Docker implementation on dockerd); the role of cri-tools' critest pkg/validate (runtime_info, pod, container, networking, streaming, image).
import { execFileSync } from 'node:child_process';
import { hostname } from 'node:os';
import { readdir, readFile, rename, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import WebSocket from 'ws';
import { isNotFound } from '../../src/shared/errors.js';
import { isCommandTimeout } from '../../src/workers/runtime/cri/errors.js';
import type { ContainerConfig, ContainerStatus, CriInput } from '../../src/workers/runtime/cri/types.js';
import { pushVariantImage, type CriRun } from './cri.js';
import { BUSYBOX_IMAGE, waitFor } from './docker.js';

/** A CRI log line (pkg/kubelet/kuberuntime/logs: `<RFC3339Nano> <stdout|stderr> <P|F> <content>`). */
const kCriLogLine = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+(?:Z|[+-]\d\d:\d\d)) (stdout|stderr) (P|F) (.*)$/;

/** CriTraits: where a runtime's answers differ, said once per runtime (and why, in the runtime's traits). */
export interface CriTraits {
  /** Version's runtime_name, runtime_version and runtime_api_version. */
  version: { runtime_name: string; runtime_version: RegExp; runtime_api_version: RegExp };
  /** The runtime writes CRI log lines at `log_directory/log_path` (containerd); Docker writes its json-file (the agent reads it through Docker's API). */
  criLogFiles: boolean;
  /**
   * The pod network of this run: the IP a sandbox gets, the subnet route its containers see (and no
   * default route), the address prefix no NAT rule may name (no masquerade: pods stay on the
   * machine); null when this run has none.
   */
  podNetwork: { ip: RegExp; route: string; natPrefix: string } | null;
  /** Exec/Attach/PortForward answer URLs of a streaming server (containerd); Docker's reject: the agent streams directly. */
  streamingServer: boolean;
  /** Errors worded as the gRPC client words them (`<Method>: rpc error: code = NotFound desc = …`). */
  grpcErrors: boolean;
  /** The reference a local image's repo_tags hold for `ref` (containerd qualifies it with `docker.io/`). */
  repoTag(ref: string): string;
  /** ImageFsInfo's mountpoint. */
  imageFsMountpoint: RegExp;
  /** The message of a pull refused for want of credentials. */
  unauthorizedPull: RegExp;
}

/**
 * runtimeServiceContract: the RuntimeService suite on `run` (inside a describe; each test removes
 * what it made in `finally`).
 */
export function runtimeServiceContract(run: CriRun, t: CriTraits): void {
  const { runtime } = run;

  /** A busybox container config labelled with the run label. */
  function container(name: string, command: string[], more: CriInput<ContainerConfig> = {}): CriInput<ContainerConfig> {
    return {
      metadata: { name, attempt: 0 },
      image: { image: BUSYBOX_IMAGE },
      command,
      log_path: `${name}/0.log`,
      labels: { ...run.label },
      ...more,
    };
  }

  async function exited(id: string): Promise<ContainerStatus> {
    return waitFor(
      async () => {
        const s = (await runtime.containerStatus(id)).status;
        return s?.state === 'CONTAINER_EXITED' ? s : null;
      },
      { timeoutMs: 60_000, description: `container ${id} exited` },
    );
  }

  it('answers Version and Status: its name, CRI v1, runtime and network ready', async () => {
    const v = await runtime.version('0.1.0');
    expect(v.runtime_name).toBe(t.version.runtime_name);
    expect(v.runtime_version).toMatch(t.version.runtime_version);
    expect(v.runtime_api_version).toMatch(t.version.runtime_api_version);
    const conditions = (await runtime.status()).status?.conditions ?? [];
    expect(conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'RuntimeReady', status: true }),
        expect.objectContaining({ type: 'NetworkReady', status: true }),
      ]),
    );
  });

  it('runs a container to its end: exit code, reason, timestamps in order, its log file', async () => {
    const logs = await run.logDirectory();
    const config = run.sandboxConfig('lifecycle', logs);
    try {
      const before = Date.now() * 1e6;
      const sandbox = await runtime.runPodSandbox(config);
      const id = await runtime.createContainer(sandbox, container('main', ['sh', '-c', 'echo to-out; echo to-err >&2; exit 3']), config);
      expect((await runtime.containerStatus(id)).status?.state).toBe('CONTAINER_CREATED');
      await runtime.startContainer(id);
      const s = await exited(id);
      expect(s).toMatchObject({ id, exit_code: 3, reason: 'Error', metadata: { name: 'main', attempt: 0 } });
      expect(s.created_at).toBeGreaterThan(before - 5e9);
      expect(s.started_at).toBeGreaterThanOrEqual(s.created_at);
      // Not finished >= started: containerd 1.6 stamps a container that exits at once with a finish
      // up to a fraction of a millisecond before its start (seen: 0.18 ms), from two events' clocks.
      expect(s.finished_at).toBeGreaterThanOrEqual(s.created_at);
      if (t.criLogFiles) {
        expect(s.log_path).toBe(join(logs, 'main/0.log'));
        const lines = (await readFile(join(logs, 'main/0.log'), 'utf8'))
          .trimEnd()
          .split('\n')
          .map((l) => kCriLogLine.exec(l));
        expect(lines.every((m) => m !== null)).toBe(true);
        expect(lines.map((m) => [m![2], m![3], m![4]])).toEqual(
          expect.arrayContaining([
            ['stdout', 'F', 'to-out'],
            ['stderr', 'F', 'to-err'],
          ]),
        );
        expect(Number.isNaN(Date.parse(lines[0]![1]!))).toBe(false);
      } else {
        // Docker's json-file: one JSON object a line, the stream named.
        const lines = (await readFile(s.log_path, 'utf8'))
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as { log: string; stream: string });
        expect(lines.map((l) => [l.stream, l.log])).toEqual(
          expect.arrayContaining([
            ['stdout', 'to-out\n'],
            ['stderr', 'to-err\n'],
          ]),
        );
      }

      const ok = await runtime.createContainer(sandbox, container('ok', ['true'], { log_path: 'ok/0.log' }), config);
      await runtime.startContainer(ok);
      expect(await exited(ok)).toMatchObject({ exit_code: 0, reason: 'Completed' });
    } finally {
      await run.cleanup();
    }
  });

  it("reports a container whose start failed as exited with StartError and the runtime's message", async () => {
    const config = run.sandboxConfig('starterr', await run.logDirectory());
    try {
      const sandbox = await runtime.runPodSandbox(config);
      const id = await runtime.createContainer(sandbox, container('bad', ['/no/such/binary']), config);
      await expect(runtime.startContainer(id)).rejects.toThrow(/no such file or directory|not found/i);
      const s = (await runtime.containerStatus(id)).status!;
      expect(s).toMatchObject({
        state: 'CONTAINER_EXITED',
        reason: 'StartError',
        message: expect.stringMatching(/no such file or directory|not found/i),
      });
      expect(s.exit_code).toBeGreaterThan(0);
      expect(s.finished_at).toBeGreaterThanOrEqual(s.created_at);
    } finally {
      await run.cleanup();
    }
  });

  it.skipIf(t.podNetwork === null)('gives a CNI sandbox an IP on the pod network that answers from the host', async () => {
    const config = run.sandboxConfig('net', await run.logDirectory(), { hostname: 'net-pod' });
    try {
      const sandbox = await runtime.runPodSandbox(config);
      const status = (await runtime.podSandboxStatus(sandbox)).status!;
      expect(status).toMatchObject({ id: sandbox, state: 'SANDBOX_READY', metadata: config.metadata, labels: run.label });
      const ip = status.network!.ip;
      expect(ip).toMatch(t.podNetwork!.ip);
      expect(status.linux?.namespaces?.options?.network).toBe('POD');
      const web = await runtime.createContainer(
        sandbox,
        container('web', ['sh', '-c', 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www']),
        config,
      );
      await runtime.startContainer(web);
      const body = await waitFor(async () => (await fetch(`http://${ip}:8080/`)).text(), {
        timeoutMs: 30_000,
        description: `http://${ip}:8080/`,
      });
      expect(body.trim()).toBe('net-pod');
      // The runtime's network stays on the machine: no default route in the pod, no masquerade for its subnet.
      const routes = (await runtime.execSync(web, ['ip', '-4', 'route'], 10)).stdout.toString();
      expect(routes).toContain(t.podNetwork!.route);
      expect(routes).not.toMatch(/^default/m);
      expect(execFileSync('iptables', ['-t', 'nat', '-S'], { encoding: 'utf8' })).not.toContain(t.podNetwork!.natPrefix);
    } finally {
      await run.cleanup();
    }
  });

  it("gives a host-network sandbox the node: no pod IP, the node's hostname in its containers", async () => {
    const hostConfig = run.sandboxConfig('hostnet', await run.logDirectory(), {
      linux: { security_context: { namespace_options: { network: 'NODE', pid: 'POD', ipc: 'POD' } } },
    });
    try {
      const hostSandbox = await runtime.runPodSandbox(hostConfig);
      const hostStatus = (await runtime.podSandboxStatus(hostSandbox)).status;
      expect(hostStatus?.linux?.namespaces?.options?.network).toBe('NODE');
      expect(hostStatus?.network?.ip ?? '').toBe('');
      const sh = await runtime.createContainer(hostSandbox, container('sh', ['sleep', '3600']), hostConfig);
      await runtime.startContainer(sh);
      const r = await runtime.execSync(sh, ['hostname'], 10);
      expect(r.stdout.toString().trim()).toBe(hostname());
    } finally {
      await run.cleanup();
    }
  });

  it('runs ExecSync (stdout, stderr, exit code), answers or refuses streaming, stops with a timeout and removes', async () => {
    const config = run.sandboxConfig('exec', await run.logDirectory());
    try {
      const sandbox = await runtime.runPodSandbox(config);
      // SIGTERM is ignored (sleep inherits the shell's SIG_IGN): only the stop timeout's SIGKILL ends it.
      const id = await runtime.createContainer(sandbox, container('sleeper', ['sh', '-c', "trap '' TERM; sleep 3600"]), config);
      await runtime.startContainer(id);
      expect((await runtime.containerStatus(id)).status?.state).toBe('CONTAINER_RUNNING');

      const r = await runtime.execSync(id, ['sh', '-c', 'echo out; echo err >&2; exit 7'], 10);
      expect({ stdout: r.stdout.toString(), stderr: r.stderr.toString(), exit_code: r.exit_code }).toEqual({
        stdout: 'out\n',
        stderr: 'err\n',
        exit_code: 7,
      });
      const late = await runtime.execSync(id, ['sleep', '30'], 1).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(late?.message).toBe('ExecSync: command "sleep 30" timed out after 1s');
      expect(isCommandTimeout(late)).toBe(true);

      if (t.streamingServer) {
        const exec = await runtime.exec({ container_id: id, cmd: ['sh'], stdin: true, stdout: true, tty: true });
        expect(exec.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/exec\/[\w-]+$/);
        const attach = await runtime.attach({ container_id: id, stdout: true, stderr: true });
        expect(attach.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/attach\/[\w-]+$/);
        const pf = await runtime.portForward({ pod_sandbox_id: sandbox, port: [8080] });
        expect(pf.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/portforward\/[\w-]+$/);
      } else {
        await expect(runtime.exec({ container_id: id, cmd: ['sh'], stdout: true })).rejects.toThrow(/^Exec: .*direct streaming/);
        await expect(runtime.attach({ container_id: id, stdout: true })).rejects.toThrow(/^Attach: .*direct streaming/);
        await expect(runtime.portForward({ pod_sandbox_id: sandbox, port: [8080] })).rejects.toThrow(/^PortForward: .*direct streaming/);
      }

      await runtime.stopContainer(id, 1);
      const s = (await runtime.containerStatus(id)).status!;
      expect(s).toMatchObject({ state: 'CONTAINER_EXITED', exit_code: 137 });
      await runtime.stopContainer(id, 1); // stopping a stopped container succeeds
      await runtime.removeContainer(id);
      const gone = await runtime.containerStatus(id).then(
        () => 'still there',
        (err: unknown) => err,
      );
      expect(isNotFound(gone)).toBe(true);
      if (t.grpcErrors) expect((gone as Error).message).toMatch(/^ContainerStatus: rpc error: code = NotFound desc = /);
      await runtime.removeContainer(id); // removing one already gone succeeds

      await runtime.stopPodSandbox(sandbox);
      expect((await runtime.podSandboxStatus(sandbox)).status?.state).toBe('SANDBOX_NOTREADY');
      await runtime.removePodSandbox(sandbox);
      expect(
        isNotFound(
          await runtime.podSandboxStatus(sandbox).then(
            () => 'still there',
            (err: unknown) => err,
          ),
        ),
      ).toBe(true);
    } finally {
      await run.cleanup();
    }
  });

  it('lists sandboxes and containers by label, sandbox and state, and reports their stats', async () => {
    // The kubelet always gives a pod cgroup; containerd 1.6 has no sandbox stats without one.
    const a = run.sandboxConfig('list-a', await run.logDirectory(), {
      labels: { which: 'a' },
      linux: { cgroup_parent: '/kubelet-ts-cri-test' },
    });
    const b = run.sandboxConfig('list-b', await run.logDirectory(), { labels: { which: 'b' } });
    try {
      const [sa, sb] = [await runtime.runPodSandbox(a), await runtime.runPodSandbox(b)];
      const ca = await runtime.createContainer(
        sa,
        container('a', ['sh', '-c', 'x=; while :; do x="$x.."; [ ${#x} -gt 100000 ] && x=; done'], {
          labels: { ...run.label, which: 'a' },
        }),
        a,
      );
      const cb = await runtime.createContainer(sb, container('b', ['sleep', '3600'], { labels: { ...run.label, which: 'b' } }), b);
      await runtime.startContainer(ca);

      const ours = await runtime.listPodSandbox({ label_selector: run.label });
      expect(ours.map((s) => s.id).sort()).toEqual([sa, sb].sort());
      expect((await runtime.listPodSandbox({ label_selector: { ...run.label, which: 'b' } })).map((s) => s.id)).toEqual([sb]);
      expect(await runtime.listPodSandbox({ label_selector: { ...run.label, which: 'none' } })).toEqual([]);
      expect((await runtime.listPodSandbox({ id: sa })).map((s) => s.metadata?.name)).toEqual(['list-a']);

      expect((await runtime.listContainers({ label_selector: run.label })).map((c) => c.id).sort()).toEqual([ca, cb].sort());
      expect((await runtime.listContainers({ pod_sandbox_id: sb })).map((c) => c.id)).toEqual([cb]);
      const running = await runtime.listContainers({ label_selector: run.label, state: { state: 'CONTAINER_RUNNING' } });
      expect(running.map((c) => [c.id, c.state, c.pod_sandbox_id])).toEqual([[ca, 'CONTAINER_RUNNING', sa]]);

      const stats = await waitFor(
        async () => {
          const st = await runtime.containerStats(ca);
          return (st?.cpu?.usage_core_nano_seconds?.value ?? 0) > 0 && (st?.memory?.working_set_bytes?.value ?? 0) > 0 ? st : null;
        },
        { timeoutMs: 30_000, description: 'CPU and memory stats of the busy container' },
      );
      expect(stats.attributes).toMatchObject({ id: ca, metadata: { name: 'a' } });
      const listed = await runtime.listContainerStats({ label_selector: { ...run.label, which: 'a' } });
      expect(listed.map((s) => s.attributes?.id)).toEqual([ca]);
      expect((await runtime.listContainerStats({ pod_sandbox_id: sb })).map((s) => s.attributes?.id)).toEqual([cb]);
      const pod = await runtime.podSandboxStats(sa);
      expect(pod?.attributes?.id).toBe(sa);
      // The pod cgroup holds the busy container: its CPU is at least the container's.
      expect(pod?.linux?.cpu?.usage_core_nano_seconds?.value).toBeGreaterThanOrEqual(stats.cpu!.usage_core_nano_seconds!.value);
      expect(pod?.linux?.memory?.working_set_bytes?.value).toBeGreaterThan(0);
    } finally {
      await run.cleanup();
      // The test's pod cgroup, empty once its sandbox is gone (cgroup v1: one per controller).
      const controllers = await readdir('/sys/fs/cgroup').catch(() => [] as string[]);
      await Promise.all(controllers.map((c) => rmdir(join('/sys/fs/cgroup', c, 'kubelet-ts-cri-test')).catch(() => undefined)));
    }
  });

  it("updates a running container's resources (memory, CPU shares) and answers them in its status", async () => {
    const config = run.sandboxConfig('update', await run.logDirectory());
    try {
      const sandbox = await runtime.runPodSandbox(config);
      const id = await runtime.createContainer(sandbox, container('sleeper', ['sleep', '3600']), config);
      await runtime.startContainer(id);
      await runtime.updateContainerResources(id, { memory_limit_in_bytes: 64 * 1024 * 1024, cpu_shares: 512 });
      const r = (await runtime.containerStatus(id)).status?.resources?.linux;
      expect(r).toMatchObject({ memory_limit_in_bytes: 64 * 1024 * 1024, cpu_shares: 512 });
    } finally {
      await run.cleanup();
    }
  });

  it.skipIf(!t.criLogFiles)("reopens a container's log after the file was moved away", async () => {
    const logs = await run.logDirectory();
    const config = run.sandboxConfig('reopen', logs);
    try {
      const sandbox = await runtime.runPodSandbox(config);
      const id = await runtime.createContainer(
        sandbox,
        container('ticker', ['sh', '-c', 'i=0; while :; do echo tick$i; i=$((i+1)); sleep 0.2; done']),
        config,
      );
      await runtime.startContainer(id);
      const log = join(logs, 'ticker/0.log');
      await waitFor(async () => (await readFile(log, 'utf8')).includes('tick1'), { description: 'the first ticks in the log' });
      await rename(log, `${log}.1`);
      await runtime.reopenContainerLog(id);
      const fresh = await waitFor(
        async () => {
          const text = await readFile(log, 'utf8');
          return text.includes(' stdout F tick') ? text : null;
        },
        { timeoutMs: 20_000, description: 'new lines in the reopened log file' },
      );
      expect(fresh.split('\n')[0]).toMatch(kCriLogLine);
    } finally {
      await run.cleanup();
    }
  });

  it.skipIf(!t.streamingServer)(
    'serves an exec on the streaming URL it answers (WebSocket, v4.channel.k8s.io): output and exit code',
    async () => {
      const config = run.sandboxConfig('stream', await run.logDirectory());
      try {
        const sandbox = await runtime.runPodSandbox(config);
        const id = await runtime.createContainer(sandbox, container('main', ['sleep', '3600']), config);
        await runtime.startContainer(id);
        const { url } = await runtime.exec({
          container_id: id,
          cmd: ['sh', '-c', 'echo from-exec; echo oops >&2; exit 4'],
          stdout: true,
          stderr: true,
        });
        // The remotecommand WebSocket protocol: each frame's first byte is its channel (1 stdout, 2 stderr, 3 the Status).
        const frames = new Map<number, string>();
        const ws = new WebSocket(url.replace(/^http/, 'ws'), ['v4.channel.k8s.io']);
        try {
          ws.on('message', (d: Buffer) => frames.set(d[0]!, (frames.get(d[0]!) ?? '') + d.subarray(1).toString()));
          await new Promise<void>((resolve, reject) => {
            ws.on('close', () => resolve());
            ws.on('error', reject);
          });
        } finally {
          ws.terminate();
        }
        expect(frames.get(1)).toBe('from-exec\n');
        expect(frames.get(2)).toBe('oops\n');
        expect(JSON.parse(frames.get(3)!)).toMatchObject({
          status: 'Failure',
          reason: 'NonZeroExitCode',
          details: { causes: [{ reason: 'ExitCode', message: '4' }] },
        });
      } finally {
        await run.cleanup();
      }
    },
  );
}

/**
 * imageServiceContract: the ImageManagerService suite on `run` (inside a describe); the pulls need
 * the test registries (`registries`: .run/registry.env, null = those tests skip).
 */
export function imageServiceContract(run: CriRun, t: CriTraits, registries: Record<string, string> | null): void {
  const { images } = run;

  it('answers ImageStatus and ListImages for the test image, and a null image for one it does not hold', async () => {
    const status = await images.imageStatus({ image: BUSYBOX_IMAGE });
    expect(status.image).toMatchObject({ repo_tags: expect.arrayContaining([t.repoTag(BUSYBOX_IMAGE)]) });
    expect(status.image!.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(status.image!.size).toBeGreaterThan(0);
    expect((await images.imageStatus({ image: 'kubelet-ts/no-such-image:0' })).image).toBeNull();

    const all = await images.listImages();
    expect(all.map((i) => i.id)).toContain(status.image!.id);
    // (ListImages' filter is not asserted: containerd 1.6 ignores it, and the kubelet never sends one.)
  });

  it('answers ImageFsInfo with the filesystem of its own root', async () => {
    const fs = await images.imageFsInfo();
    expect(fs.image_filesystems.length).toBeGreaterThan(0);
    expect(fs.image_filesystems[0]!.fs_id?.mountpoint).toMatch(t.imageFsMountpoint);
    expect(fs.image_filesystems[0]!.used_bytes?.value).toBeGreaterThan(0);
  });

  it.skipIf(!registries)('pulls from the open registry, reports the image, removes it (and again, idempotently)', async () => {
    const pushed = await pushVariantImage(registries!.KUBELET_TS_REGISTRY!, run.label);
    try {
      expect((await images.imageStatus({ image: pushed.ref })).image).toBeNull();
      const ref = await images.pullImage({ image: pushed.ref });
      expect(ref).toBe(pushed.id);
      const status = await images.imageStatus({ image: pushed.ref });
      expect(status.image).toMatchObject({ id: pushed.id, repo_tags: [pushed.ref] });
      expect(status.image!.repo_digests[0]).toMatch(new RegExp(`^${pushed.ref.replace(/:[^:]+$/, '')}@sha256:`));
    } finally {
      await images.removeImage({ image: pushed.ref });
    }
    expect((await images.imageStatus({ image: pushed.ref })).image).toBeNull();
    await images.removeImage({ image: pushed.ref });
    // The test image the variant shares its layers with is still there.
    expect((await images.imageStatus({ image: BUSYBOX_IMAGE })).image).not.toBeNull();
  });

  it.skipIf(!registries)('pulls from the registry that wants credentials only with them', async () => {
    const user = { username: registries!.KUBELET_TS_REGISTRY_USER!, password: registries!.KUBELET_TS_REGISTRY_PASSWORD! };
    const pushed = await pushVariantImage(registries!.KUBELET_TS_REGISTRY_AUTH!, run.label, user);
    try {
      const refused = await images.pullImage({ image: pushed.ref }).then(
        () => 'pulled',
        (err: unknown) => err as Error & { code?: string },
      );
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error & { code: string }).code).toBe('ERR_RUNTIME');
      expect((refused as Error).message).toMatch(t.unauthorizedPull);
      expect(await images.pullImage({ image: pushed.ref }, user)).toBe(pushed.id);
    } finally {
      await images.removeImage({ image: pushed.ref });
    }
  });

  it('answers NotFound for a sandbox it does not know', async () => {
    const err = await run.runtime.podSandboxStatus('no-such-sandbox').then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(isNotFound(err)).toBe(true);
    if (t.grpcErrors) expect(err!.message).toMatch(/^PodSandboxStatus: rpc error: code = NotFound desc = /);
  });
}
