/**
 * DockerRuntime's image presence (src/workers/runtime/docker/docker-runtime.ts imageExists, over
 * image-presence.ts ImagePresenceCache): a positive
 * inspect reused for kImagePresenceTtlMs, then answered at once while one inspect refreshes it up
 * to kImagePresenceStaleMs, and forgotten on a refused create and around a pull. The engine here is
 * a small HTTP server on a unix socket that answers the three routes involved and counts them, so an image can be
 * "removed" without touching the shared dockerd's images; the runtime's Clock is the real one skewed by `skewMs` to age entries.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { realClock, type Clock } from '../../../../src/shared/clock.js';
import { getDockerRuntime } from '../../../../src/workers/runtime/docker/docker-runtime.js';
import { kImagePresenceStaleMs, kImagePresenceTtlMs } from '../../../../src/workers/runtime/docker/image-presence.js';
import type { ContainerCreateSpec, ContainerRuntime } from '../../../../src/workers/runtime/container/runtime.js';

const kImage = 'example/app:1';

interface FakeEngine {
  inspects: number;
  /** The image's ID in inspect answers. */
  imageId: string;
  /** Whether the image exists (inspect 200 or 404; a create with it 201 or 404). */
  present: boolean;
  /** While set, image inspects wait for release() before answering. */
  hold: boolean;
  release(): void;
  /** While set, pulls wait for releasePull() before answering. */
  holdPull: boolean;
  /** Pulls received. */
  pulls: number;
  releasePull(): void;
}

let dir: string;
let server: Server;
let engine: FakeEngine;
let runtime: ContainerRuntime;
let skewMs = 0;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kts-image-presence-'));
  const held: (() => void)[] = [];
  const heldPulls: (() => void)[] = [];
  engine = {
    inspects: 0,
    imageId: 'sha256:abc',
    present: true,
    hold: false,
    holdPull: false,
    pulls: 0,
    release: () => {
      for (const answer of held.splice(0)) answer();
    },
    releasePull: () => {
      for (const answer of heldPulls.splice(0)) answer();
    },
  };
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const path = (req.url ?? '').split('?')[0]!.replace(/^\/v[\d.]+/, '');
    if (req.method === 'GET' && path === `/images/${kImage}/json`) {
      engine.inspects++;
      const answer = () =>
        engine.present
          ? json(res, 200, { Id: engine.imageId, Config: { User: '' } })
          : json(res, 404, { message: `No such image: ${kImage}` });
      if (engine.hold) held.push(answer);
      else answer();
    } else if (req.method === 'POST' && path === '/images/create') {
      // A pull: a progress stream of JSON lines, here one.
      engine.pulls++;
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`${JSON.stringify({ status: 'Downloaded newer image' })}\n`);
      };
      if (engine.holdPull) heldPulls.push(answer);
      else answer();
    } else if (req.method === 'POST' && path === '/containers/create') {
      if (engine.present) json(res, 201, { Id: 'c'.repeat(64), Warnings: [] });
      else json(res, 404, { message: `No such image: ${kImage}` });
    } else json(res, 404, { message: `unexpected ${req.method} ${path}` });
  });
  const socket = join(dir, 'docker.sock');
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  skewMs = 0;
  const clock: Clock = { ...realClock, monotonicMs: () => realClock.monotonicMs() + skewMs };
  runtime = getDockerRuntime(socket, undefined, clock); // a new socket path: a runtime of its own, nothing remembered
});

afterEach(async () => {
  vi.restoreAllMocks();
  engine.release();
  engine.releasePull();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** A few event-loop turns. */
async function turns(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** Whether `p` settles within a few event-loop turns (while the fake engine holds its inspects, it answers nothing). */
async function settlesAtOnce(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await turns();
  return settled;
}

const spec = { name: 'x', image: kImage, labels: {}, hostConfig: {} } as unknown as ContainerCreateSpec;

describe('DockerRuntime image presence', () => {
  it('reuses a positive inspect within the TTL', async () => {
    expect(await runtime.imageExists(kImage)).toMatchObject({ id: 'sha256:abc' });
    expect(await runtime.imageExists(kImage)).toMatchObject({ id: 'sha256:abc' });
    expect(engine.inspects).toBe(1);
  });

  it('answers a stale reference at once and refreshes it behind the answer, one inspect at a time', async () => {
    await runtime.imageExists(kImage);
    skewMs = kImagePresenceTtlMs + 100;
    engine.hold = true;
    expect(await settlesAtOnce(runtime.imageExists(kImage))).toBe(true);
    expect(await settlesAtOnce(runtime.imageExists(kImage))).toBe(true);
    // The first answer's inspect, and one refresh for both stale answers.
    await vi.waitFor(() => expect(engine.inspects).toBe(2));
    engine.hold = false;
    engine.release();
    await turns();
    expect(engine.inspects).toBe(2);
  });

  it('replaces a refreshed entry: its age counts from the refresh', async () => {
    await runtime.imageExists(kImage);
    skewMs = kImagePresenceStaleMs - 500;
    engine.imageId = 'sha256:def'; // what the refresh will see
    // Stale: answered from the first inspect while one refresh runs; its answer, once in, replaces it.
    await vi.waitFor(async () => expect(await runtime.imageExists(kImage)).toMatchObject({ id: 'sha256:def' }));
    expect(engine.inspects).toBe(2);
    // The refreshed entry is about 1 s old here; the first one would have expired and this call
    // would wait for an inspect of its own (a third).
    skewMs = kImagePresenceStaleMs + 500;
    expect(await settlesAtOnce(runtime.imageExists(kImage))).toBe(true);
    expect(engine.inspects).toBe(2);
  });

  it('does not refresh an entry whose first inspect is still unanswered: its callers wait for that one', async () => {
    engine.hold = true;
    const first = runtime.imageExists(kImage);
    await vi.waitFor(() => expect(engine.inspects).toBe(1));
    skewMs = kImagePresenceTtlMs + 100;
    const second = runtime.imageExists(kImage);
    expect(await settlesAtOnce(second)).toBe(false);
    engine.release();
    expect(await first).toMatchObject({ id: 'sha256:abc' });
    expect(await second).toMatchObject({ id: 'sha256:abc' });
    expect(engine.inspects).toBe(1);
  });

  it('keeps no answer across a pull: an inspect answered while the pull ran is asked again after it', async () => {
    engine.holdPull = true;
    const pulled = runtime.pullImage(kImage);
    expect(await runtime.imageExists(kImage)).toMatchObject({ id: 'sha256:abc' }); // the image before the pull
    await runtime.imageExists(kImage);
    expect(engine.inspects).toBe(1);
    // The pull's request may reach the engine after the inspects' answers (dockerode dials later): release it once it is there.
    await vi.waitFor(() => expect(engine.pulls).toBe(1));
    engine.releasePull();
    await pulled;
    await runtime.imageExists(kImage);
    expect(engine.inspects).toBe(2);
  });

  it('forgets a reference whose refresh finds the image gone: the next caller waits for its own inspect', async () => {
    await runtime.imageExists(kImage);
    skewMs = kImagePresenceTtlMs + 100;
    engine.present = false;
    expect(await runtime.imageExists(kImage)).not.toBeNull(); // stale answer; the refresh sees 404
    // Until the refresh's answer is in, callers get the stale answer and no inspect of their own.
    await vi.waitFor(async () => expect(await runtime.imageExists(kImage)).toBeNull());
    expect(engine.inspects).toBe(3);
  });

  it('waits for a fresh inspect once the stale window has passed', async () => {
    await runtime.imageExists(kImage);
    skewMs = kImagePresenceStaleMs + 100;
    engine.hold = true;
    const asked = runtime.imageExists(kImage);
    expect(await settlesAtOnce(asked)).toBe(false);
    engine.release();
    expect(await asked).toMatchObject({ id: 'sha256:abc' });
    expect(engine.inspects).toBe(2);
  });

  it('forgets the reference when a create is refused for it', async () => {
    await runtime.imageExists(kImage);
    engine.present = false;
    await expect(runtime.createContainer(spec)).rejects.toThrow(/No such image/);
    expect(await runtime.imageExists(kImage)).toBeNull();
    expect(engine.inspects).toBe(2);
  });
});
