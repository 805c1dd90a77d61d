// End-to-end (issue 14, item 1): port-forward against a real agent whose pods run in Docker: a
// `network: none` pod (through the netns helper's relay mode) and a hostNetwork pod, each with 50
// concurrent connections checking their own echoed bytes; the port prefix frames, the error
// channel, the refusals (Status answers), the per-pod bound, the fd count after 500 opened and
// aborted streams, and the client (`kubelet-ts port-forward`) run as a real process.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { freePort, kRepoRoot } from '../support/agent-process.js';
import { isRunningAndReady, startTestNode, writeStreamerPolicy, waitForPod, type TestNode } from '../support/agent.js';
import { itRuntime, testRuntime } from '../support/runtime.js';

const kTestMs = 120_000;

/** helperChildren: how many kubelet-ts-netns-probe processes are children of this process (comm is cut at 15 characters). */
function helperChildren(): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm.startsWith('kubelet-ts-netn') && ppid === process.pid) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}
// busybox nc's listen backlog is its count of -l (and -ll forks one `cat` per connection): 64 l's
// let 50 connections queue at once instead of retrying their SYNs.
const kEchoServer = (port: number) => `["nc", "-${'l'.repeat(64)}", "-p", "${port}", "-e", "cat"]`;

interface Forward {
  ws: WebSocket;
  /** Bytes per channel, after the first (port prefix) frame. */
  data: Record<number, Buffer>;
  /** The first frame seen on each channel. */
  first: Record<number, Buffer>;
  opened: Promise<string>;
  closed: Promise<number>;
  isClosed: boolean;
}

describe.skipIf(!inject('dockerAvailable'))('port-forward (issue 14)', () => {
  let node: TestNode;
  let nonePod: string;
  let hostPod: string;
  let hostPort: number;
  let base: string;
  let tokens: string;

  beforeAll(async () => {
    tokens = join(await mkdtemp(join(tmpdir(), 'kubelet-ts-pf-')), 'tokens.csv');
    await writeFile(tokens, 'view-token,viewer,2,"kubelet-ts:read-only"\nops-token,ops,3,"ops"\n');
    // A non-admin identity that may stream: the per-pod bound holds it, not system:masters.
    await writeStreamerPolicy(join(dirname(tokens), 'policy.yaml'), 'ops');
    hostPort = await freePort();
    // --network-plugin none: the non-host sandboxes keep network `none` (no pod IP at all).
    node = await startTestNode({
      tokenAuthFile: tokens,
      authorizationPolicyFile: join(dirname(tokens), 'policy.yaml'),
      networkPlugin: 'none',
    });
    await node.writeManifest(
      'none.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: pfnone}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: echo
      image: ${BUSYBOX_IMAGE}
      command: ${kEchoServer(8080)}
      readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
`,
    );
    await node.writeManifest(
      'host.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: pfhost}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
    - name: echo
      image: ${BUSYBOX_IMAGE}
      command: ${kEchoServer(hostPort)}
      readinessProbe: {tcpSocket: {port: ${hostPort}}, periodSeconds: 1}
`,
    );
    await Promise.all([waitForPod(node, 'pfnone', isRunningAndReady, 90_000), waitForPod(node, 'pfhost', isRunningAndReady, 90_000)]);
    nonePod = `pfnone-${node.nodeName}`;
    hostPod = `pfhost-${node.nodeName}`;
    base = `ws://127.0.0.1:${node.agent.port}`;
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (tokens) await rm(join(tokens, '..'), { recursive: true, force: true });
  }, kTestMs);

  const forward = (path: string, protocols: string[] = ['v4.channel.k8s.io'], token: string | null = node.adminToken()): Forward => {
    const ws = new WebSocket(`${base}${path}`, protocols, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    const f: Partial<Forward> = { ws, data: {}, first: {}, isClosed: false };
    f.opened = new Promise((resolve, reject) => {
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
    f.opened.catch(() => {});
    f.closed = new Promise((resolve) =>
      ws.on('close', (code) => {
        f.isClosed = true;
        resolve(code);
      }),
    );
    ws.on('message', (msg: Buffer) => {
      const ch = msg[0];
      const payload = msg.subarray(1);
      if (!(ch in f.first!)) f.first![ch] = Buffer.from(payload);
      else f.data![ch] = Buffer.concat([f.data![ch] ?? Buffer.alloc(0), payload]);
    });
    return f as Forward;
  };
  const refused = async (f: Forward) => {
    try {
      await f.opened;
    } catch (err) {
      return err as { code: number; body: { kind: string; message: string; reason: string } };
    }
    throw new Error('the upgrade was accepted');
  };
  const le16 = (port: number) => Buffer.from([port & 0xff, port >> 8]);

  /** echoes: `n` WebSockets at once to `pod`:`port`, each sending its own bytes (in two frames) and checking its echo. */
  const echoes = async (pod: string, port: number, n: number) => {
    const one = async (i: number) => {
      const f = forward(`/portForward/default/${pod}?port=${port}`);
      await f.opened;
      const mine = Buffer.concat([Buffer.from(`conn-${i}:`), randomBytes(24 * 1024)]);
      await waitFor(() => f.first[0] && f.first[1], { timeoutMs: 20_000, description: 'the port prefix frames' });
      expect(f.first[0]).toEqual(le16(port));
      expect(f.first[1]).toEqual(le16(port));
      f.ws.send(Buffer.concat([Buffer.from([0]), mine.subarray(0, 1000)]));
      f.ws.send(Buffer.concat([Buffer.from([0]), mine.subarray(1000)]));
      await waitFor(() => (f.data[0]?.length ?? 0) >= mine.length || f.isClosed, {
        timeoutMs: 60_000,
        description: `echo of connection ${i}`,
      });
      expect(f.data[0]?.equals(mine)).toBe(true);
      expect(f.data[1]).toBeUndefined(); // no error
      f.ws.close();
      await f.closed;
    };
    await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
  };

  itRuntime({ containerd: "the runtime's CNI gives every non-host sandbox an address: no network-none pod, no netns helper" })(
    'a network-none pod: 50 concurrent connections through the netns helper, each echoed its own bytes',
    async () => {
      const p = await node.pod('pfnone');
      expect(p?.status?.podIP).toBeUndefined(); // no address the node could dial: only the netns reaches it
      await echoes(nonePod, 8080, 50);
    },
    kTestMs,
  );

  it(
    'a hostNetwork pod: 50 concurrent connections to 127.0.0.1, each echoed its own bytes',
    async () => {
      await echoes(hostPod, hostPort, 50);
    },
    kTestMs,
  );

  it(
    'two ports in one request: channels 0/1 and 2/3; a closed port answers on its error channel, then the stream ends',
    async () => {
      const closedPort = await freePort(); // nothing listens on it inside the pod either
      const f = forward(`/portForward/default/${nonePod}?port=8080&port=${closedPort}`, ['x.unknown.k8s.io', 'v4.channel.k8s.io']);
      expect(await f.opened).toBe('v4.channel.k8s.io'); // the first served protocol the client offered
      await waitFor(() => f.data[3], { timeoutMs: 20_000, description: 'the error of the closed port' });
      expect([f.first[0], f.first[1], f.first[2], f.first[3]]).toEqual([le16(8080), le16(8080), le16(closedPort), le16(closedPort)]);
      // The cause is the runtime's: the netns helper's dial, or containerd's (`failed to execute portforward
      // in network namespace …: dial tcp4 127.0.0.1:P: connect: connection refused IPv6 …`), once prefixed.
      const cause =
        testRuntime() === 'docker'
          ? `dial tcp 127\\.0\\.0\\.1:${closedPort}: connect: connection refused$`
          : `failed to execute portforward in network namespace .*dial tcp4 127\\.0\\.0\\.1:${closedPort}: connect: connection refused`;
      expect(f.data[3].toString()).toMatch(
        new RegExp(`^error forwarding port ${closedPort} to pod [0-9a-f]{64}, uid [0-9a-f-]+: ${cause}`),
      );
      expect(f.data[3].toString().match(/error forwarding port/g)).toHaveLength(1);
      // The other port still forwards.
      f.ws.send(Buffer.from('\x00still here'));
      await waitFor(() => f.data[0]?.toString() === 'still here', { timeoutMs: 20_000, description: 'echo on port 8080' });
      expect(f.isClosed).toBe(false);
      f.ws.close();
      await f.closed;
      // One closed port alone: its error, then a normal close (the kubelet's handler returns).
      const g = forward(`/portForward/default/${hostPod}?port=${closedPort}`);
      expect(await g.closed).toBe(1000);
      expect(g.data[1]?.toString()).toContain(`dial tcp 127.0.0.1:${closedPort}: connect: connection refused`);
    },
    kTestMs,
  );

  it(
    'v4.base64.channel.k8s.io: text frames, the channel as a digit then base64',
    async () => {
      const ws = new WebSocket(`${base}/portForward/default/${nonePod}?port=8080`, ['v4.base64.channel.k8s.io'], {
        headers: { Authorization: `Bearer ${node.adminToken()}` },
      });
      const frames: string[] = [];
      ws.on('message', (m: Buffer, isBinary: boolean) => frames.push(isBinary ? '<binary>' : m.toString()));
      await new Promise((resolve, reject) => {
        ws.on('open', resolve);
        ws.on('error', reject);
      });
      expect(ws.protocol).toBe('v4.base64.channel.k8s.io');
      ws.send(`0${Buffer.from('b64 echo').toString('base64')}`);
      await waitFor(() => frames.length >= 3, { timeoutMs: 20_000, description: 'prefix frames and the echo' });
      expect(frames.slice(0, 2).sort()).toEqual([`0${le16(8080).toString('base64')}`, `1${le16(8080).toString('base64')}`]);
      expect(Buffer.from(frames[2].slice(1), 'base64').toString()).toBe('b64 echo');
      ws.close();
    },
    kTestMs,
  );

  it(
    'refusals are Status answers: 404 pod or uid, 400 port/protocol/plain GET, 401 anonymous, 403 read-only, 429 past the per-pod bound',
    async () => {
      const pf = (q: string, pod = nonePod) => `/portForward/default/${pod}${q}`;
      expect(await refused(forward(pf('?port=80', 'nope')))).toMatchObject({
        code: 404,
        body: { kind: 'Status', reason: 'NotFound', message: 'pod does not exist' },
      });
      expect(await refused(forward(`/portForward/default/${nonePod}/0000-wrong-uid?port=80`))).toMatchObject({
        code: 404,
        body: { message: 'pod not found' },
      });
      expect((await refused(forward(pf('')))).body.message).toBe('query parameter "port" is required');
      expect((await refused(forward(pf('?port=0')))).body.message).toContain('must be > 0');
      expect((await refused(forward(pf('?port=http')))).body.message).toContain('unable to parse "http" as a port');
      expect((await refused(forward(pf('?port=65536')))).body).toMatchObject({ code: 400, reason: 'BadRequest' });
      expect((await refused(forward(pf('?port=8080'), ['portforward.k8s.io']))).body.message).toContain(
        'requested protocol(s) are not supported',
      );
      expect(await refused(forward(pf('?port=8080'), undefined, null))).toMatchObject({ code: 401, body: { kind: 'Status' } });
      expect(await refused(forward(pf('?port=8080'), undefined, 'view-token'))).toMatchObject({ code: 403, body: { reason: 'Forbidden' } });
      const plain = await node.api(pf('?port=8080'));
      expect(plain.status).toBe(400);
      expect((await plain.json()).message).toContain('Upgrade request required');
      // The right uid is accepted.
      const uid = (await node.pod('pfnone'))!.metadata!.uid!;
      const ok = forward(`/portForward/default/${nonePod}/${uid}?port=8080`);
      await ok.opened;
      ok.ws.terminate();
      await ok.closed;
      // 64 connections into one pod at once (here as 32 requests of 2 ports), then one more is refused.
      const held = Array.from({ length: 32 }, () => forward(pf(`?port=${hostPort}&port=${hostPort}`, hostPod), undefined, 'ops-token'));
      await Promise.all(held.map((f) => f.opened));
      expect(await refused(forward(pf(`?port=${hostPort}`, hostPod), undefined, 'ops-token'))).toMatchObject({
        code: 429,
        body: { reason: 'TooManyRequests' },
      });
      for (const f of held) f.ws.terminate();
      await Promise.all(held.map((f) => f.closed));
    },
    kTestMs,
  );

  it(
    '500 streams opened and aborted at random points leave no fd behind',
    async () => {
      const fds = () => readdirSync('/proc/self/fd').length;
      // Settle: the connections above are torn down (their helpers reaped).
      await new Promise((r) => setTimeout(r, 500));
      const before = fds();
      let seed = 14;
      const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const one = async (k: number) => {
        const point = Math.floor(rand() * 4);
        const pod = k % 2 === 0 ? nonePod : hostPod;
        const port = k % 2 === 0 ? 8080 : hostPort;
        const f = forward(`/portForward/default/${pod}?port=${port}`);
        if (point === 0) {
          f.ws.terminate(); // before or during the upgrade
        } else {
          // A refusal (429 while the server still counts a stream the client already dropped) is an outcome too.
          if (
            !(await f.opened.then(
              () => true,
              () => false,
            ))
          )
            return void (await f.closed);
          if (point >= 2) f.ws.send(Buffer.from('\x00x\n'));
          if (point === 3) await waitFor(() => f.data[0]?.toString() === 'x\n' || f.isClosed, { timeoutMs: 60_000, description: 'echo' });
          f.ws.terminate();
        }
        await f.closed;
      };
      let started = 0;
      const lane = async () => {
        while (started < 500) await one(started++);
      };
      await Promise.all(Array.from({ length: 16 }, lane));
      // Slack: a few fds the runtime opens lazily and keeps (the worker's first helper spawn, pino, the
      // undici pool of node.api), not one per stream: 500 leaked streams would be 500 to 2,000.
      const after = await waitFor(() => (fds() <= before + 8 ? fds() : undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
        description: `fds back near ${before}`,
      });
      expect(after).toBeLessThanOrEqual(before + 8);
      // And no relay helper is left running (each netns connection is one child of this process).
      expect(await waitFor(() => helperChildren() === 0 || undefined, { timeoutMs: 10_000, description: 'helpers reaped' })).toBe(true);
    },
    kTestMs,
  );

  it(
    'the client: `kubelet-ts port-forward POD :8080 LOCAL:8080` prints where it listens and forwards many connections',
    async () => {
      const local = await freePort();
      const closedPort = await freePort();
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'src/main/index.ts',
          'port-forward',
          nonePod,
          ':8080',
          `${local}:8080`,
          `:${closedPort}`,
          '--server',
          `unix://${node.rootDir}/kubelet-ts.sock`,
          '--root-dir',
          node.rootDir,
        ],
        { cwd: kRepoRoot },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (err += c));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        const lines = await waitFor(() => out.split('\n').filter((l) => l.startsWith('Forwarding from')).length === 3 && out, {
          timeoutMs: 30_000,
          description: `the client's Forwarding lines (stderr: ${err})`,
        });
        const picked = Number(/Forwarding from 127\.0\.0\.1:(\d+) -> 8080/.exec(lines)![1]);
        expect(lines).toContain(`Forwarding from 127.0.0.1:${local} -> 8080`);
        const talk = (port: number, i: number) =>
          new Promise<string>((resolve, reject) => {
            const s = net.connect(port, '127.0.0.1', () => s.write(`hello ${i}\n`));
            let got = '';
            s.on('data', (d) => {
              got += d;
              if (got === `hello ${i}\n`) s.end();
            });
            s.on('close', () => resolve(got));
            s.on('error', reject);
          });
        const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => talk(i % 2 ? picked : local, i)));
        expect(replies).toEqual(Array.from({ length: 20 }, (_, i) => `hello ${i}\n`));
        expect(out).toContain(`Handling connection for ${local}`);
        // A port nothing listens on in the pod: that connection is closed and the error printed; the rest go on.
        const toClosed = Number(new RegExp(`Forwarding from 127\\.0\\.0\\.1:(\\d+) -> ${closedPort}`).exec(out)![1]);
        expect(await talk(toClosed, 99)).toBe('');
        await waitFor(() => err.includes(`-> ${closedPort}: error forwarding port ${closedPort} to pod`), {
          timeoutMs: 20_000,
          description: `the client's error (stderr: ${err})`,
        });
        expect(err).toContain('connect: connection refused');
        expect(await talk(local, 100)).toBe('hello 100\n');
      } finally {
        child.kill('SIGINT');
      }
      expect(await exited).toBe(0);
    },
    kTestMs,
  );
});

describe.skipIf(!inject('dockerAvailable'))("port-forward to a pod on the node's bridge (issue 14)", () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startTestNode(); // the default pod network: a bridge and a pod IP per pod
    await node.writeManifest(
      'lo.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: pflo}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: web
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "echo hello-from-localhost > /tmp/index.html; exec httpd -f -p 127.0.0.1:8080 -h /tmp"]
      readinessProbe: {exec: {command: ["wget", "-q", "-O-", "http://127.0.0.1:8080/index.html"]}, periodSeconds: 1}
`,
    );
    await waitForPod(node, 'pflo', isRunningAndReady, 90_000);
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
  }, kTestMs);

  it(
    "reaches a server bound to the pod's own 127.0.0.1 (inside its namespace, not at the pod IP); the pod closing ends the stream",
    async () => {
      const p = await node.pod('pflo');
      expect(p?.status?.podIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      const ws = new WebSocket(
        `ws://127.0.0.1:${node.agent.port}/portForward/default/pflo-${node.nodeName}?port=8080`,
        ['v4.channel.k8s.io'],
        { headers: { Authorization: `Bearer ${node.adminToken()}` } },
      );
      const seen = new Set<number>();
      let body = '';
      ws.on('message', (m: Buffer) => {
        if (!seen.has(m[0])) return void seen.add(m[0]);
        if (m[0] === 0) body += m.subarray(1).toString();
      });
      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      await new Promise((resolve, reject) => {
        ws.on('open', resolve);
        ws.on('error', reject);
      });
      ws.send(Buffer.from('\x00GET /index.html HTTP/1.0\r\nHost: x\r\n\r\n'));
      // httpd answers and closes: the helper ends, and so does the stream.
      expect(await closed).toBe(1000);
      expect(body).toMatch(/^HTTP\/1\.[01] 200/);
      expect(body).toContain('hello-from-localhost');
    },
    kTestMs,
  );
});
