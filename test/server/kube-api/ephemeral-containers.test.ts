// Issue #39 item 8, in process (a real uWS server, a fake host, the real strategic merge patch):
// `pods/{name}/ephemeralcontainers` as EphemeralContainersREST (GET, PATCH, PUT; only additions;
// the rest of the body ignored; static and etcd pods refused by name), pod create and update
// around it, and protobuf Pod bodies on the pods' create and replace.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentHost, HealthReport } from '../../../src/server/host/agent-host.js';
import { createServer, type AgentServer } from '../../../src/server/server.js';
import type { Pod } from '../../../src/shared/api.js';
import { applyPodDefaults } from '../../../src/shared/defaults.js';
import { newLogger } from '../../../src/shared/logging.js';

const image = 'kubelet-ts/busybox:1.35';
const pod = (name: string, annotations: Record<string, string> = { 'kubernetes.io/config.source': 'api' }): Pod =>
  applyPodDefaults({
    metadata: { name, namespace: 'default', uid: `u-${name}`, annotations },
    spec: { nodeName: 'n1', containers: [{ name: 'main', image }] },
  });

class FakeHost implements AgentHost {
  pods = new Map<string, Pod>();
  replaced: Pod[] = [];
  created: Pod[] = [];
  listPods() {
    return [...this.pods.values()];
  }
  getPod(ns: string, name: string) {
    return this.pods.get(`${ns}/${name}`);
  }
  healthz(): HealthReport {
    return { ok: true, checks: [] };
  }
  async submitPods(pods: Pod[]) {
    this.created.push(...pods);
    return pods;
  }
  async replacePod(ns: string, name: string, p: Pod, write?: { dryRun?: boolean }) {
    if (!write?.dryRun) {
      this.replaced.push(p);
      this.pods.set(`${ns}/${name}`, p);
    }
    return p;
  }
}

let host: FakeHost;
let server: AgentServer;
let base: string;
beforeAll(async () => {
  host = new FakeHost();
  for (const p of [
    pod('web'),
    pod('st-n1', { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'h' }),
    pod('from-etcd', { 'kubernetes.io/config.source': 'etcd' }),
  ])
    host.pods.set(`default/${p.metadata!.name}`, p);
  server = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server?.close());

const call = async (method: string, path: string, body: unknown, contentType = 'application/strategic-merge-patch+json') => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'Content-Type': contentType },
    body: Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const ec = '/api/v1/namespaces/default/pods/web/ephemeralcontainers';

describe('pods/{name}/ephemeralcontainers', () => {
  it('GET answers the Pod; discovery lists the subresource', async () => {
    expect((await call('GET', ec, undefined)).body).toMatchObject({ kind: 'Pod', metadata: { name: 'web' } });
    const v1 = (await (await fetch(`${base}/api/v1`)).json()) as { resources: { name: string; verbs: string[] }[] };
    expect(v1.resources.find((r) => r.name === 'pods/ephemeralcontainers')).toMatchObject({ verbs: ['get', 'patch', 'update'] });
  });

  it('PATCH (what kubectl debug sends) adds one, defaulted, and takes nothing else of the body', async () => {
    const body = JSON.parse(readFileSync(new URL('../../fixtures/kubectl-debug/ephemeral-patch.json', import.meta.url), 'utf8')) as Record<
      string,
      any
    >;
    body.spec.ephemeralContainers[0].targetContainerName = 'main';
    body.metadata = { labels: { sneaked: 'in' } };
    body.spec.containers = [{ name: 'main', image: 'other' }];
    const r = await call('PATCH', ec, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.spec.ephemeralContainers).toMatchObject([
      { name: 'dbg', image, targetContainerName: 'main', terminationMessagePath: '/dev/termination-log', imagePullPolicy: 'IfNotPresent' },
    ]);
    expect(r.body.spec.containers).toMatchObject([{ name: 'main', image }]);
    expect(r.body.metadata.labels).toBeUndefined();
    expect(host.getPod('default', 'web')?.spec?.ephemeralContainers?.map((c) => c.name)).toEqual(['dbg']);
  });

  it('refuses a change or removal of an existing one, forbidden fields, a name in use, and a stale PUT', async () => {
    const changed = await call('PATCH', ec, { spec: { ephemeralContainers: [{ name: 'dbg', image: 'other' }] } });
    expect(changed).toMatchObject({
      status: 422,
      body: {
        reason: 'Invalid',
        message: expect.stringContaining('spec.ephemeralContainers[0]: Forbidden: existing ephemeral containers "dbg" may not be changed'),
      },
    });
    const current = (await call('GET', ec, undefined)).body as Pod;
    const removed = await call('PUT', ec, { ...current, spec: { ...current.spec, ephemeralContainers: [] } }, 'application/json');
    expect(removed).toMatchObject({
      status: 422,
      body: { message: expect.stringContaining('existing ephemeral containers "dbg" may not be removed') },
    });
    const probe = await call('PATCH', ec, {
      spec: { ephemeralContainers: [{ name: 'p', image, readinessProbe: { exec: { command: ['true'] } } }] },
    });
    expect(probe).toMatchObject({
      status: 422,
      body: {
        message: expect.stringContaining('spec.ephemeralContainers[1].readinessProbe: Forbidden: cannot be set for an Ephemeral Container'),
      },
    });
    const clash = await call('PATCH', ec, { spec: { ephemeralContainers: [{ name: 'main', image }] } });
    expect(clash).toMatchObject({
      status: 422,
      body: { message: expect.stringContaining('spec.ephemeralContainers[1].name: Duplicate value: "main"') },
    });
    const stale = await call('PUT', ec, { ...current, metadata: { ...current.metadata, resourceVersion: '999' } }, 'application/json');
    expect(stale.status).toBe(409);
    const dry = await call('PATCH', `${ec}?dryRun=All`, { spec: { ephemeralContainers: [{ name: 'two', image }] } });
    expect(dry.status).toBe(200);
    expect(host.getPod('default', 'web')?.spec?.ephemeralContainers?.map((c) => c.name)).toEqual(['dbg']);
  });

  it('refuses static and etcd pods by name with 403, and an absent pod with 404', async () => {
    const add = { spec: { ephemeralContainers: [{ name: 'dbg', image }] } };
    expect(await call('PATCH', '/api/v1/namespaces/default/pods/st-n1/ephemeralcontainers', add)).toMatchObject({
      status: 403,
      body: { message: expect.stringContaining('pods "st-n1" is forbidden: cannot patch a mirror pod') },
    });
    expect(await call('PATCH', '/api/v1/namespaces/default/pods/from-etcd/ephemeralcontainers', add)).toMatchObject({
      status: 403,
      body: {
        message:
          'pods "from-etcd" is forbidden: cannot patch the ephemeral containers of a pod of the etcd source: only pods created through the API take them',
      },
    });
    expect((await call('PATCH', '/api/v1/namespaces/default/pods/nope/ephemeralcontainers', add)).status).toBe(404);
  });

  it('a pod create may not carry ephemeral containers; a pod update keeps the stored ones', async () => {
    const create = await call(
      'POST',
      '/api/v1/namespaces/default/pods',
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'new' },
        spec: { containers: [{ name: 'c', image }], ephemeralContainers: [{ name: 'e', image }] },
      },
      'application/json',
    );
    expect(create).toMatchObject({
      status: 422,
      body: { message: 'Pod "new" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create' },
    });
    const current = (await call('GET', '/api/v1/namespaces/default/pods/web', undefined)).body as Pod;
    const put = await call(
      'PUT',
      '/api/v1/namespaces/default/pods/web',
      { ...current, spec: { ...current.spec, ephemeralContainers: [] } },
      'application/json',
    );
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.spec.ephemeralContainers.map((c: { name: string }) => c.name)).toEqual(['dbg']);
  });
});

describe('protobuf Pod bodies', () => {
  it('POST takes the protobuf Pod kubectl debug --copy-to sends; a body that does not decode is a 400 naming it', async () => {
    const body = readFileSync(new URL('../../fixtures/kubectl-debug/copy-to-pod.pb', import.meta.url));
    const r = await call('POST', '/api/v1/namespaces/default/pods', body, 'application/vnd.kubernetes.protobuf');
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({
      metadata: { name: 'web-copy' },
      spec: { containers: [{ name: 'main' }, { name: 'dbg', command: ['true'] }] },
    });
    const bad = await call('POST', '/api/v1/namespaces/default/pods', body.subarray(0, 50), 'application/vnd.kubernetes.protobuf');
    expect(bad).toMatchObject({
      status: 400,
      body: { reason: 'BadRequest', message: expect.stringContaining('the protobuf body cannot be handled as a Pod:') },
    });
    const notPod = await call(
      'POST',
      '/api/v1/namespaces/default/pods',
      Buffer.from('{"kind":"Pod"}'),
      'application/vnd.kubernetes.protobuf',
    );
    expect(notPod).toMatchObject({ status: 400, body: { message: expect.stringContaining('magic prefix') } });
  });
});
