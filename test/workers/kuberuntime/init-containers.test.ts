// Table-driven tests of computePodActions' init container and sidecar planning (kuberuntime
// computeInitContainerActions) and of the matching status (getPhase, the Initialized condition).
import { describe, expect, it } from 'vitest';
import { generatePodStatus } from '../../../src/main/status/generate.js';
import type { Container, Pod } from '../../../src/shared/api.js';
import { hashContainer } from '../../../src/shared/hash.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';
import { computePodActions } from '../../../src/workers/kuberuntime/compute-pod-actions.js';
import { sandboxHash } from '../../../src/workers/kubetypes/label-keys.js';

const NOW = 1_700_000_000_000;
const UID = '11111111-2222-3333-4444-555555555555';

function ctr(name: string, extra: Partial<Container> = {}): Container {
  return { name, image: 'kubelet-ts/busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], ...extra };
}
const sidecar = (name: string): Container => ctr(name, { restartPolicy: 'Always' } as Partial<Container>);

function mkPod(restartPolicy: 'Always' | 'OnFailure' | 'Never', initContainers: Container[], containers: Container[] = [ctr('app')]): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: UID },
    spec: { restartPolicy, initContainers, containers },
  };
}

let seq = 0;
function rc(pod: Pod, name: string, o: Partial<RuntimeContainer> = {}): RuntimeContainer {
  const spec = [...(pod.spec!.initContainers ?? []), ...pod.spec!.containers].find((c) => c.name === name);
  seq++;
  return {
    id: `${name}-${seq}`,
    name,
    sandbox: false,
    attempt: o.restartCount ?? 0,
    state: 'running',
    hash: spec ? hashContainer(spec) : 'gone',
    restartCount: 0,
    image: 'kubelet-ts/busybox:1.35',
    imageId: 'sha256:x',
    createdAtMs: NOW - 60_000 + seq,
    startedAtMs: NOW - 60_000,
    finishedAtMs: 0,
    exitCode: 0,
    reason: '',
    message: '',
    sandboxId: 'sb',
    ...o,
  };
}
const done = (pod: Pod, name: string, exitCode = 0, o: Partial<RuntimeContainer> = {}) =>
  rc(pod, name, { state: 'exited', exitCode, finishedAtMs: NOW - 30_000, reason: exitCode === 0 ? 'Completed' : 'Error', ...o });
function rp(pod: Pod, containers: RuntimeContainer[], sandboxState: RuntimeContainer['state'] = 'running'): RuntimePod {
  const sb: RuntimeContainer = { ...rc(pod, 'POD'), id: 'sb', sandbox: true, state: sandboxState, hash: sandboxHash(pod), sandboxId: '' };
  return {
    uid: UID,
    name: 'web',
    namespace: 'default',
    sandboxes: [sb],
    containers: containers.slice().sort((a, b) => b.createdAtMs - a.createdAtMs),
    podIp: '',
    terminationGracePeriodSeconds: 30,
  };
}

interface Case {
  name: string;
  pod: Pod;
  runtime: (pod: Pod) => RuntimePod | null;
  start: string[];
  killPod?: boolean;
  createSandbox?: boolean;
}

const two = mkPod('Always', [ctr('init1', { command: ['true'] }), ctr('init2', { command: ['true'] })]);
const never = mkPod('Never', [ctr('init1'), ctr('init2')]);
const withSidecar = mkPod('Always', [sidecar('proxy'), ctr('setup')], [ctr('app')]);
const onlySidecarNever = mkPod('Never', [sidecar('proxy')], [ctr('job')]);

const cases: Case[] = [
  {
    name: 'a new pod starts only its first init container',
    pod: two,
    runtime: () => null,
    start: ['init1'],
    killPod: true,
    createSandbox: true,
  },
  { name: 'a running init container holds everything else back', pod: two, runtime: (p) => rp(p, [rc(p, 'init1')]), start: [] },
  {
    name: 'the next init container starts once the previous one succeeded',
    pod: two,
    runtime: (p) => rp(p, [done(p, 'init1')]),
    start: ['init2'],
  },
  {
    name: 'app containers start once every init container succeeded',
    pod: two,
    runtime: (p) => rp(p, [done(p, 'init1'), done(p, 'init2')]),
    start: ['app'],
  },
  {
    name: 'a failed init container is restarted under restartPolicy Always',
    pod: two,
    runtime: (p) => rp(p, [done(p, 'init1', 1)]),
    start: ['init1'],
  },
  {
    name: 'a failed init container kills the pod under restartPolicy Never',
    pod: never,
    runtime: (p) => rp(p, [done(p, 'init1', 2)]),
    start: [],
    killPod: true,
    createSandbox: false,
  },
  { name: 'init containers are not run again once an app container ran', pod: two, runtime: (p) => rp(p, [rc(p, 'app')]), start: [] },
  { name: 'a sidecar is the first to start', pod: withSidecar, runtime: () => null, start: ['proxy'], killPod: true, createSandbox: true },
  {
    name: 'the init container after a running sidecar starts',
    pod: withSidecar,
    runtime: (p) => rp(p, [rc(p, 'proxy')]),
    start: ['setup'],
  },
  {
    name: 'app containers start beside the running sidecar',
    pod: withSidecar,
    runtime: (p) => rp(p, [rc(p, 'proxy'), done(p, 'setup')]),
    start: ['app'],
  },
  {
    name: 'an exited sidecar is restarted beside running app containers',
    pod: withSidecar,
    runtime: (p) => rp(p, [done(p, 'proxy', 137), done(p, 'setup'), rc(p, 'app')]),
    start: ['proxy'],
  },
  {
    name: 'an exited sidecar during initialization is restarted before the next one',
    pod: withSidecar,
    runtime: (p) => rp(p, [done(p, 'proxy', 1)]),
    start: ['proxy'],
  },
  {
    name: 'a finished job pod stops its sidecar (the pod is killed)',
    pod: onlySidecarNever,
    runtime: (p) => rp(p, [rc(p, 'proxy'), done(p, 'job')]),
    start: [],
    killPod: true,
    createSandbox: false,
  },
  {
    name: 'a new sandbox runs initialization again',
    pod: two,
    runtime: (p) => rp(p, [done(p, 'init1'), done(p, 'init2'), done(p, 'app', 137)], 'exited'),
    start: ['init1'],
    killPod: true,
    createSandbox: true,
  },
];

describe('computePodActions with init containers', () => {
  it.each(cases)('$name', (c) => {
    const a = computePodActions(c.pod, c.runtime(c.pod), {}, NOW);
    expect(a.containersToStart.map((s) => s.name)).toEqual(c.start);
    expect(a.killPod).toBe(c.killPod ?? false);
    expect(a.createSandbox).toBe(c.createSandbox ?? false);
  });

  it('marks init containers to start as init, with their index in spec.initContainers', () => {
    const a = computePodActions(two, rp(two, [done(two, 'init1')]), {}, NOW);
    expect(a.containersToStart).toEqual([
      { index: 1, init: true, name: 'init2', reason: 'NotPresent', hash: hashContainer(two.spec!.initContainers![1]), restartCount: 0 },
    ]);
  });

  it('holds a crashing init container back with CrashLoopBackOff on spec.initContainers{name}', () => {
    const pod = two;
    const dead = done(pod, 'init1', 1, { restartCount: 2, finishedAtMs: NOW - 1000 });
    const key = `web_default_${UID}_init1_${hashContainer(pod.spec!.initContainers![0])}`;
    const a = computePodActions(pod, rp(pod, [dead]), { [key]: { backoffMs: 20_000, lastUpdateMs: NOW - 2000 } }, NOW);
    expect(a.containersToStart).toEqual([]);
    expect(a.waiting.init1.reason).toBe('CrashLoopBackOff');
    expect(a.events[0]).toMatchObject({ reason: 'BackOff', fieldPath: 'spec.initContainers{init1}' });
  });
});

function status(pod: Pod, containers: RuntimeContainer[], waiting = {}) {
  return generatePodStatus({ pod, runtimePod: rp(pod, containers), waiting, hostIp: '127.0.0.1', startTimeMs: NOW - 60_000, nowMs: NOW });
}
const cond = (s: ReturnType<typeof status>, type: string) => s.conditions!.find((c) => c.type === type)!;

describe('pod status with init containers', () => {
  it('is Pending, not Initialized, with every container PodInitializing while the first init container runs', () => {
    const s = status(two, [rc(two, 'init1')]);
    expect(s.phase).toBe('Pending');
    expect(cond(s, 'Initialized')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: 'containers with incomplete status: [init1 init2]',
    });
    expect(s.initContainerStatuses!.map((c) => [c.name, Object.keys(c.state!)[0], c.ready])).toEqual([
      ['init1', 'running', false],
      ['init2', 'waiting', false],
    ]);
    expect(s.initContainerStatuses![1].state!.waiting!.reason).toBe('PodInitializing');
    expect(s.containerStatuses![0].state!.waiting!.reason).toBe('PodInitializing');
  });

  it('is Initialized once the init containers completed, and Running with the app', () => {
    const s = status(two, [done(two, 'init1'), done(two, 'init2'), rc(two, 'app')]);
    expect(s.phase).toBe('Running');
    expect(cond(s, 'Initialized').status).toBe('True');
    expect(s.initContainerStatuses!.map((c) => c.state!.terminated!.reason)).toEqual(['Completed', 'Completed']);
  });

  it('is Failed when an init container failed under restartPolicy Never', () => {
    const s = status(never, [done(never, 'init1', 3)]);
    expect(s.phase).toBe('Failed');
    expect(s.initContainerStatuses![0].state!.terminated!.exitCode).toBe(3);
  });

  it('stays Pending while a failed init container is retried (restartPolicy Always)', () => {
    const s = status(two, [done(two, 'init1', 1)], { init1: { reason: 'CrashLoopBackOff', message: 'back-off' } });
    expect(s.phase).toBe('Pending');
    expect(s.initContainerStatuses![0].state!.waiting!.reason).toBe('CrashLoopBackOff');
    expect(s.initContainerStatuses![0].lastState!.terminated!.exitCode).toBe(1);
  });

  it('counts a running sidecar as initialized and as part of the pod readiness', () => {
    const up = status(withSidecar, [rc(withSidecar, 'proxy'), done(withSidecar, 'setup'), rc(withSidecar, 'app')]);
    expect(up.phase).toBe('Running');
    expect(cond(up, 'Initialized').status).toBe('True');
    expect(cond(up, 'Ready').status).toBe('True');
    expect(up.initContainerStatuses![0]).toMatchObject({ name: 'proxy', ready: true });
    const down = status(withSidecar, [done(withSidecar, 'proxy', 137), done(withSidecar, 'setup'), rc(withSidecar, 'app')]);
    expect(down.phase).toBe('Running');
    expect(cond(down, 'Initialized').status).toBe('True');
    expect(cond(down, 'Ready')).toMatchObject({ status: 'False', message: 'containers with unready status: [proxy]' });
  });
});
