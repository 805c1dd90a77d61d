import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { applyContainerExit, newEventedPleg, toLifecycleEvent, type ContainerEventSource } from '../../../src/main/pleg/event-pleg.js';
import type { PodLifecycleEvent } from '../../../src/main/pleg/generic-pleg.js';
import type { RuntimeContainerEvent, ContainerEventsMessage } from '../../../src/shared/container-events.js';
import type { Pod } from '../../../src/shared/api.js';
import type { RelistContainer } from '../../../src/shared/sync-tasks.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';
import { newFakePodSyncRunner, type FakePodSyncRunner } from '../../fakes/fake-pod-sync-runner.js';

const ev = (action: string, containerId: string, podUid: string, timeMs = 1000): RuntimeContainerEvent => ({
  action,
  containerId,
  podUid,
  containerName: 'main',
  timeMs,
});
const c = (id: string, podUid: string, state: RelistContainer['state']): RelistContainer => ({ id, podUid, name: 'main', state });

function fakeSource() {
  let handler: ((m: ContainerEventsMessage) => void) | null = null;
  let closed = false;
  const source: ContainerEventSource = {
    onMessage: (h) => {
      handler = h;
    },
    close: async () => {
      closed = true;
    },
  };
  return { source, send: (m: ContainerEventsMessage) => handler!(m), closed: () => closed };
}

/** A runner whose relist answers with `state.list`; `state.calls` counts the tasks it ran. */
function listRunner(state: { list: RelistContainer[] }): FakePodSyncRunner {
  return newFakePodSyncRunner({ relist: () => ({ containers: state.list, observedAtMs: Date.now() }) });
}

describe('toLifecycleEvent', () => {
  it.each([
    ['start', 'ContainerStarted', 'running'],
    ['die', 'ContainerDied', 'exited'],
    ['destroy', 'ContainerRemoved', null],
    ['oom', 'ContainerChanged', undefined],
  ] as const)('maps %s to %s', (action, type, state) => {
    expect(toLifecycleEvent(ev(action, 'c1', 'p1'))).toEqual({ event: { uid: 'p1', type, containerId: 'c1' }, state });
  });
  it('a die with an exit code carries the exit, OOMKilled when an oom came first', () => {
    expect(toLifecycleEvent({ ...ev('die', 'c1', 'p1', 5000), exitCode: 137 }, true)?.event?.exit).toEqual({
      exitCode: 137,
      finishedAtMs: 5000,
      oomKilled: true,
    });
    expect(toLifecycleEvent({ ...ev('die', 'c1', 'p1'), exitCode: 0 })?.event?.exit).toEqual({
      exitCode: 0,
      finishedAtMs: 1000,
      oomKilled: false,
    });
  });
  it('create updates the state only, and events without a pod UID are ignored', () => {
    expect(toLifecycleEvent(ev('create', 'c1', 'p1'))).toEqual({ event: null, state: 'created' });
    expect(toLifecycleEvent(ev('die', 'c1', ''))).toBeNull();
  });
});

describe('evented PLEG', () => {
  function setup(list: RelistContainer[] = []) {
    const state = {
      list,
      get calls() {
        return runner.calls.length;
      },
    };
    const runner = listRunner(state);
    const src = fakeSource();
    const seen: Map<string, PodLifecycleEvent[]>[] = [];
    const lags: number[] = [];
    let errors = 0;
    const pleg = newEventedPleg(
      {
        nodeName: 'n1',
        endpoint: { runtime: 'docker', dockerSocketPath: '/nonexistent.sock' },
        relistPeriodMs: 600_000,
        fallbackRelistPeriodMs: 600_000,
      },
      {
        runner,
        logger: pino({ level: 'silent' }),
        clock: new FakeClock(1250),
        onEvents: (b) => seen.push(b),
        onRelist: () => {},
        openEventSource: () => src.source,
        observer: { relistDuration: () => {}, relistInterval: () => {}, eventLag: (s) => lags.push(s), streamError: () => errors++ },
      },
    );
    return { state, src, seen, pleg, lags, errors: () => errors };
  }

  it("opens the stream on the agent's runtime endpoint; a runtime without events leaves the generic PLEG at the fallback period", async () => {
    const src = fakeSource();
    const opened: unknown[] = [];
    let errors = 0;
    const endpoint = {
      runtime: 'remote' as const,
      dockerSocketPath: '',
      containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
    };
    const pleg = newEventedPleg(
      { nodeName: 'n1', endpoint, relistPeriodMs: 600_000, fallbackRelistPeriodMs: 1_000 },
      {
        runner: listRunner({ list: [] }),
        logger: pino({ level: 'silent' }),
        onEvents: () => {},
        onRelist: () => {},
        openEventSource: (b) => {
          opened.push(b);
          return src.source;
        },
        observer: { relistDuration: () => {}, relistInterval: () => {}, streamError: () => errors++ },
      },
    );
    pleg.start();
    await flush();
    expect(opened).toEqual([{ kind: 'container-events', ...endpoint, nodeName: 'n1' }]);
    src.send({ type: 'unsupported', message: 'the container runtime has no container events (GetContainerEvents)' });
    await pleg.relist();
    expect(pleg.stats()).toMatchObject({ streaming: false, relistPeriodMs: 1_000 });
    expect(errors).toBe(0);
    await pleg.stop();
  });

  it('turns Docker events into pod lifecycle events for just the pods concerned, with their lag', async () => {
    const t = setup();
    t.pleg.start();
    await flush();
    t.src.send({ type: 'connected' });
    t.src.send({ type: 'events', events: [ev('create', 'a', 'p1'), ev('start', 'a', 'p1'), ev('die', 'b', 'p2')] });
    expect(t.seen.at(-1)).toEqual(
      new Map([
        ['p1', [{ uid: 'p1', type: 'ContainerStarted', containerId: 'a' }]],
        ['p2', [{ uid: 'p2', type: 'ContainerDied', containerId: 'b' }]],
      ]),
    );
    expect(t.lags).toEqual([0.25, 0.25, 0.25]);
    expect(t.pleg.stats().streaming).toBe(true);
    await t.pleg.stop();
    expect(t.src.closed()).toBe(true);
  });

  it('relists on every (re)connect, so a transition missed while the stream was down is reported', async () => {
    const t = setup([c('a', 'p1', 'running')]);
    t.pleg.start();
    await flush();
    t.src.send({ type: 'connected' });
    await flush();
    const before = t.state.calls;
    t.src.send({ type: 'disconnected', message: 'events stream ended' });
    expect(t.pleg.stats().streaming).toBe(false);
    expect(t.errors()).toBe(1);
    t.state.list = [c('a', 'p1', 'exited')]; // died while nobody listened
    t.src.send({ type: 'connected' });
    await flush();
    expect(t.state.calls).toBe(before + 1);
    expect(t.seen.at(-1)).toEqual(new Map([['p1', [{ uid: 'p1', type: 'ContainerDied', containerId: 'a' }]]]));
    await t.pleg.stop();
  });

  it('a change already reported by an event is not reported again by the next relist', async () => {
    const t = setup([c('a', 'p1', 'running')]);
    t.pleg.start();
    await flush();
    t.src.send({ type: 'connected' });
    await flush();
    t.src.send({ type: 'events', events: [ev('die', 'a', 'p1')] });
    const n = t.seen.length;
    t.state.list = [c('a', 'p1', 'exited')];
    await t.pleg.relist();
    expect(t.seen.length).toBe(n);
    await t.pleg.stop();
  });

  it('remembers an oom until the die that follows it, for that container only', async () => {
    const t = setup();
    t.pleg.start();
    await flush();
    t.src.send({ type: 'connected' });
    t.src.send({
      type: 'events',
      events: [ev('oom', 'a', 'p1'), { ...ev('die', 'a', 'p1'), exitCode: 137 }, { ...ev('die', 'b', 'p1'), exitCode: 1 }],
    });
    const exits = t.seen
      .at(-1)!
      .get('p1')!
      .filter((e) => e.type === 'ContainerDied')
      .map((e) => [e.containerId, e.exit?.oomKilled]);
    expect(exits).toEqual([
      ['a', true],
      ['b', false],
    ]);
    t.src.send({ type: 'events', events: [{ ...ev('die', 'a', 'p1'), exitCode: 137 }] });
    expect(t.seen.at(-1)!.get('p1')![0].exit?.oomKilled).toBe(false);
    await t.pleg.stop();
  });

  it('refuses a bad relist period', () => {
    expect(() =>
      newEventedPleg(
        { nodeName: 'n', endpoint: { dockerSocketPath: '/x' }, relistPeriodMs: 0 },
        { runner: listRunner({ list: [] }), logger: pino({ level: 'silent' }), onEvents: () => {}, onRelist: () => {} },
      ),
    ).toThrow(/relistPeriodMs must be a positive/);
  });
});

describe('applyContainerExit', () => {
  const running: RuntimeContainer = {
    id: 'c1',
    name: 'main',
    sandbox: false,
    attempt: 0,
    state: 'running',
    hash: 'h',
    restartCount: 0,
    image: 'i',
    imageId: '',
    createdAtMs: 1,
    startedAtMs: 1,
    finishedAtMs: 0,
    exitCode: 0,
    reason: '',
    message: '',
    sandboxId: 's',
  };
  const runtimePod: RuntimePod = {
    uid: 'u',
    name: 'p',
    namespace: 'default',
    sandboxes: [{ ...running, id: 's', name: 'POD', sandbox: true }],
    containers: [running],
    podIp: '',
    terminationGracePeriodSeconds: 30,
  };
  const pod = (restartPolicy: string): Pod =>
    ({ metadata: { name: 'p', uid: 'u' }, spec: { restartPolicy, containers: [{ name: 'main', image: 'i' }] } }) as Pod;

  it.each([
    [0, false, 'Completed', 'Always'],
    [2, false, 'Error', 'Always'],
    [137, true, 'OOMKilled', 'Always'],
    [2, false, 'Error', 'OnFailure'],
  ] as const)(
    'exit code %i (oom %s) of a container that restarts: exited with reason %s (restartPolicy %s), input left alone',
    (exitCode, oomKilled, reason, policy) => {
      const out = applyContainerExit(runtimePod, pod(policy), 'c1', { exitCode, finishedAtMs: 9000, oomKilled });
      expect(out?.containers[0]).toMatchObject({ id: 'c1', state: 'exited', exitCode, finishedAtMs: 9000, reason });
      expect(runtimePod.containers[0].state).toBe('running');
    },
  );

  it.each([
    ['Never', 1],
    ['OnFailure', 0],
  ] as const)(
    'is null for a death that ends the container for good (restartPolicy %s, exit %i): the sync publishes it with its message',
    (policy, exitCode) => {
      expect(applyContainerExit(runtimePod, pod(policy), 'c1', { exitCode, finishedAtMs: 1, oomKilled: false })).toBeNull();
    },
  );

  it('is null for an unknown or already exited container, the sandbox, or a container not in spec.containers', () => {
    const always = pod('Always');
    expect(applyContainerExit(runtimePod, always, 'nope', { exitCode: 1, finishedAtMs: 1, oomKilled: false })).toBeNull();
    expect(applyContainerExit(runtimePod, always, 's', { exitCode: 1, finishedAtMs: 1, oomKilled: false })).toBeNull();
    const dead = applyContainerExit(runtimePod, always, 'c1', { exitCode: 1, finishedAtMs: 1, oomKilled: false })!;
    expect(applyContainerExit(dead, always, 'c1', { exitCode: 1, finishedAtMs: 2, oomKilled: false })).toBeNull();
    const init = {
      ...always,
      spec: { ...always.spec!, containers: [{ name: 'other', image: 'i' }], initContainers: [{ name: 'main', image: 'i' }] },
    } as Pod;
    expect(applyContainerExit(runtimePod, init, 'c1', { exitCode: 1, finishedAtMs: 1, oomKilled: false })).toBeNull();
  });
});
