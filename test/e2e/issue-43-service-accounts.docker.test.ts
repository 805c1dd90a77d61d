// End-to-end (issue 43 item 1, "Done when"): a pod using the official Python client's
// `config.load_incluster_config()` — the host's /usr/bin/python3 and python3-kubernetes, run in a
// hostNetwork busybox pod through read-only hostPath mounts of /usr, /lib and /lib64 — finds the
// API through KUBERNETES_SERVICE_HOST/PORT and its token and CA in
// /var/run/secrets/kubernetes.io/serviceaccount, lists and watches the pods of its namespace as the
// RoleBinding of the policy file grants its service account, is refused (403) what is not granted,
// and its token stops working once the pod is deleted. Also: spec.serviceAccountName reads
// `default` through the downward API, and the token is a JWT bound to the pod.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { isRunningAndReady, startTestNode, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { kHavePythonClient, usePythonClient } from '../support/python-client.js';

const kTestMs = 180_000;
const kNs = 'default';

const kPolicy = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: ${kNs}}
rules:
  - {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: default-reads-pods, namespace: ${kNs}}
subjects: [{kind: ServiceAccount, name: default, namespace: ${kNs}}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
`;

/** The script the pod runs: in-cluster config, a list, a watch that waits for the pod `sa-watched`, three refused reads; then it idles. */
const kInPod = `import json, os, time
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
def emit(**kw): print(json.dumps(kw), flush=True)
emit(event='env', host=os.environ.get('KUBERNETES_SERVICE_HOST'), port=os.environ.get('KUBERNETES_SERVICE_PORT'), sa=os.environ.get('SA_NAME'))
config.load_incluster_config()
v1 = client.CoreV1Api()
ns = open('/var/run/secrets/kubernetes.io/serviceaccount/namespace').read()
pods = v1.list_namespaced_pod(ns)
emit(event='listed', ns=ns, names=[p.metadata.name for p in pods.items])
for e in watch.Watch().stream(v1.list_namespaced_pod, ns, resource_version=pods.metadata.resource_version, timeout_seconds=120):
    if e['object'].metadata.name == 'sa-watched':
        emit(event='watched', type=e['type'])
        break
def status(f):
    try:
        f()
        return 200
    except ApiException as e:
        return e.status
emit(event='refused', secrets=status(lambda: v1.list_namespaced_secret(ns)), otherNs=status(lambda: v1.list_namespaced_pod('kube-system')),
     nodes=status(lambda: v1.list_node()), create=status(lambda: v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name='x')))))
emit(event='done')
time.sleep(3600)
`;

describe.skipIf(!inject('dockerAvailable') || !kHavePythonClient)(
  'issue 43 done-when: in-cluster config from a pod, bound to its service account',
  () => {
    let node: TestNode;
    let dir: string;
    const label = `issue-43-sa-${process.pid}`;
    const python = usePythonClient();

    const podPath = (name: string) => `/api/v1/namespaces/${kNs}/pods/${name}`;
    const post = async (pod: object) => {
      const res = await node.api(`/api/v1/namespaces/${kNs}/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(pod),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Pod;
    };
    const running = (name: string) =>
      waitFor(
        async () => {
          const res = await node.api(podPath(name));
          const pod = res.status === 200 ? ((await res.json()) as Pod) : undefined;
          return pod && isRunningAndReady(pod) ? pod : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 200, description: `pod ${name} running` },
      );
    /** The JSON lines the pod's container printed, once one of them is `{event}`. */
    const logEvents = (name: string, event: string) =>
      waitFor(
        async () => {
          const res = await node.api(`/containerLogs/${kNs}/${name}/main`);
          if (res.status !== 200) return undefined;
          const events = (await res.text())
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as Record<string, unknown>);
          return events.some((e) => e.event === event) ? events : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 300, description: `${name} printed ${event}` },
      );

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-sa-'));
      await writeFile(join(dir, 'policy.yaml'), kPolicy);
      await writeFile(join(dir, 'in-pod.py'), kInPod);
      node = await startTestNode({ tlsPort: 0, authorizationPolicyFile: join(dir, 'policy.yaml') });
    }, kTestMs);
    afterAll(async () => {
      await node?.cleanup();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, kTestMs);

    it(
      "lists and watches its namespace's pods as granted, is refused the rest (403), and its token dies with the pod",
      async () => {
        const ro = (name: string, path: string) => ({ name, hostPath: { path, type: 'Directory' } });
        const created = await post({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'sa-client', namespace: kNs, labels: { test: label } },
          spec: {
            hostNetwork: true,
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: 'main',
                image: BUSYBOX_IMAGE,
                imagePullPolicy: 'Never',
                command: ['/usr/bin/python3', '-u', '/script/in-pod.py'],
                env: [{ name: 'SA_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } }],
                volumeMounts: [
                  { name: 'usr', mountPath: '/usr', readOnly: true },
                  { name: 'lib', mountPath: '/lib', readOnly: true },
                  { name: 'lib64', mountPath: '/lib64', readOnly: true },
                  { name: 'script', mountPath: '/script', readOnly: true },
                ],
              },
            ],
            volumes: [ro('usr', '/usr'), ro('lib', '/usr/lib'), ro('lib64', '/usr/lib64'), ro('script', dir)],
          },
        });
        // Admission: the default service account and its token volume, mounted read-only.
        expect(created.spec?.serviceAccountName).toBe('default');
        const volume = created.spec?.volumes?.find((v) => v.name.startsWith('kube-api-access-'));
        expect(volume?.projected?.sources?.[0]).toEqual({ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } });
        expect(created.spec?.containers[0].volumeMounts).toContainEqual({
          name: volume!.name,
          readOnly: true,
          mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
        });

        const pod = await running('sa-client');
        const listed = await logEvents('sa-client', 'listed');
        expect(listed.find((e) => e.event === 'env')).toEqual({
          event: 'env',
          host: '127.0.0.1',
          port: String(node.agent.tlsPort),
          sa: 'default',
        });
        expect(listed.find((e) => e.event === 'listed')).toMatchObject({ ns: kNs, names: expect.arrayContaining(['sa-client']) });

        await post({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'sa-watched', namespace: kNs, labels: { test: label } },
          spec: {
            terminationGracePeriodSeconds: 1,
            automountServiceAccountToken: false,
            containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
          },
        });
        const events = await logEvents('sa-client', 'done');
        expect(events.find((e) => e.event === 'watched')).toEqual({ event: 'watched', type: 'ADDED' });
        expect(events.find((e) => e.event === 'refused')).toEqual({
          event: 'refused',
          secrets: 403,
          otherNs: 403,
          nodes: 403,
          create: 403,
        });

        // The token in the pod's volume: a JWT bound to this pod; it works from outside too, until the pod is deleted.
        const token = (
          await readFile(
            join(node.rootDir, 'pods', pod.metadata!.uid!, 'volumes', 'kubernetes.io~projected', volume!.name, 'token'),
            'utf8',
          )
        ).trim();
        const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Record<
          string,
          { pod?: { uid?: string }; serviceaccount?: { uid?: string } }
        >;
        expect(claims['kubernetes.io'].pod?.uid).toBe(pod.metadata?.uid);
        // The ServiceAccount the token names is readable through the API, with the claim's UID.
        const sa = await node.api(`/api/v1/namespaces/${kNs}/serviceaccounts/default`);
        expect(sa.status).toBe(200);
        expect(await sa.json()).toMatchObject({
          kind: 'ServiceAccount',
          metadata: { name: 'default', namespace: kNs, uid: claims['kubernetes.io'].serviceaccount?.uid },
        });
        const all = (await (await node.api('/api/v1/serviceaccounts')).json()) as {
          kind: string;
          items: { metadata: { namespace: string; name: string } }[];
        };
        expect(all.kind).toBe('ServiceAccountList');
        expect(all.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual(
          expect.arrayContaining(['default/default', 'kube-system/default']),
        );
        const probe = `import kts
from kubernetes.client.rest import ApiException
try:
    kts.emit('list', status=200, count=len(kts.core().list_namespaced_pod('${kNs}').items))
except ApiException as e:
    kts.emit('list', status=e.status)
`;
        const before = await python(node, probe, { token });
        expect(await before.until((e) => e.event === 'list', "a list with the pod's token", 60_000)).toMatchObject({ status: 200 });

        const del = await node.api(`${podPath('sa-client')}?gracePeriodSeconds=1`, { method: 'DELETE' });
        expect(del.status, await del.clone().text()).toBe(200);
        // Gone from the node (its containers stopped): the token goes with it.
        await waitFor(async () => (await node.api(podPath('sa-client'))).status === 404, {
          timeoutMs: 60_000,
          intervalMs: 200,
          description: 'sa-client gone',
        });
        const after = await python(node, probe, { token });
        expect(await after.until((e) => e.event === 'list', "a list with the deleted pod's token", 60_000)).toMatchObject({ status: 401 });
      },
      kTestMs,
    );
  },
);
