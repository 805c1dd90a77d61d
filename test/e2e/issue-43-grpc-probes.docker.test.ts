// Issue 43 item 2 against the real agent and runtime (dockerd, or containerd: test/support/runtime.ts): gRPC probes (grpc.health.v1.Health/Check).
// The documentation's `probe-grpc-liveness` example (etcd-with-grpc: a liveness probe on port 2379)
// runs with a local image; the gRPC health server is test/support/grpc-health.ts, started by the
// test inside the pod's own network namespace (nsenter -n into the sandbox), since no image with a
// gRPC server can be pulled. Shown: the container is restarted when the health service reports
// NOT_SERVING, and readiness follows SERVING/NOT_SERVING — for a network-`none` pod (through the
// netns helper), a hostNetwork pod (loopback) and a pod on the node's bridge (its pod IP).
import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { startTestNode, waitForPod, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { itRuntime, sandboxPid } from '../support/runtime.js';
import { spawnHealthServer, startHealthServer, type HealthServer, type SpawnedHealthServer } from '../support/grpc-health.js';

const kReadiness = 'kubelet-ts.test.Readiness';
const cond = (pod: Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type)?.status;
const status = (pod: Pod, name: string) => pod.status?.containerStatuses?.find((c) => c.name === name);

/** A one-container busybox pod (`main`, sleeping) with `readinessProbe` (YAML flow text), on the host's network if asked. */
const probedPod = (name: string, readinessProbe: string, hostNetwork = false) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 1${hostNetwork ? '\n  hostNetwork: true' : ''}
  containers:
  - name: main
    image: ${BUSYBOX_IMAGE}
    command: ["sh", "-c", "exec sleep 3600"]
    readinessProbe: ${readinessProbe}
`;

/** A health server inside pod `uid`'s network namespace, on `host`:`port`, SERVING for '' and kReadiness. */
async function serveInPod(uid: string, host: string, port: number): Promise<SpawnedHealthServer> {
  const server = await spawnHealthServer(['nsenter', '-t', String(await sandboxPid(uid)), '-n'], host, port);
  await server.set(kReadiness, 'SERVING');
  return server;
}

/**
 * probeStatusFlips: readiness follows the server's status of kReadiness (NOT_SERVING: unready with
 * the kubelet's Unhealthy text; SERVING: ready again), without a restart.
 */
async function readinessFollows(
  node: TestNode,
  name: string,
  container: string,
  set: (status: string) => Promise<void> | void,
): Promise<void> {
  let p = await waitForPod(node, name, (x) => status(x, container)?.ready === true, 90_000);
  const restarts = status(p, container)!.restartCount;
  await set('NOT_SERVING');
  p = await waitForPod(node, name, (x) => status(x, container)?.ready === false, 60_000);
  expect(cond(p, 'Ready')).toBe('False');
  const events = node.agent.events.list({ uid: p.metadata!.uid });
  expect(
    events.filter((e) => e.reason === 'Unhealthy' && e.involvedObject?.fieldPath === `spec.containers{${container}}`).map((e) => e.message),
  ).toContain('Readiness probe failed: service unhealthy (responded with "NOT_SERVING")');
  await set('SERVING');
  p = await waitForPod(node, name, (x) => status(x, container)?.ready === true && cond(x, 'Ready') === 'True', 60_000);
  expect(status(p, container)!.restartCount).toBe(restarts);
}

describe.skipIf(!inject('dockerAvailable'))('gRPC probes (network none, hostNetwork)', () => {
  let node: TestNode;
  const servers: Array<{ stop(): Promise<void> }> = [];
  beforeAll(async () => {
    // The netns helper is built by tools/test; build it here too for a bare `vitest run`.
    execFileSync('bash', ['-c', 'set -e; . tools/lib/common.sh; . tools/lib/netns-probe.sh; ensure_netns_probe'], { stdio: 'ignore' });
    node = await startTestNode({ networkPlugin: 'none' });
  }, 60_000);
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });
  afterAll(async () => {
    await node?.cleanup();
  });

  itRuntime({
    containerd:
      "--network-plugin none is the agent's own network mode on Docker: on containerd every pod gets an IP on the runtime's CNI (kts-cri0), the probe goes to that IP as upstream's, and this test's server listens on the pod's loopback only (the pod-IP case is the third test)",
  })(
    "the documentation's probe-grpc-liveness: restarted when the health service reports NOT_SERVING; readiness follows SERVING/NOT_SERVING (network none: through the netns helper)",
    async () => {
      // etcd-with-grpc from the documentation, with a local image (etcd's gRPC health service is
      // played by the test's server in the pod's namespace) and a readiness probe beside it.
      await node.writeManifest(
        'etcd-with-grpc.yaml',
        `apiVersion: v1
kind: Pod
metadata: {name: etcd-with-grpc}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: etcd
    image: ${BUSYBOX_IMAGE}
    command: ["sh", "-c", "exec sleep 3600"]
    ports:
    - containerPort: 2379
    livenessProbe:
      grpc:
        port: 2379
      initialDelaySeconds: 10
      periodSeconds: 1
      failureThreshold: 2
    readinessProbe:
      grpc:
        port: 2379
        service: ${kReadiness}
      periodSeconds: 1
      failureThreshold: 1
`,
      );
      let p = await waitForPod(node, 'etcd-with-grpc', (x) => !!status(x, 'etcd')?.state?.running, 90_000);
      expect(status(p, 'etcd')!.ready).toBe(false);
      const server = await serveInPod(p.metadata!.uid!, '127.0.0.1', 2379);
      servers.push(server);
      await readinessFollows(node, 'etcd-with-grpc', 'etcd', (s) => server.set(kReadiness, s));

      p = await waitForPod(node, 'etcd-with-grpc', (x) => status(x, 'etcd')?.ready === true, 60_000);
      const before = status(p, 'etcd')!;
      await server.set('', 'NOT_SERVING');
      p = await waitForPod(
        node,
        'etcd-with-grpc',
        (x) => (status(x, 'etcd')?.restartCount ?? 0) > before.restartCount && !!status(x, 'etcd')?.state?.running,
        90_000,
      );
      // Healthy again before the new container's initial delay is over: it is not restarted again.
      await server.set('', 'SERVING');
      expect(status(p, 'etcd')!.containerID).not.toBe(before.containerID);
      expect(status(p, 'etcd')!.lastState?.terminated?.containerID).toBe(before.containerID);
      const events = node.agent.events.list({ uid: p.metadata!.uid });
      expect(
        events.find(
          (e) => e.reason === 'Unhealthy' && e.message === 'Liveness probe failed: service unhealthy (responded with "NOT_SERVING")',
        ),
      ).toMatchObject({
        type: 'Warning',
        involvedObject: { fieldPath: 'spec.containers{etcd}' },
      });
      expect(events.find((e) => e.reason === 'Killing')).toMatchObject({
        type: 'Normal',
        message: 'Container etcd failed liveness probe, will be restarted',
      });
      p = await waitForPod(node, 'etcd-with-grpc', (x) => status(x, 'etcd')?.ready === true, 90_000);
      expect(status(p, 'etcd')!.restartCount).toBe(before.restartCount + 1);
    },
    300_000,
  );

  it("a hostNetwork pod is probed on the node's address; a port with no gRPC health service fails with the kubelet's text", async () => {
    const server: HealthServer = await startHealthServer({ statuses: { '': 'SERVING', [kReadiness]: 'SERVING' } });
    servers.push(server);
    const bare: HealthServer = await startHealthServer({ health: false });
    servers.push(bare);
    await node.writeManifest(
      'grpc-hostnet.yaml',
      probedPod('grpc-hostnet', `{grpc: {port: ${server.port}, service: ${kReadiness}}, periodSeconds: 1, failureThreshold: 1}`, true),
    );
    await node.writeManifest('grpc-bare.yaml', probedPod('grpc-bare', `{grpc: {port: ${bare.port}}, periodSeconds: 1}`, true));
    await readinessFollows(node, 'grpc-hostnet', 'main', (s) => void server.statuses.set(kReadiness, s));
    expect(server.seen.some((s) => s.service === kReadiness && /^kube-probe\//.test(s.userAgent))).toBe(true);
    const p = await waitForPod(node, 'grpc-bare', (x) => !!status(x, 'main')?.state?.running, 60_000);
    expect(status(p, 'main')!.ready).toBe(false);
    const unhealthy = await waitFor(() => node.agent.events.list({ uid: p.metadata!.uid }).find((e) => e.reason === 'Unhealthy'), {
      timeoutMs: 60_000,
    });
    expect(unhealthy.message).toMatch(
      /^Readiness probe failed: error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): /,
    );
  }, 300_000);
});

describe.skipIf(!inject('dockerAvailable'))('gRPC probes (the pod network)', () => {
  let node: TestNode;
  let server: SpawnedHealthServer | undefined;
  beforeAll(async () => {
    node = await startTestNode();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await node?.cleanup();
  });

  it("a pod on the node's bridge is probed on its pod IP; readiness follows SERVING/NOT_SERVING", async () => {
    await node.writeManifest(
      'grpc-podnet.yaml',
      probedPod('grpc-podnet', `{grpc: {port: 9090, service: ${kReadiness}}, periodSeconds: 1, failureThreshold: 1}`),
    );
    const p = await waitForPod(node, 'grpc-podnet', (x) => !!x.status?.podIP && !!status(x, 'main')?.state?.running, 90_000);
    expect(p.status!.podIP).not.toBe('127.0.0.1');
    // Listening on the pod's own address only (not its loopback): the probe must come to the pod IP.
    server = await serveInPod(p.metadata!.uid!, p.status!.podIP!, 9090);
    await readinessFollows(node, 'grpc-podnet', 'main', (s) => server!.set(kReadiness, s));
  }, 300_000);
});
