// Issue #12 item 3 (first half) and item 10 imagePullSecrets, against the real dockerd: ConfigMap
// and Secret objects given beside pods (the intake's List, the manifest directory), env from them
// (envFrom with prefix, configMapKeyRef, secretKeyRef) as the kubelet's makeEnvironmentVariables,
// a pod Pending with CreateContainerConfigError on a missing ConfigMap that starts once it is
// posted, a pull with the pod's dockerconfigjson Secret, and no Secret value in the agent's log,
// events, watch or pod list.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { docker, waitFor } from '../support/docker.js';
import { adminAuthorization, startTestNode, waitForPod, type TestNode } from '../support/agent.js';
import { useEtcd } from '../support/etcd.js';
import { etcdKeys } from '../../src/etcd/client.js';

const kWaitMs = 60_000;
const secretValue = `s3cr3t-${randomBytes(6).toString('hex')}`;
const b64 = (s: string) => Buffer.from(s).toString('base64');

function registryEnv(): Record<string, string> | null {
  const file = join(import.meta.dirname, '../../.run/registry.env');
  if (!existsSync(file)) return null;
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}
const registry = registryEnv();

const printer = (name: string, script: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    restartPolicy: 'Never',
    terminationGracePeriodSeconds: 1,
    containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35', command: ['sh', '-c', script], ...extra }],
  },
});

async function intakePod(node: TestNode, name: string, pred: (p: Pod) => boolean): Promise<Pod> {
  return waitFor(
    async () => {
      const pod = (await node.pods()).find((p) => p.metadata?.name === name);
      return pod && pred(pod) ? pod : undefined;
    },
    { timeoutMs: kWaitMs, intervalMs: 200, description: `pod ${name}` },
  );
}
const succeeded = (p: Pod) => p.status?.phase === 'Succeeded';
const post = (node: TestNode, body: unknown) =>
  node.api('/pods', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.skipIf(!inject('dockerAvailable'))('issue 12: ConfigMap and Secret objects and env from them', { timeout: 120_000 }, () => {
  let node: TestNode;
  const frames: string[] = [];
  let ws: WebSocket;
  const pulled: string[] = [];
  beforeAll(async () => {
    // Info level: the main thread's whole log is captured (node.warnings) to look for the secret.
    const level = process.env.KUBELET_TS_TEST_LOG;
    process.env.KUBELET_TS_TEST_LOG = 'info';
    try {
      node = await startTestNode({ logLevel: 'error' });
    } finally {
      if (level === undefined) delete process.env.KUBELET_TS_TEST_LOG;
      else process.env.KUBELET_TS_TEST_LOG = level;
    }
    ws = new WebSocket(`ws://127.0.0.1:${node.agent.port}/watch/pods`, { headers: adminAuthorization(node.rootDir) });
    ws.on('message', (d) => frames.push(String(d)));
  });
  afterAll(async () => {
    ws?.close();
    await node?.cleanup();
    for (const ref of pulled)
      await docker
        .getImage(ref)
        .remove({ noprune: true })
        .catch(() => undefined);
  });

  it('a List of a ConfigMap, a Secret and pods posted at once: env from them; a missing ConfigMap is CreateContainerConfigError until posted', async () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'app-config' },
          data: { GREETING: 'hello', '1st': 'skipped', MODE: 'fast' },
        },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'app-secret' },
          stringData: { PASSWORD: secretValue },
          data: { TOKEN: b64('tok') },
        },
        printer('env-pod', 'echo "G=$GREETING M=$MODE P=$PASSWORD T=$S_TOKEN O=${OPT:-unset}"', {
          envFrom: [
            { configMapRef: { name: 'app-config' } },
            { secretRef: { name: 'app-secret' }, prefix: 'S_' },
            { configMapRef: { name: 'nowhere', optional: true } },
          ],
          env: [
            { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'GREETING' } } },
            { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'PASSWORD' } } },
            { name: 'OPT', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'absent', optional: true } } },
          ],
        }),
        printer('waits', 'echo "L=$LATE"', { env: [{ name: 'LATE', valueFrom: { configMapKeyRef: { name: 'late', key: 'v' } } }] }),
      ],
    };
    const res = await post(node, list);
    const created = await res.text();
    expect(res.status, created).toBe(201);
    expect(created).not.toContain(secretValue);
    expect(created).not.toContain(b64(secretValue));

    await intakePod(node, 'env-pod', succeeded);
    const logs = await (await node.api('/containerLogs/default/env-pod/main')).text();
    expect(logs.trim()).toBe(`G=hello M=fast P=${secretValue} T=tok O=unset`);
    const events = node.agent.events.list();
    expect(
      events.some(
        (e) =>
          e.reason === 'InvalidEnvironmentVariableNames' &&
          e.message ===
            'Keys [1st] from the EnvFrom configMap default/app-config were skipped since they are considered invalid environment variable names.',
      ),
    ).toBe(true);

    const waiting = await intakePod(
      node,
      'waits',
      (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError',
    );
    expect(waiting.status?.phase).toBe('Pending');
    expect(waiting.status?.containerStatuses?.[0]?.state?.waiting?.message).toBe('configmap "late" not found');

    // The ConfigMap appears without its key: the kubelet's other message; then with it: the pod starts.
    expect((await post(node, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' }, data: { other: 'x' } })).status).toBe(201);
    await intakePod(
      node,
      'waits',
      (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.message === "couldn't find key v in ConfigMap default/late",
    );
    const put = await node.api('/configmaps/default/late', {
      method: 'PUT',
      headers: { 'content-type': 'application/yaml' },
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\ndata: {v: arrived}\n',
    });
    expect(put.status, await put.text()).toBe(200);
    await intakePod(node, 'waits', succeeded);
    expect((await (await node.api('/containerLogs/default/waits/main')).text()).trim()).toBe('L=arrived');
    // The object survives: a second POST of it is 409, a DELETE removes it.
    expect((await post(node, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } })).status).toBe(409);
    expect((await node.api('/configmaps/default/late', { method: 'DELETE' })).status).toBe(200);
  });

  it('a ConfigMap in the manifest directory beside a static pod, by its own name (no node suffix)', async () => {
    await node.writeManifest(
      'with-config.yaml',
      `apiVersion: v1
kind: ConfigMap
metadata: {name: static-config}
data: {COLOR: blue}
---
apiVersion: v1
kind: Pod
metadata: {name: static-env}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: kubelet-ts/busybox:1.35
    command: ["sh", "-c", "echo COLOR=$COLOR"]
    envFrom: [{configMapRef: {name: static-config}}]
`,
    );
    await waitForPod(node, 'static-env', succeeded, kWaitMs);
    const logs = await (await node.api(`/containerLogs/default/static-env-${node.nodeName}/main`)).text();
    expect(logs.trim()).toBe('COLOR=blue');
    expect(node.agent.objects.owner('ConfigMap', 'default', 'static-config')).toBe('file');
  });

  it.skipIf(!registry)(
    "imagePullSecrets: pulls from the auth registry with the pod's dockerconfigjson Secret, warns about a missing one",
    async () => {
      const image = `${registry!.KUBELET_TS_REGISTRY_AUTH}/kubelet-ts/busybox:1.35`;
      pulled.push(image);
      const auth = b64(`${registry!.KUBELET_TS_REGISTRY_USER}:${registry!.KUBELET_TS_REGISTRY_PASSWORD}`);
      const res = await post(node, {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'regcred' },
            type: 'kubernetes.io/dockerconfigjson',
            stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [registry!.KUBELET_TS_REGISTRY_AUTH]: { auth } } }) },
          },
          {
            ...printer('pull-secret', 'echo pulled'),
            spec: {
              ...printer('', '').spec,
              imagePullSecrets: [{ name: 'nosuch' }, { name: 'regcred' }],
              containers: [{ name: 'main', image, imagePullPolicy: 'Always', command: ['sh', '-c', 'echo pulled'] }],
            },
          },
        ],
      });
      expect(res.status, await res.text()).toBe(201);
      await intakePod(node, 'pull-secret', succeeded);
      expect(
        node.agent.events
          .list()
          .some(
            (e) =>
              e.reason === 'FailedToRetrieveImagePullSecret' &&
              e.message === 'Unable to retrieve some image pull secrets (nosuch); attempting to pull the image may not succeed.',
          ),
      ).toBe(true);
    },
  );

  it("no Secret value in the agent's log, its events, the watch or GET /pods", async () => {
    const texts = [
      JSON.stringify(node.warnings),
      await (await node.api('/events')).text(),
      frames.join('\n'),
      await (await node.api('/pods')).text(),
    ];
    expect(node.warnings.length).toBeGreaterThan(0);
    expect(frames.length).toBeGreaterThan(0);
    for (const t of texts) {
      expect(t).not.toContain(secretValue);
      expect(t).not.toContain(b64(secretValue));
    }
  });
});

describe.skipIf(!inject('dockerAvailable'))('issue 12: ConfigMaps and Secrets from etcd', { timeout: 90_000 }, () => {
  // First, so that its afterAll (deleting the prefix, closing the admin client) runs after ours.
  const etcd = useEtcd();
  const prefix = etcd.prefix('objects');
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode({ etcdServers: etcd.servers, etcdPrefix: prefix, podManifestPath: '' } as never);
  }, 60_000);
  afterAll(async () => {
    await node?.cleanup();
  });

  it('a pod from etcd waits on a ConfigMap missing under {prefix}/configmaps/, then runs with it; a Secret under {prefix}/secrets/ is read too', async () => {
    const keys = etcdKeys(prefix);
    await etcd.admin
      .put(`${prefix}/secrets/default/etcd-secret`)
      .value(JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'etcd-secret' }, data: { S: b64('from-etcd') } }))
      .exec();
    await etcd.admin
      .put(keys.pod(node.nodeName, 'default', 'etcd-env'))
      .value(
        JSON.stringify(
          printer('etcd-env', 'echo "C=$C S=$S"', {
            env: [
              { name: 'C', valueFrom: { configMapKeyRef: { name: 'etcd-config', key: 'C' } } },
              { name: 'S', valueFrom: { secretKeyRef: { name: 'etcd-secret', key: 'S' } } },
            ],
          }),
        ),
      )
      .exec();
    await intakePod(
      node,
      'etcd-env',
      (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.message === 'configmap "etcd-config" not found',
    );
    await etcd.admin
      .put(`${prefix}/configmaps/default/etcd-config`)
      .value(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'etcd-config' }, data: { C: 'watched' } }))
      .exec();
    await intakePod(node, 'etcd-env', succeeded);
    expect((await (await node.api('/containerLogs/default/etcd-env/main')).text()).trim()).toBe('C=watched S=from-etcd');
  });
});
