// Break test (session 45): what #39 added, attacked as an ordinary user would, with a token bound to
// the built-in `edit` role in one namespace. Each case is a finding that held at 583e5ac; it fails
// until the agent is fixed.
//
// 1. The pod proxy dials 127.0.0.1 for a hostNetwork pod, on any port the caller names: a user with
//    `pods/proxy` in a namespace that holds one hostNetwork pod (a static pod, or one an admin made)
//    reaches every loopback-only service of the node (the agent's own port, etcd, the registry,
//    another tenant's hostNetwork server bound to 127.0.0.1). The apiserver refuses a pod IP that is
//    loopback, link-local or multicast (pkg/registry/core/pod/strategy.go ResourceLocation,
//    proxyutil.IsProxyableIP: 400 "address not allowed").
// 2. A Secret's values leak through its `kubectl.kubernetes.io/last-applied-configuration`
//    annotation: replies blank the values in that annotation, but it is stored whole, so a JSON patch
//    `copy` of it into another annotation returns the values, and a `test` of it is an oracle.
// 3. A gRPC probe written without `service` is stored without it; the apiserver defaults it to ""
//    (k8s.io/api core/v1 GRPCAction.Service, `+default=""`, applied by the generated defaulters), and
//    kubectl relies on it: `kubectl describe pod` of such a pod panics (nil pointer dereference in
//    k8s.io/kubectl/pkg/describe DescribeProbe), so any tenant can break `describe` for the admin.
// 4. ConfigMaps and Secrets written through the API have no byte bound: `--intake-store-bytes`
//    bounds only the pods' files, so one edit user filled `<root-dir>/intake-objects/` with 344 MB
//    (200 ConfigMaps of 900 KB, each stored twice) and took the agent from 216 MB to 1 GB of RSS.
// 5. A 422 for an invalid ConfigMap or Secret names the object as a Pod (`Pod "c1" is invalid`,
//    `details.kind: "Pod"`); the apiserver names its kind (`ConfigMap "c1" is invalid`).
// 6. The pod proxy forwards headers the request's `Connection` header names as hop-by-hop
//    (RFC 9110 7.6.1); the apiserver's proxy (net/http/httputil ReverseProxy, under
//    k8s.io/apimachinery/pkg/util/proxy) drops them.
import { createServer, request as httpRequest, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { isRunningAndReady, startTestNode, type TestNode } from '../support/agent.js';
import { kHaveKubectl, kubectlFor } from '../support/kubectl.js';
import type { Pod } from '../../src/shared/api.js';

const kTestMs = 120_000;
const kBob = 'break45-bob-token-0123456789abcdef01234';
const kNs = 'team-a';
const kSecretValue = 'APPLIED-SECRET-VALUE-4242';
const kStoreBytes = 4 * 1024 * 1024;

describe.skipIf(!inject('dockerAvailable'))('break 45: pod proxy and Secret writes against an edit user', () => {
  let node: TestNode;
  let dir: string;
  let loopback: Server;
  let loopbackPort = 0;
  let loopbackHits = 0;
  const { kubectl } = kubectlFor(
    () => node,
    () => dir,
  );
  const asBob = (path: string, init: RequestInit = {}) =>
    node.api(path, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), Authorization: `Bearer ${kBob}` } });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-break45-'));
    const tokens = join(dir, 'tokens.csv');
    const policy = join(dir, 'policy.yaml');
    await writeFile(tokens, `${kBob},bob,uid-bob,""\n`);
    await writeFile(
      policy,
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: RoleBinding',
        `metadata: {name: bob-edit, namespace: ${kNs}}`,
        'subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]',
        'roleRef: {kind: ClusterRole, name: edit, apiGroup: rbac.authorization.k8s.io}',
        '',
      ].join('\n'),
    );
    // A service of the node bound to loopback only (as etcd, the registry or a hostNetwork pod's admin port).
    loopback = createServer((_req, res) => {
      loopbackHits += 1;
      res.end('node-loopback-only');
    });
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    loopbackPort = (loopback.address() as AddressInfo).port;
    node = await startTestNode({ tlsPort: 0, tokenAuthFile: tokens, authorizationPolicyFile: policy, intakeStoreBytes: kStoreBytes });
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    await new Promise((resolve) => loopback?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    "finding 1: an edit user cannot reach the node's loopback through a hostNetwork pod's proxy",
    async () => {
      // The admin runs one hostNetwork pod in team-a (a node agent, a monitoring daemon …).
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'hostagent', namespace: kNs },
        spec: {
          hostNetwork: true,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
        },
      };
      const res = await node.api(`/api/v1/namespaces/${kNs}/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(pod),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      await waitFor(
        async () => {
          const r = await node.api(`/api/v1/namespaces/${kNs}/pods/hostagent`);
          const p = r.status === 200 ? ((await r.json()) as Pod) : undefined;
          return p && isRunningAndReady(p) ? p : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 200, description: 'pod hostagent running' },
      );

      // bob may proxy to pods of team-a (edit grants pods/proxy), but the pod's own IP is the node's
      // loopback: as the apiserver, the proxy must refuse it rather than dial 127.0.0.1:<any port>.
      const other = await asBob(`/api/v1/namespaces/${kNs}/pods/hostagent:${loopbackPort}/proxy/`);
      const otherBody = await other.text();
      expect(otherBody).not.toContain('node-loopback-only');
      expect(other.status).toBe(400);
      expect(loopbackHits).toBe(0);
      // The agent's own plain port through itself.
      const self = await asBob(`/api/v1/namespaces/${kNs}/pods/hostagent:${node.agent.port}/proxy/healthz`);
      expect(await self.text()).not.toBe('ok');
      expect(self.status).toBe(400);
    },
    kTestMs,
  );

  it(
    'finding 2: a Secret value never comes back through its last-applied-configuration annotation',
    async () => {
      // What `kubectl apply -f secret.yaml` sends: the manifest itself in the last-applied annotation.
      const applied = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { annotations: {}, name: 's2', namespace: kNs },
        stringData: { pw: kSecretValue },
      };
      const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 's2',
          namespace: kNs,
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(applied)}\n` },
        },
        stringData: { pw: kSecretValue },
        type: 'Opaque',
      };
      const created = await asBob(`/api/v1/namespaces/${kNs}/secrets`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(secret),
      });
      const createdBody = await created.text();
      expect(created.status, createdBody).toBe(201);
      expect(createdBody).not.toContain(kSecretValue);

      // JSON patch: copy the annotation into one whose values are not blanked.
      const copy = await asBob(`/api/v1/namespaces/${kNs}/secrets/s2`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json-patch+json' },
        body: JSON.stringify([
          {
            op: 'copy',
            from: '/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration',
            path: '/metadata/annotations/leak',
          },
        ]),
      });
      expect(await copy.text()).not.toContain(kSecretValue);
      const got = await asBob(`/api/v1/namespaces/${kNs}/secrets/s2`);
      expect(await got.text()).not.toContain(kSecretValue);
      const list = await asBob(`/api/v1/namespaces/${kNs}/secrets`);
      expect(await list.text()).not.toContain(kSecretValue);

      // JSON patch `test` as an oracle: the stored annotation must not confirm a guessed value.
      const test = await asBob(`/api/v1/namespaces/${kNs}/secrets/s2?dryRun=All`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json-patch+json' },
        body: JSON.stringify([
          {
            op: 'test',
            path: '/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration',
            value: `${JSON.stringify(applied)}\n`,
          },
        ]),
      });
      expect(test.status).not.toBe(200);
    },
    kTestMs,
  );

  it.skipIf(!kHaveKubectl)(
    'finding 3: a gRPC probe\'s service is defaulted to "" and kubectl describe of the pod works',
    async () => {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'grpcprobe', namespace: kNs },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'main',
              image: BUSYBOX_IMAGE,
              imagePullPolicy: 'Never',
              command: ['sleep', '3600'],
              readinessProbe: { grpc: { port: 9090 }, periodSeconds: 5 },
            },
          ],
        },
      };
      const res = await asBob(`/api/v1/namespaces/${kNs}/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(pod),
      });
      const created = (await res.json()) as Pod;
      expect(res.status, JSON.stringify(created)).toBe(201);
      expect(created.spec?.containers[0].readinessProbe?.grpc).toEqual({ port: 9090, service: '' });
      const described = await kubectl(['describe', 'pod', '-n', kNs, 'grpcprobe'], { token: kBob });
      expect(described.stderr).not.toContain('panic');
      expect(described.code).toBe(0);
      expect(described.stdout).toContain('grpc <pod>:9090');
    },
    kTestMs,
  );

  it(
    'finding 4: ConfigMap writes of one edit user are bounded in bytes (--intake-store-bytes)',
    async () => {
      // 12 ConfigMaps of 700 KB: 8.4 MB of data against a 4 MiB store.
      const value = 'x'.repeat(700 * 1024);
      const statuses: number[] = [];
      let refusal = '';
      for (let i = 0; i < 12; i++) {
        const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big${i}`, namespace: kNs }, data: { k: value } };
        const res = await asBob(`/api/v1/namespaces/${kNs}/configmaps`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(cm),
        });
        statuses.push(res.status);
        const text = await res.text();
        if (res.status !== 201) {
          refusal = text;
          break;
        }
      }
      expect(statuses).toContain(403);
      expect(refusal).toContain('exceeded quota');
    },
    kTestMs,
  );

  it(
    'finding 5: a 422 for an invalid ConfigMap or Secret names its own kind, not Pod',
    async () => {
      for (const [resource, kind] of [
        ['configmaps', 'ConfigMap'],
        ['secrets', 'Secret'],
      ]) {
        const res = await asBob(`/api/v1/namespaces/${kNs}/${resource}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ apiVersion: 'v1', kind, metadata: { name: 'badkey' }, data: { 'bad key': 'eA==' } }),
        });
        expect(res.status).toBe(422);
        const status = (await res.json()) as { message: string; details: { kind: string } };
        expect(status.message).toMatch(new RegExp(`^${kind} "badkey" is invalid`));
        expect(status.details.kind).toBe(kind);
      }
    },
    kTestMs,
  );

  it(
    'finding 6: the pod proxy drops the headers the Connection header names',
    async () => {
      // A pod that prints each request it gets and answers 200.
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'echo', namespace: kNs },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'main',
              image: BUSYBOX_IMAGE,
              imagePullPolicy: 'Never',
              command: [
                'sh',
                '-c',
                "while true; do printf 'HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nok' | nc -l -p 9000; echo ---END---; done",
              ],
            },
          ],
        },
      };
      const res = await asBob(`/api/v1/namespaces/${kNs}/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(pod),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      await waitFor(
        async () => {
          const r = await asBob(`/api/v1/namespaces/${kNs}/pods/echo`);
          const p = r.status === 200 ? ((await r.json()) as Pod) : undefined;
          return p && isRunningAndReady(p) ? p : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 200, description: 'pod echo running' },
      );
      // node:http, as fetch (undici) refuses to send a Connection header of the caller's.
      const get = () =>
        new Promise<string | undefined>((resolve) => {
          const req = httpRequest(
            {
              host: '127.0.0.1',
              port: node.agent.port,
              path: `/api/v1/namespaces/${kNs}/pods/echo:9000/proxy/hop`,
              headers: {
                Authorization: `Bearer ${kBob}`,
                Connection: 'keep-alive, X-Break-Hop',
                'X-Break-Hop': 'must-not-pass',
                'X-Break-End': 'passes',
              },
            },
            (r) => {
              let body = '';
              r.on('data', (c: Buffer) => (body += c.toString()));
              r.on('end', () => resolve(r.statusCode === 200 ? body : undefined));
            },
          );
          req.on('error', () => resolve(undefined));
          req.end();
        });
      const proxied = await waitFor(get, { timeoutMs: 30_000, intervalMs: 500, description: 'the proxied request answered' });
      expect(proxied).toBe('ok');
      const log = await waitFor(
        async () => {
          const text = await (await asBob(`/api/v1/namespaces/${kNs}/pods/echo/log`)).text();
          return text.includes('GET /hop') && text.includes('---END---') ? text : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 500, description: 'the request in the pod log' },
      );
      const request = log.slice(log.indexOf('GET /hop')).toLowerCase();
      expect(request).toContain('x-break-end: passes');
      expect(request).not.toContain('x-break-hop');
    },
    kTestMs,
  );
});
