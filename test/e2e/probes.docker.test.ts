// End-to-end probes against the real dockerd: exec readiness/liveness/startup probes, httpGet and
// tcpSocket probes into a network-none sandbox (through the netns helper) and on hostNetwork; the
// role of test/e2e/common/node/container_probe.go for kubelet-ts, with timings scaled to seconds.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { execInContainer, itRuntime } from '../support/runtime.js';
import { startTestNode, waitForPod, type TestNode } from '../support/agent.js';

const cond = (pod: Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type)?.status;
const main = (pod: Pod) => pod.status?.containerStatuses?.find((c) => c.name === 'main');

const pod = (name: string, body: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 1
${body}`;

/** On containerd the runtime's CNI networks every sandbox (--network-plugin is the Docker side's). */
const kNoNetworkNone =
  "the runtime's CNI gives every non-host sandbox an address: no network-none sandbox to probe through the netns helper";

describe.skipIf(!inject('dockerAvailable'))('probes in Docker', () => {
  let node: TestNode;
  const events = (p: Pod) => node.agent.events.list({ uid: p.metadata!.uid });

  beforeAll(async () => {
    // The netns helper is built by tools/test; build it here too for a bare `vitest run`.
    execFileSync('bash', ['-c', 'set -e; . tools/lib/common.sh; . tools/lib/netns-probe.sh; ensure_netns_probe'], { stdio: 'ignore' });
    // --network-plugin none: the sandboxes keep network `none`, so the probes go through the netns
    // helper (probes of a pod with an IP go straight to it: issue-13-network.docker.test.ts).
    node = await startTestNode({ networkPlugin: 'none' });
  }, 60_000);
  afterAll(async () => {
    await node?.cleanup();
  });

  it('readiness (exec) flips ready and the Ready condition both ways without restarts', async () => {
    await node.writeManifest(
      'ready.yaml',
      pod(
        'ready',
        `  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "exec sleep 3600"]
      readinessProbe: {exec: {command: ["cat", "/tmp/ready"]}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1}
`,
      ),
    );
    let p = await waitForPod(node, 'ready', (x) => x.status?.phase === 'Running' && !!main(x)?.state?.running, 90_000);
    expect(main(p)!.ready).toBe(false);
    expect(main(p)!.started).toBe(true);
    expect(cond(p, 'Ready')).toBe('False');
    expect(cond(p, 'ContainersReady')).toBe('False');
    await waitFor(() => events(p).find((e) => e.reason === 'Unhealthy' && e.message!.startsWith('Readiness probe failed:')), {
      timeoutMs: 60_000,
    });
    await execInContainer(p.metadata!.uid!, 'main', ['sh', '-c', 'touch /tmp/ready']);
    p = await waitForPod(node, 'ready', (x) => main(x)?.ready === true, 90_000);
    expect(cond(p, 'Ready')).toBe('True');
    expect(cond(p, 'ContainersReady')).toBe('True');
    await execInContainer(p.metadata!.uid!, 'main', ['sh', '-c', 'rm /tmp/ready']);
    p = await waitForPod(node, 'ready', (x) => main(x)?.ready === false, 90_000);
    expect(cond(p, 'Ready')).toBe('False');
    expect(main(p)!.restartCount).toBe(0);
    expect(main(p)!.state?.running).toBeTruthy();
  }, 180_000);

  it('a failing liveness probe restarts the container (restartCount 1, Unhealthy and Killing events)', async () => {
    await node.writeManifest(
      'live.yaml',
      pod(
        'live',
        `  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "touch /tmp/healthy; exec sleep 3600"]
      livenessProbe: {exec: {command: ["cat", "/tmp/healthy"]}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 2}
`,
      ),
    );
    let p = await waitForPod(node, 'live', (x) => !!main(x)?.state?.running, 90_000);
    const firstId = main(p)!.containerID;
    await execInContainer(p.metadata!.uid!, 'main', ['sh', '-c', 'rm /tmp/healthy']);
    p = await waitForPod(node, 'live', (x) => main(x)?.restartCount === 1 && !!main(x)?.state?.running, 90_000);
    expect(main(p)!.containerID).not.toBe(firstId);
    expect(main(p)!.lastState?.terminated?.containerID).toBe(firstId);
    const evs = events(p);
    expect(evs.find((e) => e.reason === 'Unhealthy')).toMatchObject({
      type: 'Warning',
      message: expect.stringMatching(/^Liveness probe failed: /),
      involvedObject: { fieldPath: 'spec.containers{main}' },
    });
    expect(evs.find((e) => e.reason === 'Killing')).toMatchObject({
      type: 'Normal',
      message: 'Container main failed liveness probe, will be restarted',
    });
    // The new container recreated /tmp/healthy: it stays up.
    const again = await waitForPod(node, 'live', (x) => main(x)?.ready === true, 90_000);
    expect(main(again)!.restartCount).toBe(1);
  }, 180_000);

  it('a startup probe holds the liveness probe back until it succeeds', async () => {
    await node.writeManifest(
      'slow.yaml',
      pod(
        'slow',
        `  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "exec sleep 3600"]
      startupProbe: {exec: {command: ["cat", "/tmp/started"]}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 120}
      livenessProbe: {exec: {command: ["cat", "/tmp/alive"]}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1}
`,
      ),
    );
    let p = await waitForPod(node, 'slow', (x) => !!main(x)?.state?.running, 90_000);
    expect(main(p)!.started).toBe(false);
    expect(main(p)!.ready).toBe(false);
    // The startup probe fails a few times; the liveness probe (which would fail at once) must not run.
    await waitFor(
      () =>
        events(p)
          .filter((e) => e.reason === 'Unhealthy' && e.message!.startsWith('Startup probe failed:'))
          .some((e) => (e.count ?? 1) >= 2),
      { timeoutMs: 60_000 },
    );
    expect(events(p).some((e) => e.message?.startsWith('Liveness probe failed'))).toBe(false);
    await execInContainer(p.metadata!.uid!, 'main', ['sh', '-c', 'touch /tmp/alive /tmp/started']);
    p = await waitForPod(node, 'slow', (x) => main(x)?.started === true && main(x)?.ready === true, 90_000);
    expect(main(p)!.restartCount).toBe(0);
    expect(cond(p, 'Ready')).toBe('True');
  }, 180_000);

  it('is Ready right after its startup probe succeeds, not a readiness period later (upstream e2e "should be ready immediately after startupProbe succeeds")', async () => {
    // The startup probe passes after ~3 s; the readiness probe (always passing) has a 60 s period:
    // its first run comes before startup succeeds and is held back, so only the kubelet's manual
    // trigger on startup success can make the pod Ready before the period has run out again.
    await node.writeManifest(
      'startup-ready.yaml',
      pod(
        'startup-ready',
        `  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "sleep 3; touch /tmp/started; exec sleep 3600"]
      startupProbe: {exec: {command: ["cat", "/tmp/started"]}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 120}
      readinessProbe: {exec: {command: ["true"]}, periodSeconds: 60, timeoutSeconds: 5}
`,
      ),
    );
    // Bounded past one readiness period, so the code before the fix gets Ready too and fails on the times below.
    const p = await waitForPod(node, 'startup-ready', (x) => main(x)?.ready === true && cond(x, 'Ready') === 'True', 100_000);
    expect(main(p)!.started).toBe(true);
    expect(main(p)!.restartCount).toBe(0);
    const startedAt = Date.parse(main(p)!.state!.running!.startedAt!);
    const readyAt = Date.parse(p.status!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime!);
    // Ready within the readiness period of the container's start: the readiness probe ran right
    // after the startup probe passed (the timestamps have whole seconds).
    expect(readyAt - startedAt).toBeLessThan(60_000);
    expect(readyAt - startedAt).toBeGreaterThanOrEqual(2_000); // and not before the startup probe passed
  }, 180_000);

  itRuntime({ containerd: kNoNetworkNone })(
    'httpGet (named port) and tcpSocket probes reach a server inside a network-none sandbox',
    async () => {
      await node.writeManifest(
        'web.yaml',
        pod(
          'web',
          `  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 8080 -h /www"]
      ports: [{name: http, containerPort: 8080}]
      readinessProbe: {httpGet: {path: /index.html, port: http, httpHeaders: [{name: X-Probe, value: "1"}]}, periodSeconds: 1, timeoutSeconds: 5}
      livenessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 3}
    - name: other
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "exec sleep 3600"]
      readinessProbe: {httpGet: {path: /missing, port: 8080}, periodSeconds: 1, failureThreshold: 1}
      livenessProbe: {tcpSocket: {port: 9999}, periodSeconds: 1, failureThreshold: 1}
`,
        ),
      );
      const p = await waitForPod(node, 'web', (x) => main(x)?.ready === true, 90_000);
      expect(p.status!.podIP).toBeUndefined(); // network none: no pod IP, yet the probe got in
      const other = await waitFor(
        async () => {
          const x = await node.pod('web');
          const o = x?.status?.containerStatuses?.find((c) => c.name === 'other');
          return o && o.restartCount >= 1 ? { pod: x!, o } : undefined;
        },
        { timeoutMs: 90_000 },
      );
      expect(other.o.ready).toBe(false);
      const evs = events(p);
      expect(evs.some((e) => e.message === 'Readiness probe failed: HTTP probe failed with statuscode: 404')).toBe(true);
      expect(
        evs.some((e) => e.reason === 'Unhealthy' && /^Liveness probe failed: dial tcp 127\.0\.0\.1:9999: .*refused/.test(e.message!)),
      ).toBe(true);
      expect(main(other.pod)!.restartCount).toBe(0);
    },
    180_000,
  );

  it('httpGet and tcpSocket probes of a hostNetwork pod go to the node address', async () => {
    // Below Linux's ephemeral ports (32768+), which any outgoing loopback connection may hold, and above etcd's 23790–23801.
    const port = 24_000 + Math.floor(Math.random() * 8_000);
    await node.writeManifest(
      'hostweb.yaml',
      pod(
        'hostweb',
        `  hostNetwork: true
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 127.0.0.1:${port} -h /www"]
      readinessProbe: {httpGet: {path: /index.html, port: ${port}}, periodSeconds: 1, timeoutSeconds: 5}
      livenessProbe: {tcpSocket: {port: ${port}}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 3}
`,
      ),
    );
    const p = await waitForPod(node, 'hostweb', (x) => main(x)?.ready === true, 90_000);
    expect(p.status!.podIP).toBe('127.0.0.1');
    expect(cond(p, 'Ready')).toBe('True');
    expect(main(p)!.restartCount).toBe(0);
  }, 180_000);
});
