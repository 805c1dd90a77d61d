// Regression tests of issue 38 finding 10 (the smaller items), against the real agent and dockerd.
import { describe, expect, inject, it } from 'vitest';
import type { Pod, Status } from '../../src/shared/api.js';
import { waitFor } from '../support/docker.js';
import { busyboxPod, useTestNodes } from '../support/agent.js';

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
