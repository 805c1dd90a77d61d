// End-to-end (issue 14, item 1): exec, attach and run against a real agent whose pod runs in Docker,
// through the WebSocket channel protocols (v4, v5) and the client (`kubelet-ts exec`), with the
// bounds (429 per pod) and the fd count after 500 opened and aborted streams.
import { readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { runCli } from '../../src/main/cli.js';
import type { CliIo, CliTerminal } from '../../src/cli/io.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { isRunningAndReady, startTestNode, writeStreamerPolicy, waitForPod, type TestNode } from '../support/agent.js';
import { itRuntime } from '../support/runtime.js';

const kTestMs = 120_000;

interface Session {
  ws: WebSocket;
  out: Record<number, string>;
  status?: Record<string, unknown>;
  closed: Promise<void>;
  isClosed?: boolean;
  opened: Promise<string>;
}

describe.skipIf(!inject('dockerAvailable'))('exec, attach and run (issue 14)', () => {
  let node: TestNode;
  let pod: string;
  let base: string;
  let tokens: string;

  beforeAll(async () => {
    tokens = join(await mkdtemp(join(tmpdir(), 'kubelet-ts-exec-')), 'tokens.csv');
    await writeFile(tokens, 'view-token,viewer,2,"kubelet-ts:read-only"\nops-token,ops,3,"ops"\n');
    // A non-admin identity that may stream: the per-pod bound holds it, not system:masters.
    await writeStreamerPolicy(join(dirname(tokens), 'policy.yaml'), 'ops');
    node = await startTestNode({ tokenAuthFile: tokens, authorizationPolicyFile: join(dirname(tokens), 'policy.yaml') });
    await node.writeManifest(
      'exec.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: ex}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: main, image: ${BUSYBOX_IMAGE}, command: ["sleep", "3600"]}
    - {name: term, image: ${BUSYBOX_IMAGE}, command: ["sh"], stdin: true, tty: true}
`,
    );
    await waitForPod(node, 'ex', isRunningAndReady, 90_000);
    pod = `ex-${node.nodeName}`;
    base = `ws://127.0.0.1:${node.agent.port}`;
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (tokens) await rm(join(tokens, '..'), { recursive: true, force: true });
  }, kTestMs);

  const open = (path: string, protocols = ['v4.channel.k8s.io'], token: string | null = node.adminToken()): Session => {
    const ws = new WebSocket(`${base}${path}`, protocols, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    const s: Partial<Session> = { ws, out: {} };
    let statusText = '';
    s.opened = new Promise((resolve, reject) => {
      ws.on('open', () => resolve(ws.protocol));
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => {
          reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { code: res.statusCode, body: JSON.parse(body) }));
          ws.terminate();
        });
      });
      ws.on('error', reject);
    });
    s.opened.catch(() => {});
    s.closed = new Promise((resolve) =>
      ws.on('close', () => {
        s.isClosed = true;
        resolve();
      }),
    );
    ws.on('message', (data: Buffer) => {
      if (data[0] === 3) {
        statusText += data.subarray(1).toString();
        s.status = JSON.parse(statusText);
      } else s.out![data[0]] = (s.out![data[0]] ?? '') + data.subarray(1).toString();
    });
    return s as Session;
  };
  const q = (cmd: string[], flags: string) => `${cmd.map((c) => `command=${encodeURIComponent(c)}`).join('&')}&${flags}`;
  const execPath = (container: string, cmd: string[], flags = 'stdout=1&stderr=1') => `/exec/default/${pod}/${container}?${q(cmd, flags)}`;
  const cli = async (args: string[], terminal?: CliTerminal) => {
    const r = { code: -1, stdout: '', stderr: '' };
    const io: CliIo = { stdout: (t) => (r.stdout += t), stderr: (t) => (r.stderr += t), exit: (c) => (r.code = c), terminal };
    await runCli([args[0], '--server', `unix://${node.rootDir}/kubelet-ts.sock`, '--root-dir', node.rootDir, ...args.slice(1)], {}, io);
    return r;
  };

  it('exec echo: stdout on channel 1, then a v4 Success status', async () => {
    const s = open(execPath('main', ['echo', 'hello']));
    expect(await s.opened).toBe('v4.channel.k8s.io');
    await s.closed;
    expect(s.out[1]).toBe('hello\n');
    expect(s.status).toEqual({ metadata: {}, status: 'Success' });
  });

  it('exit code 3: a v4 Failure with reason NonZeroExitCode and the ExitCode cause; the client exits 3', async () => {
    const s = open(execPath('main', ['sh', '-c', 'echo oops >&2; exit 3']), ['v5.channel.k8s.io', 'v4.channel.k8s.io']);
    expect(await s.opened).toBe('v5.channel.k8s.io');
    await s.closed;
    expect(s.out[2]).toBe('oops\n');
    expect(s.status).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    const r = await cli(['exec', pod, '-c', 'main', '--', 'sh', '-c', 'echo out; exit 3']);
    expect(r, r.stderr).toMatchObject({ code: 3, stdout: 'out\n' });
  });

  it('stdin round trip through cat, ended by the v5 CLOSE signal on channel 0', async () => {
    const s = open(execPath('main', ['cat'], 'stdin=1&stdout=1&stderr=1'), ['v5.channel.k8s.io']);
    await s.opened;
    s.ws.send(Buffer.from('\x00abc\n'));
    s.ws.send(Buffer.from('\x00def\n'));
    s.ws.send(Buffer.from([255, 0]));
    await s.closed;
    expect(s.out[1]).toBe('abc\ndef\n');
    expect(s.status).toEqual({ metadata: {}, status: 'Success' });
    // The client forwards piped stdin (-i) and passes the exit code through.
    const stdin = new PassThrough();
    const chunks: Buffer[] = [];
    const term: CliTerminal = {
      stdin,
      stdinIsTTY: false,
      setRawMode() {},
      size: () => undefined,
      onResize: () => () => {},
      writeStdout: (c) => chunks.push(Buffer.from(c)),
      writeStderr: () => {},
    };
    stdin.end('piped\n');
    const r = await cli(['exec', '-i', pod, '-c', 'main', '--', 'cat'], term);
    expect(r.code).toBe(0);
    expect(Buffer.concat(chunks).toString()).toBe('piped\n');
  });

  it('tty: the size sent on channel 4 is the size stty reports', async () => {
    const s = open(execPath('main', ['sh'], 'stdin=1&stdout=1&tty=1'), ['v5.channel.k8s.io']);
    await s.opened;
    s.ws.send(Buffer.concat([Buffer.from([4]), Buffer.from(JSON.stringify({ Width: 101, Height: 37 }))]));
    s.ws.send(Buffer.from('\x00stty size; exit 0\n'));
    await s.closed;
    expect(s.out[1]).toContain('37 101');
    expect(s.status).toEqual({ metadata: {}, status: 'Success' });
  });

  it('attach to a container started with stdin and tty: input reaches its shell', async () => {
    const s = open(`/attach/default/${pod}/term?stdin=1&stdout=1&tty=1`, ['v5.channel.k8s.io']);
    await s.opened;
    s.ws.send(Buffer.from('\x00echo attached-$((6*7))\n'));
    await waitFor(() => (s.out[1] ?? '').includes('attached-42'), { timeoutMs: 20_000, description: 'attach output' });
    s.ws.close();
    await s.closed;
  });

  it('POST /run: the combined output with 200, a non-zero exit as a 500 Status', async () => {
    const ok = await node.api(`/run/default/${pod}/main?cmd=${encodeURIComponent('sh -c echo_ok')}`, { method: 'POST' });
    const okRun = await node.api(`/run/default/${pod}/main?cmd=echo%20run-output`, { method: 'POST' });
    expect(okRun.status).toBe(200);
    expect(await okRun.text()).toBe('run-output\n');
    expect(ok.status).toBe(500); // `sh -c echo_ok`: echo_ok is not a command
    const bad = await node.api(`/run/default/${pod}/main?cmd=false`, { method: 'POST' });
    expect(bad.status).toBe(500);
    expect(await bad.json()).toMatchObject({
      kind: 'Status',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '1' }] },
    });
    const missing = await node.api(`/run/default/${pod}/main`, { method: 'POST' });
    expect(missing.status).toBe(400);
    expect((await missing.json()).message).toContain('cmd');
  });

  it('refusals are Status answers: 404 pod or container, 400 query, 401 anonymous, 403 read-only, 429 past the per-pod bound', async () => {
    const refused = async (s: Session) => {
      try {
        await s.opened;
      } catch (err) {
        return err as { code: number; body: { kind: string; message: string; reason: string } };
      }
      throw new Error('the upgrade was accepted');
    };
    expect(await refused(open(`/exec/default/nope/main?${q(['true'], 'stdout=1')}`))).toMatchObject({
      code: 404,
      body: { kind: 'Status', reason: 'NotFound' },
    });
    expect(await refused(open(execPath('nosuch', ['true'])))).toMatchObject({ code: 404, body: { kind: 'Status' } });
    expect((await refused(open(execPath('main', ['true'], 'stdout=maybe')))).body.message).toContain('stdout');
    expect((await refused(open(`/exec/default/${pod}/main?stdout=1`))).body.message).toContain('command');
    expect(await refused(open(execPath('main', ['true']), undefined, null))).toMatchObject({ code: 401, body: { kind: 'Status' } });
    expect(await refused(open(execPath('main', ['true']), undefined, 'wrong-token'))).toMatchObject({ code: 401 });
    expect(await refused(open(execPath('main', ['true']), undefined, 'view-token'))).toMatchObject({
      code: 403,
      body: { reason: 'Forbidden' },
    });
    const plain = await node.api(execPath('main', ['true']));
    expect(plain.status).toBe(400);
    // 16 streams into one pod at once, then the 17th is refused.
    const held = Array.from({ length: 16 }, () => open(execPath('main', ['cat'], 'stdin=1&stdout=1'), undefined, 'ops-token'));
    await Promise.all(held.map((s) => s.opened));
    expect(await refused(open(execPath('main', ['true']), undefined, 'ops-token'))).toMatchObject({
      code: 429,
      body: { reason: 'TooManyRequests' },
    });
    for (const s of held) s.ws.terminate();
    await Promise.all(held.map((s) => s.closed));
  });

  // On containerd 1.6 (2026-12-07): reproduced with the agent's CRI client alone (no agent server, no
  // WebSocket): with 14 `cat` exec streams at a time closed at random points, after a few dozen later execs
  // in the same container go unanswered for tens of seconds — an ExecSync `ps` there timed out too (a gRPC
  // call: no streaming server, no SPDY), and containerd logs `get state for <id>: context deadline
  // exceeded` (the task's shim, containerd-shim-runc-v2, not answering; containerd/containerd#7561: a 1.6.4
  // shim hung by 500 concurrent execs). Below the streaming server; the kubelet, which proxies the client's
  // connection as is, meets the same. The container answers again once the load stops (docs/cri.md).
  itRuntime({
    containerd:
      "containerd 1.6's shim stops answering execs (ExecSync too) under 14 concurrent aborted exec streams (containerd/containerd#7561)",
  })(
    '500 streams opened and aborted at random points leave no fd behind',
    async () => {
      const fds = () => readdirSync('/proc/self/fd').length;
      // Settle: the streams above are torn down.
      await waitFor(() => fds() < 10_000, { timeoutMs: 1000 });
      const before = fds();
      let seed = 14;
      const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const one = async () => {
        const point = Math.floor(rand() * 4);
        const s = open(execPath('main', ['cat'], 'stdin=1&stdout=1'), ['v5.channel.k8s.io']);
        if (point === 0) {
          s.ws.terminate(); // before or during the upgrade
        } else {
          // A refusal (429 while the server still counts a stream the client already dropped) is an outcome too.
          if (
            !(await s.opened.then(
              () => true,
              () => false,
            ))
          )
            return void (await s.closed);
          if (point >= 2) s.ws.send(Buffer.from('\x00x\n'));
          // The echo, or the server's end of the stream (a bound hit at open).
          if (point === 3) await waitFor(() => (s.out[1] ?? '') === 'x\n' || s.isClosed, { timeoutMs: 60_000, description: 'echo' });
          s.ws.terminate();
        }
        await s.closed;
      };
      let started = 0;
      const lane = async () => {
        while (started < 500) {
          started++;
          await one();
        }
      };
      await Promise.all(Array.from({ length: 14 }, lane)); // under the 16-per-pod bound
      const after = await waitFor(() => (fds() <= before + 8 ? fds() : undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
        description: `fds back near ${before}`,
      });
      expect(after).toBeLessThanOrEqual(before + 8);
    },
    kTestMs,
  );
});
