// Break-46 (service accounts, issue #43): a pod's token must stand only for the service account
// the pod runs as now. The node's API lets a PUT replace a pod's spec, `serviceAccountName`
// included (upstream makes it immutable, so its token validator never needed to look); and every
// name is a ServiceAccount here (its UID derived from the name), so the validator's "the account
// still exists with this UID" held for an account no pod uses any more. Found: a pod moved from the
// privileged account `deployer` to `default` by a PUT kept a token that still authenticated as
// `system:serviceaccount:default:deployer` for the rest of its hour.
// Also found: a user allowed to create ConfigMaps in a namespace (the `edit` role) could create
// `kube-root-ca.crt` there with a CA of their own, and every pod of the namespace then got it as
// the `ca.crt` it checks the API with (upstream the root CA publisher keeps that ConfigMap the
// cluster's CA); a pod's token volume now always carries the CA the node's TLS port serves.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';

const kTestMs = 120_000;
const kNs = 'default';

const kPolicy = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: ${kNs}}
rules:
  - {apiGroups: [""], resources: [pods], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: deployer-reads-pods, namespace: ${kNs}}
subjects: [{kind: ServiceAccount, name: deployer, namespace: ${kNs}}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: editor-edits, namespace: ${kNs}}
subjects: [{kind: ServiceAccount, name: editor, namespace: ${kNs}}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
`;

describe.skipIf(!inject('dockerAvailable'))('break-46: service account tokens', () => {
  let node: TestNode;
  let dir: string;
  const label = `break-46-sa-${process.pid}`;
  const podPath = (name: string) => `/api/v1/namespaces/${kNs}/pods/${name}`;
  const asToken = (token: string, path: string) => node.api(path, { headers: { Authorization: `Bearer ${token}` } });
  /** The token the agent wrote into the pod's `kube-api-access-*` volume, once it is there (and differs from `not`). */
  /** A file of the pod's `kube-api-access-*` volume, once it is there and `ok` says it is what we wait for. */
  const volumeFile = (pod: Pod, file: string, ok: (text: string) => boolean = () => true) =>
    waitFor(
      async () => {
        const base = join(node.rootDir, 'pods', pod.metadata!.uid!, 'volumes', 'kubernetes.io~projected');
        const vol = (await readdir(base).catch(() => [] as string[])).find((n) => n.startsWith('kube-api-access-'));
        const text = vol && (await readFile(join(base, vol, file), 'utf8').catch(() => undefined));
        return text !== undefined && text !== '' && ok(text) ? text : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: `${file} of ${pod.metadata?.name}` },
    );
  const volumeToken = async (pod: Pod, not?: string) => (await volumeFile(pod, 'token', (t) => t.trim() !== not)).trim();
  const saOf = (token: string) =>
    (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { 'kubernetes.io': { serviceaccount: { name: string } } })[
      'kubernetes.io'
    ].serviceaccount.name;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-break46-'));
    await writeFile(join(dir, 'policy.yaml'), kPolicy);
    node = await startTestNode({ tlsPort: 0, authorizationPolicyFile: join(dir, 'policy.yaml') });
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, kTestMs);

  it(
    'a pod moved to another service account by a PUT: its old token no longer authenticates as the old account',
    async () => {
      const res = await node.api(`/api/v1/namespaces/${kNs}/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'b46-moved', namespace: kNs, labels: { test: label } },
          spec: {
            serviceAccountName: 'deployer',
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
          },
        }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const created = (await res.json()) as Pod;
      const old = await volumeToken(created);
      expect(saOf(old)).toBe('deployer');
      expect((await asToken(old, `/api/v1/namespaces/${kNs}/pods`)).status).toBe(200);

      // The owner takes the account away: the same pod (same name and UID), now as `default`.
      const current = (await (await node.api(podPath('b46-moved'))).json()) as Pod;
      const moved = structuredClone(current) as Pod & { spec: { serviceAccount?: string } };
      moved.spec.serviceAccountName = 'default';
      moved.spec.serviceAccount = 'default';
      const put = await node.api(podPath('b46-moved'), {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(moved),
      });
      expect(put.status, await put.clone().text()).toBe(200);
      expect(((await put.json()) as Pod).metadata?.uid).toBe(created.metadata?.uid);

      // The token of the account the pod no longer runs as is refused (401), as a token of a
      // deleted account is upstream; the pod's new token is `default`'s, which the policy grants nothing (403).
      const refused = await asToken(old, `/api/v1/namespaces/${kNs}/pods`);
      expect(refused.status, await refused.clone().text()).toBe(401);
      const fresh = await volumeToken(current, old);
      expect(saOf(fresh)).toBe('default');
      expect((await asToken(fresh, `/api/v1/namespaces/${kNs}/pods`)).status).toBe(403);
    },
    kTestMs,
  );

  it(
    'a kube-root-ca.crt ConfigMap a user stored in the namespace does not replace the CA a pod gets in its token volume',
    async () => {
      const cm = await node.api(`/api/v1/namespaces/${kNs}/configmaps`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'kube-root-ca.crt', namespace: kNs },
          data: { 'ca.crt': 'ATTACKER CA\n' },
        }),
      });
      expect([201, 403, 409], await cm.clone().text()).toContain(cm.status);
      const res = await node.api(`/api/v1/namespaces/${kNs}/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'b46-ca', namespace: kNs, labels: { test: label } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
          },
        }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const ca = await volumeFile((await res.json()) as Pod, 'ca.crt');
      expect(ca).toBe(await readFile(join(node.rootDir, 'pki', 'kubelet-ts.crt'), 'utf8'));
    },
    kTestMs,
  );

  it(
    "held: a token whose account may edit its namespace reaches none of the kubelet's own paths (nodes/proxy, nodes/metrics) and no other namespace",
    async () => {
      const res = await node.api(`/api/v1/namespaces/${kNs}/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'b46-editor', namespace: kNs, labels: { test: label } },
          spec: {
            serviceAccountName: 'editor',
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
          },
        }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const token = await volumeToken((await res.json()) as Pod);
      expect((await asToken(token, `/api/v1/namespaces/${kNs}/pods`)).status).toBe(200);
      const kubelet = ['/pods', '/metrics', '/stats/summary', `/containerLogs/${kNs}/b46-editor/main`, '/events', '/node'];
      for (const path of kubelet) expect([path, (await asToken(token, path)).status]).toEqual([path, 403]);
      for (const path of [`/run/${kNs}/b46-editor/main?cmd=id`, `/exec/${kNs}/b46-editor/main?command=id`]) {
        expect([path, (await node.api(path, { method: 'POST', headers: { Authorization: `Bearer ${token}` } })).status]).toEqual([
          path,
          403,
        ]);
      }
      expect((await asToken(token, '/api/v1/namespaces/kube-system/pods')).status).toBe(403);
      expect((await asToken(token, '/api/v1/nodes')).status).toBe(403);
    },
    kTestMs,
  );
});
