// Regression test of issue 10, item 3 (found by fault injection): manifests changed while the agent
// was down. A deleted static pod kept running until the next relist (up to --relist-period) after
// the restart, and an edited one ran its old and new copies side by side meanwhile. Now the first
// relist is in before any source's pod is handled, housekeeping runs on its own 2 s tick (the
// kubelet's HandlePodCleanups), and a new copy waits for the old copy of its name to be gone.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { docker, waitFor } from '../support/docker.js';
import { busyboxPod, containersOf, isRunningAndReady, waitForPod, useTestNodes } from '../support/agent.js';

/** dockerd's container events of pod `podName` (label) between two times (epoch ms), oldest first. */
async function podEvents(podName: string, sinceMs: number, untilMs: number): Promise<{ action: string; uid: string; timeNano: number }[]> {
  const stream = await docker.getEvents({
    since: Math.floor(sinceMs / 1000),
    until: Math.ceil(untilMs / 1000),
    filters: { type: ['container'], label: [`io.kubernetes.pod.name=${podName}`] },
  });
  let text = '';
  for await (const chunk of stream as AsyncIterable<Buffer>) text += chunk.toString();
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .map((e) => ({ action: e.Action, uid: e.Actor.Attributes['io.kubernetes.pod.uid'], timeNano: e.timeNano }));
}

describe.skipIf(!inject('dockerAvailable'))('issue 10: manifests changed while the agent was down', () => {
  const start = useTestNodes();

  it("removes a deleted pod by housekeeping (not the relist) and never runs an edited pod's old and new copies side by side", async () => {
    // A relist period far beyond the test: only the housekeeping tick can find the orphan.
    const node = await start({ relistPeriodMs: 600_000 });
    await node.writeManifest('gone.yaml', busyboxPod('gone', 'exec sleep 3600'));
    await node.writeManifest('edit.yaml', busyboxPod('edit', 'exec sleep 3600'));
    const gone = await waitForPod(node, 'gone', isRunningAndReady);
    const oldEdit = await waitForPod(node, 'edit', isRunningAndReady);
    await node.agent.stop();

    await rm(join(node.manifestDir, 'gone.yaml'));
    // A changed command: a new UID for the same static pod name.
    await node.writeManifest('edit.yaml', busyboxPod('edit', 'exec sleep 3601'));
    const oldIds = (await containersOf(oldEdit.metadata!.uid!)).map((c) => c.Id);
    expect(oldIds).toHaveLength(2);

    const restartedMs = Date.now();
    await node.restart();
    await waitFor(async () => (await containersOf(gone.metadata!.uid!)).length === 0, {
      timeoutMs: 60_000,
      description: "deleted pod's containers removed",
    });
    const newEdit = await waitForPod(node, 'edit', (p) => isRunningAndReady(p) && p.metadata!.uid !== oldEdit.metadata!.uid, 60_000);
    expect(await containersOf(oldEdit.metadata!.uid!)).toEqual([]);

    // In dockerd's own record: every container of the new copy started after the last container of
    // the old copy died.
    const events = await podEvents(newEdit.metadata!.name!, restartedMs - 1000, Date.now() + 1000);
    const lastOldDeath = Math.max(...events.filter((e) => e.uid === oldEdit.metadata!.uid && e.action === 'die').map((e) => e.timeNano));
    const newStarts = events.filter((e) => e.uid === newEdit.metadata!.uid && e.action === 'start').map((e) => e.timeNano);
    expect(events.filter((e) => e.uid === oldEdit.metadata!.uid && e.action === 'die')).toHaveLength(2);
    expect(newStarts).toHaveLength(2);
    for (const t of newStarts) expect(t).toBeGreaterThan(lastOldDeath);
  }, 180_000);
});
