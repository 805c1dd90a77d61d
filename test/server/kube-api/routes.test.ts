// In-process tests of the kube-API routes on a real uWS server with a fake host: discovery, the
// Status shapes (404, 409, 415, 403, 400), create/update/patch/delete with preconditions, static
// (mirror) pods, deletecollection, the chunked HTTP watch (and 410), the OpenAPI and PATCH seams,
// the Tables, and the identities (anonymous reviews, streams and writes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentHost, CreatedNamespace, HealthReport } from '../../../src/server/host/agent-host.js';
import { parseTokenFile } from '../../../src/server/auth/auth.js';
import { createServer, type AgentServer } from '../../../src/server/server.js';
import type { WatchEvent } from '../../../src/server/host/watch-event.js';
import type { Node, Pod } from '../../../src/shared/api.js';
import { AgentError } from '../../../src/shared/errors.js';
import { newLogger } from '../../../src/shared/logging.js';

const kTable = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** A host with a few pods, a tiny watch history and recorded writes. */
class FakeHost implements AgentHost {
  rv = 3;
  pods = new Map<string, Pod>();
  watchers = new Set<(e: WatchEvent) => void>();
  deleted: { name: string; grace?: number }[] = [];
  constructor() {
    this.put({
      metadata: { name: 'web', namespace: 'default', uid: 'u-web', labels: { app: 'web' } },
      spec: { nodeName: 'n1', containers: [{ name: 'main', image: 'x' }] },
      status: { phase: 'Running' },
    });
    this.put({
      metadata: { name: 'db', namespace: 'prod', uid: 'u-db', labels: { app: 'db' } },
      spec: { nodeName: 'n1', containers: [{ name: 'main', image: 'x' }] },
      status: { phase: 'Pending' },
    });
    this.put({
      metadata: {
        name: 'st-n1',
        namespace: 'default',
        uid: 'u-st',
        annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'h1' },
      },
      spec: { nodeName: 'n1', containers: [{ name: 'main', image: 'x' }] },
      status: { phase: 'Running' },
    });
  }
  put(p: Pod) {
    this.pods.set(`${p.metadata?.namespace}/${p.metadata?.name}`, p);
  }
  listPods() {
    return [...this.pods.values()];
  }
  getPod(ns: string, name: string) {
    return this.pods.get(`${ns}/${name}`);
  }
  resourceVersion() {
    return this.rv;
  }
  healthz(): HealthReport {
    return { ok: true, checks: [] };
  }
  emit(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Pod) {
    this.rv++;
    const e: WatchEvent = {
      type,
      object: { ...pod, metadata: { ...pod.metadata, resourceVersion: String(this.rv) } },
      resourceVersion: this.rv,
      uid: pod.metadata?.uid ?? '',
    };
    for (const w of this.watchers) w(e);
  }
  watch(from: number | undefined, onEvent: (e: WatchEvent) => void) {
    if (from !== undefined && from > 0 && from < 2) {
      onEvent({
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          code: 410,
          reason: 'Expired',
          message: `too old resource version: ${from} (2)`,
        },
        resourceVersion: 0,
        uid: '',
      });
      return () => {};
    }
    if (!from)
      for (const [i, p] of this.listPods().entries())
        onEvent({
          type: 'ADDED',
          object: { ...p, metadata: { ...p.metadata, resourceVersion: String(i + 1) } },
          resourceVersion: i + 1,
          uid: p.metadata?.uid ?? '',
        });
    onEvent({
      type: 'BOOKMARK',
      object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } },
      resourceVersion: this.rv,
      uid: '',
    });
    this.watchers.add(onEvent);
    return () => this.watchers.delete(onEvent);
  }
  async submitPods(pods: Pod[], write?: { dryRun?: boolean }) {
    for (const p of pods)
      if (this.pods.has(`${p.metadata?.namespace}/${p.metadata?.name}`))
        throw new AgentError('ERR_ALREADY_EXISTS', `pods "${p.metadata?.name}" already exists`);
    return pods.map((p) => {
      const s = { ...p, metadata: { ...p.metadata, uid: `u-${p.metadata?.name}` } };
      if (!write?.dryRun) this.put(s);
      return s;
    });
  }
  async replacePod(_ns: string, _name: string, pod: Pod, write?: { dryRun?: boolean }) {
    if (!write?.dryRun) this.put(pod);
    return pod;
  }
  async deletePod(ns: string, name: string, grace?: number) {
    const p = this.pods.get(`${ns}/${name}`);
    if (!p) throw new AgentError('ERR_NOT_FOUND', `pods "${name}" not found`);
    this.deleted.push({ name, grace });
    return { ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-12-02T00:00:00Z' } };
  }
  listEvents() {
    return [
      {
        metadata: { name: 'web.1', namespace: 'default' },
        involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', uid: 'u-web' },
        reason: 'Started',
        type: 'Normal',
        message: 'Started',
      },
    ];
  }
  listObjects() {
    return [{ kind: 'Secret' as const, metadata: { name: 's1', namespace: 'default' }, data: { pw: 'c2VjcmV0' }, type: 'Opaque' }];
  }
  unschedulable = false;
  async getNode(): Promise<Node> {
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } },
      spec: this.unschedulable ? { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] } : {},
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    };
  }
  async setNodeUnschedulable(v: boolean) {
    this.unschedulable = v;
    return this.getNode();
  }
  created: CreatedNamespace[] = [];
  createdNamespaces() {
    return this.created;
  }
  async createNamespace(ns: { name: string; labels?: Record<string, string> }) {
    const c = { ...ns, uid: `u-ns-${ns.name}`, creationTimestamp: '2026-12-03T00:00:00Z' };
    this.created.push(c);
    return c;
  }
  async updateNamespace(ns: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }) {
    const had = this.created.find((n) => n.name === ns.name);
    const c = { ...ns, uid: had?.uid ?? `u-ns-${ns.name}`, creationTimestamp: had?.creationTimestamp ?? '2026-12-03T00:00:00Z' };
    this.created = [...this.created.filter((n) => n.name !== ns.name), c];
    return c;
  }
  async deleteNamespace(name: string) {
    const before = this.created.length;
    this.created = this.created.filter((n) => n.name !== name);
    return this.created.length < before;
  }
}

let host: FakeHost;
let server: AgentServer;
let authServer: AgentServer;
let base: string;
let authBase: string;
const patched: { contentType: string; body: string; fieldManager?: string }[] = [];
let races = 0;

beforeAll(async () => {
  host = new FakeHost();
  const logger = newLogger('silent');
  server = await createServer(host, {
    address: '127.0.0.1',
    port: 0,
    logger,
    kubeApi: {
      patchPod: (current, contentType, body, query) => {
        patched.push({ contentType, body, fieldManager: query.fieldManager });
        // A status change lands after the patch was applied and before it is stored: `races` times.
        if (body.includes('"race"') && races > 0) {
          races--;
          host.emit('MODIFIED', host.getPod('default', 'web')!);
        }
        if (contentType === 'application/json-patch+json')
          throw new AgentError('ERR_INVALID_ARGUMENT', 'the patch is not a list', { statusReason: 'BadRequest' });
        return { ...current, metadata: { ...current.metadata, labels: { ...current.metadata?.labels, patched: 'yes' } } };
      },
      openApi: (path) => (path === '/openapi/v2' ? { contentType: 'application/json', body: '{"swagger":"2.0"}' } : undefined),
    },
  });
  const tokens = parseTokenFile(
    'admin-token-0123456789abcdef0123456789,admin,1,system:masters\nview-token-0123456789abcdef0123456789,viewer,2,kubelet-ts:read-only\n',
    'tokens',
  );
  authServer = await createServer(host, { address: '127.0.0.1', port: 0, logger, auth: { tokens, anonymous: true } });
  base = `http://127.0.0.1:${server.port}`;
  authBase = `http://127.0.0.1:${authServer.port}`;
});
afterAll(() => {
  server?.close();
  authServer?.close();
});

const json = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${base}${path}`, init);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

describe('discovery and version', () => {
  it('serves /version, /api, /api/v1 and /apis', async () => {
    expect((await json('/version')).body).toMatchObject({ major: '1', minor: '32' });
    expect((await json('/api')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const v1 = (await json('/api/v1')).body;
    expect(v1.resources.find((r: { name: string }) => r.name === 'pods')).toMatchObject({
      namespaced: true,
      kind: 'Pod',
      shortNames: ['po'],
      verbs: expect.arrayContaining(['watch', 'deletecollection']),
    });
    const apis = await json('/apis', {
      headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' },
    });
    expect(apis.body).toMatchObject({ kind: 'APIGroupList' });
    expect(apis.body.groups.map((g: { name: string }) => g.name)).toContain('metrics.k8s.io');
  });
  it('answers 404 Statuses that say what the node serves for unknown resources and groups', async () => {
    const dep = await json('/apis/apps/v1/namespaces/default/deployments');
    expect(dep.status).toBe(404);
    expect(dep.body).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      message: expect.stringContaining('"deployments" in group "apps" is not served (this node serves only pods'),
    });
    expect(
      (await json('/api/v1/namespaces/default/services', { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } }))
        .status,
    ).toBe(404);
  });
});

describe('pods', () => {
  it('lists with label and field selectors, all namespaces, and as a Table', async () => {
    const list = await json('/api/v1/namespaces/default/pods?labelSelector=app%3Dweb');
    expect(list.body).toMatchObject({ kind: 'PodList', metadata: { resourceVersion: String(host.rv) } });
    expect(list.body.items.map((p: Pod) => p.metadata?.name)).toEqual(['web']);
    const all = await json('/api/v1/pods?fieldSelector=status.phase%3DPending');
    expect(all.body.items.map((p: Pod) => p.metadata?.name)).toEqual(['db']);
    const bad = await json('/api/v1/pods?fieldSelector=spec.image%3Dx');
    expect(bad).toMatchObject({
      status: 400,
      body: { kind: 'Status', reason: 'BadRequest', message: 'field label not supported: spec.image' },
    });
    const table = await json('/api/v1/namespaces/default/pods', { headers: { Accept: kTable } });
    expect(table.body).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    // In the apiserver's order (namespace, then name), not the order the pods were added in (issue 39 item 10).
    expect(table.body.rows.map((r: { cells: unknown[] }) => r.cells[0])).toEqual(['st-n1', 'web']);
  });
  it('gets a pod with its resourceVersion, a static pod as a mirror pod, and 404s as the apiserver', async () => {
    const got = await json('/api/v1/namespaces/default/pods/web');
    expect(got.body).toMatchObject({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'web', resourceVersion: '1' } });
    expect((await json('/api/v1/namespaces/default/pods/st-n1/status')).body.metadata.annotations).toMatchObject({
      'kubernetes.io/config.mirror': 'h1',
    });
    expect(await json('/api/v1/namespaces/default/pods/nope')).toEqual({
      status: 404,
      body: expect.objectContaining({
        kind: 'Status',
        status: 'Failure',
        reason: 'NotFound',
        message: 'pods "nope" not found',
        details: { name: 'nope', kind: 'pods' },
        code: 404,
      }),
    });
  });
  it('creates (201), refuses a duplicate (409 AlreadyExists) and a namespace mismatch (400)', async () => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'new1' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const created = await json('/api/v1/namespaces/default/pods', {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(created).toMatchObject({ status: 201, body: { kind: 'Pod', metadata: { name: 'new1', namespace: 'default', uid: 'u-new1' } } });
    const again = await json('/api/v1/namespaces/default/pods', { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
    expect(again).toMatchObject({ status: 409, body: { reason: 'AlreadyExists', details: { name: 'new1', kind: 'pods' } } });
    const other = await json('/api/v1/namespaces/prod/pods', {
      method: 'POST',
      body: JSON.stringify({ ...JSON.parse(body), metadata: { name: 'x', namespace: 'default' } }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(other).toMatchObject({
      status: 400,
      body: { reason: 'BadRequest', message: expect.stringContaining('does not match the namespace sent on the request') },
    });
  });
  it("fieldValidation=Strict (kubectl's default) refuses unknown fields at decode time (400); without it the validation answers 422", async () => {
    const pod = (extra: Record<string, unknown>) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'strict1' },
        spec: { containers: [{ name: 'c', image: 'busybox', ...extra }] },
      });
    const post = (query: string, body: string) =>
      json(`/api/v1/namespaces/default/pods${query}`, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
    expect(await post('?fieldValidation=Strict', pod({ imagee: 'x' }))).toMatchObject({
      status: 400,
      body: { reason: 'BadRequest', message: 'strict decoding error: unknown field "spec.containers[0].imagee"' },
    });
    expect(await post('?fieldValidation=Ignore', pod({ imagee: 'x' }))).toMatchObject({
      status: 422,
      body: { message: expect.stringContaining('spec.containers[0].imagee: Not supported') },
    });
    expect((await json('/api/v1/namespaces/default/pods/strict1')).status).toBe(404);
    expect((await post('?fieldValidation=Strict', pod({}))).status).toBe(201);
    const created = (await json('/api/v1/namespaces/default/pods/strict1')).body;
    const put = await json('/api/v1/namespaces/default/pods/strict1?fieldValidation=Strict', {
      method: 'PUT',
      body: JSON.stringify({ ...created, spec: { ...created.spec, nodeNam: 'n' } }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(put).toMatchObject({ status: 400, body: { message: 'strict decoding error: unknown field "spec.nodeNam"' } });
  });
  it('updates with a stale resourceVersion → 409 Conflict; a static pod → 403', async () => {
    const pod = (await json('/api/v1/namespaces/default/pods/web')).body;
    const stale = await json('/api/v1/namespaces/default/pods/web', {
      method: 'PUT',
      body: JSON.stringify({ ...pod, metadata: { ...pod.metadata, resourceVersion: '999' } }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(stale).toMatchObject({
      status: 409,
      body: {
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again',
      },
    });
    const ok = await json('/api/v1/namespaces/default/pods/web', {
      method: 'PUT',
      body: JSON.stringify(pod),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(ok.status).toBe(200);
    const st = (await json('/api/v1/namespaces/default/pods/st-n1')).body;
    expect(
      (
        await json('/api/v1/namespaces/default/pods/st-n1', {
          method: 'PUT',
          body: JSON.stringify(st),
          headers: { 'Content-Type': 'application/json' },
        })
      ).body,
    ).toMatchObject({ code: 403, reason: 'Forbidden', message: expect.stringContaining('cannot update a mirror pod') });
  });
  it('patches through the injected patcher (its errors are Statuses) and stores the result as a PUT', async () => {
    const r = await json('/api/v1/namespaces/default/pods/web?fieldManager=kubectl-patch', {
      method: 'PATCH',
      body: '{"metadata":{"labels":{"patched":"yes"}}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(r).toMatchObject({ status: 200, body: { metadata: { labels: { app: 'web', patched: 'yes' } } } });
    expect(patched.at(-1)).toEqual({
      contentType: 'application/merge-patch+json',
      body: '{"metadata":{"labels":{"patched":"yes"}}}',
      fieldManager: 'kubectl-patch',
    });
    expect(
      await json('/api/v1/namespaces/default/pods/web', {
        method: 'PATCH',
        body: '{}',
        headers: { 'Content-Type': 'application/json-patch+json' },
      }),
    ).toMatchObject({ status: 400, body: { message: 'the patch is not a list' } });
  });
  it('applies a patch again when the pod changed before it was stored; 409 only when it keeps changing or the patch sets a stale resourceVersion', async () => {
    const patch = () =>
      json('/api/v1/namespaces/default/pods/web', {
        method: 'PATCH',
        body: '{"metadata":{"labels":{"race":"yes"}}}',
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
    races = 1;
    let calls = patched.length;
    expect(await patch()).toMatchObject({ status: 200, body: { metadata: { labels: { patched: 'yes' } } } });
    expect(patched.length - calls).toBe(2);
    races = 100;
    calls = patched.length;
    expect(await patch()).toMatchObject({
      status: 409,
      body: { reason: 'Conflict', message: expect.stringContaining('the object has been modified') },
    });
    expect(patched.length - calls).toBe(5);
    races = 0;
    const stale = await fetch(`${authBase}/api/v1/namespaces/default/pods/web`, {
      method: 'PATCH',
      body: '{"metadata":{"resourceVersion":"999"}}',
      headers: { 'Content-Type': 'application/merge-patch+json', Authorization: 'Bearer admin-token-0123456789abcdef0123456789' },
    });
    expect(stale.status).toBe(409);
  });
  it('with the default patcher (patch.ts) a merge patch applies and an unknown patch type answers 415', async () => {
    const headers = (ct: string) => ({ 'Content-Type': ct, Authorization: 'Bearer admin-token-0123456789abcdef0123456789' });
    const ok = await fetch(`${authBase}/api/v1/namespaces/default/pods/web`, {
      method: 'PATCH',
      body: '{"metadata":{"labels":{"merged":"yes"}}}',
      headers: headers('application/merge-patch+json'),
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { metadata: { labels: Record<string, string> } }).metadata.labels).toMatchObject({ merged: 'yes' });
    const res = await fetch(`${authBase}/api/v1/namespaces/default/pods/web`, {
      method: 'PATCH',
      body: '{}',
      headers: headers('application/x-yaml-diff'),
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ reason: 'UnsupportedMediaType' });
  });
  it('dryRun=All runs create, update, patch, delete and deletecollection through their checks, answers as the write would, and changes nothing', async () => {
    const post = (body: unknown) =>
      json('/api/v1/namespaces/default/pods?dryRun=All', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json' },
      });
    const dryPod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'dry1' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    expect(await post(dryPod)).toMatchObject({ status: 201, body: { kind: 'Pod', metadata: { name: 'dry1', uid: 'u-dry1' } } });
    expect(host.getPod('default', 'dry1')).toBeUndefined();
    expect(await post({ ...dryPod, metadata: { name: 'web' } })).toMatchObject({ status: 409, body: { reason: 'AlreadyExists' } });
    const before = structuredClone(host.getPod('default', 'web'));
    const web = (await json('/api/v1/namespaces/default/pods/web')).body;
    const put = await json('/api/v1/namespaces/default/pods/web?dryRun=All', {
      method: 'PUT',
      body: JSON.stringify({ ...web, metadata: { ...web.metadata, labels: { app: 'web', dry: 'put' } } }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(put).toMatchObject({ status: 200, body: { metadata: { labels: { dry: 'put' } } } });
    const patch = await json('/api/v1/namespaces/default/pods/web?dryRun=All', {
      method: 'PATCH',
      body: '{"metadata":{"labels":{"patched":"yes"}}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(patch).toMatchObject({ status: 200, body: { metadata: { labels: { patched: 'yes' } } } });
    expect(host.getPod('default', 'web')).toEqual(before);
    const deleted = host.deleted.length;
    expect(await json('/api/v1/namespaces/default/pods/web?dryRun=All&gracePeriodSeconds=3', { method: 'DELETE' })).toMatchObject({
      status: 200,
      body: { metadata: { name: 'web', deletionTimestamp: expect.any(String), deletionGracePeriodSeconds: 3 } },
    });
    // kubectl delete --dry-run=server sends the dry run in the DeleteOptions body.
    expect(
      await json('/api/v1/namespaces/default/pods/web', {
        method: 'DELETE',
        body: '{"dryRun":["All"],"gracePeriodSeconds":5}',
        headers: { 'Content-Type': 'application/json' },
      }),
    ).toMatchObject({ status: 200, body: { metadata: { deletionGracePeriodSeconds: 5 } } });
    expect(
      await json('/api/v1/namespaces/default/pods/web', {
        method: 'DELETE',
        body: '{"dryRun":["Some"]}',
        headers: { 'Content-Type': 'application/json' },
      }),
    ).toMatchObject({ status: 400, body: { message: expect.stringContaining('dryRun') } });
    expect((await json('/api/v1/namespaces/default/pods/st-n1?dryRun=All', { method: 'DELETE' })).body).toMatchObject({
      code: 403,
      message: expect.stringContaining('cannot delete a mirror pod'),
    });
    expect(await json('/api/v1/namespaces/default/pods?dryRun=All&labelSelector=app', { method: 'DELETE' })).toMatchObject({
      status: 200,
      body: { kind: 'PodList', items: [{ metadata: { name: 'web' } }] },
    });
    expect(host.deleted.length).toBe(deleted);
    expect(await json('/api/v1/namespaces/default/pods/web?dryRun=Some', { method: 'DELETE' })).toMatchObject({
      status: 400,
      body: { reason: 'BadRequest', message: 'dryRun: Unsupported value: "Some": supported values: "All"' },
    });
    expect(host.getPod('default', 'web')).toEqual(before);
  });
  it("pods/eviction deletes with the Eviction's deleteOptions (201 Success), refuses a name mismatch and a static pod, and honours dryRun", async () => {
    const evict = (name: string, body: unknown, query = '') =>
      json(`/api/v1/namespaces/default/pods/${name}/eviction${query}`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json' },
      });
    const eviction = (name: string, deleteOptions: unknown = {}) => ({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace: 'default' },
      deleteOptions,
    });
    host.deleted.length = 0;
    expect(await evict('web', eviction('web', { dryRun: ['All'] }))).toMatchObject({
      status: 201,
      body: { kind: 'Status', status: 'Success', code: 201 },
    });
    expect(await evict('web', eviction('web'), '?dryRun=All')).toMatchObject({ status: 201 });
    expect(host.deleted).toEqual([]);
    expect(await evict('web', eviction('db'))).toMatchObject({
      status: 400,
      body: { message: 'name in URL does not match name in Eviction object' },
    });
    expect(await evict('web', { ...eviction('web'), kind: 'Pod' })).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('must be an Eviction') },
    });
    expect(await evict('web', eviction('web', { gracePeriodSeconds: 'soon' }))).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('gracePeriodSeconds') },
    });
    expect(await evict('st-n1', eviction('st-n1'))).toMatchObject({
      status: 403,
      body: { message: expect.stringContaining('cannot delete a mirror pod') },
    });
    expect(await evict('nope', eviction('nope'))).toMatchObject({ status: 404 });
    expect(await evict('web', eviction('web', { gracePeriodSeconds: 4 }))).toMatchObject({ status: 201, body: { status: 'Success' } });
    expect(host.deleted).toEqual([{ name: 'web', grace: 4 }]);
    const discovery = (await json('/api/v1')).body as { resources: { name: string; group?: string; version?: string }[] };
    expect(discovery.resources.find((r) => r.name === 'pods/eviction')).toMatchObject({ group: 'policy', version: 'v1' });
  });
  it('deletes with a grace period, checks preconditions, refuses a static pod, and deletes a collection', async () => {
    const pre = await json('/api/v1/namespaces/default/pods/web', {
      method: 'DELETE',
      body: '{"preconditions":{"uid":"other"}}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(pre).toMatchObject({
      status: 409,
      body: {
        reason: 'Conflict',
        message: expect.stringContaining('Precondition failed: UID in precondition: other, UID in object meta: u-web'),
      },
    });
    const del = await json('/api/v1/namespaces/default/pods/web?gracePeriodSeconds=2', { method: 'DELETE' });
    expect(del).toMatchObject({ status: 200, body: { kind: 'Pod', metadata: { deletionTimestamp: expect.any(String) } } });
    expect(host.deleted.at(-1)).toEqual({ name: 'web', grace: 2 });
    expect((await json('/api/v1/namespaces/default/pods/st-n1', { method: 'DELETE' })).body).toMatchObject({
      code: 403,
      message: expect.stringContaining('cannot delete a mirror pod'),
    });
    host.deleted.length = 0;
    const coll = await json('/api/v1/namespaces/default/pods?labelSelector=app', { method: 'DELETE' });
    expect(coll.body).toMatchObject({ kind: 'PodList' });
    expect(host.deleted.map((d) => d.name)).toEqual(['web']);
  });
  it('serves ?watch=true as a chunked stream of watch events, with selectors and 410 for an expired version', async () => {
    const res = await fetch(`${base}/api/v1/namespaces/default/pods?watch=true&labelSelector=app%3Dweb&allowWatchBookmarks=true`);
    expect(res.headers.get('content-type')).toBe('application/json');
    const reader = res.body!.getReader();
    let text = '';
    const lines = async (n: number) => {
      while (text.split('\n').filter((l) => l !== '').length < n) text += new TextDecoder().decode((await reader.read()).value);
      return text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { type: string; object: Pod });
    };
    expect((await lines(2)).map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
    const web = host.getPod('default', 'web')!;
    host.emit('MODIFIED', { ...web, metadata: { ...web.metadata, labels: { app: 'web', v: '2' } } });
    host.emit('MODIFIED', host.getPod('prod', 'db')!);
    host.emit('MODIFIED', { ...web, metadata: { ...web.metadata, labels: {} } });
    const events = await lines(4);
    expect(events.slice(2).map((e) => [e.type, e.object.metadata?.name])).toEqual([
      ['MODIFIED', 'web'],
      ['DELETED', 'web'],
    ]);
    await reader.cancel();
    const gone = await fetch(`${base}/api/v1/pods?watch=1&resourceVersion=1`);
    expect(gone.status).toBe(200);
    expect(JSON.parse((await gone.text()).trim())).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
  });
});

describe('the rest of the node, seams and identities', () => {
  it('serves namespaces, events by involvedObject, and secrets without their data', async () => {
    const ns = (await json('/api/v1/namespaces')).body.items.map((n: { metadata: { name: string } }) => n.metadata.name);
    expect(ns).toEqual(expect.arrayContaining(['default', 'kube-system', 'kube-public', 'prod']));
    expect((await json('/api/v1/namespaces/prod')).body).toMatchObject({ kind: 'Namespace', status: { phase: 'Active' } });
    expect((await json('/api/v1/namespaces/default/events?fieldSelector=involvedObject.uid%3Du-web')).body.items).toHaveLength(1);
    expect((await json('/api/v1/namespaces/default/events?fieldSelector=involvedObject.uid%3Dother')).body.items).toHaveLength(0);
    const secret = (await json('/api/v1/namespaces/default/secrets/s1')).body;
    expect(secret).toMatchObject({ kind: 'Secret', apiVersion: 'v1' });
    expect(secret).not.toHaveProperty('data');
    expect((await json('/api/v1/namespaces/default/secrets', { headers: { Accept: kTable } })).body.rows[0].cells.slice(0, 3)).toEqual([
      's1',
      'Opaque',
      1,
    ]);
  });
  it('creates an empty namespace and deletes it; refuses bad names, taken names, system and non-empty namespaces', async () => {
    const post = (body: unknown, q = '') =>
      json(`/api/v1/namespaces${q}`, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
    const del = (name: string, q = '') => json(`/api/v1/namespaces/${name}${q}`, { method: 'DELETE' });
    expect((await post({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dry' } }, '?dryRun=All')).status).toBe(201);
    expect(host.created).toHaveLength(0);
    const made = await post({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { team: 'a' } } });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      kind: 'Namespace',
      metadata: { name: 'team-a', uid: 'u-ns-team-a', labels: { team: 'a', 'kubernetes.io/metadata.name': 'team-a' } },
      status: { phase: 'Active' },
    });
    expect((await json('/api/v1/namespaces')).body.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toContain('team-a');
    expect((await json('/api/v1/namespaces/team-a', { headers: { Accept: kTable } })).body.rows[0].cells.slice(0, 2)).toEqual([
      'team-a',
      'Active',
    ]);
    expect(await post({ metadata: { name: 'team-a' } })).toMatchObject({
      status: 409,
      body: { reason: 'AlreadyExists', message: 'namespaces "team-a" already exists' },
    });
    expect(await post({ metadata: { name: 'prod' } })).toMatchObject({ status: 409 }); // in use by a pod
    expect(await post({ metadata: { name: 'Bad_Name' } })).toMatchObject({
      status: 422,
      body: { reason: 'Invalid', details: { causes: [{ field: 'metadata.name' }] } },
    });
    expect(await post({ metadata: { name: 'x', labels: { a: 1 } } })).toMatchObject({
      status: 422,
      body: { details: { causes: [{ field: 'metadata.labels' }] } },
    });
    expect(await post({ kind: 'Pod', metadata: { name: 'y' } })).toMatchObject({ status: 400 });
    expect((await post({ metadata: {} })).status).toBe(422);
    expect((await json('/api/v1/namespaces', { method: 'POST', body: '{not json' })).status).toBe(400);

    // Labels change by PATCH (kubectl label: a merge patch) and PUT; PodSecurity label values are checked (issue #38).
    const patch = (name: string, body: string, type = 'application/merge-patch+json', q = '') =>
      json(`/api/v1/namespaces/${name}${q}`, { method: 'PATCH', body, headers: { 'Content-Type': type } });
    const label = await patch('team-a', '{"metadata":{"labels":{"x":"y","pod-security.kubernetes.io/enforce":"restricted"}}}');
    expect(label).toMatchObject({
      status: 200,
      body: {
        kind: 'Namespace',
        metadata: {
          uid: 'u-ns-team-a',
          labels: { team: 'a', x: 'y', 'pod-security.kubernetes.io/enforce': 'restricted', 'kubernetes.io/metadata.name': 'team-a' },
        },
      },
    });
    expect(host.created.find((n) => n.name === 'team-a')?.labels).toEqual({
      team: 'a',
      x: 'y',
      'pod-security.kubernetes.io/enforce': 'restricted',
    });
    expect(
      (await patch('team-a', '{"metadata":{"labels":{"x":null}}}', 'application/strategic-merge-patch+json')).body.metadata.labels,
    ).not.toHaveProperty('x');
    expect(
      await patch(
        'team-a',
        '{"metadata":{"labels":{"pod-security.kubernetes.io/warn":"loud","pod-security.kubernetes.io/warn-version":"1.30"}}}',
      ),
    ).toMatchObject({
      status: 422,
      body: {
        reason: 'Invalid',
        message:
          'Namespace "team-a" is invalid: [metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "loud": must be one of privileged, baseline, restricted, ' +
          'metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.30": must be "latest" or "v1.x"]',
      },
    });
    expect(await patch('team-a', '{"metadata":{"labels":{"a":1}}}')).toMatchObject({
      status: 422,
      body: { details: { causes: [{ field: 'metadata.labels' }] } },
    });
    expect(await patch('team-a', '{"metadata":{"name":"other"}}')).toMatchObject({ status: 422 });
    expect(await patch('nowhere', '{}')).toMatchObject({ status: 404 });
    expect((await patch('team-a', '{"metadata":{"labels":{"dry":"run"}}}', undefined, '?dryRun=All')).body.metadata.labels).toHaveProperty(
      'dry',
    );
    expect(host.created.find((n) => n.name === 'team-a')?.labels).not.toHaveProperty('dry');
    const put = await json('/api/v1/namespaces/team-a', {
      method: 'PUT',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { team: 'a' } } }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(put).toMatchObject({ status: 200, body: { metadata: { labels: { team: 'a', 'kubernetes.io/metadata.name': 'team-a' } } } });
    expect(host.created.find((n) => n.name === 'team-a')?.labels).toEqual({ team: 'a' });
    expect(
      await json('/api/v1/namespaces/team-a', {
        method: 'PUT',
        body: JSON.stringify({ metadata: { name: 'team-b' } }),
        headers: { 'Content-Type': 'application/json' },
      }),
    ).toMatchObject({ status: 400 });
    // A stricter enforce level warns about the pods of the namespace it would refuse (they keep running).
    const strict = await fetch(`${base}/api/v1/namespaces/prod`, {
      method: 'PATCH',
      body: '{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(strict.status).toBe(200);
    expect(strict.headers.get('warning')).toMatch(
      /^299 - "existing pods in namespace \\"prod\\" violate the new PodSecurity enforce level \\"restricted:latest\\"", 299 - "[^"]+: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"/,
    );
    expect((await patch('prod', '{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":null}}}')).status).toBe(200);
    expect(host.created.map((n) => n.name)).toContain('prod'); // a namespace only in use is stored once labelled
    host.created = host.created.filter((n) => n.name !== 'prod');
    expect(await post({ metadata: { name: 'bad-psa', labels: { 'pod-security.kubernetes.io/enforce': 'strict' } } })).toMatchObject({
      status: 422,
      body: { details: { causes: [{ field: 'metadata.labels[pod-security.kubernetes.io/enforce]' }] } },
    });
    expect(await del('default')).toMatchObject({
      status: 403,
      body: { message: 'namespaces "default" is forbidden: this namespace may not be deleted' },
    });
    expect(await del('prod')).toMatchObject({ status: 409, body: { reason: 'Conflict' } });
    expect((await del('prod')).body.message).toContain('holds 1 pod(s)');
    expect(await del('nowhere')).toMatchObject({ status: 404, body: { message: 'namespaces "nowhere" not found' } });
    expect((await del('team-a', '?dryRun=All')).status).toBe(200);
    expect(host.created).toHaveLength(1);
    expect(await del('team-a')).toMatchObject({ status: 200, body: { kind: 'Namespace', metadata: { name: 'team-a' } } });
    expect(host.created).toHaveLength(0);
    expect((await json('/api/v1/namespaces/team-a')).status).toBe(404);
    // The protobuf body `kubectl create namespace team-a` sent (kubectl -v=8).
    const proto = Buffer.from(
      '6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d6112001a0022002a00320038004200120' + '01a020a001a002200',
      'hex',
    );
    const viaProto = await json('/api/v1/namespaces', {
      method: 'POST',
      body: proto,
      headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
    });
    expect(viaProto).toMatchObject({ status: 201, body: { metadata: { name: 'team-a' } } });
    expect(
      (
        await json('/api/v1/namespaces', {
          method: 'POST',
          body: Buffer.from('k8s\0garbage'),
          headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
        })
      ).status,
    ).toBe(400);
    expect((await del('team-a')).status).toBe(200);
  });
  it('cordons and uncordons the node by a patch of spec.unschedulable, and refuses any other change', async () => {
    const patch = (body: unknown, type = 'application/strategic-merge-patch+json', name = 'n1', q = '') =>
      json(`/api/v1/nodes/${name}${q}`, { method: 'PATCH', body: JSON.stringify(body), headers: { 'Content-Type': type } });
    expect((await patch({ spec: { unschedulable: true } }, undefined, 'n1', '?dryRun=All')).body.spec.unschedulable).toBe(true);
    expect(host.unschedulable).toBe(false);
    expect(await patch({ spec: { unschedulable: true } })).toMatchObject({ status: 200, body: { spec: { unschedulable: true } } });
    expect(host.unschedulable).toBe(true);
    expect((await json('/api/v1/nodes', { headers: { Accept: kTable } })).body.rows[0].cells[1]).toBe('Ready,SchedulingDisabled');
    expect(await patch({ spec: { unschedulable: null } })).toMatchObject({ status: 200, body: { spec: {} } });
    expect(host.unschedulable).toBe(false);
    expect(await patch([{ op: 'add', path: '/spec/unschedulable', value: true }], 'application/json-patch+json')).toMatchObject({
      status: 200,
    });
    expect(host.unschedulable).toBe(true);
    expect(await patch({ spec: { unschedulable: false } }, 'application/merge-patch+json')).toMatchObject({ status: 200 });
    expect(host.unschedulable).toBe(false);
    const labels = await patch({ metadata: { labels: { team: 'x' } } });
    expect(labels).toMatchObject({ status: 422, body: { reason: 'Invalid', details: { causes: [{ field: 'metadata.labels.team' }] } } });
    expect((await patch({ spec: { podCIDR: '10.0.0.0/24', unschedulable: true } })).status).toBe(422);
    expect(host.unschedulable).toBe(false);
    expect((await patch({ spec: { unschedulable: 'yes' } })).status).toBe(422);
    expect((await patch({ spec: { unschedulable: true } }, undefined, 'other')).status).toBe(404);
    expect((await patch({ spec: { unschedulable: true } }, 'text/plain')).status).toBe(415);
    expect(
      (await json('/api/v1/nodes/n1', { method: 'PATCH', body: '{oops', headers: { 'Content-Type': 'application/merge-patch+json' } }))
        .status,
    ).toBe(400);
  });
  it('serves the OpenAPI seam, 404 without a document', async () => {
    expect(await (await fetch(`${base}/openapi/v2`)).text()).toBe('{"swagger":"2.0"}');
    expect((await fetch(`${base}/openapi/v3`)).status).toBe(404);
  });
  it('lets anyone review themselves, but streams and writes need an identity that may write', async () => {
    const who = await fetch(`${authBase}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      method: 'POST',
      body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(who.status).toBe(201);
    expect(await who.json()).toMatchObject({ status: { userInfo: { username: 'system:anonymous' } } });
    const viewer = { Authorization: 'Bearer view-token-0123456789abcdef0123456789', 'Content-Type': 'application/json' };
    const can = await fetch(`${authBase}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
      method: 'POST',
      headers: viewer,
      body: '{"spec":{"resourceAttributes":{"verb":"delete","resource":"pods"}}}',
    });
    expect(await can.json()).toMatchObject({ status: { allowed: false, denied: true } });
    expect((await fetch(`${authBase}/api/v1/namespaces/default/pods/web`, { method: 'DELETE', headers: viewer })).status).toBe(403);
    expect((await fetch(`${authBase}/api/v1/namespaces/default/pods/web/exec?command=sh`)).status).toBe(401);
    expect((await fetch(`${authBase}/api/v1/namespaces/default/pods/web/exec?command=sh`, { headers: viewer })).status).toBe(403);
  });
});
