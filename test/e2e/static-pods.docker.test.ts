// End-to-end: static pods from a manifest directory run in the real dockerd through the whole agent
// (file source → merge → pod workers → piscina pool → Docker → PLEG → status → GET /pods).
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE, PAUSE_IMAGE, waitFor } from '../support/docker.js';
import { busyboxPod, containersOf, isRunningAndReady, kNodeLabel, waitForPod, startTestNode, useTestNodes } from '../support/agent.js';
import { labeledContainers, podContainers, startForeignPod, testRuntime } from '../support/runtime.js';

const sharedVolumePod = `apiVersion: v1
kind: Pod
metadata:
  name: pair
  labels: {app: pair}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: writer
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "echo from-writer > /data/msg; exec sleep 3600"]
      volumeMounts: [{name: data, mountPath: /data}]
    - name: reader
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "while [ ! -f /data/msg ]; do sleep 0.1; done; cp /data/msg /data/seen-by-reader; exec sleep 3600"]
      volumeMounts: [{name: data, mountPath: /data}]
  volumes:
    - name: data
      emptyDir: {}
`;

describe.skipIf(!inject('dockerAvailable'))('static pods in Docker', () => {
  const start = useTestNodes();

  it('runs a two-container pod sharing an emptyDir, with the dockershim names and labels', async () => {
    const node = await start();
    await node.writeManifest('pair.yaml', sharedVolumePod);
    const pod = await waitForPod(node, 'pair', isRunningAndReady);
    const uid = pod.metadata!.uid!;
    expect(pod.metadata!.annotations!['kubernetes.io/config.source']).toBe('file');
    expect(pod.spec!.nodeName).toBe(node.nodeName);
    expect(pod.status!.conditions!.find((c) => c.type === 'Ready')!.status).toBe('True');

    // One sandbox and a container per spec container, each with the pod's labels and the node's (either runtime).
    const neutral = await podContainers(uid);
    expect(neutral.map((c) => c.name).sort()).toEqual(['POD', 'reader', 'writer']);
    expect(neutral.filter((c) => c.sandbox)).toHaveLength(1);
    for (const c of neutral) {
      expect(c.labels).toMatchObject({
        'io.kubernetes.pod.uid': uid,
        'io.kubernetes.pod.namespace': 'default',
        'io.kubernetes.pod.name': `pair-${node.nodeName}`,
        [kNodeLabel]: node.nodeName,
      });
    }
    // On Docker, the shape dockershim gives them: its names, the pause image, the sandbox's network.
    if (testRuntime() === 'docker') {
      const containers = await containersOf(uid);
      const names = containers.map((c) => c.Names[0].slice(1)).sort();
      expect(names).toEqual([
        `k8s_POD_pair-${node.nodeName}_default_${uid}_0`,
        `k8s_reader_pair-${node.nodeName}_default_${uid}_0`,
        `k8s_writer_pair-${node.nodeName}_default_${uid}_0`,
      ]);
      const sandbox = containers.find((c) => c.Labels['io.kubernetes.container.name'] === 'POD')!;
      expect(sandbox.Image).toBe(PAUSE_IMAGE);
      expect(sandbox.Labels['io.kubernetes.docker.type']).toBe('podsandbox');
      for (const c of containers.filter((x) => x !== sandbox)) {
        expect(c.Labels['io.kubernetes.sandbox.id']).toBe(sandbox.Id);
        expect(c.Labels['annotation.io.kubernetes.container.hash']).toMatch(/.+/);
        expect(c.HostConfig.NetworkMode).toBe(`container:${sandbox.Id}`);
      }
    }
    // The reader saw the writer's file through the shared emptyDir, which lives under --root-dir.
    const volume = join(node.rootDir, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', 'data');
    expect(await waitFor(() => readFile(join(volume, 'seen-by-reader'), 'utf8'))).toBe('from-writer\n');

    // Removing the manifest stops and removes the pod: containers and volume directory.
    await rm(join(node.manifestDir, 'pair.yaml'));
    await waitFor(async () => (await node.pod('pair')) === undefined, { timeoutMs: 30_000, description: 'pod gone from /pods' });
    expect(await podContainers(uid)).toEqual([]);
    expect(existsSync(join(node.rootDir, 'pods', uid))).toBe(false);
  });

  it('adopts running containers after an agent restart without restarting them', async () => {
    const node = await start();
    await node.writeManifest('a.yaml', busyboxPod('sleeper', 'exec sleep 3600'));
    const before = await waitForPod(node, 'sleeper', isRunningAndReady);
    const idsBefore = (await podContainers(before.metadata!.uid!)).map((c) => c.id).sort();
    const startedBefore = before.status!.containerStatuses![0].state!.running!.startedAt;

    await node.restart();
    const after = await waitForPod(node, 'sleeper', isRunningAndReady);
    expect(after.metadata!.uid).toBe(before.metadata!.uid);
    expect(after.status!.containerStatuses![0].restartCount).toBe(0);
    expect(after.status!.containerStatuses![0].state!.running!.startedAt).toBe(startedBefore);
    // status.startTime is the pod's, not the new agent's (it was later than its container's start).
    expect(Date.parse(after.status!.startTime!)).toBeLessThanOrEqual(Date.parse(startedBefore!));
    // Give the new agent's PLEG and a resync a chance to do something wrong.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await podContainers(before.metadata!.uid!)).map((c) => c.id).sort()).toEqual(idsBefore);
  });

  it('removes the containers of a pod whose manifest went away while the agent was down', async () => {
    const node = await start();
    await node.writeManifest('gone.yaml', busyboxPod('gone', 'exec sleep 3600'));
    await node.writeManifest('kept.yaml', busyboxPod('kept', 'exec sleep 3600'));
    const gone = await waitForPod(node, 'gone', isRunningAndReady);
    const kept = await waitForPod(node, 'kept', isRunningAndReady);
    await node.agent.stop();
    await rm(join(node.manifestDir, 'gone.yaml'));
    expect((await podContainers(gone.metadata!.uid!)).filter((c) => c.running)).toHaveLength(2);
    await node.restart();
    // Housekeeping (once the file source has reported) kills and removes the orphan, and only it.
    await waitFor(async () => (await podContainers(gone.metadata!.uid!)).length === 0, {
      timeoutMs: 30_000,
      description: 'orphan removed',
    });
    const keptAfter = await waitForPod(node, 'kept', isRunningAndReady);
    expect(keptAfter.status!.containerStatuses![0].restartCount).toBe(0);
    expect(keptAfter.metadata!.uid).toBe(kept.metadata!.uid);
  });

  it('starts a pod again when its manifest is removed and restored while it is still stopping', async () => {
    const node = await start();
    const yaml = busyboxPod('flap', 'trap "sleep 2; exit 0" TERM; sleep 3600 & wait').replace(
      'terminationGracePeriodSeconds: 1',
      'terminationGracePeriodSeconds: 5',
    );
    await node.writeManifest('flap.yaml', yaml);
    const before = await waitForPod(node, 'flap', isRunningAndReady);
    await rm(join(node.manifestDir, 'flap.yaml'));
    await waitFor(() => node.agent.podWorkers.shouldPodContentBeRemoved(before.metadata!.uid!), {
      timeoutMs: 30_000,
      description: 'old instance stopping',
    });
    await node.writeManifest('flap.yaml', yaml);
    // Same content, same UID: it comes back once the old instance has gone, with new containers.
    const after = await waitForPod(
      node,
      'flap',
      (p) => isRunningAndReady(p) && p.status!.containerStatuses![0].containerID !== before.status!.containerStatuses![0].containerID,
      60_000,
    );
    expect(after.metadata!.uid).toBe(before.metadata!.uid);
  });

  it('keeps the last good pod running when its manifest breaks, and replaces it when the manifest changes', async () => {
    const node = await start();
    await node.writeManifest('a.yaml', busyboxPod('steady', 'exec sleep 3600'));
    const good = await waitForPod(node, 'steady', isRunningAndReady);
    const ids = (await podContainers(good.metadata!.uid!)).map((c) => c.id).sort();

    await writeFile(join(node.manifestDir, 'a.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: steady\nspec: [');
    await new Promise((r) => setTimeout(r, 1500));
    expect((await node.pod('steady'))?.metadata?.uid).toBe(good.metadata!.uid);
    expect((await podContainers(good.metadata!.uid!)).map((c) => c.id).sort()).toEqual(ids);

    // A changed static pod is a new pod (new UID, as the kubelet's config hash): the old one goes, the new one runs.
    await node.writeManifest('a.yaml', busyboxPod('steady', 'echo v2; exec sleep 3600'));
    const next = await waitForPod(node, 'steady', (p) => p.metadata!.uid !== good.metadata!.uid && isRunningAndReady(p));
    await waitFor(async () => (await podContainers(good.metadata!.uid!)).length === 0, {
      timeoutMs: 30_000,
      description: 'old pod containers removed',
    });
    expect((await podContainers(next.metadata!.uid!)).length).toBe(2);
  });

  it.each([
    ['Never', 0, 'Succeeded'],
    ['Never', 1, 'Failed'],
    ['OnFailure', 0, 'Succeeded'],
  ] as const)('restartPolicy %s with exit %i ends %s and is not restarted', async (restartPolicy, code, phase) => {
    const node = await start();
    await node.writeManifest('job.yaml', busyboxPod('job', `exit ${code}`, { restartPolicy }));
    const pod = await waitForPod(node, 'job', (p) => p.status?.phase === phase);
    const cs = pod.status!.containerStatuses![0];
    expect(cs.state!.terminated).toMatchObject({ exitCode: code, reason: code === 0 ? 'Completed' : 'Error' });
    expect(cs.restartCount).toBe(0);
    expect(pod.status!.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    // The dead container is kept (its status and logs), the sandbox is stopped.
    const containers = await waitFor(
      async () => {
        const cs = await podContainers(pod.metadata!.uid!);
        return cs.every((c) => !c.running) ? cs : undefined;
      },
      { description: 'sandbox stopped' },
    );
    expect(containers).toHaveLength(2);
  });

  it.each([
    ['Always', 0],
    ['Always', 1],
    ['OnFailure', 1],
  ] as const)('restartPolicy %s with exit %i restarts, then backs off (CrashLoopBackOff)', async (restartPolicy, code) => {
    const node = await start();
    await node.writeManifest('crash.yaml', busyboxPod('crash', `exit ${code}`, { restartPolicy }));
    // First exit: restarted at once (restartCount 1); second exit: in the 10 s backoff window.
    const pod = await waitForPod(node, 'crash', (p) => {
      const cs = p.status?.containerStatuses?.[0];
      return (cs?.restartCount ?? 0) >= 1 && cs?.state?.waiting?.reason === 'CrashLoopBackOff';
    });
    const cs = pod.status!.containerStatuses![0];
    expect(cs.lastState!.terminated!.exitCode).toBe(code);
    expect(cs.state!.waiting!.message).toMatch(/back-off 10s restarting failed container=main pod=crash-/);
    expect(pod.status!.phase).toBe('Running');
    // One dead container is kept per container (--maximum-dead-containers-per-container=1) besides the sandbox.
    const dead = (await podContainers(pod.metadata!.uid!)).filter((c) => !c.sandbox && c.name === 'main');
    expect(dead.length).toBeLessThanOrEqual(2);
  });

  it('backs off a container whose start fails (StartError, then CrashLoopBackOff) instead of retrying on every sync', async () => {
    const node = await start();
    await node.writeManifest(
      'nostart.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: nostart}
spec:
  containers:
    - {name: main, image: ${BUSYBOX_IMAGE}, command: [/no/such/binary]}
`,
    );
    const pod = await waitForPod(node, 'nostart', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff');
    const cs = pod.status!.containerStatuses![0];
    expect(cs.lastState!.terminated!.reason).toBe('StartError');
    expect(cs.lastState!.terminated!.exitCode).toBeGreaterThan(0); // Docker's (127 here); containerd says 128
    expect(cs.lastState!.terminated!.message).toMatch(/no such file/);
    expect(cs.restartCount).toBeLessThanOrEqual(2);
  });

  it('leaves alone containers without our labels and containers of another node', async () => {
    const foreign = await startForeignPod({});
    const other = await startForeignPod({
      'io.kubernetes.pod.uid': 'not-ours',
      'io.kubernetes.container.name': 'x',
      [kNodeLabel]: `e2e-other-${process.pid}`,
    }).catch(async (err: unknown) => {
      await foreign.remove();
      throw err;
    });
    try {
      const node = await start();
      await node.writeManifest('a.yaml', busyboxPod('mine', 'exec sleep 3600'));
      await waitForPod(node, 'mine', isRunningAndReady);
      await new Promise((r) => setTimeout(r, 1500)); // several relists and housekeeping passes
      expect(await foreign.running()).toBe(true);
      expect(await other.running()).toBe(true);
    } finally {
      await foreign.remove();
      await other.remove();
    }
  });

  it('reports ErrImageNeverPull for an absent image with pullPolicy Never and keeps running other pods', async () => {
    const node = await start();
    await node.writeManifest(
      'bad.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: noimage}
spec:
  containers:
    - {name: main, image: "kubelet-ts/absent:0.0", imagePullPolicy: Never}
`,
    );
    await node.writeManifest('good.yaml', busyboxPod('fine', 'exec sleep 3600'));
    const bad = await waitForPod(node, 'noimage', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImageNeverPull');
    expect(bad.status!.phase).toBe('Pending');
    expect(bad.status!.containerStatuses![0].state!.waiting!.message).toContain('kubelet-ts/absent:0.0');
    await waitForPod(node, 'fine', isRunningAndReady);
  });

  it('rejects a pod that asks for more cpu than the node has (OutOfcpu) without creating anything, and runs the next one', async () => {
    const node = await start();
    await node.writeManifest(
      'big.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers:
    - {name: main, image: ${BUSYBOX_IMAGE}, command: [sleep, "3600"], resources: {requests: {cpu: "1000"}}}
`,
    );
    await node.writeManifest('small.yaml', busyboxPod('small', 'exec sleep 3600'));
    const big = await waitForPod(node, 'big', (p) => p.status?.phase === 'Failed');
    expect(big.status).toMatchObject({
      reason: 'OutOfcpu',
      message: expect.stringMatching(/^Node didn't have enough resource: cpu, requested: 1000000, used: \d+, capacity: \d+$/),
    });
    await waitForPod(node, 'small', isRunningAndReady);
    expect(await podContainers(big.metadata!.uid!)).toEqual([]);
  });

  // A burst well above --workers and the sync concurrency; bench density measures the big ones.
  const kBurst = 24;
  it(`starts ${kBurst} pods at once, all Running, and removes them all`, async () => {
    const node = await start({ workers: 2 });
    const docs = Array.from({ length: kBurst }, (_, i) => busyboxPod(`many-${i}`, 'exec sleep 3600')).join('---\n');
    await node.writeManifest('many.yaml', docs);
    await waitFor(
      async () => {
        const pods = (await node.pods()).filter((p) => p.metadata!.name!.startsWith('many-'));
        return pods.length === kBurst && pods.every(isRunningAndReady);
      },
      { timeoutMs: 120_000, intervalMs: 500, description: `${kBurst} pods Running` },
    );
    const running = (await labeledContainers(kNodeLabel, node.nodeName)).filter((c) => c.running);
    expect(running).toHaveLength(2 * kBurst); // a sandbox and a container each
    await rm(join(node.manifestDir, 'many.yaml'));
    await waitFor(async () => (await labeledContainers(kNodeLabel, node.nodeName)).length === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
      description: 'all containers removed',
    });
    // The pod leaves the API after its worker reports the kill, which may land after the last
    // container is gone (seen in CI): wait for it rather than read once.
    await waitFor(async () => (await node.pods()).length === 0, { timeoutMs: 60_000, intervalMs: 500, description: 'no pods listed' });
    expect(await node.pods()).toEqual([]);
  }, 300_000);
});

describe.skipIf(!inject('dockerAvailable'))('examples/', () => {
  it('the hostNetwork busybox httpd example answers on 127.0.0.1', async () => {
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const yaml = (await readFile(join(import.meta.dirname, '../../examples/web-hostnetwork.yaml'), 'utf8')).replaceAll(
      '18080',
      String(port),
    );
    const node = await startTestNode();
    try {
      await node.writeManifest('web.yaml', yaml);
      const pod = await waitForPod(node, 'web', isRunningAndReady);
      expect(pod.status!.podIP).toBe('127.0.0.1');
      const body = await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/`)).text(), { description: 'httpd answers' });
      expect(body).toBe(`hello from web-${node.nodeName} on ${node.nodeName}\n`);
    } finally {
      await node.cleanup();
    }
  });
});
