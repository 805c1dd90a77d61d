// Issue #12 items 9 and 10 against the real dockerd: sidecar probes and init container readiness;
// node admission (nodeSelector / node affinity against --node-labels, extended resources), tty
// containers' logs, and the refusals that remain. One agent for the whole file; the pods start
// together in beforeAll, each test then reads its own pod.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Node, Pod } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, docker, execInPod, waitFor } from '../support/docker.js';
import { startTestNode, waitForPod, type TestNode } from '../support/agent.js';

/** Generous waits on a shared machine (never asserted on). */
const kWaitMs = 60_000;

const cond = (pod: Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type);
const init = (pod: Pod, name: string) => pod.status?.initContainerStatuses?.find((c) => c.name === name);
const app = (pod: Pod) => pod.status?.containerStatuses?.[0];

const pod = (name: string, body: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 1
${body}`;
const sleeper = (name = 'main', extra = '') => `    - name: ${name}
      image: ${BUSYBOX_IMAGE}
      command: ["sleep", "3600"]
${extra}`;

describe.skipIf(!inject('dockerAvailable'))('issue #12: sidecar probes and node admission in Docker', { timeout: 120_000 }, () => {
  let node: TestNode;
  /** A directory bind-mounted on itself and made a shared mount (as a real node's / is), for mountPropagation. */
  let shared = '';
  const sh = promisify(execFile);

  beforeAll(async () => {
    shared = await mkdtemp(join(tmpdir(), 'kubelet-ts-e2e-propagation-'));
    await sh('mount', ['--bind', shared, shared]);
    await sh('mount', ['--make-shared', shared]);
    node = await startTestNode({ nodeLabels: { disktype: 'ssd', 'example.com/tier': 'gold' } });
    const n = node.nodeName;
    await Promise.all([
      // A regular init container, then a sidecar whose startup probe gates the app container and
      // whose readiness probe decides the pod's Ready condition.
      // Also a first sidecar whose liveness probe the test makes fail: that sidecar alone is restarted.
      node.writeManifest(
        'sidecar.yaml',
        pod(
          'sidecar',
          `  initContainers:
    - name: live
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "touch /tmp/alive; exec sleep 3600"]
      restartPolicy: Always
      livenessProbe: {exec: {command: ["test", "-f", "/tmp/alive"]}, periodSeconds: 1, timeoutSeconds: 20, failureThreshold: 1, terminationGracePeriodSeconds: 1}
    - name: setup
      image: ${BUSYBOX_IMAGE}
      command: ["true"]
${sleeper(
  'proxy',
  `      restartPolicy: Always
      startupProbe: {exec: {command: ["test", "-f", "/tmp/started"]}, periodSeconds: 1, timeoutSeconds: 20, failureThreshold: 600}
      readinessProbe: {exec: {command: ["test", "-f", "/tmp/ready"]}, periodSeconds: 1, timeoutSeconds: 20}`,
)}
  containers:
${sleeper('app')}`,
        ),
      ),
      node.writeManifest(
        'selected.yaml',
        pod(
          'selected',
          `  nodeSelector: {disktype: ssd}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions: [{key: example.com/tier, operator: In, values: [gold, silver]}, {key: gpu, operator: DoesNotExist}]
            matchFields: [{key: metadata.name, operator: In, values: [${n}]}]
      preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 10, preference: {matchExpressions: [{key: zone, operator: Exists}]}}
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 1, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: x}}}}
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}]
  automountServiceAccountToken: false
  containers:
${sleeper('main', `      resources: {limits: {ephemeral-storage: 1Gi, memory: 64Mi}}`)}
    - name: tty
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "echo hello from a tty; [ -t 0 ] && [ -t 1 ] && echo stdin and stdout are terminals; exec sleep 3600"]
      stdin: true
      stdinOnce: false
      tty: true
    - name: propagation
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "until grep -q ' /host/late ' /proc/self/mountinfo; do sleep 0.2; done; echo saw the host mount; exec sleep 3600"]
      volumeMounts: [{name: host, mountPath: /host, mountPropagation: HostToContainer}]
  volumes: [{name: host, hostPath: {path: ${shared}, type: Directory}}]`,
        ),
      ),
      node.writeManifest(
        'unselected.yaml',
        pod(
          'unselected',
          `  nodeSelector: {disktype: hdd}
  containers:
${sleeper()}`,
        ),
      ),
      node.writeManifest(
        'gpu.yaml',
        pod(
          'gpu',
          `  containers:
${sleeper('main', `      resources: {limits: {example.com/foo: 1}}`)}`,
        ),
      ),
    ]);
  }, 60_000);

  afterAll(async () => {
    await node?.cleanup();
    if (shared) {
      await sh('umount', [join(shared, 'late')]).catch(() => {});
      await sh('umount', [shared]).catch(() => {});
      await rm(shared, { recursive: true, force: true });
    }
  });

  it('reports a completed init container ready, and gates the app on the sidecar startup probe, then on its readiness', async () => {
    const waitingForStartup = await waitForPod(node, 'sidecar', (p) => init(p, 'proxy')?.state?.running !== undefined, kWaitMs);
    expect(init(waitingForStartup, 'setup')).toMatchObject({ ready: true, state: { terminated: { exitCode: 0, reason: 'Completed' } } });
    expect(init(waitingForStartup, 'proxy')).toMatchObject({ started: false, ready: false });
    expect(app(waitingForStartup)!.state!.waiting!.reason).toBe('PodInitializing');
    expect(cond(waitingForStartup, 'Initialized')).toMatchObject({
      status: 'False',
      message: 'containers with incomplete status: [proxy]',
    });

    const uid = waitingForStartup.metadata!.uid!;
    await execInPod(uid, 'proxy', ['sh', '-c', 'touch /tmp/started']);
    // Started: the app container runs, but the sidecar's readiness probe still fails.
    const unready = await waitForPod(
      node,
      'sidecar',
      (p) => app(p)?.state?.running !== undefined && init(p, 'proxy')?.started === true,
      kWaitMs,
    );
    expect(init(unready, 'proxy')!.ready).toBe(false);
    expect(init(unready, 'setup')!.ready).toBe(true);
    expect(cond(unready, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [proxy]',
    });
    // Readiness probes start once the startup probe passed: the first failure (and its event) may come after the status above.
    await waitFor(
      () =>
        node.agent.events
          .list({ uid })
          .some((e) => e.reason === 'Unhealthy' && e.involvedObject?.fieldPath === 'spec.initContainers{proxy}'),
      { timeoutMs: kWaitMs, description: 'an Unhealthy event for the sidecar proxy' },
    );

    await execInPod(uid, 'proxy', ['sh', '-c', 'touch /tmp/ready']);
    const ready = await waitForPod(node, 'sidecar', (p) => cond(p, 'Ready')?.status === 'True', kWaitMs);
    expect(init(ready, 'proxy')).toMatchObject({ ready: true, started: true });
    expect(ready.status!.phase).toBe('Running');
  });

  it('restarts a sidecar that fails its liveness probe, alone', async () => {
    const up = await waitForPod(
      node,
      'sidecar',
      (p) => app(p)?.state?.running !== undefined && init(p, 'live')?.state?.running !== undefined,
      kWaitMs,
    );
    const appId = app(up)!.containerID;
    const proxyId = init(up, 'proxy')!.containerID;
    const before = init(up, 'live')!;
    await execInPod(up.metadata!.uid!, 'live', ['sh', '-c', 'rm /tmp/alive']);
    const restarted = await waitForPod(
      node,
      'sidecar',
      (p) => init(p, 'live')!.restartCount > before.restartCount && init(p, 'live')?.state?.running !== undefined,
      kWaitMs,
    );
    expect(app(restarted)!.containerID).toBe(appId);
    expect(init(restarted, 'proxy')!.containerID).toBe(proxyId);
    expect(restarted.status!.phase).toBe('Running');
    expect(
      node.agent.events
        .list({ uid: up.metadata!.uid })
        .some(
          (e) =>
            e.reason === 'Killing' &&
            e.involvedObject?.fieldPath === 'spec.initContainers{live}' &&
            /Init container live failed liveness probe/.test(e.message ?? ''),
        ),
    ).toBe(true);
  });

  it('admits a pod whose nodeSelector and required node affinity match --node-labels and the node name', async () => {
    const p = await waitForPod(node, 'selected', (x) => x.status?.phase === 'Running', kWaitMs);
    expect(p.status!.containerStatuses!.map((c) => c.name)).toEqual(['main', 'tty', 'propagation']);
  });

  it('fails a pod whose nodeSelector does not match, with the kubelet reason and message', async () => {
    const p = await waitForPod(node, 'unselected', (x) => x.status?.phase === 'Failed', kWaitMs);
    expect(p.status).toMatchObject({
      reason: 'NodeAffinity',
      message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    });
    expect(await docker.listContainers({ all: true, filters: { label: [`io.kubernetes.pod.uid=${p.metadata!.uid}`] } })).toEqual([]);
  });

  it('fails a pod requesting an extended resource no device plugin offers', async () => {
    const p = await waitForPod(node, 'gpu', (x) => x.status?.phase === 'Failed', kWaitMs);
    expect(p.status).toMatchObject({
      reason: 'OutOfexample.com/foo',
      message: "Node didn't have enough resource: example.com/foo, requested: 1, used: 0, capacity: 0",
    });
  });

  it('runs a tty container and reads its logs through GET /containerLogs', async () => {
    const p = await waitForPod(node, 'selected', (x) => x.status?.phase === 'Running', kWaitMs);
    const [c] = await docker.listContainers({
      filters: { label: [`io.kubernetes.pod.uid=${p.metadata!.uid}`, 'io.kubernetes.container.name=tty'] },
    });
    const inspect = await docker.getContainer(c.Id).inspect();
    expect(inspect.Config).toMatchObject({ Tty: true, OpenStdin: true, StdinOnce: false });
    let text = '';
    for (let i = 0; i < 50 && !text.includes('terminals'); i++) {
      text = await (await node.api(`/containerLogs/default/${p.metadata!.name}/tty`)).text();
      if (!text.includes('terminals')) await new Promise((r) => setTimeout(r, 200));
    }
    expect(text).toContain('hello from a tty');
    expect(text).toContain('stdin and stdout are terminals');
  });

  it('propagates a mount made on the host after start into a HostToContainer (rslave) volume mount', async () => {
    const p = await waitForPod(node, 'selected', (x) => x.status?.phase === 'Running', kWaitMs);
    await mkdir(join(shared, 'late'));
    await sh('mount', ['-t', 'tmpfs', 'tmpfs', join(shared, 'late')]);
    let text = '';
    for (let i = 0; i < 100 && !text.includes('saw the host mount'); i++) {
      text = await (await node.api(`/containerLogs/default/${p.metadata!.name}/propagation`)).text();
      if (!text.includes('saw the host mount')) await new Promise((r) => setTimeout(r, 200));
    }
    expect(text).toContain('saw the host mount');
  });

  it('shows --node-labels beside the well-known labels on GET /node', async () => {
    const n = (await (await node.api('/node')).json()) as Node;
    expect(n.metadata!.labels).toMatchObject({
      disktype: 'ssd',
      'example.com/tier': 'gold',
      'kubernetes.io/hostname': node.nodeName,
      'kubernetes.io/os': 'linux',
    });
  });

  it('refuses a persistentVolumeClaim volume without claimName and Bidirectional propagation of an unprivileged container, naming the field and the reason', async () => {
    const body = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pvc', namespace: 'default' },
      spec: {
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: '' } },
          { name: 'scratch', emptyDir: {} },
        ],
        containers: [
          { name: 'main', image: BUSYBOX_IMAGE, volumeMounts: [{ name: 'scratch', mountPath: '/s', mountPropagation: 'Bidirectional' }] },
        ],
      },
    };
    const res = await node.api('/pods', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(422);
    const causes = ((await res.json()) as { details: { causes: Array<{ field: string; message: string }> } }).details.causes;
    expect(causes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          field: 'spec.volumes[0].persistentVolumeClaim.claimName',
          message: expect.stringContaining('Required value'),
        }),
        expect.objectContaining({
          field: 'spec.containers[0].volumeMounts[0].mountPropagation',
          message: expect.stringContaining('only to privileged containers'),
        }),
      ]),
    );
  });
});
