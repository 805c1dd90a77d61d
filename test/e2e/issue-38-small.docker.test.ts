// Regression tests of issue 38 finding 10 (the smaller items), against the real agent and dockerd.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { Pod, PodList, Status } from '../../src/shared/api.js';
import { removeLabeledContainers, waitFor } from '../support/docker.js';
import { busyboxPod, containersOf, kNodeLabel, useTestNodes } from '../support/agent.js';
import { freePort, startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { releaseNodeNetwork } from '../support/network.js';
import { removePodCgroup } from '../../src/workers/pod-cgroup.js';

const json = { 'Content-Type': 'application/json' };
const apiPod = (name: string, meta: Partial<NonNullable<Pod['metadata']>> = {}, image = 'kubelet-ts/busybox:1.35'): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', ...meta },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image, command: ['sleep', '3600'] }] },
});

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 10: smaller items', () => {
  const start = useTestNodes();

  it('metadata.uid a_b_c is refused by every source with an error naming metadata.uid', async () => {
    const node = await start();
    const intake = await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('uid-intake', { uid: 'a_b_c' })) });
    expect(intake.status).toBe(422);
    expect(((await intake.json()) as Status).message).toContain('metadata.uid: Invalid value: "a_b_c"');
    const kube = await node.api('/api/v1/namespaces/default/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('uid-api', { uid: 'a/b' })) });
    expect(kube.status).toBe(422);
    expect(((await kube.json()) as Status).message).toContain('metadata.uid');
    await node.writeManifest('uid-file.yaml', busyboxPod('uid-file', 'sleep 3600').replace('  name: uid-file\n', '  name: uid-file\n  uid: a_b_c\n'));
    await waitFor(() => node.warnings.some((w) => String(w.file ?? '').endsWith('uid-file.yaml') && JSON.stringify(w).includes('metadata.uid')) || undefined,
      { timeoutMs: 30_000, intervalMs: 100, description: 'a warning naming uid-file.yaml and metadata.uid' });
    expect(node.agent.listPods()).toEqual([]);
  });
});

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 10: a malformed image reference', () => {
  const start = useTestNodes();

  it('waits with InvalidImageName, records one InspectFailed event, attempts no pull, and does not log on every retry', async () => {
    const node = await start({ syncFrequencyMs: 1_000 });
    const image = 'kubelet-ts/BusyBox:1.35';
    expect((await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('bad-ref', {}, image)) })).status).toBe(201);
    const pod = await waitFor(async () => {
      const p = (await node.pods()).find((x) => x.metadata?.name === 'bad-ref');
      return p?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'InvalidImageName' ? p : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200, description: 'bad-ref waiting with InvalidImageName' });
    const waiting = pod.status!.containerStatuses![0].state!.waiting!;
    expect(waiting.message).toBe(`Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format: repository name (kubelet-ts/BusyBox) must be lowercase`);
    // Several more syncs (one a second): still one event, no pull attempted, no log line per retry.
    const uid = pod.metadata!.uid!;
    const logged = () => node.warnings.filter((w) => { const t = JSON.stringify(w); return t.includes('bad-ref') || t.includes(uid); }).length;
    const before = logged();
    await new Promise((r) => setTimeout(r, 5_000));
    const events = (await (await node.api('/events')).json()) as { items: { reason?: string; count?: number; message?: string; involvedObject: { name?: string } }[] };
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
    await waitFor(async () => {
      const pods = await node.pods();
      return pods.length === 2 && pods.every(running) || undefined;
    }, { timeoutMs: 90_000, intervalMs: 200, description: 'both pods Running' });
    await node.restart();
    // The first answer after the restart, no polling: both pods, Running.
    const pods = await node.pods();
    expect(pods.map((p) => [p.metadata?.name, p.status?.phase]).sort()).toEqual([['kept', 'Running'], [`static-${node.nodeName}`, 'Running']]);
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
    const args = ['--hostname-override', nodeName, '--root-dir', rootDir, '--pod-manifest-path', manifests, '--relist-period', '500ms', '--workers', '1'];
    let agent: AgentProcess | undefined;
    const uids = new Set<string>();
    try {
      agent = await startAgentProcess(args, port);
      await writeFile(join(manifests, 'static.yaml'), busyboxPod('static', 'sleep 3600'));
      expect((await agent.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('kept')) })).status).toBe(201);
      const list = async (a: AgentProcess) => ((await (await a.api('/pods')).json()) as PodList).items;
      await waitFor(async () => {
        const pods = await list(agent!);
        for (const p of pods) uids.add(p.metadata!.uid!);
        return pods.length === 2 && pods.every((p) => p.status?.phase === 'Running') || undefined;
      }, { timeoutMs: 120_000, intervalMs: 200, description: 'both pods Running' });
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
      expect(first!.map((p) => [p.metadata?.name, p.status?.phase]).sort()).toEqual([['kept', 'Running'], [`static-${nodeName}`, 'Running']]);
    } finally {
      await agent?.stop('SIGKILL');
      await removeLabeledContainers(kNodeLabel, nodeName);
      await Promise.all([...uids].map((uid) => removePodCgroup(uid, '/kubelet-ts').catch(() => undefined)));
      await releaseNodeNetwork(rootDir);
      await rm(base, { recursive: true, force: true });
    }
  }, 300_000);
});
