// Exec and attach through the CRI streaming server of the real containerd (src/workers/streams/cri-exec-stream.ts):
// the role of cri-tools' critest streaming tests (pkg/validate/streaming.go) for the agent's client side.
import { describe, expect, it } from 'vitest';
import { AgentError } from '../../../src/shared/errors.js';
import type { ContainerConfig, CriInput, PodSandboxConfig } from '../../../src/workers/runtime/cri/types.js';
import type { ContainerStreamOptions } from '../../../src/workers/runtime/container/runtime.js';
import { decodeExitStatus, openCriContainerStream, type CriContainerStream } from '../../../src/workers/streams/cri-exec-stream.js';
import { criEndpointOrSkip, useCriRun } from '../../support/cri.js';
import { BUSYBOX_IMAGE, waitFor } from '../../support/docker.js';

describe('decodeExitStatus (client-go errorDecoderV4)', () => {
  it('reads Success, NonZeroExitCode with its ExitCode cause, other Failures and junk', () => {
    expect(decodeExitStatus('')).toEqual({ exitCode: 0 });
    expect(decodeExitStatus('{"metadata":{},"status":"Success"}')).toEqual({ exitCode: 0 });
    const nonZero =
      '{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}';
    expect(decodeExitStatus(nonZero)).toEqual({ exitCode: 3 });
    const failed = decodeExitStatus('{"status":"Failure","message":"OCI runtime exec failed: executable file not found"}');
    expect(failed.exitCode).toBeNull();
    expect(failed.err?.message).toBe('OCI runtime exec failed: executable file not found');
    expect(decodeExitStatus('{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[]}}').err?.message).toMatch(
      /no exit code/,
    );
    expect(decodeExitStatus('plain text error').err?.message).toBe('plain text error');
  });
});

const endpoint = criEndpointOrSkip();

/** Output and exit of one stream. */
interface Run {
  out: string;
  err: string;
  exit: Promise<{ code: number | null; err?: Error }>;
  stream: CriContainerStream;
}

describe.skipIf(!endpoint)("exec and attach through containerd's streaming server", { timeout: 120_000 }, () => {
  const run = useCriRun(endpoint);
  const { runtime } = run;

  /** A running busybox container in a fresh labelled sandbox; returns its ID. */
  async function container(name: string, command: string[], more: CriInput<ContainerConfig> = {}): Promise<string> {
    const config: CriInput<PodSandboxConfig> = run.sandboxConfig(name, await run.logDirectory());
    const sandbox = await runtime.runPodSandbox(config);
    const id = await runtime.createContainer(
      sandbox,
      {
        metadata: { name, attempt: 0 },
        image: { image: BUSYBOX_IMAGE },
        command,
        log_path: `${name}/0.log`,
        labels: { ...run.label },
        ...more,
      },
      config,
    );
    await runtime.startContainer(id);
    return id;
  }

  async function open(id: string, opts: Partial<ContainerStreamOptions>): Promise<Run> {
    let resolveExit!: (v: { code: number | null; err?: Error }) => void;
    const exit = new Promise<{ code: number | null; err?: Error }>((r) => (resolveExit = r));
    const r = { out: '', err: '', exit } as Run;
    r.stream = await openCriContainerStream(
      runtime,
      id,
      { kind: 'exec', command: [], stdin: false, stdout: true, stderr: true, tty: false, ...opts },
      {
        onOutput: (fd, chunk) => {
          if (fd === 1) r.out += chunk.toString();
          else r.err += chunk.toString();
        },
        onExit: (code, err) => resolveExit({ code, err }),
      },
    );
    return r;
  }

  it('runs echo (stdout, exit 0) and a command writing stderr and exiting 3', async () => {
    try {
      const id = await container('exec', ['sleep', '3600']);
      const a = await open(id, { command: ['echo', 'hello from cri'] });
      expect(await a.exit).toEqual({ code: 0, err: undefined });
      expect(a.out).toBe('hello from cri\n');
      expect(a.err).toBe('');
      expect(a.stream.protocol).toMatch(/^websocket v[45]\.channel\.k8s\.io$/);

      const b = await open(id, { command: ['sh', '-c', 'echo x >&2; echo y; exit 3'] });
      expect(await b.exit).toEqual({ code: 3, err: undefined });
      expect(b.err).toBe('x\n');
      expect(b.out).toBe('y\n');
      b.stream.close(); // after the end: idempotent, no throw
      b.stream.close();

      // A command the runtime cannot start: the Status's error, no exit code.
      const c = await open(id, { command: ['no-such-command'] });
      const failed = await c.exit;
      expect(failed.code).toBeNull();
      expect(failed.err?.message).toMatch(/no-such-command/);
    } finally {
      await run.cleanup();
    }
  });

  it('pipes stdin to cat (each write acknowledged) and ends stdin', async () => {
    try {
      const id = await container('stdin', ['sleep', '3600']);
      const c = await open(id, { command: ['cat'], stdin: true, stderr: false });
      const written: number[] = [];
      c.stream.writeStdin(Buffer.from('line one\n'), () => written.push(1));
      c.stream.writeStdin(Buffer.from('line two\n'), () => written.push(2));
      await waitFor(() => c.out === 'line one\nline two\n', { timeoutMs: 20_000, description: 'cat echoed stdin' });
      expect(written).toEqual([1, 2]);
      c.stream.endStdin();
      c.stream.endStdin(); // idempotent
      // cat sees EOF and exits: stdin closes alone (WebSocket v5, or SPDY where the server has no v5).
      expect(await c.exit).toEqual({ code: 0, err: undefined });
      expect(c.stream.stdinClosable).toBe(true);
      expect(c.stream.protocol).toMatch(/^(websocket v5|spdy v4)\.channel\.k8s\.io$/);
      // A second one goes straight to the transport the first found.
      const d = await open(id, { command: ['wc', '-c'], stdin: true, stderr: false });
      d.stream.writeStdin(Buffer.alloc(200_000, 0x61), () => {});
      d.stream.endStdin();
      expect(await d.exit).toEqual({ code: 0, err: undefined });
      expect(d.out.trim()).toBe('200000');
      expect(d.stream.protocol).toBe(c.stream.protocol);
    } finally {
      await run.cleanup();
    }
  });

  it('stops reading output while paused and goes on when resumed (WebSocket without stdin, SPDY with)', async () => {
    try {
      const id = await container('bulk', ['sleep', '3600']);
      const total = 8 * 1024 * 1024;
      for (const stdin of [false, true]) {
        let got = 0;
        let paused = false;
        let resolveExit!: (v: number | null) => void;
        const exit = new Promise<number | null>((r) => (resolveExit = r));
        const holder: { stream?: CriContainerStream } = {};
        holder.stream = await openCriContainerStream(
          runtime,
          id,
          { kind: 'exec', command: ['head', '-c', String(total), '/dev/zero'], stdin, stdout: true, stderr: false, tty: false },
          {
            onOutput: (_fd, chunk) => {
              got += chunk.length;
              if (!paused && got >= 256 * 1024) {
                paused = true;
                holder.stream?.pause();
              }
            },
            onExit: (code) => resolveExit(code),
          },
        );
        await waitFor(() => paused, { timeoutMs: 20_000, description: 'a first window of output' });
        await new Promise((r) => setTimeout(r, 300));
        expect(got).toBeLessThan(total);
        holder.stream.resume();
        expect(await exit).toBe(0);
        expect(got).toBe(total);
      }
    } finally {
      await run.cleanup();
    }
  });

  it('runs a TTY and resizes it (stty size), over SPDY with stdin and without', async () => {
    try {
      const id = await container('tty', ['sleep', '3600']);
      const t = await open(id, { command: ['sh'], stdin: true, tty: true });
      await t.stream.resize(101, 37);
      t.stream.writeStdin(Buffer.from('stty size; exit 5\n'), () => {});
      expect(await t.exit).toEqual({ code: 5, err: undefined });
      expect(t.out).toContain('37 101');
      expect(t.err).toBe('');

      // Without stdin SPDY carries it too (the resize stream): the command waits for the size and records it.
      const w = await open(id, {
        command: ['sh', '-c', 'until [ "$(stty -F /dev/tty size)" = "24 80" ]; do sleep 0.1; done; stty -F /dev/tty size > /tmp/size'],
        tty: true,
      });
      expect(w.stream.protocol).toBe('spdy v4.channel.k8s.io');
      await w.stream.resize(80, 24);
      expect(await w.exit).toEqual({ code: 0, err: undefined });
      expect((await runtime.execSync(id, ['cat', '/tmp/size'], 10)).stdout.toString()).toBe('24 80\n');
    } finally {
      await run.cleanup();
    }
  });

  // Over a WebSocket containerd 1.6 reads EOF at once from the stdin it was not asked for and, with a
  // TTY, ends the exec's output (pkg/cri/io/exec_io.go) or, for a container with stdin and a TTY, drops
  // the attach's stdout (container_io.go): 3 runs in 4 of `echo` lost their output, the attach got
  // nothing. A TTY without stdin goes over SPDY.
  it('a TTY without stdin keeps the output of a command that ends at once, and an attach to a TTY gets its output', async () => {
    try {
      const id = await container('ttyout', ['sleep', '3600']);
      for (let i = 0; i < 10; i++) {
        const r = await open(id, { command: ['echo', `tty-out-${i}`], tty: true });
        expect(await r.exit).toEqual({ code: 0, err: undefined });
        expect(r.out).toBe(`tty-out-${i}\r\n`);
      }
      const ticking = await container('ttyattach', ['sh', '-c', 'while true; do echo tick; sleep 0.2; done'], { tty: true, stdin: true });
      const a = await open(ticking, { kind: 'attach', tty: true, stderr: false });
      await waitFor(() => a.out.includes('tick'), { timeoutMs: 20_000, description: 'the TTY container output through attach' });
      a.stream.close();
    } finally {
      await run.cleanup();
    }
  });

  it('attaches to a container reading stdin (its output comes back; the exit code is null)', async () => {
    try {
      const id = await container('attach', ['sh', '-c', 'while read l; do echo "got $l"; done'], { stdin: true });
      const a = await open(id, { kind: 'attach', stdin: true, stderr: false });
      a.stream.writeStdin(Buffer.from('ping\n'), () => {});
      await waitFor(() => a.out.includes('got ping'), { timeoutMs: 20_000, description: 'the attached process answered' });
      a.stream.close();
      let late = false;
      void a.exit.then(() => (late = true));
      await new Promise((r) => setTimeout(r, 200));
      expect(late).toBe(false); // no callback after close()
    } finally {
      await run.cleanup();
    }
  });

  it('refuses a container that is not running (ERR_INVALID_ARGUMENT) or does not exist (ERR_NOT_FOUND)', async () => {
    try {
      const id = await container('done', ['true']);
      await waitFor(async () => (await runtime.containerStatus(id)).status?.state === 'CONTAINER_EXITED', {
        timeoutMs: 30_000,
        description: 'exited',
      });
      const notRunning = await open(id, { command: ['echo'] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(notRunning).toBeInstanceOf(AgentError);
      expect((notRunning as AgentError).code).toBe('ERR_INVALID_ARGUMENT');
      const missing = await open('f'.repeat(64), { command: ['echo'] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect((missing as AgentError).code).toBe('ERR_NOT_FOUND');
    } finally {
      await run.cleanup();
    }
  });
});
