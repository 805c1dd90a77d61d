import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { runEventsLoop } from '../../src/workers/container-events.worker.js';
import { eventsFilters, parseDockerEvent } from '../../src/workers/runtime/docker/docker-streams.js';
import { nodeEventsFilter } from '../../src/workers/runtime/node-scope.js';
import type { ContainerEventsMessage } from '../../src/shared/container-events.js';
import type { ContainerEventHandlers } from '../../src/workers/runtime/container/runtime.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { BUSYBOX_IMAGE, DOCKER_SOCKET, docker } from '../support/docker.js';

const line = (action: string, extra: Record<string, string> = {}) =>
  JSON.stringify({
    Type: 'container',
    Action: action,
    Actor: { ID: 'c1', Attributes: { 'io.kubernetes.pod.uid': 'p1', 'io.kubernetes.container.name': 'main', ...extra } },
    time: 1,
    timeNano: 1_500_000_000,
  });

describe('parseDockerEvent', () => {
  it('keeps container lifecycle actions with their pod labels', () => {
    expect(parseDockerEvent(line('die', { exitCode: '137' }))).toEqual({
      action: 'die',
      containerId: 'c1',
      podUid: 'p1',
      containerName: 'main',
      timeMs: 1500,
      exitCode: 137,
    });
    expect(parseDockerEvent(line('start'))?.action).toBe('start');
  });
  it('drops other actions, other types and garbage', () => {
    expect(parseDockerEvent(line('exec_start: sh'))).toBeNull();
    // The sync that created a container records its created state itself (issue #42: 2 of a pod start's 4 events).
    expect(parseDockerEvent(line('create'))).toBeNull();
    expect(parseDockerEvent(JSON.stringify({ Type: 'network', Action: 'connect' }))).toBeNull();
    expect(parseDockerEvent('not json')).toBeNull();
  });
  it('filters the stream to the container lifecycle events of this node that the PLEG reads', () => {
    // The node-scoped runtime adds this node's label; the Docker runtime sends it as the `filters` query,
    // with the actions parseDockerEvent keeps: the engine sends no exec_*, attach, kill or stop event.
    expect(eventsFilters(nodeEventsFilter('node-1', { labels: [] }))).toEqual({
      type: ['container'],
      event: ['start', 'die', 'oom', 'destroy'],
      label: ['kubelet-ts.node-name=node-1'],
    });
  });
});

describe('runEventsLoop against a fake Engine API', () => {
  let server: Server | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r) ?? r(null));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('streams events, reports a lost stream and reconnects', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-events-'));
    const sock = join(dir, 'docker.sock');
    let connections = 0;
    const queries: string[] = [];
    server = createServer((req, res) => {
      connections++;
      queries.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      // Split a line across chunks: the loop must reassemble it.
      const l = `${line('start')}\n${line('die', { exitCode: '1' })}\n`;
      res.write(l.slice(0, 30));
      setTimeout(() => {
        res.write(l.slice(30));
        if (connections === 1) setTimeout(() => res.end(), 20); // the first stream ends: must reconnect
      }, 10);
    });
    await new Promise<void>((r) => server!.listen(sock, r));
    const got: ContainerEventsMessage[] = [];
    const loop = runEventsLoop({ dockerSocketPath: sock, nodeName: 'n1', maxBackoffMs: 50 }, (m) => got.push(m));
    await expect.poll(() => got.filter((m) => m.type === 'connected').length, { timeout: 5000 }).toBe(2);
    loop.stop();
    const types = got.map((m) => m.type);
    expect(types.slice(0, 3)).toEqual(['connected', 'events', 'disconnected']);
    const events = got.flatMap((m) => (m.type === 'events' ? m.events : []));
    expect(events.slice(0, 2).map((e) => e.action)).toEqual(['start', 'die']);
    // Each (re)opened stream asks the engine for only the events the PLEG reads, of this node's containers.
    for (const q of queries) {
      const url = new URL(q, 'http://docker');
      expect(url.pathname).toBe('/events');
      expect(JSON.parse(url.searchParams.get('filters') ?? '{}')).toEqual({
        type: ['container'],
        event: ['start', 'die', 'oom', 'destroy'],
        label: ['kubelet-ts.node-name=n1'],
      });
    }
  });
});

describe('runEventsLoop reconnect backoff on the fake clock', () => {
  it('reconnects after 250 ms doubling to maxBackoffMs, starts again at 250 ms once connected, and arms nothing after stop', () => {
    const clock = new FakeClock();
    const watches: ContainerEventHandlers[] = [];
    const events = { watchContainerEvents: (_f: unknown, h: ContainerEventHandlers) => (watches.push(h), { close() {} }) };
    const got: string[] = [];
    const loop = runEventsLoop({ dockerSocketPath: '', nodeName: 'n1', maxBackoffMs: 1000 }, (m) => got.push(m.type), events, clock);
    expect(watches).toHaveLength(1);
    /** fail: the newest stream fails; then the time until the loop opens the next one (ms). */
    const fail = (): number => {
      const before = watches.length;
      watches.at(-1)!.onClose('refused');
      const t0 = clock.now();
      for (let i = 0; watches.length === before && i < 10_000; i++) clock.step(1);
      return clock.now() - t0;
    };
    expect([fail(), fail(), fail(), fail(), fail()]).toEqual([250, 500, 1000, 1000, 1000]);
    watches.at(-1)!.onOpen();
    expect(fail()).toBe(250);
    expect(got).toEqual(['disconnected', 'connected', 'disconnected']);
    watches.at(-1)!.onClose('refused');
    expect(clock.hasWaiters()).toBe(true);
    loop.stop();
    expect(clock.hasWaiters()).toBe(false);
  });
});

describe('runEventsLoop batching on the fake clock (issue #42)', () => {
  const ev = (action: string, containerId: string) => ({ action, containerId, podUid: 'p1', containerName: 'main', timeMs: 1 });
  it('posts the events of one window as one message, in stream order; pending events go before a disconnect and on stop', () => {
    const clock = new FakeClock();
    const watches: ContainerEventHandlers[] = [];
    const events = { watchContainerEvents: (_f: unknown, h: ContainerEventHandlers) => (watches.push(h), { close() {} }) };
    const got: ContainerEventsMessage[] = [];
    const loop = runEventsLoop({ dockerSocketPath: '', nodeName: 'n1', batchWindowMs: 5 }, (m) => got.push(m), events, clock);
    watches[0].onOpen();
    // A pod start: the engine writes each event on its own.
    watches[0].onEvents([ev('create', 'sb')]);
    watches[0].onEvents([ev('start', 'sb')]);
    clock.step(4);
    watches[0].onEvents([ev('create', 'c1'), ev('start', 'c1')]);
    expect(got.map((m) => m.type)).toEqual(['connected']);
    clock.step(1);
    expect(got.map((m) => m.type)).toEqual(['connected', 'events']);
    const batch = got[1].type === 'events' ? got[1].events : [];
    expect(batch.map((e) => `${e.action} ${e.containerId}`)).toEqual(['create sb', 'start sb', 'create c1', 'start c1']);
    watches[0].onEvents([ev('die', 'c1')]);
    watches[0].onClose('stream ended');
    expect(got.slice(2).map((m) => m.type)).toEqual(['events', 'disconnected']);
    clock.step(250);
    watches[1].onOpen();
    watches[1].onEvents([ev('destroy', 'c1')]);
    loop.stop();
    expect(got.slice(4).map((m) => (m.type === 'events' ? m.events.map((e) => e.action) : m.type))).toEqual(['connected', ['destroy']]);
    expect(clock.hasWaiters()).toBe(false);
  });
});

describe('runEventsLoop over the fake runtime', () => {
  it("connects at once and forwards the fake runtime's own container changes of this node only", async () => {
    const { newFakeRuntime } = await import('../../src/workers/runtime/fake/fake-runtime.js');
    const { scopeToNode } = await import('../../src/workers/runtime/node-scope.js');
    const fake = newFakeRuntime();
    const got: ContainerEventsMessage[] = [];
    const loop = runEventsLoop({ dockerSocketPath: '', nodeName: 'n1', runtime: 'fake' }, (m) => got.push(m), scopeToNode(fake, 'n1'));
    await expect.poll(() => got.length).toBe(1);
    expect(got[0]).toEqual({ type: 'connected' });
    const labels = (node: string) => ({
      'io.kubernetes.pod.uid': 'p1',
      'io.kubernetes.container.name': 'main',
      'kubelet-ts.node-name': node,
    });
    const mine = await fake.createContainer({ name: 'k8s_main_a', image: 'i:1', labels: labels('n1'), hostConfig: {} });
    await fake.createContainer({ name: 'k8s_main_b', image: 'i:1', labels: labels('other'), hostConfig: {} });
    await fake.startContainer(mine);
    fake.exit(mine, 3);
    loop.stop();
    const events = got.flatMap((m) => (m.type === 'events' ? m.events : []));
    expect(events.map((e) => [e.action, e.containerId, e.podUid, e.exitCode])).toEqual([
      ['start', mine, 'p1', undefined],
      ['die', mine, 'p1', 3],
    ]);
  });
});

describe.skipIf(!inject('dockerAvailable'))('runEventsLoop against the real dockerd (issue #42)', () => {
  it("the engine honours the stream's filters: a labelled container's start, die and destroy arrive; its create, exec, kill and attach do not", async () => {
    const node = `events-${process.pid}-${Date.now()}`;
    const got: ContainerEventsMessage[] = [];
    const loop = runEventsLoop({ dockerSocketPath: DOCKER_SOCKET, nodeName: node }, (m) => got.push(m));
    let id: string | undefined;
    try {
      await expect.poll(() => got.some((m) => m.type === 'connected'), { timeout: 10_000 }).toBe(true);
      const c = await docker.createContainer({
        Image: BUSYBOX_IMAGE,
        Cmd: ['sleep', '60'],
        Labels: {
          'kubelet-ts.node-name': node,
          'io.kubernetes.pod.uid': 'p-events',
          'io.kubernetes.container.name': 'main',
          'kubelet-ts.test': 'container-events-worker',
        },
      });
      id = c.id;
      await c.start();
      const exec = await c.exec({ Cmd: ['true'] });
      await exec.start({ Detach: true });
      await c.kill();
      await c.remove({ force: true });
      id = undefined;
      const actions = () => got.flatMap((m) => (m.type === 'events' ? m.events.map((e) => e.action) : []));
      await expect.poll(actions, { timeout: 10_000 }).toContain('destroy');
      expect(actions()).toEqual(['start', 'die', 'destroy']);
    } finally {
      loop.stop();
      if (id)
        await docker
          .getContainer(id)
          .remove({ force: true })
          .catch(() => undefined);
    }
  });
});
