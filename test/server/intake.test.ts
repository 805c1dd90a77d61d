import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import type { AgentHost, ContainerLogsRequest, HealthReport, LogStream } from '../../src/server/host/agent-host.js';
import { parseTokenFile } from '../../src/server/auth/auth.js';
import { createServer, type AgentServer } from '../../src/server/server.js';
import type { Event, Node, Pod } from '../../src/shared/api.js';
import { AgentError, ForbiddenError, InvalidManifestError } from '../../src/shared/errors.js';
import { newLogger } from '../../src/shared/logging.js';

/** A host that keeps pods in a map and records what the server asked of it. */
class FakeIntakeHost implements AgentHost {
  pods = new Map<string, Pod>();
  static = new Set<string>(['default/static-node1']);
  deleted: { namespace: string; name: string; grace?: number }[] = [];
  logRequests: ContainerLogsRequest[] = [];
  logChunks: string[] = [];
  /** Times the server paused a log reader (its client's socket was full). */
  logPauses = 0;
  cancelled = 0;
  listPods(): Pod[] {
    return [...this.pods.values()];
  }
  getPod(namespace: string, name: string): Pod | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }
  healthz(): HealthReport {
    return { ok: true, checks: [] };
  }
  async submitPods(pods: Pod[]): Promise<Pod[]> {
    for (const p of pods) {
      const key = `${p.metadata?.namespace ?? 'default'}/${p.metadata?.name}`;
      if (this.pods.has(key) || this.static.has(key))
        throw new AgentError('ERR_ALREADY_EXISTS', `pods "${p.metadata?.name}" already exists`);
      if (p.metadata?.uid === 'bad/uid')
        throw new InvalidManifestError('request body', [{ field: 'metadata.uid', type: 'Invalid value', value: 'bad/uid' }]);
    }
    return pods.map((p) => {
      const stored = { ...p, metadata: { ...p.metadata, uid: `uid-${p.metadata?.name}` } };
      this.pods.set(`${p.metadata?.namespace ?? 'default'}/${p.metadata?.name}`, stored);
      return stored;
    });
  }
  async replacePod(namespace: string, name: string, pod: Pod): Promise<Pod> {
    const key = `${namespace}/${name}`;
    if (this.static.has(key)) throw new ForbiddenError(`pods "${name}" is forbidden`);
    const old = this.pods.get(key);
    if (!old) throw new AgentError('ERR_NOT_FOUND', `pods "${name}" not found`);
    const stored = { ...pod, metadata: { ...pod.metadata, uid: old.metadata?.uid } };
    this.pods.set(key, stored);
    return stored;
  }
  async deletePod(namespace: string, name: string, grace?: number): Promise<Pod> {
    const key = `${namespace}/${name}`;
    const old = this.pods.get(key);
    if (!old) throw new AgentError('ERR_NOT_FOUND', `pods "${name}" not found`);
    this.deleted.push({ namespace, name, grace });
    this.pods.delete(key);
    return { ...old, metadata: { ...old.metadata, deletionTimestamp: '2026-11-30T00:00:00Z' } };
  }
  listEvents(): Event[] {
    return [
      {
        metadata: { name: 'a.1', namespace: 'default' },
        involvedObject: { kind: 'Pod', name: 'a', namespace: 'default' },
        reason: 'Started',
        message: 'Started container main',
        type: 'Normal',
      },
      {
        metadata: { name: 'b.1', namespace: 'other' },
        involvedObject: { kind: 'Pod', name: 'b', namespace: 'other' },
        reason: 'BackOff',
        message: 'Back-off',
        type: 'Warning',
      },
    ];
  }
  async getNode(): Promise<Node> {
    return { metadata: { name: 'node1' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
  }
  async containerLogs(req: ContainerLogsRequest): Promise<LogStream> {
    this.logRequests.push(req);
    if (req.container === 'missing') throw new AgentError('ERR_NOT_FOUND', `container missing is not valid for pod ${req.pod}`);
    if (req.previous)
      throw new AgentError('ERR_INVALID_ARGUMENT', `previous terminated container "${req.container}" in pod "${req.pod}" not found`);
    const chunks = [...this.logChunks];
    let onData: (c: Uint8Array) => void = () => {};
    let paused = false;
    let cancelled = false;
    let end: () => void = () => {};
    const pump = () => {
      while (!paused && !cancelled && chunks.length > 0) onData(Buffer.from(chunks.shift()!));
      if (!cancelled && chunks.length === 0 && !req.follow) end();
    };
    return {
      onData: (fn) => {
        onData = fn;
      },
      onEnd: (fn) => {
        end = () => fn();
        setImmediate(pump);
      },
      pause: () => {
        paused = true;
        this.logPauses++;
      },
      resume: () => {
        paused = false;
        setImmediate(pump);
      },
      cancel: () => {
        cancelled = true;
        this.cancelled++;
      },
    };
  }
}

const podJson = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: name } },
  spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
  ...extra,
});

const host = new FakeIntakeHost();
const tokens = parseTokenFile('admin-token,admin,1,system:masters\nviewer-token,viewer,2,"kubelet-ts:read-only,other"\n', 'tokens.csv');
let server: AgentServer;
let authServer: AgentServer;
let base: string;
let authBase: string;

beforeAll(async () => {
  server = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent'), limits: { maxRequestBodyBytes: 4096 } });
  authServer = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent'), auth: { tokens, anonymous: false } });
  base = `http://127.0.0.1:${server.port}`;
  authBase = `http://127.0.0.1:${authServer.port}`;
});
afterAll(() => {
  server?.close();
  authServer?.close();
});

async function call(
  method: string,
  path: string,
  body?: string,
  contentType = 'application/json',
  headers: Record<string, string> = {},
  at = base,
) {
  const res = await fetch(`${at}${path}`, {
    method,
    body,
    headers: { ...(body !== undefined ? { 'Content-Type': contentType } : {}), ...headers },
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text, headers: res.headers };
}

describe("dryRun on the kubelet's own write paths (issue #38, a break test's F9)", () => {
  it.each([
    ['POST', '/pods?dryRun=All'],
    ['POST', '/pods?dryRun=bogus'],
    ['PUT', '/pods/default/dr?dryRun=All'],
    ['DELETE', '/pods/default/dr?dryRun=All'],
    ['PUT', '/configmaps/default/cm?dryRun=All'],
    ['DELETE', '/secrets/default/s?dryRun=All'],
  ])('%s %s is refused with 400 naming where a dry run is served, and changes nothing', async (method, path) => {
    host.pods.set('default/dr', { ...podJson('dr'), metadata: { name: 'dr', namespace: 'default', uid: 'uid-dr' } } as Pod);
    const before = [...host.pods.keys()];
    const deleted = host.deleted.length;
    const body = method === 'DELETE' ? undefined : JSON.stringify(podJson('dr'));
    const { status, body: st } = await call(method, path, body);
    expect(status).toBe(400);
    expect(st).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect(st.message).toContain('dryRun is not served on');
    expect(st.message).toContain('/api/v1/namespaces/');
    expect([...host.pods.keys()]).toEqual(before);
    expect(host.deleted.length).toBe(deleted);
  });
});

describe('POST /pods', () => {
  it('creates one pod from JSON and answers 201 with the Pod', async () => {
    const { status, body } = await call('POST', '/pods', JSON.stringify(podJson('one')));
    expect(status).toBe(201);
    expect(body).toMatchObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'one', uid: 'uid-one', namespace: 'default' } });
    // defaulted before it reaches the host
    expect(body.spec.restartPolicy).toBe('Always');
  });

  it.each(['application/yaml', 'text/yaml', 'application/x-yaml', 'application/yaml; charset=utf-8'])(
    'reads YAML sent as %s',
    async (ct) => {
      const name = `y-${ct.replace(/[^a-z]/g, '').slice(0, 20)}`;
      const yaml = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: main\n    image: kubelet-ts/busybox:1.35\n`;
      const { status, body } = await call('POST', '/pods', yaml, ct);
      expect(status).toBe(201);
      expect(body.metadata.name).toBe(name);
    },
  );

  it('creates a batch from multi-document YAML and answers a PodList', async () => {
    const yaml = ['b1', 'b2']
      .map(
        (n) => `apiVersion: v1\nkind: Pod\nmetadata: {name: ${n}}\nspec:\n  containers: [{name: main, image: kubelet-ts/busybox:1.35}]\n`,
      )
      .join('---\n');
    const { status, body } = await call('POST', '/pods', yaml, 'application/yaml');
    expect(status).toBe(201);
    expect(body.kind).toBe('PodList');
    expect(body.items.map((p: Pod) => p.metadata?.name)).toEqual(['b1', 'b2']);
  });

  it('creates a batch from a List', async () => {
    const { status, body } = await call(
      'POST',
      '/pods',
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [podJson('l1'), podJson('l2')] }),
    );
    expect(status).toBe(201);
    expect(body.items).toHaveLength(2);
  });

  it('refuses a whole batch with 422 when one pod is invalid, with one cause per invalid field', async () => {
    const bad = podJson('Bad_Name', { spec: { containers: [{ name: 'a' }, { name: 'a', image: 'x' }] } });
    const { status, body } = await call(
      'POST',
      '/pods',
      JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [podJson('fine'), bad] }),
    );
    expect(status).toBe(422);
    expect(body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
    expect(body.details.causes).toEqual([
      expect.objectContaining({ field: 'items[1].metadata.name', reason: 'FieldValueInvalid' }),
      expect.objectContaining({
        field: 'items[1].spec.containers[0].image',
        reason: 'FieldValueRequired',
        message: 'items[1].spec.containers[0].image: Required value',
      }),
      expect.objectContaining({ field: 'items[1].spec.containers[1].name', reason: 'FieldValueDuplicate' }),
    ]);
    expect(host.getPod('default', 'fine')).toBeUndefined();
  });

  it('maps unsupported values to FieldValueNotSupported', async () => {
    const { status, body } = await call(
      'POST',
      '/pods',
      JSON.stringify(podJson('ns1', { spec: { restartPolicy: 'Sometimes', containers: [{ name: 'main', image: 'x' }] } })),
    );
    expect(status).toBe(422);
    expect(body.details.causes).toContainEqual(expect.objectContaining({ field: 'spec.restartPolicy', reason: 'FieldValueNotSupported' }));
  });

  it('refuses two pods with one name in a batch (422 FieldValueDuplicate)', async () => {
    const { status, body } = await call(
      'POST',
      '/pods',
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [podJson('twin'), podJson('twin')] }),
    );
    expect(status).toBe(422);
    expect(body.details.causes).toContainEqual(expect.objectContaining({ field: 'items[1].metadata.name', reason: 'FieldValueDuplicate' }));
  });

  it('answers 409 AlreadyExists for a taken name (also one held by a static pod)', async () => {
    for (const name of ['one', 'static-node1']) {
      const { status, body } = await call('POST', '/pods', JSON.stringify(podJson(name)));
      expect(status).toBe(409);
      expect(body).toMatchObject({ kind: 'Status', reason: 'AlreadyExists', code: 409, details: { name } });
    }
  });

  it('answers 422 when the host refuses a field (a bad uid)', async () => {
    const { status, body } = await call(
      'POST',
      '/pods',
      JSON.stringify({ ...podJson('baduid'), metadata: { name: 'baduid', uid: 'bad/uid' } }),
    );
    expect(status).toBe(422);
    expect(body.details.causes).toEqual([expect.objectContaining({ field: 'metadata.uid', reason: 'FieldValueInvalid' })]);
  });

  it.each([
    ['a JSON syntax error', '{"apiVersion": "v1",', 'application/json'],
    ['a YAML syntax error', 'apiVersion: v1\nkind: Pod\nmetadata: {name: x\n', 'application/yaml'],
    ['a document that is not an object', '"just a string"', 'application/json'],
    ['an empty body', '', 'application/json'],
  ])('answers 400 BadRequest for %s', async (_what, body, ct) => {
    const res = await call('POST', '/pods', body, ct);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
  });

  it('answers 422 for a wrong kind', async () => {
    const { status, body } = await call(
      'POST',
      '/pods',
      JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }),
    );
    expect(status).toBe(422);
    expect(body.details.causes.map((c: { field: string }) => c.field)).toEqual(['apiVersion', 'kind']);
  });

  it.each(['text/plain', 'application/xml'])('answers 415 UnsupportedMediaType for %s', async (ct) => {
    const { status, body } = await call('POST', '/pods', JSON.stringify(podJson('x415')), ct);
    expect(status).toBe(415);
    expect(body).toMatchObject({ reason: 'UnsupportedMediaType', code: 415 });
    expect(body.message).toContain('application/yaml');
  });

  it('answers 413 RequestEntityTooLarge over the body limit (by Content-Length)', async () => {
    const big = JSON.stringify({ ...podJson('big'), metadata: { name: 'big', annotations: { x: 'y'.repeat(5000) } } });
    const { status, body } = await call('POST', '/pods', big);
    expect(status).toBe(413);
    expect(body).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
  });

  it('answers 413 for a chunked body that passes the limit while it is read', async () => {
    const chunks = [JSON.stringify(podJson('chunky')).slice(0, 10), 'x'.repeat(3000), 'y'.repeat(3000)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
        controller.close();
      },
    });
    const res = await fetch(`${base}/pods`, {
      method: 'POST',
      body: stream,
      headers: { 'Content-Type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await res.json()).reason).toBe('RequestEntityTooLarge');
  });
});

describe('PUT /pods/{namespace}/{name}', () => {
  it('replaces the pod and keeps its UID', async () => {
    const { status, body } = await call(
      'PUT',
      '/pods/default/one',
      JSON.stringify({ ...podJson('one'), spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.36' }] } }),
    );
    expect(status).toBe(200);
    expect(body.metadata.uid).toBe('uid-one');
    expect(body.spec.containers[0].image).toBe('kubelet-ts/busybox:1.36');
  });

  it('fills a missing name and namespace from the URL', async () => {
    const { metadata: _m, ...noMeta } = podJson('one');
    const { status, body } = await call('PUT', '/pods/default/one', JSON.stringify(noMeta));
    expect(status).toBe(200);
    expect(body.metadata).toMatchObject({ name: 'one', namespace: 'default' });
  });

  it('answers 400 when the body names another pod', async () => {
    const { status, body } = await call('PUT', '/pods/default/one', JSON.stringify(podJson('two')));
    expect(status).toBe(400);
    expect(body.message).toBe('the name of the object (two) does not match the name on the URL (one)');
  });

  it('answers 404 for an unknown pod, 403 for a static pod, 422 for an invalid spec', async () => {
    expect((await call('PUT', '/pods/default/nope', JSON.stringify(podJson('nope')))).status).toBe(404);
    const forbidden = await call('PUT', '/pods/default/static-node1', JSON.stringify(podJson('static-node1')));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.reason).toBe('Forbidden');
    const invalid = await call('PUT', '/pods/default/one', JSON.stringify({ ...podJson('one'), spec: { containers: [] } }));
    expect(invalid.status).toBe(422);
  });

  it('answers 415 for an unknown Content-Type', async () => {
    expect((await call('PUT', '/pods/default/one', JSON.stringify(podJson('one')), 'text/plain')).status).toBe(415);
  });

  describe('a YAML body is completed from the URL and checked against it exactly as a JSON one', () => {
    const spec = { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.37' }] };
    beforeAll(async () => {
      expect(
        (await call('POST', '/pods', JSON.stringify({ ...podJson('yput'), metadata: { name: 'yput', namespace: 'other' } }))).status,
      ).toBe(201);
    });
    it.each([
      ['without metadata', '/pods/default/one', { apiVersion: 'v1', kind: 'Pod', spec }, 200],
      [
        'with metadata but no name',
        '/pods/default/one',
        { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { app: 'one' } }, spec },
        200,
      ],
      [
        'with a null name and namespace',
        '/pods/default/one',
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: null, namespace: null }, spec },
        200,
      ],
      [
        'without a namespace, in another namespace',
        '/pods/other/yput',
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'yput' }, spec },
        200,
      ],
      ['without name and namespace, in another namespace', '/pods/other/yput', { apiVersion: 'v1', kind: 'Pod', spec }, 200],
      ['naming another pod', '/pods/default/one', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'two' }, spec }, 400],
      ['naming another namespace', '/pods/other/yput', { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default' }, spec }, 400],
      ['with an invalid spec and no name', '/pods/default/one', { apiVersion: 'v1', kind: 'Pod', spec: { containers: [] } }, 422],
      ['of another kind and no name', '/pods/default/one', { apiVersion: 'v1', kind: 'Deployment', spec }, 422],
    ])('PUT %s', async (_what, path, object, code) => {
      const asJson = await call('PUT', path, JSON.stringify(object), 'application/json');
      const asYaml = await call('PUT', path, stringifyYaml(object), 'application/yaml');
      expect(asJson.status).toBe(code);
      expect(asYaml.status).toBe(code);
      expect(asYaml.body).toEqual(asJson.body);
      if (code === 200) {
        const [, , namespace, name] = path.split('/');
        expect(asYaml.body.metadata).toMatchObject({ name, namespace });
        expect(asYaml.body.spec.containers[0].image).toBe('kubelet-ts/busybox:1.37');
      } else {
        expect(asYaml.body).toMatchObject({ kind: 'Status', code });
      }
    });

    it("names the URL's pod in the 422 of a YAML body without a name", async () => {
      const { body } = await call('PUT', '/pods/default/one', 'apiVersion: v1\nkind: Pod\nspec:\n  containers: []\n', 'application/yaml');
      expect(body).toMatchObject({ code: 422, reason: 'Invalid', details: { name: 'one' } });
      expect(body.message).toMatch(/^Pod "one" is invalid: /);
    });

    it('keeps the 400 of a YAML body naming another pod', async () => {
      const { status, body } = await call(
        'PUT',
        '/pods/default/one',
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: two\nspec:\n  containers: [{name: main, image: kubelet-ts/busybox:1.35}]\n',
        'application/yaml',
      );
      expect(status).toBe(400);
      expect(body.message).toBe('the name of the object (two) does not match the name on the URL (one)');
    });
  });
});

describe('DELETE /pods/{namespace}/{name}', () => {
  it('deletes gracefully with the grace period of the query and answers 200 with the pod', async () => {
    await call('POST', '/pods', JSON.stringify(podJson('gone')));
    const { status, body } = await call('DELETE', '/pods/default/gone?gracePeriodSeconds=3');
    expect(status).toBe(200);
    expect(body).toMatchObject({ kind: 'Pod', metadata: { name: 'gone', deletionTimestamp: '2026-11-30T00:00:00Z' } });
    expect(host.deleted.at(-1)).toEqual({ namespace: 'default', name: 'gone', grace: 3 });
  });

  it('reads gracePeriodSeconds from a DeleteOptions body', async () => {
    await call('POST', '/pods', JSON.stringify(podJson('gone2')));
    const { status } = await call('DELETE', '/pods/default/gone2', JSON.stringify({ kind: 'DeleteOptions', gracePeriodSeconds: 0 }));
    expect(status).toBe(200);
    expect(host.deleted.at(-1)?.grace).toBe(0);
  });

  it('keeps the pod grace period without the parameter', async () => {
    await call('POST', '/pods', JSON.stringify(podJson('gone3')));
    expect((await call('DELETE', '/pods/default/gone3')).status).toBe(200);
    expect(host.deleted.at(-1)?.grace).toBeUndefined();
  });

  it.each(['-1', 'abc', '1.5'])('answers 400 for gracePeriodSeconds=%s', async (v) => {
    const { status, body } = await call('DELETE', `/pods/default/one?gracePeriodSeconds=${v}`);
    expect(status).toBe(400);
    expect(body.message).toContain('gracePeriodSeconds');
  });

  it('answers 404 NotFound for an unknown pod', async () => {
    const { status, body } = await call('DELETE', '/pods/default/nope');
    expect(status).toBe(404);
    expect(body).toMatchObject({ reason: 'NotFound', message: 'pods "nope" not found' });
  });
});

describe('path parameters', () => {
  it.each([
    ['/pods/Default/web', 'namespace'],
    ['/pods/default/web_1', 'name'],
    ['/pods/default/a..b', 'name'],
    ['/containerLogs/default/web/Main', 'container'],
    ['/containerLogs/default/web%2F..%2F..%2Fetc/main', 'pod'],
  ])('%s answers 400 naming the %s parameter', async (path, param) => {
    const { status, body } = await call('GET', path);
    expect(status).toBe(400);
    expect(body.reason).toBe('BadRequest');
    expect(body.message).toMatch(new RegExp(`^invalid path parameter ${param} `));
  });
});

describe('GET /events and GET /node', () => {
  it('answers an EventList, filterable by namespace', async () => {
    const all = await call('GET', '/events');
    expect(all.body).toMatchObject({ apiVersion: 'v1', kind: 'EventList' });
    expect(all.body.items).toHaveLength(2);
    const other = await call('GET', '/events?namespace=other');
    expect(other.body.items.map((e: Event) => e.reason)).toEqual(['BackOff']);
  });

  it('answers the Node', async () => {
    const { status, body } = await call('GET', '/node');
    expect(status).toBe(200);
    expect(body).toMatchObject({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node1' } });
  });
});

describe('GET /containerLogs', () => {
  it('streams the log as text/plain and passes the options', async () => {
    host.logChunks = ['line 1\n', 'line 2\n'];
    const res = await fetch(`${base}/containerLogs/default/one/main?tailLines=5&timestamps=true&sinceSeconds=10&limitBytes=100`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toBe('line 1\nline 2\n');
    expect(host.logRequests.at(-1)).toEqual({
      namespace: 'default',
      pod: 'one',
      container: 'main',
      follow: false,
      previous: false,
      timestamps: true,
      tailLines: 5,
      sinceSeconds: 10,
      limitBytes: 100,
    });
  });

  it('a follow ends its header block at once and sends each chunk whole, CRLF included (issue 39 items 1, 2)', async () => {
    const raw = async (chunks: string[]) => {
      host.logChunks = chunks;
      const socket = net.connect(server.port, '127.0.0.1');
      let got = '';
      socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
      socket.write('GET /containerLogs/default/one/main?follow=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      try {
        // Nothing else will be written: what is needed must be in already.
        await expect
          .poll(() => got.includes('\r\n\r\n') && (chunks.length === 0 || got.endsWith(`${chunks.at(-1)}\r\n`)), { timeout: 5_000 })
          .toBe(true);
        return got;
      } finally {
        socket.destroy();
      }
    };
    const silent = await raw([]);
    expect(silent).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*transfer-encoding: chunked\r\n\r\n$/i);
    const two = await raw(['first\n', 'second\n']);
    expect(two.slice(two.indexOf('\r\n\r\n') + 4).replace(/;[^\r]*/g, '')).toBe('6\r\nfirst\n\r\n7\r\nsecond\n\r\n');
  });

  it('a client that reads nothing for a while still gets all of a large log, the last chunk and the end of the trailers', async () => {
    const chunk = 'y'.repeat(64 * 1024 - 1) + '\n';
    // 4 MiB: past the kernel's buffers, so uWS holds the rest until the client reads again.
    host.logChunks = Array.from({ length: 64 }, () => chunk);
    const socket = net.connect(server.port, '127.0.0.1');
    const parts: Buffer[] = [];
    try {
      socket.write('GET /containerLogs/default/one/main HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const pauses = host.logPauses;
      socket.pause();
      // The kernel's buffers fill, then uWS holds the rest: the server pauses the log reader.
      await expect.poll(() => host.logPauses, { timeout: 30_000 }).toBeGreaterThan(pauses);
      socket.on('data', (c: Buffer) => parts.push(c));
      socket.resume();
      await expect
        .poll(
          () =>
            Buffer.concat(parts).subarray(-4).toString() === '\r\n\r\n' &&
            /\r\n0(;[^\r]*)?\r\n/.test(Buffer.concat(parts).subarray(-400).toString('latin1')),
          { timeout: 30_000 },
        )
        .toBe(true)
        .catch((e) => {
          throw new Error(
            `got ${Buffer.concat(parts).length} bytes, ending ${JSON.stringify(Buffer.concat(parts).subarray(-80).toString())}`,
            { cause: e },
          );
        });
      const all = Buffer.concat(parts).toString('latin1');
      expect(all.split('y'.repeat(64 * 1024 - 1)).length - 1).toBe(64);
    } finally {
      socket.destroy();
    }
  }, 40_000);

  it('delivers a large log to a client that reads slowly (backpressure), byte for byte', async () => {
    const chunk = 'x'.repeat(64 * 1024 - 1) + '\n';
    host.logChunks = Array.from({ length: 64 }, () => chunk);
    const res = await fetch(`${base}/containerLogs/default/one/main`);
    const reader = res.body!.getReader();
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total < 1024 * 1024) await new Promise((r) => setTimeout(r, 1));
    }
    expect(total).toBe(64 * 64 * 1024);
  });

  it('cancels a follow stream when the client goes away', async () => {
    host.logChunks = ['first\n'];
    const before = host.cancelled;
    const ac = new AbortController();
    const res = await fetch(`${base}/containerLogs/default/one/main?follow=true`, { signal: ac.signal });
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    expect(Buffer.from(value!).toString()).toBe('first\n');
    ac.abort();
    await expect.poll(() => host.cancelled, { timeout: 10_000 }).toBe(before + 1);
  });

  it.each([
    ['tailLines=-1', 'tailLines must be greater than or equal to 0'],
    ['tailLines=x', 'tailLines must be an integer'],
    ['sinceSeconds=0', 'sinceSeconds must be greater than or equal to 1'],
    ['limitBytes=0', 'limitBytes must be greater than or equal to 1'],
  ])('answers 400 for %s', async (q, message) => {
    const { status, body } = await call('GET', `/containerLogs/default/one/main?${q}`);
    expect(status).toBe(400);
    expect(body.message).toContain(message);
  });

  it('answers 404 for an unknown container and 400 without a previous attempt', async () => {
    expect((await call('GET', '/containerLogs/default/one/missing')).status).toBe(404);
    const prev = await call('GET', '/containerLogs/default/one/main?previous=true');
    expect(prev.status).toBe(400);
    expect(prev.body.message).toContain('previous terminated container');
  });
});

describe('limits', () => {
  it('answers 431 when the headers are too large', async () => {
    const { status, body } = await call('GET', '/pods', undefined, '', {
      'X-Big': 'z'.repeat(3000),
      'X-Big2': 'z'.repeat(3000),
      'X-Big3': 'z'.repeat(3000),
      'X-Big4': 'z'.repeat(3000),
      'X-Big5': 'z'.repeat(3000),
      'X-Big6': 'z'.repeat(3000),
    });
    // uWS itself may refuse very large header blocks before we see them (then the status is 431 too, without a Status body).
    expect(status).toBe(431);
    if (body) expect(body.kind).toBe('Status');
  });

  it('answers 405 for intake methods on a host that does not implement them', async () => {
    const readOnly: AgentHost = { listPods: () => [], getPod: () => undefined, healthz: () => ({ ok: true, checks: [] }) };
    const s = await createServer(readOnly, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
    try {
      const res = await call('POST', '/pods', JSON.stringify(podJson('x')), 'application/json', {}, `http://127.0.0.1:${s.port}`);
      expect(res.status).toBe(405);
      expect((await call('GET', '/events', undefined, '', {}, `http://127.0.0.1:${s.port}`)).status).toBe(405);
    } finally {
      s.close();
    }
  });
});

describe('timeouts', () => {
  it('answers 408 when the body does not arrive in time, and 504 when the handler is too slow', async () => {
    const slowHost: AgentHost = {
      listPods: () => [],
      getPod: () => undefined,
      healthz: () => ({ ok: true, checks: [] }),
      getNode: () => new Promise<Node>(() => {}),
      submitPods: async (p) => p,
    };
    const s = await createServer(slowHost, {
      address: '127.0.0.1',
      port: 0,
      logger: newLogger('silent'),
      limits: { bodyTimeoutMs: 300, handlerTimeoutMs: 300 },
    });
    try {
      const { createConnection } = await import('node:net');
      const answer = await new Promise<string>((resolve, reject) => {
        const sock = createConnection(s.port, '127.0.0.1', () => {
          // Headers promise 100 bytes; only 10 come.
          sock.write('POST /pods HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"apiVersi');
        });
        let data = '';
        sock.on('data', (d) => {
          data += d;
          if (data.includes('\r\n\r\n') && data.includes('}')) {
            sock.destroy();
            resolve(data);
          }
        });
        sock.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
      expect(answer).toContain('"reason":"Timeout"');
      const slow = await fetch(`http://127.0.0.1:${s.port}/node`);
      expect(slow.status).toBe(504);
      expect((await slow.json()).reason).toBe('Timeout');
    } finally {
      s.close();
    }
  });
});

describe('access control (--token-auth-file)', () => {
  it('serves /healthz without a token', async () => {
    const res = await fetch(`${authBase}/healthz`);
    expect(res.status).toBe(200);
  });

  it("serves the dashboard's static files without a token, but not its data", async () => {
    for (const [path, type] of [
      ['/', 'text/html'],
      ['/dashboard/app.js', 'text/javascript'],
      ['/dashboard/style.css', 'text/css'],
    ]) {
      const res = await fetch(`${authBase}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain(type);
    }
    expect((await fetch(`${authBase}/dashboard/nope.js`)).status).toBe(401);
    expect((await fetch(`${authBase}/events`)).status).toBe(401);
    expect((await fetch(`${authBase}/`, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } })).status).toBe(401);
  });

  it.each([
    ['no Authorization header', {}],
    ['an unknown token', { Authorization: 'Bearer nope' }],
    ['a Basic header', { Authorization: 'Basic YTpi' }],
  ])('answers 401 Unauthorized for %s', async (_what, headers) => {
    const { status, body, headers: h } = await call('GET', '/pods', undefined, '', headers, authBase);
    expect(status).toBe(401);
    expect(body).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect(h.get('www-authenticate')).toContain('Bearer');
  });

  it('lets a valid token read and write', async () => {
    const auth = { Authorization: 'Bearer admin-token' };
    expect((await call('GET', '/pods', undefined, '', auth, authBase)).status).toBe(200);
    expect((await call('POST', '/pods', JSON.stringify(podJson('authed')), 'application/json', auth, authBase)).status).toBe(201);
  });

  it('lets the read-only group GET but answers 403 Forbidden to POST, PUT and DELETE', async () => {
    const auth = { Authorization: 'Bearer viewer-token' };
    expect((await call('GET', '/pods/default/authed', undefined, '', auth, authBase)).status).toBe(200);
    for (const [method, path] of [
      ['POST', '/pods'],
      ['PUT', '/pods/default/authed'],
      ['DELETE', '/pods/default/authed'],
    ]) {
      const { status, body } = await call(method, path, JSON.stringify(podJson('authed')), 'application/json', auth, authBase);
      expect(status).toBe(403);
      expect(body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
      expect(body.message).toContain(
        `User "viewer" cannot ${method === 'POST' ? 'create' : method === 'PUT' ? 'update' : 'delete'} resource "nodes/proxy"`,
      );
    }
    expect(host.getPod('default', 'authed')).toBeDefined();
  });
});
