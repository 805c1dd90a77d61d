// End-to-end (issue 39, "Done when": one more client library, tried from its own docs as a new user
// would): @kubernetes/client-node 1.4.0 (the official JavaScript client; 2.x needs Node 22) against
// the real agent over TLS and the real dockerd. Each step is what its README and its examples/
// (watch-example.ts, follow-logs.js, exec-example.ts, port-forward.ts) show, with the kubeconfig
// `kubelet-ts kubeconfig` prints loaded by KubeConfig.loadFromFile:
// CoreV1Api list, create, read and delete of a pod; ConfigMap create, read, replace and delete;
// Watch of the pods through a graceful delete; Log follow; Exec; PortForward.
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestNode, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { writeAgentKubeconfig } from '../support/kubectl.js';

const kTestMs = 150_000;
const namespace = 'default';

describe.skipIf(!inject('dockerAvailable'))('issue 39 done-when: @kubernetes/client-node 1.4.0 from its docs', () => {
  let node: TestNode;
  let dir: string;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  const label = `issue-39-client-node-${process.pid}`;
  /** What each test opened (watches, logs, sockets, servers): closed after it, whatever happened. */
  const closers: (() => void)[] = [];

  const podBody = (name: string, command: string, graceSeconds = 1): k8s.V1Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { test: label } },
    spec: {
      terminationGracePeriodSeconds: graceSeconds,
      containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', command] }],
    },
  });
  const running = (name: string) =>
    waitFor(
      async () => {
        const pod = await core.readNamespacedPod({ name, namespace });
        return pod.status?.phase === 'Running' && pod.status.containerStatuses?.every((c) => c.ready) ? pod : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, description: `pod ${name} running` },
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-client-node-'));
    node = await startTestNode({ tlsPort: 0 });
    // The kubeconfig a user gets: `kubelet-ts kubeconfig --server … --root-dir …`.
    kc = new k8s.KubeConfig();
    kc.loadFromFile(await writeAgentKubeconfig(node, dir));
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedPod({ namespace, body: podBody('cn-quiet', 'echo first-line; exec sleep 3600') });
    await core.createNamespacedPod({
      namespace,
      body: podBody('cn-web', 'mkdir -p /www && echo hello-from-web > /www/index.html && exec httpd -f -p 8080 -h /www'),
    });
    await Promise.all([running('cn-quiet'), running('cn-web')]);
  }, kTestMs);
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, kTestMs);

  it(
    'CoreV1Api: list, create, read and delete a pod',
    async () => {
      const list = await core.listNamespacedPod({ namespace, labelSelector: `test=${label}` });
      expect(list.items.map((p) => p.metadata?.name).sort()).toEqual(['cn-quiet', 'cn-web']);
      expect(list.metadata?.resourceVersion).toMatch(/^\d+$/);
      const made = await core.createNamespacedPod({ namespace, body: podBody('cn-crud', 'exec sleep 3600') });
      expect(made.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
      const read = await core.readNamespacedPod({ name: 'cn-crud', namespace });
      expect(read.metadata?.uid).toBe(made.metadata?.uid);
      expect(read.spec?.containers[0].image).toBe(BUSYBOX_IMAGE);
      const deleted = await core.deleteNamespacedPod({ name: 'cn-crud', namespace, gracePeriodSeconds: 0 });
      expect(deleted.metadata?.name).toBe('cn-crud');
      await waitFor(
        async () => {
          try {
            await core.readNamespacedPod({ name: 'cn-crud', namespace });
            return false;
          } catch (err) {
            return (err as { code?: number }).code === 404;
          }
        },
        { timeoutMs: 60_000, intervalMs: 200, description: 'cn-crud gone (404)' },
      );
    },
    kTestMs,
  );

  it(
    'CoreV1Api: ConfigMap create, read, replace from the reply, and delete',
    async () => {
      const made = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'cn-cm' }, data: { a: '1' } } });
      expect(made.metadata?.resourceVersion).toMatch(/^\d+$/);
      const read = await core.readNamespacedConfigMap({ name: 'cn-cm', namespace });
      expect(read.data).toEqual({ a: '1' });
      const replaced = await core.replaceNamespacedConfigMap({ name: 'cn-cm', namespace, body: { ...read, data: { a: '2' } } });
      expect(replaced.data).toEqual({ a: '2' });
      const again = await core.replaceNamespacedConfigMap({ name: 'cn-cm', namespace, body: { ...replaced, data: { a: '3' } } });
      expect(Number(again.metadata?.resourceVersion)).toBeGreaterThan(Number(replaced.metadata?.resourceVersion));
      await core.deleteNamespacedConfigMap({ name: 'cn-cm', namespace });
      await expect(core.readNamespacedConfigMap({ name: 'cn-cm', namespace })).rejects.toMatchObject({ code: 404 });
    },
    kTestMs,
  );

  it(
    'Watch: ADDED, MODIFIED Running, MODIFIED with deletionTimestamp and DELETED of a pod deleted with a grace period',
    async () => {
      const events: { type: string; pod: k8s.V1Pod }[] = [];
      let ended: unknown = 'open';
      const watch = new k8s.Watch(kc);
      const controller = await watch.watch(
        `/api/v1/namespaces/${namespace}/pods`,
        { fieldSelector: 'metadata.name=cn-watched' },
        (type, pod: k8s.V1Pod) => events.push({ type, pod }),
        (err) => (ended = err),
      );
      closers.push(() => controller.abort());
      await core.createNamespacedPod({ namespace, body: podBody('cn-watched', "trap '' TERM; while true; do sleep 1; done", 10) });
      const isRunning = (p: k8s.V1Pod) => p.status?.containerStatuses?.[0]?.state?.running !== undefined;
      await waitFor(() => events.some((e) => e.type === 'MODIFIED' && isRunning(e.pod)), {
        timeoutMs: 90_000,
        intervalMs: 100,
        description: 'MODIFIED Running',
      });
      await core.deleteNamespacedPod({ name: 'cn-watched', namespace, gracePeriodSeconds: 10 });
      await waitFor(() => events.some((e) => e.type === 'DELETED'), { timeoutMs: 60_000, intervalMs: 100, description: 'DELETED' });
      expect(ended).toBe('open');
      const types = events.map((e) => e.type);
      expect(types[0]).toBe('ADDED');
      expect(types.at(-1)).toBe('DELETED');
      const iRunning = events.findIndex((e) => isRunning(e.pod) && !e.pod.metadata?.deletionTimestamp);
      const iMarked = events.findIndex((e) => e.pod.metadata?.deletionTimestamp !== undefined);
      expect(iRunning).toBeGreaterThan(0);
      expect(iMarked).toBeGreaterThan(iRunning);
      expect(events[iMarked].type).toBe('MODIFIED');
      expect(events.at(-1)!.pod.metadata?.deletionTimestamp).toEqual(events[iMarked].pod.metadata?.deletionTimestamp);
    },
    kTestMs,
  );

  it(
    "makeInformer (list, then watch from the List's resourceVersion): its cache holds the pods; a new ConfigMap is added, updated and deleted through a watch of configmaps",
    async () => {
      const pods = k8s.makeInformer(
        kc,
        `/api/v1/namespaces/${namespace}/pods`,
        () => core.listNamespacedPod({ namespace, labelSelector: `test=${label}` }),
        `test=${label}`,
      );
      const seen: string[] = [];
      const maps = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () => core.listNamespacedConfigMap({ namespace }));
      for (const verb of [k8s.ADD, k8s.UPDATE, k8s.DELETE] as const)
        maps.on(verb, (o: k8s.V1ConfigMap) => seen.push(`${verb} ${o.metadata?.name} ${JSON.stringify(o.data ?? {})}`));
      closers.push(
        () => void pods.stop(),
        () => void maps.stop(),
      );
      await Promise.all([pods.start(), maps.start()]);
      expect(pods.list(namespace).map((p) => p.metadata?.name)).toEqual(expect.arrayContaining(['cn-quiet', 'cn-web']));
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'cn-informed' }, data: { a: '1' } } });
      await waitFor(() => seen.includes('add cn-informed {"a":"1"}'), {
        timeoutMs: 30_000,
        intervalMs: 50,
        description: "the informer's add",
      });
      await core.patchNamespacedConfigMap(
        { name: 'cn-informed', namespace, body: { data: { a: '2' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await waitFor(() => seen.includes('update cn-informed {"a":"2"}'), {
        timeoutMs: 30_000,
        intervalMs: 50,
        description: "the informer's update",
      });
      await core.deleteNamespacedConfigMap({ name: 'cn-informed', namespace });
      await waitFor(() => seen.some((e) => e.startsWith('delete cn-informed ')), {
        timeoutMs: 30_000,
        intervalMs: 50,
        description: "the informer's delete",
      });
    },
    kTestMs,
  );

  it(
    'Log: a follow of a container that printed one line and went quiet shows that line',
    async () => {
      const out = new PassThrough();
      let text = '';
      out.on('data', (c: Buffer) => (text += c.toString()));
      const controller = await new k8s.Log(kc).log(namespace, 'cn-quiet', 'main', out, { follow: true });
      closers.push(() => controller.abort());
      await waitFor(() => text.includes('first-line\n'), { timeoutMs: 30_000, intervalMs: 50, description: 'the line' });
      expect(text).toBe('first-line\n');
    },
    kTestMs,
  );

  it(
    "Exec: a command's stdout, stderr and its Success status",
    async () => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let out = '';
      let err = '';
      stdout.on('data', (c: Buffer) => (out += c.toString()));
      stderr.on('data', (c: Buffer) => (err += c.toString()));
      let status: k8s.V1Status | undefined;
      const ws = await new k8s.Exec(kc).exec(
        namespace,
        'cn-web',
        'main',
        ['sh', '-c', 'cat /www/index.html; echo to-stderr >&2'],
        stdout,
        stderr,
        null,
        false,
        (s) => (status = s),
      );
      closers.push(() => ws.close());
      expect(ws.protocol).toBe('v5.channel.k8s.io');
      await waitFor(() => status, { timeoutMs: 60_000, intervalMs: 50, description: 'the exec status' });
      expect(status?.status).toBe('Success');
      expect(out).toBe('hello-from-web\n');
      expect(err).toBe('to-stderr\n');
    },
    kTestMs,
  );

  it(
    "PortForward: a local server forwards each connection to the pod's port",
    async () => {
      const forward = new k8s.PortForward(kc);
      const sockets: net.Socket[] = [];
      const protocols: string[] = [];
      const server = net.createServer((socket) => {
        sockets.push(socket);
        void forward.portForward(namespace, 'cn-web', [8080], socket, null, socket).then(
          (ws) => {
            const opened = typeof ws === 'function' ? ws() : ws;
            if (opened) protocols.push(opened.protocol);
            closers.push(() => opened?.close());
          },
          () => socket.destroy(),
        );
      });
      closers.push(() => {
        for (const s of sockets) s.destroy();
        server.close();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as net.AddressInfo).port;
      const answer = await new Promise<string>((resolve, reject) => {
        let got = '';
        const c = net.connect(port, '127.0.0.1', () => c.write('GET /index.html HTTP/1.0\r\nHost: cn-web\r\n\r\n'));
        closers.push(() => c.destroy());
        c.on('data', (d: Buffer) => {
          got += d.toString();
          if (got.includes('hello-from-web')) resolve(got);
        });
        c.on('error', reject);
        c.on('close', () => resolve(got));
      });
      expect(answer).toMatch(/^HTTP\/1\.[01] 200 OK/);
      expect(answer).toContain('hello-from-web');
      // The client offers v5.channel.k8s.io first; port-forward speaks v4, as the apiserver's.
      expect(protocols).toEqual(['v4.channel.k8s.io']);
    },
    kTestMs,
  );
});
