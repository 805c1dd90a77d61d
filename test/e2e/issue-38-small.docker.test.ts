// Regression tests of issue 38 finding 10 (the smaller items), against the real agent and dockerd.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { Pod, PodList, Status } from '../../src/shared/api.js';
import { removeLabeledContainers, waitFor } from '../support/docker.js';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { busyboxPod, isRunningAndReady, kNodeLabel, useTestNodes } from '../support/agent.js';
import { freePort, startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { releaseNodeNetwork } from '../support/network.js';
import { removePodCgroup } from '../../src/workers/cm/pod-cgroup.js';

const json = { 'Content-Type': 'application/json' };
const apiPod = (name: string, meta: Partial<NonNullable<Pod['metadata']>> = {}, image = 'kubelet-ts/busybox:1.35'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', ...meta },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image, command: ['sleep', '3600'] }] },
});

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 10: smaller items', () => {
  const start = useTestNodes();

  it('metadata.uid a_b_c is refused by every source with an error naming metadata.uid', async () => {
    const node = await start();
    const intake = await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('uid-intake', { uid: 'a_b_c' })) });
    expect(intake.status).toBe(422);
    expect(((await intake.json()) as Status).message).toContain('metadata.uid: Invalid value: "a_b_c"');
    const kube = await node.api('/api/v1/namespaces/default/pods', {
      method: 'POST',
      headers: json,
      body: JSON.stringify(apiPod('uid-api', { uid: 'a/b' })),
    });
    expect(kube.status).toBe(422);
    expect(((await kube.json()) as Status).message).toContain('metadata.uid');
    await node.writeManifest(
      'uid-file.yaml',
      busyboxPod('uid-file', 'sleep 3600').replace('  name: uid-file\n', '  name: uid-file\n  uid: a_b_c\n'),
    );
    await waitFor(
      () =>
        node.warnings.some((w) => String(w.file ?? '').endsWith('uid-file.yaml') && JSON.stringify(w).includes('metadata.uid')) ||
        undefined,
      { timeoutMs: 30_000, intervalMs: 100, description: 'a warning naming uid-file.yaml and metadata.uid' },
    );
    expect(node.agent.listPods()).toEqual([]);
  });
});

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 10: a malformed image reference', () => {
  const start = useTestNodes();

  it('waits with InvalidImageName, records one InspectFailed event, attempts no pull, and does not log on every retry', async () => {
    const node = await start({ syncFrequencyMs: 1_000 });
    const image = 'kubelet-ts/BusyBox:1.35';
    expect((await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('bad-ref', {}, image)) })).status).toBe(
      201,
    );
    const pod = await waitFor(
      async () => {
        const p = (await node.pods()).find((x) => x.metadata?.name === 'bad-ref');
        return p?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'InvalidImageName' ? p : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'bad-ref waiting with InvalidImageName' },
    );
    const waiting = pod.status!.containerStatuses![0].state!.waiting!;
    expect(waiting.message).toBe(
      `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format: repository name (kubelet-ts/BusyBox) must be lowercase`,
    );
    // Several more syncs (one a second): still one event, no pull attempted, no log line per retry.
    const uid = pod.metadata!.uid!;
    const logged = () =>
      node.warnings.filter((w) => {
        const t = JSON.stringify(w);
        return t.includes('bad-ref') || t.includes(uid);
      }).length;
    const before = logged();
    await new Promise((r) => setTimeout(r, 5_000));
    const events = (await (await node.api('/events')).json()) as {
      items: { reason?: string; count?: number; message?: string; involvedObject: { name?: string } }[];
    };
    const mine = events.items.filter((e) => e.involvedObject.name === 'bad-ref');
    expect(mine.filter((e) => e.reason === 'InspectFailed')).toMatchObject([{ count: 1, message: waiting.message }]);
    expect(mine.map((e) => e.reason)).not.toContain('Pulling');
    expect(logged()).toBe(before);
  });
});

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 10: a restart', () => {
  const start = useTestNodes();

  it('right after a restart the pod list holds the restored pods (intake and static), Running as their containers are', async () => {
    const node = await start();
    expect((await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('kept')) })).status).toBe(201);
    await node.writeManifest('static.yaml', busyboxPod('static', 'sleep 3600'));
    const running = (p: Pod | undefined) => p?.status?.phase === 'Running';
    await waitFor(
      async () => {
        const pods = await node.pods();
        return (pods.length === 2 && pods.every(running)) || undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, description: 'both pods Running' },
    );
    await node.restart();
    // The first answer after the restart, no polling: both pods, Running.
    const pods = await node.pods();
    expect(pods.map((p) => [p.metadata?.name, p.status?.phase]).sort()).toEqual([
      ['kept', 'Running'],
      [`static-${node.nodeName}`, 'Running'],
    ]);
    // Their containers (no probes) read running and ready, with the restart counts they had.
    expect(pods.every(isRunningAndReady)).toBe(true);
    expect(pods.map((p) => p.status?.containerStatuses?.[0]?.restartCount)).toEqual([0, 0]);
  });
});

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 10: a restart of the agent process', () => {
  it('the first answer of the restarted process holds the restored pods (intake and static), Running', async () => {
    const nodeName = `e2e-rs-${randomBytes(3).toString('hex')}`;
    const base = await mkdtemp(join(tmpdir(), 'kubelet-ts-restart-'));
    const rootDir = join(base, 'root');
    const manifests = join(base, 'manifests');
    await mkdir(manifests);
    const port = await freePort();
    const args = [
      '--hostname-override',
      nodeName,
      '--root-dir',
      rootDir,
      '--pod-manifest-path',
      manifests,
      '--relist-period',
      '500ms',
      '--workers',
      '1',
    ];
    let agent: AgentProcess | undefined;
    const uids = new Set<string>();
    try {
      agent = await startAgentProcess(args, port);
      await writeFile(join(manifests, 'static.yaml'), busyboxPod('static', 'sleep 3600'));
      expect((await agent.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('kept')) })).status).toBe(201);
      const list = async (a: AgentProcess) => ((await (await a.api('/pods')).json()) as PodList).items;
      await waitFor(
        async () => {
          const pods = await list(agent!);
          for (const p of pods) uids.add(p.metadata!.uid!);
          return (pods.length === 2 && pods.every((p) => p.status?.phase === 'Running')) || undefined;
        },
        { timeoutMs: 120_000, intervalMs: 200, description: 'both pods Running' },
      );
      await agent.stop('SIGKILL');
      // Ask /pods from the moment the new process starts: its first answer is what a client sees first.
      const token = (await readFile(join(rootDir, 'admin.token'), 'utf8')).trim();
      let first: Pod[] | undefined;
      let polling = true;
      const poll = (async () => {
        while (polling && !first) {
          try {
            const res = await fetch(`http://127.0.0.1:${port}/pods`, { headers: { Authorization: `Bearer ${token}` } });
            if (res.status === 200) first = ((await res.json()) as PodList).items;
          } catch {
            await new Promise((r) => setTimeout(r, 10));
          }
        }
      })();
      agent = await startAgentProcess(args, port);
      await waitFor(() => first, { timeoutMs: 30_000, intervalMs: 50, description: 'the first /pods answer' });
      polling = false;
      await poll;
      expect(first!.map((p) => [p.metadata?.name, p.status?.phase]).sort()).toEqual([
        ['kept', 'Running'],
        [`static-${nodeName}`, 'Running'],
      ]);
    } finally {
      await agent?.stop('SIGKILL');
      await removeLabeledContainers(kNodeLabel, nodeName);
      await Promise.all([...uids].map((uid) => removePodCgroup(uid, '/kubelet-ts').catch(() => undefined)));
      await releaseNodeNetwork(rootDir);
      await unmountUnder(base).catch(() => undefined); // the pods' tmpfs volumes (the service account token's)
      await rm(base, { recursive: true, force: true });
    }
  }, 300_000);
});

/**
 * What uWebSockets.js (the installed 20.30 build) does with a request it cannot parse: it calls no
 * handler and writes nothing; it closes the connection after its idle timeout. The agent cannot
 * answer those with a 400 (README: "The API", limitation): this proves it stays healthy and that
 * every such connection is closed, never held open, and never answered as a request.
 */
const kMalformed: [string, string][] = [
  ['HTTP/1.0', 'GET /healthz HTTP/1.0\r\nHost: a\r\n\r\n'],
  ['more than 48 headers', `GET /healthz HTTP/1.1\r\nHost: a\r\n${Array.from({ length: 60 }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`],
  ['a NUL in a header', 'GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: a\0b\r\n\r\n'],
  ['no request line', 'GARBAGE\r\n\r\n'],
  ['HTTP/2.0 in text', 'GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n'],
  ['bare LF line ends', 'GET /healthz HTTP/1.1\nHost: a\n\n'],
  ['a space before the colon', 'GET /healthz HTTP/1.1\r\nHost : a\r\n\r\n'],
  ['Content-Length not a number', 'POST /pods HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n'],
  [
    'Content-Length and Transfer-Encoding',
    'POST /pods HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  ],
  ['a bad chunk size', 'POST /pods HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
  ['two Content-Lengths', 'POST /pods HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'],
  ['a control character in the path', 'GET /heal\x01thz HTTP/1.1\r\nHost: a\r\n\r\n'],
];

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 10: malformed HTTP framing', () => {
  const start = useTestNodes();

  it('stays healthy while malformed requests are open, answers none of them as a request, and closes every one', async () => {
    const node = await start();
    const sockets = kMalformed.map(([name, raw]) => {
      const s = connect(node.agent.port, '127.0.0.1');
      const state = { name, data: '', closed: false };
      s.on('data', (d) => (state.data += String(d)));
      s.on('close', () => (state.closed = true));
      s.on('error', () => undefined);
      s.write(raw);
      return { s, state };
    });
    try {
      // While they are open, the server answers everyone else.
      expect((await node.api('/healthz')).status).toBe(200);
      expect((await node.api('/pods')).status).toBe(200);
      await waitFor(() => sockets.every((x) => x.state.closed) || undefined, {
        timeoutMs: 90_000,
        intervalMs: 200,
        description: `every malformed connection closed (open: ${sockets
          .filter((x) => !x.state.closed)
          .map((x) => x.state.name)
          .join(', ')})`,
      });
      for (const { state } of sockets) {
        // Nothing, or an error status line: never a request served.
        expect({ name: state.name, answer: state.data === '' || /^HTTP\/1\.1 (4|5)\d\d /.test(state.data) }).toEqual({
          name: state.name,
          answer: true,
        });
      }
      expect((await node.api('/healthz')).status).toBe(200);
    } finally {
      for (const { s } of sockets) s.destroy();
    }
  }, 150_000);
});
