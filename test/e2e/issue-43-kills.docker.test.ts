// Issue #43 item 5: removing many static pods at once stops them together, not in waves of the
// pod workers' slots. Against the real dockerd: Docker's own `kill` events say when each container
// got its SIGTERM (signal 15, the start of its grace period) and its SIGKILL (9, the end of it), so
// the test asserts an order, not a time: every pod's SIGTERM comes before any grace period ran out.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE, docker, waitFor } from '../support/docker.js';
import { useTestNodes } from '../support/agent.js';

/** Pods, more than the 16 syncs one worker thread holds (the kills' slots before the fix). */
const kPods = 24;

interface KillEvent {
  id: string;
  signal: string;
  timeNano: number;
}

/** watchKills collects the `kill` events of the containers labelled `label` (app containers only) until close(). */
async function watchKills(label: string): Promise<{ kills: KillEvent[]; close(): void }> {
  const kills: KillEvent[] = [];
  const stream = (await docker.getEvents({
    filters: { type: ['container'], event: ['kill'], label: [label, 'io.kubernetes.docker.type=container'] },
  })) as NodeJS.ReadableStream & { destroy(): void };
  let buffered = '';
  stream.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        const e = JSON.parse(line) as { id?: string; timeNano?: number; Actor?: { Attributes?: Record<string, string> } };
        if (e.id && e.timeNano) kills.push({ id: e.id, signal: e.Actor?.Attributes?.signal ?? '', timeNano: e.timeNano });
      } catch {
        // not a whole event
      }
    }
  });
  return { kills, close: () => stream.destroy() };
}

describe.skipIf(!inject('dockerAvailable'))('issue #43: removing static pods', () => {
  const start = useTestNodes();

  it(`stops ${kPods} static pods removed at once together: every SIGTERM before any grace period ran out`, async () => {
    const node = await start({ networkPlugin: 'none', workers: 1 });
    // `exec sleep` as PID 1 ignores SIGTERM: each container lives out its whole grace period.
    const manifest = (i: number) => `apiVersion: v1
kind: Pod
metadata: {name: k${i}}
spec:
  terminationGracePeriodSeconds: 10
  containers: [{name: main, image: ${BUSYBOX_IMAGE}, command: ["sh", "-c", "exec sleep 3600"]}]
`;
    await Promise.all(Array.from({ length: kPods }, (_, i) => node.writeManifest(`k${i}.yaml`, manifest(i))));
    await waitFor(async () => (await node.pods()).filter((p) => p.status?.phase === 'Running').length === kPods || undefined, {
      timeoutMs: 180_000,
    });
    const watch = await watchKills(`kubelet-ts.node-name=${node.nodeName}`);
    try {
      await Promise.all(Array.from({ length: kPods }, (_, i) => rm(join(node.manifestDir, `k${i}.yaml`))));
      await waitFor(async () => (await node.pods()).length === 0 || undefined, { timeoutMs: 180_000 });
    } finally {
      watch.close();
    }
    const terms = watch.kills.filter((k) => k.signal === '15');
    const firstKill = Math.min(...watch.kills.filter((k) => k.signal === '9').map((k) => k.timeNano));
    expect(new Set(terms.map((k) => k.id)).size).toBe(kPods);
    expect(Number.isFinite(firstKill)).toBe(true); // the containers lived out their grace periods
    // Stopped in waves, the kills past the pod workers' slots would begin after the first wave's
    // grace periods ended (their SIGKILLs).
    expect(terms.filter((k) => k.timeNano > firstKill)).toEqual([]);
  }, 420_000);
});
