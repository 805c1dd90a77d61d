// Docker going away under a running agent, without touching the shared dockerd: the agent talks to
// dockerd through a unix-socket proxy that the test closes and reopens.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { waitFor } from '../support/docker.js';
import { dockerProxy } from '../support/docker-proxy.js';
import { busyboxPod, containersOf, isRunningAndReady, startTestNode, waitForPod, type TestNode } from '../support/agent.js';

describe.skipIf(!inject('dockerAvailable'))('Docker outage', () => {
  let node: TestNode | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps running pods and the API through an outage, then converges when Docker returns', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-proxy-'));
    const sock = join(dir, 'docker.sock');
    const proxy = await dockerProxy(sock);
    node = await startTestNode({ dockerEndpoint: `unix://${sock}` });
    await node.writeManifest('a.yaml', busyboxPod('before', 'exec sleep 3600'));
    const before = await waitForPod(node, 'before', isRunningAndReady);

    await proxy.cut();
    await node.writeManifest('b.yaml', busyboxPod('during', 'exec sleep 3600'));
    // The new pod is accepted and shown, waiting; the running one is untouched; the agent answers.
    const during = await waitForPod(node, 'during', (p) => p.status?.phase === 'Pending');
    expect(during.status!.containerStatuses![0].state!.waiting).toBeDefined();
    const res = await fetch(`http://127.0.0.1:${node.agent.port}/healthz`);
    expect(res.status).toBe(200); // a short outage is not a PLEG failure (threshold 3 min, as the kubelet's)
    expect((await containersOf(before.metadata!.uid!)).every((c) => c.State === 'running')).toBe(true);

    await proxy.open();
    await waitForPod(node, 'during', isRunningAndReady, 60_000);
    const after = await waitForPod(node, 'before', isRunningAndReady);
    expect(after.status!.containerStatuses![0].restartCount).toBe(0);
  });

  it('starts with Docker absent and runs the pods once it appears', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-proxy-'));
    const sock = join(dir, 'docker.sock');
    node = await startTestNode({ dockerEndpoint: `unix://${sock}` });
    await node.writeManifest('a.yaml', busyboxPod('late', 'exec sleep 3600'));
    await waitForPod(node, 'late', (p) => p.status?.phase === 'Pending');
    // The agent really tried and failed (and said so), and keeps running.
    await waitFor(() => node!.warnings.some((w) => w.msg === 'Error syncing pod, will retry'), { description: 'a failed sync logged' });
    expect((await fetch(`http://127.0.0.1:${node.agent.port}/healthz`)).status).toBe(200);
    await dockerProxy(sock);
    await waitForPod(node, 'late', isRunningAndReady, 60_000);
  });
});
