// Tests of the manifest-URL source (src/main/config/source-http.ts) against a real HTTP server on 127.0.0.1.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newHttpSource, type HttpSource } from '../../../src/main/config/source-http.js';
import type { Pod } from '../../../src/shared/api.js';
import { newLogger } from '../../../src/shared/logging.js';
import type { PodUpdate, SourceError } from '../../../src/shared/pod-update.js';

interface Reply {
  status: number;
  body?: string;
  contentType?: string;
  etag?: string;
}

let server: Server;
let url: string;
let reply: Reply;
let requests: IncomingHttpHeaders[];
/** When set, answers 304 to a request whose If-None-Match equals it. */
let honourEtag = true;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.headers);
    if (honourEtag && reply.etag && req.headers['if-none-match'] === reply.etag) {
      res.writeHead(304).end();
      return;
    }
    const headers: Record<string, string> = { 'Content-Type': reply.contentType ?? 'application/yaml' };
    if (reply.etag) headers.ETag = reply.etag;
    res.writeHead(reply.status, headers).end(reply.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/manifests`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  requests = [];
  honourEtag = true;
});

const podYaml = (name: string, image = 'kubelet-ts/busybox:1.35') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
    - name: main
      image: ${image}
`;

function start(extra: { headers?: Record<string, string[]> } = {}): { source: HttpSource; updates: PodUpdate[]; errors: SourceError[] } {
  const updates: PodUpdate[] = [];
  const errors: SourceError[] = [];
  const source = newHttpSource(
    { url, nodeName: 'Node-1', checkFrequencyMs: 3_600_000, ...extra },
    { logger: newLogger('silent'), onUpdate: (u) => updates.push(u), onError: (e) => errors.push(e) },
  );
  return { source, updates, errors };
}

const names = (pods: Pod[]) => pods.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`);

describe('newHttpSource', () => {
  it('reads one Pod as a static pod of source http, named <name>-<node>, with a UID stable across polls and sources', async () => {
    reply = { status: 200, body: podYaml('web') };
    const a = start();
    await a.source.start();
    expect(a.updates).toHaveLength(1);
    expect(a.updates[0]).toMatchObject({ op: 'SET', source: 'http' });
    const [pod] = a.updates[0].pods;
    expect(names([pod])).toEqual(['default/web-node-1']);
    expect(pod.spec?.nodeName).toBe('node-1');
    expect(pod.metadata?.annotations?.['kubernetes.io/config.source']).toBe('http');
    expect(pod.metadata?.uid).toMatch(/^[0-9a-f]{32}$/);
    const b = start();
    await b.source.start();
    expect(b.updates[0].pods[0].metadata?.uid).toBe(pod.metadata?.uid);
    await Promise.all([a.source.stop(), b.source.stop()]);
  });

  it('reads a JSON List and multi-document YAML', async () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [podYaml('a'), podYaml('b')].map((y) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: y.match(/name: (\w+)/)![1] },
        spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
      })),
    };
    reply = { status: 200, body: JSON.stringify(list), contentType: 'application/json' };
    const s = start();
    await s.source.start();
    expect(names(s.updates[0].pods)).toEqual(['default/a-node-1', 'default/b-node-1']);
    reply = { status: 200, body: `${podYaml('c')}---\n${podYaml('d')}` };
    await s.source.poll();
    expect(names(s.updates[1].pods)).toEqual(['default/c-node-1', 'default/d-node-1']);
    await s.source.stop();
  });

  it('sends the configured headers and If-None-Match with the last ETag; 304 changes nothing', async () => {
    reply = { status: 200, body: podYaml('web'), etag: '"v1"' };
    const s = start({ headers: { 'X-Token': ['abc'], 'X-Multi': ['1', '2'] } });
    await s.source.start();
    expect(requests[0]['x-token']).toBe('abc');
    expect(requests[0]['x-multi']).toBe('1, 2');
    expect(requests[0]['if-none-match']).toBeUndefined();
    await s.source.poll();
    expect(requests[1]['if-none-match']).toBe('"v1"');
    expect(s.updates).toHaveLength(1);
    // A new version with a new ETag is read and sent.
    reply = { status: 200, body: podYaml('web2'), etag: '"v2"' };
    await s.source.poll();
    expect(s.updates).toHaveLength(2);
    expect(names(s.updates[1].pods)).toEqual(['default/web2-node-1']);
    await s.source.stop();
  });

  it('does not resend an unchanged body from a server without ETags', async () => {
    honourEtag = false;
    reply = { status: 200, body: podYaml('web') };
    const s = start();
    await s.source.start();
    await s.source.poll();
    expect(s.updates).toHaveLength(1);
    await s.source.stop();
  });

  it('keeps the last good pods on a failed or invalid fetch, reports each error once, and recovers', async () => {
    reply = { status: 200, body: podYaml('web') };
    const s = start();
    await s.source.start();
    reply = { status: 500, body: 'boom' };
    await s.source.poll();
    await s.source.poll();
    expect(s.updates).toHaveLength(1);
    expect(s.errors).toHaveLength(1);
    expect(s.errors[0]).toMatchObject({ source: 'http', origin: url });
    expect(s.errors[0].message).toContain('HTTP 500');
    reply = { status: 200, body: podYaml('Bad_Name') };
    await s.source.poll();
    expect(s.updates).toHaveLength(1);
    expect(s.errors).toHaveLength(2);
    expect(s.errors[1].message).toContain('metadata.name');
    reply = { status: 200, body: 'kind: Pod\nspec: [' };
    await s.source.poll();
    expect(s.updates).toHaveLength(1);
    expect(s.errors).toHaveLength(3);
    reply = { status: 200, body: podYaml('web') };
    await s.source.poll();
    // Same content as the last good one: nothing to send.
    expect(s.updates).toHaveLength(1);
    reply = { status: 200, body: podYaml('other') };
    await s.source.poll();
    expect(names(s.updates[1].pods)).toEqual(['default/other-node-1']);
    await s.source.stop();
  });

  it('sends an empty first SET when the first fetch fails, so the source counts as seen', async () => {
    reply = { status: 404, body: 'nope' };
    const s = start();
    await s.source.start();
    expect(s.updates).toEqual([{ op: 'SET', source: 'http', pods: [] }]);
    expect(s.errors[0].message).toContain('HTTP 404');
    await s.source.stop();
    const refused = newHttpSource(
      { url: 'http://127.0.0.1:1/x', nodeName: 'n' },
      { logger: newLogger('silent'), onUpdate: (u) => s.updates.push(u), onError: (e) => s.errors.push(e) },
    );
    await refused.start();
    expect(s.updates).toHaveLength(2);
    expect(s.updates[1].pods).toEqual([]);
    expect(s.errors[1].message).toContain('http://127.0.0.1:1/x');
    await refused.stop();
  });

  it('reads an empty body as no pods (as http.go)', async () => {
    reply = { status: 200, body: podYaml('web') };
    const s = start();
    await s.source.start();
    reply = { status: 200, body: '' };
    await s.source.poll();
    expect(s.updates.map((u) => u.pods.length)).toEqual([1, 0]);
    await s.source.stop();
  });

  it.each([
    [{ url: 'ftp://x/y' }, '--manifest-url'],
    [{ url: 'not a url' }, '--manifest-url'],
    [{ checkFrequencyMs: 0 }, '--http-check-frequency'],
    [{ headers: { 'bad name': ['v'] } }, '--manifest-url-header'],
  ])('refuses bad options %j naming %s', (bad, flag) => {
    expect(() =>
      newHttpSource({ url, nodeName: 'n', ...bad }, { logger: newLogger('silent'), onUpdate: () => {}, onError: () => {} }),
    ).toThrow(flag);
  });
});

describe('--manifest-url wired into the agent (fake runtime)', () => {
  it('runs the URL pods as static pods, replaces them when the URL changes, keeps them when it fails', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { newAgent } = await import('../../../src/main/agent.js');
    const { resolveAgentOptions } = await import('../../../src/main/options/agent-options.js');
    const base = await mkdtemp(join(tmpdir(), 'kubelet-ts-http-source-'));
    reply = { status: 200, body: podYaml('web'), etag: '"1"' };
    const options = resolveAgentOptions({
      nodeName: 'url-node',
      rootDir: base,
      port: 0,
      runtime: 'fake',
      workers: 1,
      manifestUrl: url,
      httpCheckFrequencyMs: 200,
      logLevel: 'silent',
    });
    const agent = newAgent(options, { logger: newLogger('silent'), serve: false });
    const until = async (pred: () => boolean, what: string) => {
      for (const started = Date.now(); !pred();) {
        if (Date.now() - started > 30_000) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const running = () =>
      agent
        .listPods()
        .filter((p) => p.status?.phase === 'Running')
        .map((p) => p.metadata?.name);
    try {
      await agent.start();
      await until(() => running().includes('web-url-node'), 'web-url-node Running');
      expect(agent.listPods()[0].metadata?.annotations?.['kubernetes.io/config.source']).toBe('http');
      reply = { status: 200, body: podYaml('api'), etag: '"2"' };
      await until(() => running().join() === 'api-url-node' && agent.listPods().length === 1, 'api replacing web');
      reply = { status: 503, body: 'down' };
      const seen = requests.length;
      await until(() => requests.length >= seen + 3, 'three failed polls');
      expect(running()).toEqual(['api-url-node']);
    } finally {
      await agent.stop();
      await rm(base, { recursive: true, force: true });
    }
  });
});
