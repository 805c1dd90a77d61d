// Regression tests of issue 11, findings 6 (deletes) and 7 (file source), against the real agent and dockerd.
// Finding 6: a second `DELETE ?gracePeriodSeconds=0` of a terminating pod answered 404 while GET still
// returned it, and its containers kept their long grace period; a leftover container (its pod gone)
// was stopped with the grace period on its label, so a 30-day grace kept it running for 30 days.
// Finding 7: a manifest rewritten in place was sometimes read while truncated and its pod removed
// (then started again); a second file with the same pod name that sorts first took the name over
// from the running pod.
import { randomUUID } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { Pod, PodList } from '../../src/shared/api.js';
import { busyboxPod, containersOf, isRunningAndReady, kNodeLabel, useTestNodes, waitForPod, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, docker, waitFor } from '../support/docker.js';

/** Far below the grace periods at stake (300 s, 30 days), far above what a prompt stop takes. */
const kPromptMs = 60_000;
/** A shell that ignores SIGTERM: only SIGKILL (the end of the grace period) stops it. */
const kIgnoresTerm = "trap '' TERM; while true; do sleep 1; done";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function intakePod(node: TestNode, name: string): Promise<Pod | undefined> {
  const res = await node.api('/pods');
  return ((await res.json()) as PodList).items.find((p) => p.metadata?.name === name);
}

/** The app containers (not the sandbox) of pod `uid`, as Docker lists them. */
async function appContainers(uid: string) {
  return (await containersOf(uid)).filter((c) => c.Labels['io.kubernetes.docker.type'] === 'container');
}

describe.skipIf(!inject('dockerAvailable'))('issue 11: deletes and the file source', { timeout: 180_000 }, () => {
  const start = useTestNodes();

  it('finding 6: a second DELETE with gracePeriodSeconds=0 of a pod terminating with a 300 s grace answers 200 with the shorter grace period and stops it promptly', async () => {
    const node = await start();
    const body: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'slow-stop', namespace: 'default' },
      spec: {
        terminationGracePeriodSeconds: 300,
        containers: [{ name: 'main', image: BUSYBOX_IMAGE, command: ['sh', '-c', kIgnoresTerm] }],
      },
    };
    expect(
      (await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).status,
    ).toBe(201);
    const running = await waitFor(
      async () => {
        const p = await intakePod(node, 'slow-stop');
        return p && isRunningAndReady(p) ? p : undefined;
      },
      { timeoutMs: 90_000, description: 'slow-stop running' },
    );
    const uid = running.metadata!.uid!;

    const first = await node.api('/pods/default/slow-stop', { method: 'DELETE' });
    expect(first.status).toBe(200);
    expect(((await first.json()) as Pod).metadata?.deletionGracePeriodSeconds).toBe(300);
    // Terminating: still listed, its container still up (it ignores SIGTERM).
    expect((await intakePod(node, 'slow-stop'))?.metadata?.deletionTimestamp).toBeTruthy();
    expect((await appContainers(uid)).some((c) => c.State === 'running')).toBe(true);

    const second = await node.api('/pods/default/slow-stop?gracePeriodSeconds=0', { method: 'DELETE' });
    expect(second.status).toBe(200);
    const shortened = (await second.json()) as Pod;
    expect(shortened).toMatchObject({ kind: 'Pod', metadata: { name: 'slow-stop', uid, deletionGracePeriodSeconds: 0 } });

    await waitFor(async () => (await containersOf(uid)).length === 0, {
      timeoutMs: kPromptMs,
      description: 'the containers of slow-stop gone',
    });
    await waitFor(async () => (await intakePod(node, 'slow-stop')) === undefined, {
      timeoutMs: kPromptMs,
      description: 'slow-stop no longer listed',
    });
    expect((await node.api('/pods/default/slow-stop', { method: 'DELETE' })).status).toBe(404);
  });

  it('finding 6: a leftover container whose pod is gone, labelled with a 30-day grace period, is stopped and removed', async () => {
    const node = await start();
    const uid = randomUUID();
    const leftover = await docker.createContainer({
      name: `k8s_main_leftover_default_${uid}_0`,
      Image: BUSYBOX_IMAGE,
      Cmd: ['sh', '-c', kIgnoresTerm],
      Labels: {
        [kNodeLabel]: node.nodeName,
        'io.kubernetes.pod.uid': uid,
        'io.kubernetes.pod.name': 'leftover',
        'io.kubernetes.pod.namespace': 'default',
        'io.kubernetes.container.name': 'main',
        'io.kubernetes.docker.type': 'container',
        'annotation.io.kubernetes.pod.terminationGracePeriod': String(30 * 24 * 3600),
        'annotation.io.kubernetes.container.restartCount': '0',
      },
    });
    await leftover.start();
    await waitFor(async () => (await containersOf(uid)).length === 0, { timeoutMs: 90_000, description: 'the leftover container removed' });
  });

  it('finding 7: 300 in-place rewrites (truncate, then write) of the same manifest never restart its pod', async () => {
    const node = await start();
    const yaml = busyboxPod('steady', 'exec sleep 3600');
    await node.writeManifest('b.yaml', yaml);
    const before = await waitForPod(node, 'steady', isRunningAndReady);
    const uid = before.metadata!.uid!;
    const [container] = await appContainers(uid);
    expect(container).toBeDefined();

    const file = join(node.manifestDir, 'b.yaml');
    for (let i = 0; i < 300; i++) {
      const fh = await open(file, 'w'); // O_TRUNC: the file is empty from here...
      await sleep(8);
      await fh.writeFile(yaml); // ...until here
      await fh.close();
      await sleep(2);
    }
    // Give a wrong removal the time to show: two periodic checks of the manifest directory.
    await sleep(2 * node.options.fileCheckFrequencyMs + 500);

    const after = await waitForPod(node, 'steady', isRunningAndReady);
    expect(after.metadata!.uid).toBe(uid);
    expect(after.status!.containerStatuses![0].restartCount).toBe(0);
    expect((await appContainers(uid)).map((c) => [c.Id, c.State])).toEqual([[container.Id, 'running']]);
  });

  it("finding 7: a second file 0-dup.yaml with the running pod's name leaves it untouched and records a duplicate event; the copy takes over once b.yaml goes", async () => {
    const node = await start();
    await node.writeManifest('b.yaml', busyboxPod('twin', 'exec sleep 3600'));
    const running = await waitForPod(node, 'twin', isRunningAndReady);
    const uid = running.metadata!.uid!;
    const ids = (await containersOf(uid)).map((c) => c.Id).sort();

    // Same pod name, other content (so another UID); its file name sorts before b.yaml.
    await node.writeManifest('0-dup.yaml', busyboxPod('twin', 'exec sleep 3601'));
    const event = await waitFor(
      async () => {
        const res = await node.api('/events');
        const items = ((await res.json()) as { items: { type: string; reason: string; message: string }[] }).items;
        return items.find((e) => e.type === 'Warning' && e.reason === 'FailedValidation' && e.message.includes('0-dup.yaml'));
      },
      { timeoutMs: 30_000, description: 'a duplicate event for 0-dup.yaml' },
    );
    expect(event.message).toContain('b.yaml');
    // Two more periodic checks: the running pod keeps its name and its containers.
    await sleep(2 * node.options.fileCheckFrequencyMs + 500);
    const still = await waitForPod(node, 'twin', isRunningAndReady);
    expect(still.metadata!.uid).toBe(uid);
    expect((await containersOf(uid)).map((c) => c.Id).sort()).toEqual(ids);
    expect((await containersOf(uid)).every((c) => c.State === 'running')).toBe(true);
    const mine = await docker.listContainers({ all: true, filters: { label: [`${kNodeLabel}=${node.nodeName}`] } });
    expect(mine.filter((c) => c.Labels['io.kubernetes.pod.uid'] !== uid)).toEqual([]);

    // The holder's file goes: the copy takes the name over.
    await unlink(join(node.manifestDir, 'b.yaml'));
    const copy = await waitForPod(node, 'twin', (p) => p.metadata?.uid !== uid && isRunningAndReady(p));
    expect(copy.spec!.containers[0].command).toContain('exec sleep 3601');
  });
});
