// Regression tests of issue 11 (break test findings), against the real agent and dockerd.
// Finding 2, UID takeover: a POSTed pod with a static pod's metadata.uid got 201, took over the
// static pod's containers, and its DELETE removed them. Two pods may never share a UID.
import { describe, expect, inject, it } from 'vitest';
import type { Pod, Status } from '../../src/shared/api.js';
import { busyboxPod, containersOf, isRunningAndReady, waitForPod, useTestNodes } from '../support/agent.js';

describe.skipIf(!inject('dockerAvailable'))('issue 11: break-test findings', () => {
  const start = useTestNodes();

  it('finding 2: a POSTed pod with a static pod\'s UID is refused with 409 AlreadyExists, and nothing else changes', async () => {
    const node = await start();
    await node.writeManifest('held.yaml', busyboxPod('held', 'exec sleep 3600'));
    const staticPod = await waitForPod(node, 'held', isRunningAndReady);
    const uid = staticPod.metadata!.uid!;
    const before = (await containersOf(uid)).map((c) => c.Id).sort();

    const takeover: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'thief', namespace: 'default', uid }, spec: { containers: [{ name: 'main', image: staticPod.spec!.containers[0].image, command: ['sleep', '3600'] }] } };
    const res = await fetch(`http://127.0.0.1:${node.agent.port}/pods`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(takeover) });
    expect(res.status).toBe(409);
    const status = (await res.json()) as Status;
    expect(status).toMatchObject({ kind: 'Status', reason: 'AlreadyExists', code: 409 });
    expect(status.message).toContain(uid);

    const pods = node.agent.listPods();
    expect(pods.find((p) => p.metadata?.uid === uid)?.metadata?.name).toBe(staticPod.metadata!.name);
    expect(pods.some((p) => p.metadata?.name === 'thief')).toBe(false);
    // A DELETE of the refused name finds nothing to delete; the static pod's containers are the same.
    expect((await fetch(`http://127.0.0.1:${node.agent.port}/pods/default/thief`, { method: 'DELETE' })).status).toBe(404);
    expect((await containersOf(uid)).map((c) => c.Id).sort()).toEqual(before);
    expect((await waitForPod(node, 'held', isRunningAndReady)).status!.containerStatuses![0].restartCount).toBe(0);
  });
});
