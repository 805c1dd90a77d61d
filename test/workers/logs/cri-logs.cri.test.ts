// CRI container logs against the real containerd of tools/lib/containerd.sh: the log file containerd writes, read and rotated by the agent (pkg/kubelet/kuberuntime/logs ReadLogs, pkg/kubelet/logs container_log_manager.go; the role of the node e2e suite's log and log-rotation tests, test/e2e_node/log_path_test.go, container_log_rotation_test.go).
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { realClock } from '../../../src/shared/clock.js';
import { newContainerLogManager } from '../../../src/workers/logs/container-log-manager.js';
import { newCriContainerLogs } from '../../../src/workers/logs/cri-log-reader.js';
import type { ContainerConfig, CriInput } from '../../../src/workers/runtime/cri/types.js';
import type { ContainerLogOptions } from '../../../src/workers/runtime/container/runtime.js';
import { criEndpointOrSkip, useCriRun } from '../../support/cri.js';
import { BUSYBOX_IMAGE, waitFor } from '../../support/docker.js';

const endpoint = criEndpointOrSkip();
const kOpts: ContainerLogOptions = { follow: false, timestamps: false };

describe.skipIf(!endpoint)('CRI container logs on containerd', { timeout: 120_000 }, () => {
  const run = useCriRun(endpoint);
  const { runtime } = run;
  const logs = newCriContainerLogs({ runtime });

  /** A busybox container config labelled with the run label; `/sig` is `sigDir` (the test's signals to the container). */
  function container(name: string, script: string, sigDir?: string): CriInput<ContainerConfig> {
    return {
      metadata: { name, attempt: 0 },
      image: { image: BUSYBOX_IMAGE },
      command: ['sh', '-c', script],
      log_path: `${name}/0.log`,
      labels: { ...run.label },
      mounts: sigDir ? [{ container_path: '/sig', host_path: sigDir }] : [],
    };
  }

  /** Runs a sandbox with one container of `script`; resolves its ID, and the sandbox's log directory. */
  async function start(name: string, script: string, sigDir?: string): Promise<{ id: string; logDir: string }> {
    const logDir = await run.logDirectory();
    const config = run.sandboxConfig(name, logDir);
    const sandbox = await runtime.runPodSandbox(config);
    const id = await runtime.createContainer(sandbox, container(name, script, sigDir), config);
    await runtime.startContainer(id);
    return { id, logDir };
  }

  async function exited(id: string): Promise<void> {
    await waitFor(async () => (await runtime.containerStatus(id)).status?.state === 'CONTAINER_EXITED' || null, {
      timeoutMs: 60_000,
      description: `container ${id} exited`,
    });
  }

  /** Reads the log to its end (follow: until the container exited); `during` runs while it is read. */
  function read(id: string, opts: ContainerLogOptions, during?: (got: () => string) => Promise<void>): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const got = () => Buffer.concat(chunks).toString('utf8');
      let ended = false;
      let duringDone: Promise<void> = Promise.resolve();
      logs
        .readContainerLogs(id, opts, {
          onData: (c) => chunks.push(c),
          onEnd: (err) => {
            ended = true;
            if (err) reject(err);
            else duringDone.then(() => resolve(got()), reject);
          },
        })
        .then((reader) => {
          if (during)
            duringDone = during(got).catch((err) => {
              reader.cancel();
              if (!ended) reject(err);
              throw err;
            });
        }, reject);
    });
  }

  it("reads a finished container's log: whole, tail, timestamps; stdout and stderr each in order", async () => {
    try {
      const { id } = await start('whole', 'for i in 1 2 3 4 5; do echo out-$i; echo err-$i >&2; done');
      await exited(id);
      const whole = (await read(id, kOpts)).split('\n');
      expect(whole.pop()).toBe('');
      expect(whole.filter((l) => l.startsWith('out-'))).toEqual(['out-1', 'out-2', 'out-3', 'out-4', 'out-5']);
      expect(whole.filter((l) => l.startsWith('err-'))).toEqual(['err-1', 'err-2', 'err-3', 'err-4', 'err-5']);
      expect(whole).toHaveLength(10);
      // The last two lines of the file, as containerd wrote them.
      const file = await readFile((await runtime.containerStatus(id)).status!.log_path, 'utf8');
      const last2 = file
        .trimEnd()
        .split('\n')
        .slice(-2)
        .map((l) => l.split(' ').slice(3).join(' '));
      expect(await read(id, { ...kOpts, tailLines: 2 })).toBe(`${last2.join('\n')}\n`);
      const stamped = (await read(id, { ...kOpts, timestamps: true })).trimEnd().split('\n');
      expect(stamped).toHaveLength(10);
      for (const l of stamped) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(Z|[+-]\d\d:\d\d) (out|err)-\d$/);
      expect(await logs.tailLogs(id, 1, 1024)).toBe(`${last2[1]}\n`);
    } finally {
      await run.cleanup();
    }
  });

  it("a line longer than containerd's 16 KiB is split into P fragments in the file and read back whole", async () => {
    try {
      const { id } = await start('long', 'echo before; head -c 40000 /dev/zero | tr "\\0" x; echo; echo after');
      await exited(id);
      const file = await readFile((await runtime.containerStatus(id)).status!.log_path, 'utf8');
      expect(file).toMatch(/ stdout P x+\n/);
      const out = (await read(id, kOpts)).split('\n');
      expect(out).toEqual(['before', 'x'.repeat(40000), 'after', '']);
      expect(await read(id, { ...kOpts, tailLines: 2 })).toBe(`${'x'.repeat(40000)}\nafter\n`);
    } finally {
      await run.cleanup();
    }
  });

  it('sinceSeconds leaves out the older lines', async () => {
    const sig = await mkdtemp(join(tmpdir(), 'kts-crilogs-sig-'));
    try {
      const { id } = await start('since', 'echo early; while [ ! -e /sig/go ]; do sleep 0.05; done; echo late; sleep 3600', sig);
      await waitFor(async () => (await read(id, kOpts)) === 'early\n' || null, { timeoutMs: 30_000, description: 'early' });
      // Lines are filtered by their own times: let `early` age past the window.
      await new Promise((resolve) => setTimeout(resolve, 4000));
      await writeFile(join(sig, 'go'), '');
      await waitFor(async () => (await read(id, kOpts)) === 'early\nlate\n' || null, { timeoutMs: 30_000, description: 'late' });
      expect(await read(id, { ...kOpts, sinceSeconds: 2 })).toBe('late\n');
    } finally {
      await run.cleanup();
      await rm(sig, { recursive: true, force: true });
    }
  });

  it('follows a running container to its end', async () => {
    const sig = await mkdtemp(join(tmpdir(), 'kts-crilogs-sig-'));
    try {
      const { id } = await start(
        'follow',
        'echo first; while [ ! -e /sig/go ]; do sleep 0.05; done; for i in $(seq 1 20); do echo line-$i; done; echo last >&2',
        sig,
      );
      const out = await read(id, { ...kOpts, follow: true }, async (got) => {
        await waitFor(() => got() === 'first\n' || null, { timeoutMs: 30_000, description: 'first line, followed' });
        await writeFile(join(sig, 'go'), '');
      });
      // stdout and stderr are two pipes: their lines are in file order, each stream in its own order.
      const lines = out.split('\n');
      expect(lines.pop()).toBe('');
      expect(lines.filter((l) => l !== 'last')).toEqual(['first', ...Array.from({ length: 20 }, (_, i) => `line-${i + 1}`)]);
      expect(lines.filter((l) => l === 'last')).toHaveLength(1);
    } finally {
      await run.cleanup();
      await rm(sig, { recursive: true, force: true });
    }
  });

  it('rotates a log past max size (ReopenContainerLog) while a follow keeps reading every line once, in order', async () => {
    const sig = await mkdtemp(join(tmpdir(), 'kts-crilogs-sig-'));
    try {
      const { id } = await start('rotate', 'i=0; while [ ! -e /sig/stop ]; do i=$((i+1)); echo line-$i; sleep 0.005; done; echo done', sig);
      const path = (await runtime.containerStatus(id)).status!.log_path;
      // Each round a minute later: rotated names (per second) never collide.
      let now = Date.now();
      const manager = newContainerLogManager(
        { runtime, clock: { ...realClock, now: () => (now += 60_000) } },
        { maxSizeBytes: 2048, maxFiles: 3 },
      );
      const out = await read(id, { ...kOpts, follow: true }, async (got) => {
        for (let round = 1; round <= 4; round++) {
          await waitFor(async () => (await readFile(path)).length >= 2048 || null, {
            timeoutMs: 30_000,
            description: `log over 2 KiB (round ${round})`,
          });
          await manager.rotateLogs();
          // The reader moved to the new file (a reader more than one rotation behind finds the
          // rotated file only while it is plain: the unit tests cover that).
          const first = await waitFor(async () => /^\S+ stdout F (line-\d+)$/m.exec(await readFile(path, 'utf8'))?.[1] ?? null, {
            timeoutMs: 30_000,
            description: `a line in the new file (round ${round})`,
          });
          await waitFor(() => got().includes(`${first}\n`) || null, {
            timeoutMs: 30_000,
            description: `${first}, the first line of the new file, read (round ${round})`,
          });
        }
        await writeFile(join(sig, 'stop'), '');
      });
      const lines = out.trimEnd().split('\n');
      expect(lines.pop()).toBe('done');
      expect(lines.length).toBeGreaterThan(10);
      expect(lines).toEqual(Array.from({ length: lines.length }, (_, i) => `line-${i + 1}`));
      // max-files 3: the live file, the newest rotation (plain), one older (gzipped).
      const files = (await readdir(join(path, '..'))).sort();
      expect(files).toHaveLength(3);
      expect(files[0]).toBe('0.log');
      expect(files[1]).toMatch(/^0\.log\.\d{8}-\d{6}\.gz$/);
      expect(files[2]).toMatch(/^0\.log\.\d{8}-\d{6}$/);
      expect(existsSync(path)).toBe(true);
    } finally {
      await run.cleanup();
      await rm(sig, { recursive: true, force: true });
    }
  });
});
