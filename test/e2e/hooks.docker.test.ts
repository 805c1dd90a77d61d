// End-to-end lifecycle hooks against the real dockerd: postStart (success, and failure →
// FailedPostStartHook, kill, restart) and preStop before SIGTERM within the grace period; the role
// of test/e2e/common/node/lifecycle_hook.go for kubelet-ts.
import { mkdtemp, readFile, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { startTestNode, waitForPod, type TestNode } from '../support/agent.js';
import { podContainers } from '../support/runtime.js';

const main = (pod: Pod) => pod.status?.containerStatuses?.find((c) => c.name === 'main');

describe.skipIf(!inject('dockerAvailable'))('lifecycle hooks in Docker', () => {
  let node: TestNode;
  let dir: string;
  const events = (p: Pod) => node.agent.events.list({ uid: p.metadata!.uid });

  beforeAll(async () => {
    node = await startTestNode();
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-hooks-'));
  }, 60_000);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs postStart after the container started, and preStop before SIGTERM when the pod is deleted', async () => {
    await node.writeManifest(
      'hooked.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: hooked}
spec:
  terminationGracePeriodSeconds: 10
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "echo main >> /data/log; trap 'echo term >> /data/log; exit 0' TERM; while true; do sleep 0.2; done"]
      volumeMounts: [{name: data, mountPath: /data}]
      lifecycle:
        postStart: {exec: {command: ["sh", "-c", "echo poststart >> /data/log"]}}
        preStop: {exec: {command: ["sh", "-c", "echo prestop >> /data/log; sleep 1; echo prestop-done >> /data/log"]}}
  volumes:
    - name: data
      hostPath: {path: ${dir}}
`,
    );
    const p = await waitForPod(node, 'hooked', (x) => !!main(x)?.state?.running, 90_000);
    await waitFor(async () => (await readFile(join(dir, 'log'), 'utf8').catch(() => '')).includes('poststart'), { timeoutMs: 60_000 });
    expect(main(p)!.restartCount).toBe(0);
    await unlink(join(node.manifestDir, 'hooked.yaml'));
    await waitFor(async () => (await podContainers(p.metadata!.uid!)).length === 0, { timeoutMs: 90_000 });
    const log = (await readFile(join(dir, 'log'), 'utf8')).trim().split('\n');
    expect(log.filter((l) => l !== 'poststart' && l !== 'main')).toEqual(['prestop', 'prestop-done', 'term']);
    expect(log.indexOf('poststart')).toBeGreaterThanOrEqual(0);
  }, 180_000);

  it('kills and restarts a container whose postStart hook fails (FailedPostStartHook)', async () => {
    await node.writeManifest(
      'badhook.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: badhook}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "exec sleep 3600"]
      lifecycle:
        postStart: {exec: {command: ["sh", "-c", "echo no >&2; exit 3"]}}
`,
    );
    const p = await waitForPod(node, 'badhook', (x) => (main(x)?.restartCount ?? 0) >= 1, 90_000);
    const evs = events(p);
    const failed = evs.find((e) => e.reason === 'FailedPostStartHook');
    expect(failed).toMatchObject({ type: 'Warning', involvedObject: { fieldPath: 'spec.containers{main}' } });
    expect(failed!.message).toMatch(
      /^Exec lifecycle hook \(\[sh -c echo no >&2; exit 3\]\) for Container "main" in Pod "badhook-.*" failed - error: .*, message: "no\\n"$/,
    );
    expect(evs.find((e) => e.reason === 'Killing' && e.message === 'FailedPostStartHook')).toBeDefined();
    const c = main(p)!;
    expect(c.ready).toBe(false);
    // Between attempts the container waits with the hook error as its reason (the kubelet's reason cache).
    const waiting = await waitForPod(
      node,
      'badhook',
      (x) => main(x)?.state?.waiting?.reason === 'PostStartHookError' || main(x)?.state?.waiting?.reason === 'CrashLoopBackOff',
      90_000,
    );
    expect(main(waiting)!.lastState?.terminated).toBeDefined();
  }, 180_000);
});
