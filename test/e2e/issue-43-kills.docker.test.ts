// Issue #43 item 5: removing many static pods at once stops them together, not in waves of the
// pod workers' slots. Against the real runtime: its own record (Docker's `kill` events, containerd's
// log: test/support/runtime-records.ts watchContainerSignals) says when each container got its SIGTERM (the start
// of its grace period) and its SIGKILL (the end of it), so the test asserts an order, not a time:
// every pod's SIGTERM comes before any grace period ran out.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { kNodeLabel, useTestNodes } from '../support/agent.js';
import { labeledContainers } from '../support/runtime.js';
import { watchContainerSignals, type ContainerSignal } from '../support/runtime-records.js';

/** Pods, more than the 16 syncs one worker thread holds (the kills' slots before the fix). */
const kPods = 24;

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
    const ids = (await labeledContainers(kNodeLabel, node.nodeName)).filter((c) => !c.sandbox).map((c) => c.id);
    expect(ids).toHaveLength(kPods);
    const watch = await watchContainerSignals();
    let signals: ContainerSignal[] = [];
    try {
      await Promise.all(Array.from({ length: kPods }, (_, i) => rm(join(node.manifestDir, `k${i}.yaml`))));
      await waitFor(async () => (await node.pods()).length === 0 || undefined, { timeoutMs: 180_000 });
    } finally {
      signals = await watch.stop(ids);
    }
    const terms = signals.filter((k) => k.signal === 'SIGTERM');
    const firstKill = Math.min(...signals.filter((k) => k.signal === 'SIGKILL').map((k) => k.timeMs));
    expect(new Set(terms.map((k) => k.id)).size).toBe(kPods);
    expect(Number.isFinite(firstKill)).toBe(true); // the containers lived out their grace periods
    // Stopped in waves, the kills past the pod workers' slots would begin after the first wave's
    // grace periods ended (their SIGKILLs).
    expect(terms.filter((k) => k.timeMs > firstKill)).toEqual([]);
  }, 420_000);
});
