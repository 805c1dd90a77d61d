/**
 * The Engine client's own call path (src/workers/runtime/docker/engine-client.ts; issue #42 item 1):
 * deadlines (on one shared timer per duration, no AbortController per call), aborts, socket
 * failures part-way through an answer, and answers always read to their end so a pooled
 * connection is never left behind — against a small HTTP server on a unix socket that answers,
 * holds or drops each request as a test asks.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentError } from '../../../../src/shared/errors.js';
import { toAgentError } from '../../../../src/workers/runtime/docker/docker-engine-shapes.js';
import { getDockerRuntime } from '../../../../src/workers/runtime/docker/docker-runtime.js';
import { EngineClient } from '../../../../src/workers/runtime/docker/engine-client.js';
import { FakeClock } from '../../../fakes/fake-clock.js';

const kId = 'd'.repeat(64);

let dir: string;
let server: Server;
let socket: string;
/** Requests the server got, by path, and whether the client closed each one's connection before an answer. */
let got: Array<{ path: string; closedUnanswered: boolean }>;
/** Answers held back (paths with `hold`; `hang`: never) until a test sends them. */
let held: ServerResponse[];
const clients: EngineClient[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kts-engine-calls-'));
  got = [];
  held = [];
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const seen = { path, closedUnanswered: false };
    got.push(seen);
    res.on('close', () => (seen.closedUnanswered = !res.writableFinished));
    req.resume();
    req.on('end', () => {
      if (path.includes('hang')) return; // never answered
      if (path.includes('hold')) return void held.push(res);
      if (path.includes('missing')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ message: `No such container: ${'x'.repeat(2000)}` }));
      }
      if (path.includes('half')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"Id":"');
        return void setImmediate(() => res.socket?.destroy());
      }
      // Everything else: 200 with a JSON body (a `send` drops it).
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ Id: kId, Name: '/x', Config: { Labels: {} }, State: {}, HostConfig: {}, pad: 'p'.repeat(4000) }));
    });
  });
  socket = join(dir, 'docker.sock');
  await new Promise<void>((resolve) => server.listen(socket, resolve));
});

afterEach(async () => {
  // The server's side first: a client's close waits for its requests under way (a `hang` one never ends).
  server.closeAllConnections();
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** A client on this test's server (closed after the test). */
function client(opts: ConstructorParameters<typeof EngineClient>[1]): EngineClient {
  const c = new EngineClient(socket, opts);
  clients.push(c);
  return c;
}

/** Waits until `cond` holds (the server's side of a request is asynchronous); fails after 5 s. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}

/** The rejection of `p` (fails the test when it resolves). */
async function failure(p: Promise<unknown>): Promise<Error & { code?: string; statusCode?: number; retriable?: boolean }> {
  return p.then(
    () => expect.fail('resolved'),
    (e: unknown) => e as Error,
  );
}

describe("the Engine client's deadlines", () => {
  it('an inspect past --runtime-request-timeout rejects with "context deadline exceeded" naming the call, its connection is closed, and the runtime goes on', async () => {
    const clock = new FakeClock();
    const runtime = getDockerRuntime(socket, 5000, clock);
    const late = failure(runtime.inspectContainer(`${kId}-hang`));
    await until(() => got.length === 1);
    await clock.advance(4999);
    expect(got[0]!.closedUnanswered).toBe(false);
    await clock.advance(1);
    const err = await late;
    expect(err).toBeInstanceOf(AgentError);
    expect(err.message).toBe(`inspect container ${kId}-hang: context deadline exceeded (--runtime-request-timeout 5s)`);
    expect(err).toMatchObject({ code: 'ERR_RUNTIME', retriable: true });
    await until(() => got[0]!.closedUnanswered);
    expect((await runtime.inspectContainer(kId)).id).toBe(kId);
    expect(clock.hasWaiters()).toBe(false);
  });

  it("a stop's deadline is its grace period plus the request timeout", async () => {
    const clock = new FakeClock();
    const runtime = getDockerRuntime(socket, 5000, clock);
    const late = failure(runtime.stopContainer(`${kId}-hang`, 2));
    await until(() => got.length === 1);
    await clock.advance(6999);
    expect(got[0]!.closedUnanswered).toBe(false);
    await clock.advance(1);
    expect((await late).message).toBe(`stop container ${kId}-hang: context deadline exceeded (--runtime-request-timeout 7s)`);
  });

  it('concurrent calls share one deadline timer (not one each), and none is left once they are answered', async () => {
    const clock = new FakeClock();
    const runtime = getDockerRuntime(socket, 5000, clock);
    const calls = Array.from({ length: 20 }, (_, i) => runtime.inspectContainer(`${kId}-hold${i}`));
    await until(() => held.length === 20);
    expect(clock.timers.size).toBe(1);
    for (const res of held) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ Id: kId, Name: '/x', Config: { Labels: {} }, State: {}, HostConfig: {} }));
    }
    expect((await Promise.all(calls)).map((d) => d.id)).toEqual(Array(20).fill(kId));
    expect(clock.hasWaiters()).toBe(false);
  });

  it('a call still queued for a connection when its deadline passes rejects then, and is never sent', async () => {
    const clock = new FakeClock();
    const engine = client({ connections: 1, clock });
    const first = engine.json({ method: 'GET', path: '/containers/hold/json' });
    await until(() => held.length === 1);
    const queued = failure(
      engine.json({ method: 'GET', path: '/containers/queued/json', timeoutMs: 1000, what: 'inspect container queued' }),
    );
    await clock.advance(1000);
    expect((await queued).message).toBe('inspect container queued: context deadline exceeded (--runtime-request-timeout 1s)');
    held[0]!.writeHead(200, { 'content-type': 'application/json' });
    held[0]!.end('{"Id":"a"}');
    expect(await first).toEqual({ Id: 'a' });
    expect(await engine.json({ method: 'GET', path: '/containers/after/json' })).toMatchObject({ Id: kId });
    expect(got.map((g) => g.path)).toEqual(['/containers/hold/json', '/containers/after/json']);
  });

  it('a finished call is not kept by its deadline while another call is still pending (a burst never all settled at once)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const engine = client({ clock: new FakeClock() });
    const pending = engine.json({ method: 'GET', path: '/containers/hang/json', timeoutMs: 60_000 }).catch(() => undefined);
    const answers: Array<WeakRef<object>> = [];
    for (let i = 0; i < 20; i++)
      answers.push(new WeakRef(await engine.json<object>({ method: 'GET', path: `/containers/${i}/json`, timeoutMs: 60_000 })));
    await new Promise((r) => setImmediate(r));
    gc();
    expect(answers.filter((a) => a.deref() !== undefined)).toHaveLength(0);
    server.closeAllConnections();
    await pending;
  });
});

describe("the Engine client's answers and failures", () => {
  it('reads every answer to its end: 1,000 404s and 1,000 dropped 200 bodies in turn on one connection', async () => {
    const engine = client({ connections: 1 });
    for (let i = 0; i < 1000; i++) {
      const err = await failure(engine.json({ method: 'GET', path: `/containers/missing${i}/json` }));
      expect(err.statusCode).toBe(404);
      await engine.send({ method: 'POST', path: `/containers/${i}/start` });
    }
    expect(engine.requests).toBe(2000);
    expect(got).toHaveLength(2000);
  });

  it('a body that cannot be sent as JSON rejects the call (never throws), sends nothing and leaves no deadline behind', async () => {
    const clock = new FakeClock();
    const engine = client({ clock });
    const call = engine.json({ method: 'POST', path: '/containers/create', body: { n: 1n }, timeoutMs: 1000, what: 'create container x' });
    await expect(call).rejects.toThrow(TypeError);
    expect(clock.hasWaiters()).toBe(false);
    expect(got).toEqual([]);
  });

  it("an abort part-way rejects with the signal's reason, closes that request's connection, and the client goes on", async () => {
    const engine = client({ connections: 1 });
    const ac = new AbortController();
    const aborted = failure(engine.json({ method: 'GET', path: '/containers/hang/json', signal: ac.signal }));
    await until(() => got.length === 1);
    const reason = new Error('stop asking');
    ac.abort(reason);
    expect(await aborted).toBe(reason);
    await until(() => got[0]!.closedUnanswered);
    expect(await engine.text({ method: 'GET', path: '/_ping' })).toContain(kId);
  });

  it('an engine that drops the connection part-way through an answer: ECONNRESET, which the runtime calls unavailable', async () => {
    const engine = client({});
    const err = await failure(engine.json({ method: 'GET', path: '/containers/half/json' }));
    expect(err.code).toBe('ECONNRESET');
    expect(err.message).toContain('GET /containers/half/json');
    expect(toAgentError(err, 'inspect container half')).toMatchObject({ code: 'ERR_RUNTIME_UNAVAILABLE', retriable: true });
  });
});
