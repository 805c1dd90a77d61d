// Regression tests of issue 11, finding 3 (secure by default) and the two-Authorization-headers
// edge of finding 9, against the real agent and dockerd. With default flags anyone on the machine
// could POST a pod that mounts / with hostPath; the kubelet's own defaults (anonymous requests may
// not write, authorization required) now hold: the agent writes an admin token to
// <root-dir>/admin.token, writes need a token, anonymous reads stay open on loopback.
import { chmod, lstat, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { newAgent } from '../../src/main/agent.js';
import { resolveAgentOptions } from '../../src/main/options/agent-options.js';
import { newLogger } from '../../src/shared/logging.js';
import type { Status } from '../../src/shared/api.js';
import { runCliProcess } from '../support/agent-process.js';
import { useTestNodes, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE } from '../support/docker.js';

const kTestMs = 120_000;

const podJson = (name: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { suite: 'issue-11-auth' } },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'main', image: BUSYBOX_IMAGE, command: ['sh', '-c', 'exec sleep 3600'] }],
    },
  });

/** anonymous: a request to the node's server without any Authorization header. */
const anonymous = (node: TestNode, path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${node.agent.port}${path}`, init);

/** rawRequest sends `head` (request line and headers, CRLF-separated, no final blank line) and `body` over a plain socket. */
function rawRequest(port: number, head: string, body = ''): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      const [statusLine] = data.split('\r\n');
      resolve({ status: Number(statusLine.split(' ')[1]), body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    };
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      data += d;
      // The whole answer is in once its Content-Length bytes follow the headers.
      const end = data.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(data.slice(0, end));
      if (end >= 0 && length && Buffer.byteLength(data.slice(end + 4)) >= Number(length[1])) finish();
    });
    socket.on('error', reject);
    socket.on('end', finish);
    socket.write(`${head}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}

/** watchOutcome: 101 when the watch opens, else the refusing HTTP status. */
function watchOutcome(port: number, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/watch/pods`, { headers });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', () => {});
  });
}

describe.skipIf(!inject('dockerAvailable'))('issue 11 finding 3: secure by default', () => {
  const start = useTestNodes();
  let dir: string;
  let tokenFile: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-issue11-auth-'));
    tokenFile = join(dir, 'tokens.csv');
    await writeFile(tokenFile, 'viewer-token-0123456789,viewer,2,"kubelet-ts:read-only"\n');
  });
  afterAll(async () => {
    await unmountUnder(dir).catch(() => undefined); // the API pods' tmpfs volumes (service account tokens)
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'with default flags refuses an anonymous POST with 401 and a Status, and creates the pod with the admin token',
    async () => {
      const node = await start();
      const res = await anonymous(node, '/pods', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: podJson('anon'),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
      expect((await res.json()) as Status).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
      expect(node.agent.listPods().some((p) => p.metadata?.name === 'anon')).toBe(false);
      // Nor PUT, DELETE or a stream into a container, anonymously.
      expect((await anonymous(node, '/pods/default/anon', { method: 'DELETE' })).status).toBe(401);
      expect(
        (
          await anonymous(node, '/pods/default/anon', {
            method: 'PUT',
            headers: { 'Content-Type': 'application/json' },
            body: podJson('anon'),
          })
        ).status,
      ).toBe(401);
      expect((await anonymous(node, '/exec/default/anon/main?command=sh')).status).toBe(401);

      const created = await node.api('/pods', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: podJson('admitted'),
      });
      expect(created.status).toBe(201);
      expect(node.agent.listPods().some((p) => p.metadata?.name === 'admitted')).toBe(true);
    },
    kTestMs,
  );

  it(
    'writes <root-dir>/admin.token once, mode 0600, and keeps the same token across a restart',
    async () => {
      const node = await start();
      const path = join(node.rootDir, 'admin.token');
      const first = await lstat(path);
      expect(first.isFile()).toBe(true);
      expect(first.mode & 0o777).toBe(0o600);
      const token = (await readFile(path, 'utf8')).trim();
      expect(token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      // Never in the log.
      expect(JSON.stringify(node.warnings)).not.toContain(token);

      await node.restart();
      const again = await lstat(path);
      expect(again.mode & 0o777).toBe(0o600);
      expect((await readFile(path, 'utf8')).trim()).toBe(token);
      expect(
        (
          await node.api('/pods', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
            body: podJson('after-restart'),
          })
        ).status,
      ).toBe(201);
    },
    kTestMs,
  );

  it(
    'with --anonymous-auth=true serves anonymous reads (pods, events, node, metrics, the watch), and /healthz to everyone',
    async () => {
      const node = await start({ anonymousAuth: true });
      for (const path of ['/pods', '/events', '/node', '/metrics', '/healthz']) {
        expect([path, (await anonymous(node, path)).status]).toEqual([path, 200]);
      }
      expect(await watchOutcome(node.agent.port)).toBe(101);
    },
    kTestMs,
  );

  it(
    'by default (--anonymous-auth=false, issue #38) refuses anonymous reads and the anonymous watch with 401, and serves the admin token',
    async () => {
      const node = await start();
      const res = await anonymous(node, '/pods');
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
      expect(await watchOutcome(node.agent.port)).toBe(401);
      expect((await anonymous(node, '/healthz')).status).toBe(200);
      expect((await node.api('/pods')).status).toBe(200);
      expect(await watchOutcome(node.agent.port, { Authorization: `Bearer ${node.adminToken()}` })).toBe(101);
    },
    kTestMs,
  );

  it(
    'finding 9: refuses a request with two Authorization headers with 400, in either order, and creates nothing',
    async () => {
      const node = await start({ tokenAuthFile: tokenFile });
      const admin = `Bearer ${node.adminToken()}`;
      const viewer = 'Bearer viewer-token-0123456789';
      for (const [first, second] of [
        [viewer, admin],
        [admin, viewer],
      ]) {
        const res = await rawRequest(
          node.agent.port,
          `POST /pods HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${first}\r\nAuthorization: ${second}\r\nContent-Type: application/json`,
          podJson('twice'),
        );
        expect(res.status).toBe(400);
        expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
      }
      expect(node.agent.listPods().some((p) => p.metadata?.name === 'twice')).toBe(false);
      // The watch upgrade too.
      const ws = await rawRequest(
        node.agent.port,
        `GET /watch/pods HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: ${viewer}\r\nAuthorization: ${admin}`,
      );
      expect(ws.status).toBe(400);
      // One header of each works as before: the viewer may read, not write.
      expect(
        (
          await rawRequest(
            node.agent.port,
            `POST /pods HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${viewer}\r\nContent-Type: application/json`,
            podJson('viewer'),
          )
        ).status,
      ).toBe(403);
      expect(
        (
          await rawRequest(
            node.agent.port,
            `POST /pods HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${admin}\r\nContent-Type: application/json`,
            podJson('once'),
          )
        ).status,
      ).toBe(201);
    },
    kTestMs,
  );

  it(
    'the client finds the admin token itself (KUBELET_TS_ROOT_DIR), and without it says how to get one',
    async () => {
      const node = await start();
      const server = `http://127.0.0.1:${node.agent.port}`;
      // No --server: the agent's socket in the root dir, the only place the admin token goes besides https (issue #38).
      const ok = await runCliProcess(['apply', '-f', '-'], podJson('by-client'), {
        KUBELET_TS_ROOT_DIR: node.rootDir,
        KUBELET_TS_TOKEN: '',
        KUBELET_TS_SERVER: '',
      });
      expect(ok).toMatchObject({ code: 0, stdout: 'pod/by-client created\n' });
      const none = await runCliProcess(['apply', '-f', '-', '--server', server, '--root-dir', dir], podJson('no-token'), {
        KUBELET_TS_TOKEN: '',
      });
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('Unauthorized');
      expect(none.stderr).toContain(join(dir, 'admin.token'));
    },
    kTestMs,
  );

  it.each([
    [
      'has group/other permissions',
      async (path: string) => {
        await writeFile(path, `${'x'.repeat(43)}\n`);
        await chmod(path, 0o644);
      },
      'mode 0644',
    ],
    [
      'is a symlink',
      async (path: string) => {
        await writeFile(`${path}.real`, `${'x'.repeat(43)}\n`, { mode: 0o600 });
        await symlink(`${path}.real`, path);
      },
      'must be a regular file',
    ],
    [
      'is empty',
      async (path: string) => {
        await writeFile(path, '', { mode: 0o600 });
      },
      'at least 32 printable characters',
    ],
  ])(
    'refuses to start when admin.token %s, with an error naming the file',
    async (_what, prepare, message) => {
      const rootDir = await mkdtemp(join(dir, 'root-'));
      const path = join(rootDir, 'admin.token');
      await prepare(path);
      const agent = newAgent(
        resolveAgentOptions({ nodeName: 'issue11-auth-refuse', rootDir, port: 0, runtime: 'fake', workers: 1, logLevel: 'silent' }),
        { logger: newLogger('silent') },
      );
      try {
        const err = await agent.start().then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(err?.message).toContain(`${path}: `);
        expect(err?.message).toContain(message);
      } finally {
        await agent.stop();
      }
    },
    kTestMs,
  );
});
