/**
 * The Engine client of a pod's hot path (src/workers/runtime/docker/engine-client.ts, through
 * docker-runtime.ts) sends what dockerode sent for the same call, and fails as dockerode failed:
 * both are pointed at one small HTTP server on a unix socket that records every request and
 * answers as dockerd would (or with the status a test asks for). The create bodies are the
 * syncer's (fixtures/syncer-create-specs.json), compared byte for byte.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentError } from '../../../../src/shared/errors.js';
import { containerCreateBody, toAgentError } from '../../../../src/workers/runtime/docker/docker-engine-shapes.js';
import { getDockerRuntime } from '../../../../src/workers/runtime/docker/docker-runtime.js';
import { EngineClient, engineQuery } from '../../../../src/workers/runtime/docker/engine-client.js';
import type { ContainerCreateSpec } from '../../../../src/workers/runtime/container/runtime.js';
import fixtures from './fixtures/syncer-create-specs.json' with { type: 'json' };

interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  body: string;
}

const kId = 'c'.repeat(64);

let dir: string;
let server: Server;
let socket: string;
let seen: Recorded[];
/** The next answers' status and body (default: as dockerd answers each route). */
let answer: { status: number; body: string } | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kts-engine-client-'));
  seen = [];
  answer = undefined;
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      seen.push({
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        contentType: req.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (answer) {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(answer.body);
        return;
      }
      const ok = (status: number, body?: unknown) => {
        res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
        res.end(body === undefined ? undefined : JSON.stringify(body));
      };
      if (url.pathname === '/containers/create') ok(201, { Id: kId, Warnings: [] });
      else if (url.pathname === '/containers/json' || url.pathname === '/images/json') ok(200, []);
      else if (url.pathname === '/_ping') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('OK');
      } else if (req.method === 'GET') ok(200, { Id: kId, Name: '/x', Config: { Labels: {} }, State: {}, HostConfig: {} });
      else ok(204);
    });
  });
  socket = join(dir, 'docker.sock');
  await new Promise<void>((resolve) => server.listen(socket, resolve));
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** The requests `call` makes (each test's server is new: a new socket path is a new runtime). */
async function requestsOf(call: () => Promise<unknown>): Promise<Recorded[]> {
  const from = seen.length;
  await call();
  return seen.slice(from);
}

/** The fixture's specs with the sandbox ID placeholder left as it is (the bodies only go to the fake engine). */
const specs = (fixtures as unknown as Array<{ sandbox: ContainerCreateSpec; container: ContainerCreateSpec }>).flatMap((f) => [
  f.sandbox,
  f.container,
]);

describe('the Engine client sends what dockerode sent', () => {
  it('a create: the same body, byte for byte (the create options, name included), the same content type and the same name', async () => {
    const docker = new Docker({ socketPath: socket });
    const runtime = getDockerRuntime(socket);
    expect(specs.length).toBeGreaterThanOrEqual(4);
    for (const spec of specs) {
      const [old] = await requestsOf(() =>
        docker.createContainer({ abortSignal: new AbortController().signal, ...containerCreateBody(spec) }),
      );
      const [now] = await requestsOf(() => runtime.createContainer(spec));
      expect(now!.method).toBe('POST');
      expect(now!.path).toBe(old!.path);
      expect(now!.body).toBe(old!.body);
      expect(now!.contentType).toBe(old!.contentType);
      // dockerode also sent every create option in the query; dockerd reads only `name` (and `platform`) there.
      expect(now!.query.get('name')).toBe(old!.query.get('name'));
      expect([...now!.query.keys()]).toEqual(['name']);
    }
  });

  it('start, stop, remove, list, inspects, ping, version and the image list: the same method, path and query as dockerode', async () => {
    const docker = new Docker({ socketPath: socket });
    const runtime = getDockerRuntime(socket);
    const labels = ['io.kubernetes.pod.uid=u 1/ü', 'kubelet-ts.node-name=node-a'];
    const pairs: Array<[() => Promise<unknown>, () => Promise<unknown>]> = [
      [() => docker.getContainer(kId).start({ abortSignal: new AbortController().signal }), () => runtime.startContainer(kId)],
      [() => docker.getContainer(kId).stop({ t: 0 }), () => runtime.stopContainer(kId, 0)],
      [() => docker.getContainer(kId).stop({ t: 30 }), () => runtime.stopContainer(kId, 30.5)],
      [() => docker.getContainer(kId).remove({ force: true, v: true }), () => runtime.removeContainer(kId)],
      [() => docker.listContainers({ all: true, filters: { label: labels } }), () => runtime.listContainers({ labels })],
      [() => docker.getContainer(kId).inspect(), () => runtime.inspectContainer(kId)],
      [() => docker.getImage('kubelet-ts/busybox:1.35').inspect(), () => runtime.imageExists('kubelet-ts/busybox:1.35')],
      [() => docker.ping(), () => runtime.status()],
      [() => docker.version(), () => runtime.version()],
      [() => docker.listImages(), () => runtime.listImages()],
    ];
    for (const [viaDockerode, viaRuntime] of pairs) {
      const [old] = await requestsOf(viaDockerode);
      const [now] = await requestsOf(viaRuntime);
      expect({ method: now!.method, path: now!.path, query: [...now!.query] }).toEqual({
        method: old!.method,
        path: old!.path,
        query: [...old!.query],
      });
    }
  });

  it('engineQuery escapes as querystring does, JSON for objects, nothing for undefined', () => {
    expect(engineQuery({})).toBe('');
    expect(engineQuery({ all: true, x: undefined, filters: { label: ["a=b c/d'(*)!~"] } })).toBe(
      `?all=true&filters=${encodeURIComponent(JSON.stringify({ label: ["a=b c/d'(*)!~"] }))}`,
    );
  });
});

describe('the Engine client fails as dockerode failed', () => {
  /** Both errors of one call, as the runtime's callers see them (toAgentError), and the raw fields they read. */
  async function bothFail(status: number, body: string, viaDockerode: () => Promise<unknown>, viaClient: () => Promise<unknown>) {
    answer = { status, body };
    const old = (await viaDockerode().then(
      () => undefined,
      (e: unknown) => e,
    )) as { statusCode?: number; json?: unknown; message: string };
    const now = (await viaClient().then(
      () => undefined,
      (e: unknown) => e,
    )) as { statusCode?: number; json?: unknown; message: string };
    expect(old).toBeInstanceOf(Error);
    expect(now).toBeInstanceOf(Error);
    expect({ statusCode: now.statusCode, json: now.json }).toEqual({ statusCode: old.statusCode, json: old.json });
    const [a, b] = [toAgentError(old, 'op'), toAgentError(now, 'op')];
    expect({ code: b.code, message: b.message, retriable: b.retriable }).toEqual({
      code: a.code,
      message: a.message,
      retriable: a.retriable,
    });
    return now;
  }

  it('404 (no such container), 409 (a name taken), 500: statusCode, json and the AgentError alike', async () => {
    const docker = new Docker({ socketPath: socket });
    const client = new EngineClient(socket);
    try {
      const notFound = await bothFail(
        404,
        JSON.stringify({ message: `No such container: ${kId}` }),
        () => docker.getContainer(kId).inspect(),
        () => client.json({ method: 'GET', path: `/containers/${kId}/json` }),
      );
      expect(toAgentError(notFound, 'op').code).toBe('ERR_NOT_FOUND');
      const conflict = await bothFail(
        409,
        JSON.stringify({ message: 'Conflict. The container name "/x" is already in use' }),
        () => docker.createContainer({ name: 'x', Image: 'i' }),
        () => client.json({ method: 'POST', path: '/containers/create?name=x', body: { name: 'x', Image: 'i' } }),
      );
      expect(toAgentError(conflict, 'op').code).toBe('ERR_ALREADY_EXISTS');
      const failed = await bothFail(
        500,
        JSON.stringify({ message: 'driver failed' }),
        () => docker.getContainer(kId).remove({ force: true, v: true }),
        () => client.send({ method: 'DELETE', path: `/containers/${kId}?force=true&v=true` }),
      );
      expect(toAgentError(failed, 'op')).toMatchObject({ code: 'ERR_RUNTIME', retriable: true });
      expect(failed.message).toContain('(HTTP code 500) server error - driver failed');
    } finally {
      await client.close();
    }
  });

  it('304 on a start or stop: an error with statusCode 304 from the client, which the runtime takes as done', async () => {
    const client = new EngineClient(socket);
    try {
      answer = { status: 304, body: '' };
      await expect(client.send({ method: 'POST', path: `/containers/${kId}/start` })).rejects.toMatchObject({ statusCode: 304 });
      const runtime = getDockerRuntime(socket);
      await runtime.startContainer(kId);
      await runtime.stopContainer(kId, 1);
      expect(seen.map((r) => r.path.split('/').pop())).toEqual(['start', 'start', 'stop']);
    } finally {
      await client.close();
    }
  });

  it('no engine at the socket: ERR_RUNTIME_UNAVAILABLE, as with dockerode', async () => {
    const missing = join(dir, 'none.sock');
    const viaDockerode = await new Docker({ socketPath: missing })
      .getContainer(kId)
      .inspect()
      .catch((e: unknown) => toAgentError(e, 'op'));
    const viaRuntime = await getDockerRuntime(missing)
      .inspectContainer(kId)
      .catch((e: unknown) => e);
    expect(viaDockerode).toMatchObject({ code: 'ERR_RUNTIME_UNAVAILABLE' });
    expect(viaRuntime).toBeInstanceOf(AgentError);
    expect(viaRuntime).toMatchObject({ code: 'ERR_RUNTIME_UNAVAILABLE', retriable: true });
  });

  it('an engine that closes the connection before answering: ERR_RUNTIME_UNAVAILABLE (undici’s socket error as ECONNRESET)', async () => {
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage) => req.socket.destroy());
    const err = await getDockerRuntime(socket)
      .listContainers({ labels: [] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_RUNTIME_UNAVAILABLE', retriable: true });
  });
});
