// Regression tests of issue 38, finding 7 (no deadline on runtime calls), against the real agent and
// dockerd behind a proxy that holds chosen engine calls unanswered for ever (a wedged `runc create`):
// with --runtime-request-timeout 2s the sync fails with the kubelet's event (`context deadline
// exceeded`) and the pod can still be deleted; before, the pod stayed ContainerCreating with no
// event and a DELETE never completed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Event, Pod } from '../../src/shared/api.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { docker, waitFor } from '../support/docker.js';
import { stallingDockerProxy, type StallingDockerProxy } from '../support/stalling-docker-proxy.js';

const kImage = 'kubelet-ts/busybox:1.35';

const podBody = (name: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { test: 'issue-38-runtime-timeout' } },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: kImage, command: ['sleep', '3600'] }] },
  });

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 7: --runtime-request-timeout', () => {
  let node: TestNode | undefined;
  let proxy: StallingDockerProxy | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    // The proxy first: its held calls then fail, so that a wedged sync (the code before the fix) cannot keep the agent's stop waiting.
    await proxy?.close();
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
    node = proxy = dir = undefined;
  });

  /** An agent whose engine calls go through a proxy that holds every create of a container named `k8s_<prefix>…`. */
  async function startWedged(prefix: string): Promise<{ node: TestNode; proxy: StallingDockerProxy }> {
    dir = await mkdtemp(join(tmpdir(), 'kts-runtime-timeout-'));
    const sock = join(dir, 'docker.sock');
    proxy = await stallingDockerProxy(sock, (method, url) => method === 'POST' && url.startsWith(`/containers/create?name=k8s_${prefix}`));
    node = await startTestNode({ dockerEndpoint: `unix://${sock}`, runtimeRequestTimeoutMs: 2000 });
    return { node, proxy };
  }

  const eventOf = (n: TestNode, pod: string, reason: string) =>
    waitFor(
      async () => {
        const list = (await (await n.api('/events')).json()) as { items: Event[] };
        return list.items.find((e) => e.involvedObject?.name === pod && e.reason === reason);
      },
      { timeoutMs: 60_000, intervalMs: 250, description: `${reason} event of ${pod}` },
    );

  const deleted = async (n: TestNode, pod: string) => {
    const res = await n.api(`/pods/default/${pod}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    await waitFor(async () => ((await n.api(`/pods/default/${pod}`)).status === 404 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: `${pod} gone`,
    });
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`kubelet-ts.node-name=${n.nodeName}`, `io.kubernetes.pod.name=${pod}`] },
    });
    expect(left).toEqual([]);
  };

  it('a wedged sandbox create fails the sync with FailedCreatePodSandBox "context deadline exceeded"; the agent stays healthy and the pod is deletable', async () => {
    const { node, proxy } = await startWedged('POD_wedged-sandbox_');
    expect(
      (await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: podBody('wedged-sandbox') }))
        .status,
    ).toBe(201);
    const event = await eventOf(node, 'wedged-sandbox', 'FailedCreatePodSandBox');
    expect(event.type).toBe('Warning');
    expect(event.message).toMatch(/^Failed to create pod sandbox: create container k8s_POD_wedged-sandbox_.*: context deadline exceeded/);
    expect(proxy.held.length).toBeGreaterThan(0);
    const pod = (await (await node.api('/pods/default/wedged-sandbox')).json()) as Pod;
    expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ContainerCreating');
    expect((await node.api('/healthz')).status).toBe(200);
    await deleted(node, 'wedged-sandbox');
  });

  it('a wedged container create fails the sync with a Failed event "Error: … context deadline exceeded" and the pod is deletable (its sandbox removed)', async () => {
    const { node } = await startWedged('main_wedged-app_');
    expect(
      (await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: podBody('wedged-app') })).status,
    ).toBe(201);
    const event = await eventOf(node, 'wedged-app', 'Failed');
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { fieldPath: 'spec.containers{main}' } });
    expect(event.message).toMatch(/^Error: create container k8s_main_wedged-app_.*: context deadline exceeded/);
    await deleted(node, 'wedged-app');
  });

  it('a DELETE whose container stop is wedged completes: the stop passes its deadline (grace + timeout) and the container is removed by force', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-runtime-timeout-'));
    const sock = join(dir, 'docker.sock');
    let stallStops = false;
    proxy = await stallingDockerProxy(sock, (method, url) => stallStops && method === 'POST' && /^\/containers\/[0-9a-f]+\/stop/.test(url));
    node = await startTestNode({ dockerEndpoint: `unix://${sock}`, runtimeRequestTimeoutMs: 2000 });
    expect(
      (await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: podBody('wedged-stop') })).status,
    ).toBe(201);
    await waitFor(
      async () => {
        const pod = (await (await node!.api('/pods/default/wedged-stop')).json()) as Pod;
        return pod.status?.containerStatuses?.[0]?.state?.running ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: 'wedged-stop running' },
    );
    stallStops = true;
    await deleted(node, 'wedged-stop');
    expect(proxy.held.some((h) => h.includes('/stop'))).toBe(true);
  });

  it('a DELETE sent while the create is wedged completes', async () => {
    const { node, proxy } = await startWedged('POD_wedged-delete_');
    expect(
      (await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: podBody('wedged-delete') })).status,
    ).toBe(201);
    await waitFor(async () => (proxy.held.length > 0 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'a create held',
    });
    await deleted(node, 'wedged-delete');
  });
});
