// Issue #38 finding 5: anonymous reads are off by default (the KubeletConfiguration default), and
// what a browser on the node could send — a cross-site WebSocket, a cross-site GET, a DNS-rebinding
// Host — is refused with 403, while kubectl/curl (no Origin) and the agent's own dashboard
// (same-origin) keep working. A real agent (fake runtime) over real sockets.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestNode, type TestNode } from '../support/agent.js';
import { kBearerProtocolPrefix } from '../../src/server/auth/auth.js';

/** get: GET `path` on the node with exactly `headers` (Host included: fetch cannot set it). */
function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { Host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** upgrade: the watch's answer (101 when it opens, else the refusing status) with `headers` and `protocols`. */
function upgrade(port: number, headers: Record<string, string>, protocols: string[] = []): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/watch/pods`, protocols, { headers });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', () => {});
  });
}

/** The dashboard's sub-protocols: the bearer one, then the watch's (the server echoes that one). */
const bearerProtocol = (token: string) => `${kBearerProtocolPrefix}${Buffer.from(token).toString('base64url')}`;

describe('issue #38 finding 5: anonymous off by default', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode({ runtime: 'fake', podManifestPath: '' });
  }, 60_000);
  afterAll(async () => {
    await node?.cleanup();
  }, 60_000);

  it('answers an anonymous GET /pods and an anonymous watch with 401; /healthz stays open; the admin token reads', async () => {
    const anon = await get(node.agent.port, '/pods', {});
    expect(anon.status).toBe(401);
    expect(JSON.parse(anon.body)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect(await upgrade(node.agent.port, {})).toBe(401);
    expect((await get(node.agent.port, '/healthz', {})).status).toBe(200);
    expect((await get(node.agent.port, '/pods', { Authorization: `Bearer ${node.adminToken()}` })).status).toBe(200);
  });

  it('refuses a cross-site watch upgrade with 403 even with a token, and opens a same-origin one (the dashboard)', async () => {
    const port = node.agent.port;
    const token = [bearerProtocol(node.adminToken()), 'watch.kubelet-ts'];
    expect(await upgrade(port, { Origin: 'http://evil.example' }, token)).toBe(403);
    expect(await upgrade(port, { Origin: `http://localhost:${port}` }, token)).toBe(403); // not the Host's origin (127.0.0.1)
    expect(await upgrade(port, { Origin: `http://127.0.0.1:${port}` }, token)).toBe(101);
    expect(await upgrade(port, {}, token)).toBe(101); // no Origin: not a browser
  });

  it('refuses a DNS-rebinding Host on a watch upgrade and on a credential-less GET with 403 naming the header', async () => {
    const port = node.agent.port;
    expect(await upgrade(port, { Host: `evil.example:${port}` }, [bearerProtocol(node.adminToken()), 'watch.kubelet-ts'])).toBe(403);
    const res = await get(port, '/', { Host: `evil.example:${port}` });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', code: 403 });
    expect(JSON.parse(res.body).message).toContain('Host header');
    expect((await get(port, '/', { Host: `localhost:${port}` })).status).toBe(200);
  });
});

describe('issue #38 finding 5: with --anonymous-auth=true, browsers still cannot read cross-site', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode({ runtime: 'fake', podManifestPath: '', anonymousAuth: true });
  }, 60_000);
  afterAll(async () => {
    await node?.cleanup();
  }, 60_000);

  it('serves an anonymous GET without Origin, refuses a cross-site Origin and a rebinding Host with 403', async () => {
    const port = node.agent.port;
    expect((await get(port, '/pods', {})).status).toBe(200);
    const cross = await get(port, '/pods', { Origin: 'https://evil.example' });
    expect(cross.status).toBe(403);
    expect(JSON.parse(cross.body).message).toContain('Origin header');
    expect((await get(port, '/pods', { Host: `evil.example:${port}` })).status).toBe(403);
    expect((await get(port, '/pods', { Origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect(await upgrade(port, { Origin: 'http://evil.example' })).toBe(403);
    expect(await upgrade(port, {})).toBe(101);
  });
});
