/**
 * The Engine client (src/workers/runtime/docker/engine-client.ts) against the real dockerd: a
 * container's life through it with dockerd's own answers (201, 204, 304, 404, 409), and an
 * aborted request. (That a pod's start and removal go through it and not dockerode:
 * test/workers/kuberuntime/kill-pod-engine-calls.docker.test.ts.) Everything made here is
 * labelled `kubelet-ts.test=engine-client` and removed afterwards.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineClient, engineQuery, type EngineError } from '../../../../src/workers/runtime/docker/engine-client.js';
import { BUSYBOX_IMAGE, DOCKER_SOCKET, docker, dockerProblem } from '../../../support/docker.js';

const kLabel = 'kubelet-ts.test=engine-client';

const problem = await dockerProblem();
if (problem && process.env.KUBELET_TS_REQUIRE_DOCKER === '1') throw new Error(`KUBELET_TS_REQUIRE_DOCKER=1: ${problem}`);

/** Removes the containers carrying `label` (this file's, or a test node's). */
async function removeLabelled(label: string): Promise<void> {
  const list = await docker.listContainers({ all: true, filters: { label: [label] } });
  await Promise.all(
    list.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => undefined),
    ),
  );
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The rejection of `p` (fails the test when it resolves). */
async function failure(p: Promise<unknown>): Promise<EngineError> {
  return p.then(
    () => expect.fail('resolved'),
    (e: unknown) => e as EngineError,
  );
}

describe.skipIf(problem !== undefined)('the Engine client against dockerd', () => {
  it("a container's create, inspect, list, start, stop and remove, with dockerd's 304, 404 and 409 in docker-modem's error shape", async () => {
    const client = new EngineClient(DOCKER_SOCKET, { connections: 2 });
    cleanups.push(() => client.close());
    cleanups.push(() => removeLabelled(kLabel));
    const name = `kts-engine-client-${randomBytes(4).toString('hex')}`;
    const body = {
      name,
      Image: BUSYBOX_IMAGE,
      Cmd: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'],
      Labels: { 'kubelet-ts.test': 'engine-client' },
      HostConfig: { NetworkMode: 'none', RestartPolicy: { Name: 'no' } },
    };
    const created = await client.json<{ Id: string }>({ method: 'POST', path: `/containers/create${engineQuery({ name })}`, body });
    expect(created.Id).toMatch(/^[0-9a-f]{64}$/);

    const taken = await failure(client.json({ method: 'POST', path: `/containers/create${engineQuery({ name })}`, body }));
    expect(taken.statusCode).toBe(409);
    expect((taken.json as { message: string }).message).toContain(name);

    const listed = await client.json<Array<{ Id: string; Names: string[] }>>({
      method: 'GET',
      path: `/containers/json${engineQuery({ all: true, filters: { label: [kLabel, `io.kubernetes.none=${name}`] } })}`,
    });
    expect(listed).toEqual([]);
    const mine = await client.json<Array<{ Id: string; Names: string[] }>>({
      method: 'GET',
      path: `/containers/json${engineQuery({ all: true, filters: { label: [kLabel] } })}`,
    });
    expect(mine.map((c) => c.Id)).toContain(created.Id);

    await client.send({ method: 'POST', path: `/containers/${created.Id}/start` });
    expect((await failure(client.send({ method: 'POST', path: `/containers/${created.Id}/start` }))).statusCode).toBe(304);
    const running = await client.json<{ State: { Running: boolean; Pid: number }; Name: string }>({
      method: 'GET',
      path: `/containers/${created.Id}/json`,
    });
    expect(running.State.Running).toBe(true);
    expect(running.Name).toBe(`/${name}`);

    await client.send({ method: 'POST', path: `/containers/${created.Id}/stop?t=5` });
    expect((await failure(client.send({ method: 'POST', path: `/containers/${created.Id}/stop?t=5` }))).statusCode).toBe(304);
    await client.send({ method: 'DELETE', path: `/containers/${created.Id}?force=true&v=true` });
    const gone = await failure(client.json({ method: 'GET', path: `/containers/${created.Id}/json` }));
    expect(gone.statusCode).toBe(404);
    expect((gone.json as { message: string }).message).toContain('No such container');
    expect((await failure(client.json({ method: 'GET', path: '/images/kubelet-ts/none:0/json' }))).statusCode).toBe(404);
    expect(client.requests).toBe(12);
  });

  it('an aborted request rejects and leaves the pool usable', async () => {
    const client = new EngineClient(DOCKER_SOCKET, { connections: 1 });
    cleanups.push(() => client.close());
    const ac = new AbortController();
    ac.abort();
    await expect(client.json({ method: 'GET', path: '/version', signal: ac.signal })).rejects.toThrow();
    expect(await client.text({ method: 'GET', path: '/_ping' })).toBe('OK');
  });

  it("a thread that only reads, pings and lists images (the image GC) never loads dockerode, nor undici's whole index (each costs a worker thread more CPU to load than the client)", async () => {
    const runtimeModule = fileURLToPath(new URL('../../../../src/workers/runtime/docker/docker-runtime.ts', import.meta.url));
    const script = `
      import { createRequire } from 'node:module';
      const { getDockerRuntime } = await import(${JSON.stringify(runtimeModule)});
      const rt = getDockerRuntime(${JSON.stringify(DOCKER_SOCKET)});
      await rt.status();
      await rt.listContainers({ labels: [${JSON.stringify(kLabel)}] });
      await rt.imageExists(${JSON.stringify(BUSYBOX_IMAGE)});
      await rt.listImages();
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({
        dockerode: loaded.some((k) => k.includes('/node_modules/dockerode/')),
        undiciIndex: loaded.some((k) => k.endsWith('/node_modules/undici/index.js')),
        undiciPool: loaded.some((k) => k.endsWith('/node_modules/undici/lib/dispatcher/pool.js')),
      }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../../../', import.meta.url)),
      timeout: 60_000,
    });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({ dockerode: false, undiciIndex: false, undiciPool: true });
  });
});
