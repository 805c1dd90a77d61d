import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../src/shared/api.js';
import { backoffKey } from '../../../src/shared/backoff.js';
import { hashContainer } from '../../../src/shared/hash.js';
import type { BackoffEntry } from '../../../src/shared/sync-tasks.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';
import { computePodActions } from '../../../src/workers/kuberuntime/compute-pod-actions.js';
import { sandboxHash } from '../../../src/workers/kubetypes/label-keys.js';

const NOW = 1_700_000_000_000;
const UID = '11111111-2222-3333-4444-555555555555';

function ctr(name: string, command = ['sleep', '3600']): Container {
  return { name, image: 'kubelet-ts/busybox:1.35', imagePullPolicy: 'IfNotPresent', command };
}

function mkPod(restartPolicy: 'Always' | 'OnFailure' | 'Never', containers: Container[] = [ctr('a'), ctr('b')]): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: UID }, spec: { restartPolicy, containers } };
}

let seq = 0;
function rc(pod: Pod, name: string, o: Partial<RuntimeContainer> = {}): RuntimeContainer {
  const spec = pod.spec!.containers.find((c) => c.name === name);
  seq++;
  return {
    id: `${name}-${o.restartCount ?? 0}-${seq}`,
    name,
    sandbox: false,
    attempt: o.restartCount ?? 0,
    state: 'running',
    hash: spec ? hashContainer(spec) : 'gone',
    restartCount: 0,
    image: 'kubelet-ts/busybox:1.35',
    imageId: 'sha256:x',
    createdAtMs: NOW - 60_000,
    startedAtMs: NOW - 60_000,
    finishedAtMs: 0,
    exitCode: 0,
    reason: '',
    message: '',
    sandboxId: 'sb',
    ...o,
  };
}
function exited(pod: Pod, name: string, exitCode: number, o: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return rc(pod, name, { state: 'exited', exitCode, finishedAtMs: NOW - 1000, reason: exitCode === 0 ? 'Completed' : 'Error', ...o });
}
function sb(pod: Pod, o: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return { ...rc(pod, 'POD'), id: `sb-${o.attempt ?? 0}`, name: 'POD', sandbox: true, hash: sandboxHash(pod), sandboxId: '', ...o };
}
function rp(pod: Pod, sandboxes: RuntimeContainer[], containers: RuntimeContainer[]): RuntimePod {
  return { uid: UID, name: 'web', namespace: 'default', sandboxes, containers, podIp: '', terminationGracePeriodSeconds: 30 };
}
function key(pod: Pod, name: string): string {
  return backoffKey('web', 'default', UID, name, hashContainer(pod.spec!.containers.find((c) => c.name === name)!));
}

interface Case {
  name: string;
  pod: Pod;
  runtime: (pod: Pod) => RuntimePod | null;
  backoff?: (pod: Pod) => Record<string, BackoffEntry>;
  killPod: boolean;
  createSandbox: boolean;
  attempt?: number;
  start: string[];
  kill: string[];
  waiting?: string[];
}

const always = mkPod('Always');
const changed = mkPod('Always', [ctr('a'), ctr('b', ['sleep', '10'])]);

const cases: Case[] = [
  {
    name: 'a fresh pod creates a sandbox and starts every container',
    pod: always,
    runtime: () => null,
    killPod: true,
    createSandbox: true,
    attempt: 0,
    start: ['a', 'b'],
    kill: [],
  },
  {
    name: 'everything running and matching does nothing',
    pod: always,
    runtime: (p) => rp(p, [sb(p)], [rc(p, 'a'), rc(p, 'b')]),
    killPod: false,
    createSandbox: false,
    start: [],
    kill: [],
  },
  {
    name: 'a hash change of one container restarts only that one',
    pod: changed,
    // b runs with the hash of the old spec
    runtime: (p) => rp(p, [sb(p)], [rc(p, 'a'), { ...rc(p, 'b'), hash: hashContainer(ctr('b')) }]),
    killPod: false,
    createSandbox: false,
    start: ['b'],
    kill: ['b'],
  },
  {
    name: 'a container removed from the spec is killed',
    pod: mkPod('Always', [ctr('a')]),
    runtime: (p) => rp(p, [sb(p)], [rc(p, 'a'), rc(p, 'b')]),
    killPod: false,
    createSandbox: false,
    start: [],
    kill: ['b'],
  },
  {
    name: 'a dead sandbox kills the pod and makes a new one (attempt + 1)',
    pod: always,
    runtime: (p) => rp(p, [sb(p, { state: 'exited', attempt: 2 })], [rc(p, 'a'), exited(p, 'b', 137)]),
    killPod: true,
    createSandbox: true,
    attempt: 3,
    start: ['a', 'b'],
    kill: [],
  },
  {
    name: 'a sandbox whose namespaces changed (hostNetwork) is recreated',
    pod: { ...always, spec: { ...always.spec!, hostNetwork: true } },
    runtime: (p) => rp(p, [sb(p, { hash: sandboxHash(always) })], [rc(p, 'a'), rc(p, 'b')]),
    killPod: true,
    createSandbox: true,
    attempt: 1,
    start: ['a', 'b'],
    kill: [],
  },
  {
    name: 'restartPolicy Never: a dead sandbox after the containers ran is not recreated',
    pod: mkPod('Never'),
    runtime: (p) => rp(p, [sb(p, { state: 'exited' })], [exited(p, 'a', 0), exited(p, 'b', 1)]),
    killPod: true,
    createSandbox: false,
    start: [],
    kill: [],
  },
  {
    name: 'restartPolicy OnFailure: a new sandbox starts only the containers that did not succeed',
    pod: mkPod('OnFailure'),
    runtime: (p) => rp(p, [sb(p, { state: 'exited' })], [exited(p, 'a', 0), exited(p, 'b', 1)]),
    killPod: true,
    createSandbox: true,
    attempt: 1,
    start: ['b'],
    kill: [],
  },
  {
    name: 'restartPolicy OnFailure: no sandbox when every container succeeded',
    pod: mkPod('OnFailure'),
    runtime: (p) => rp(p, [sb(p, { state: 'exited' })], [exited(p, 'a', 0), exited(p, 'b', 0)]),
    killPod: true,
    createSandbox: false,
    start: [],
    kill: [],
  },
  {
    name: 'all containers done and none to restart stops the sandbox',
    pod: mkPod('Never'),
    runtime: (p) => rp(p, [sb(p)], [exited(p, 'a', 0), exited(p, 'b', 1)]),
    killPod: true,
    createSandbox: false,
    start: [],
    kill: [],
  },
  {
    name: 'a container that was created but never started is started again',
    pod: mkPod('Never'),
    runtime: (p) => rp(p, [sb(p)], [rc(p, 'a'), rc(p, 'b', { state: 'created' })]),
    killPod: false,
    createSandbox: false,
    start: ['b'],
    kill: [],
  },
  {
    name: 'a container in restart backoff waits with CrashLoopBackOff',
    pod: always,
    runtime: (p) => rp(p, [sb(p)], [rc(p, 'a'), exited(p, 'b', 1, { restartCount: 1 })]),
    backoff: (p) => ({ [key(p, 'b')]: { backoffMs: 10_000, lastUpdateMs: NOW - 5000 } }),
    killPod: false,
    createSandbox: false,
    start: [],
    kill: [],
    waiting: ['b'],
  },
];

const policyCases: Array<[string, number, boolean]> = [
  ['Always', 0, true],
  ['Always', 1, true],
  ['OnFailure', 0, false],
  ['OnFailure', 1, true],
  ['Never', 0, false],
  ['Never', 1, false],
];

describe('computePodActions', () => {
  it.each(cases)('$name', (c) => {
    const runtimePod = c.runtime(c.pod);
    const a = computePodActions(c.pod, runtimePod, c.backoff?.(c.pod) ?? {}, NOW);
    expect(a.killPod).toBe(c.killPod);
    expect(a.createSandbox).toBe(c.createSandbox);
    if (c.attempt !== undefined) expect(a.attempt).toBe(c.attempt);
    expect(a.containersToStart.map((s) => s.name)).toEqual(c.start);
    expect(a.containersToKill.map((k) => k.name).sort()).toEqual(c.kill);
    expect(Object.keys(a.waiting)).toEqual(c.waiting ?? []);
    if (!a.createSandbox && !a.killPod) expect(a.sandboxId).toBe(runtimePod?.sandboxes[0].id);
  });

  it.each(policyCases)('restartPolicy %s, exit code %i: restart is %s', (policy, exitCode, restart) => {
    const pod = mkPod(policy as 'Always', [ctr('a'), ctr('b')]);
    const a = computePodActions(pod, rp(pod, [sb(pod)], [rc(pod, 'a'), exited(pod, 'b', exitCode)]), {}, NOW);
    expect(a.containersToStart.map((s) => s.name)).toEqual(restart ? ['b'] : []);
    expect(a.killPod).toBe(false);
    if (restart) {
      expect(a.containersToStart[0]).toMatchObject({ reason: 'Restart', restartCount: 1, hash: hashContainer(ctr('b')) });
      // first restart: not in backoff, a fresh 10 s entry
      expect(a.backoff[key(pod, 'b')]).toEqual({ backoffMs: 10_000, lastUpdateMs: NOW });
    }
  });

  it('reports CrashLoopBackOff with the kubelet message, a BackOff event and a requeue at backoff expiry', () => {
    const pod = always;
    const dead = exited(pod, 'b', 1, { restartCount: 3, finishedAtMs: NOW - 5000 });
    const entry = { backoffMs: 20_000, lastUpdateMs: NOW - 6000 };
    const a = computePodActions(pod, rp(pod, [sb(pod)], [rc(pod, 'a'), dead]), { [key(pod, 'b')]: entry }, NOW);
    expect(a.waiting.b).toEqual({
      reason: 'CrashLoopBackOff',
      message: `back-off 20s restarting failed container=b pod=web_default(${UID})`,
    });
    expect(a.events).toEqual([
      {
        type: 'Warning',
        reason: 'BackOff',
        message: `Back-off restarting failed container b in pod web_default(${UID})`,
        fieldPath: 'spec.containers{b}',
      },
    ]);
    expect(a.requeueAfterMs).toBe(15_000);
    expect(a.backoff[key(pod, 'b')]).toEqual(entry);
    expect(a.containersToStart).toEqual([]);
    expect(a.killPod).toBe(false);
  });

  it('restarts a container whose backoff expired and doubles its backoff', () => {
    const pod = always;
    const dead = exited(pod, 'b', 1, { restartCount: 3, finishedAtMs: NOW - 25_000 });
    const a = computePodActions(
      pod,
      rp(pod, [sb(pod)], [rc(pod, 'a'), dead]),
      { [key(pod, 'b')]: { backoffMs: 20_000, lastUpdateMs: NOW - 30_000 } },
      NOW,
    );
    expect(a.containersToStart).toEqual([{ index: 1, name: 'b', reason: 'Restart', hash: hashContainer(ctr('b')), restartCount: 4 }]);
    expect(a.backoff[key(pod, 'b')]).toEqual({ backoffMs: 40_000, lastUpdateMs: NOW });
    expect(a.waiting).toEqual({});
    expect(a.requeueAfterMs).toBe(0);
  });

  it('keeps one dead attempt per container: older dead ones are removed when a new attempt starts', () => {
    const pod = always;
    const newest = exited(pod, 'b', 1, { restartCount: 2, createdAtMs: NOW - 10_000 });
    const older = exited(pod, 'b', 1, { restartCount: 1, createdAtMs: NOW - 20_000 });
    const oldest = exited(pod, 'b', 1, { restartCount: 0, createdAtMs: NOW - 30_000 });
    const a = computePodActions(pod, rp(pod, [sb(pod)], [rc(pod, 'a'), newest, older, oldest]), {}, NOW);
    expect(a.containersToStart.map((s) => [s.name, s.restartCount])).toEqual([['b', 3]]);
    expect(a.containersToRemove.sort()).toEqual([older.id, oldest.id].sort());
  });

  // Issue 11 finding 8: the agent killed between create and start leaves a container in state created.
  it.each([
    ['the first attempt', [] as number[], 0],
    ['a later attempt (the previous one ran and exited)', [1], 2],
  ])('removes a created-never-started container of %s and makes that attempt again (no restart counted)', (_what, ran, expected) => {
    const pod = always;
    const dead = ran.map((n) =>
      exited(pod, 'b', 1, { restartCount: n, attempt: n, createdAtMs: NOW - 20_000, finishedAtMs: NOW - 400_000 }),
    );
    const created = rc(pod, 'b', { state: 'created', restartCount: expected, attempt: expected, startedAtMs: 0, createdAtMs: NOW - 5_000 });
    const a = computePodActions(pod, rp(pod, [sb(pod)], [rc(pod, 'a'), created, ...dead]), {}, NOW);
    expect(a.containersToStart.map((s) => [s.name, s.restartCount, s.reason])).toEqual([['b', expected, 'NotStarted']]);
    expect(a.containersToRemove).toEqual([created.id]);
  });

  it('removes a created-never-started sandbox when it makes a new one', () => {
    const pod = always;
    const created = sb(pod, { id: 'sb-created', state: 'created', attempt: 1, startedAtMs: 0, createdAtMs: NOW - 1_000 });
    const old = sb(pod, { id: 'sb-old', state: 'exited', attempt: 0, createdAtMs: NOW - 60_000 });
    const a = computePodActions(pod, rp(pod, [created, old], []), {}, NOW);
    expect(a.createSandbox).toBe(true);
    expect(a.attempt).toBe(2);
    expect(a.containersToRemove.sort()).toEqual(['sb-created', 'sb-old']);
  });

  it('drops backoff entries of containers no longer in the spec', () => {
    const pod = always;
    const stale = backoffKey('web', 'default', UID, 'b', 'oldhash');
    const a = computePodActions(
      pod,
      rp(pod, [sb(pod)], [rc(pod, 'a'), rc(pod, 'b')]),
      { [stale]: { backoffMs: 10_000, lastUpdateMs: NOW } },
      NOW,
    );
    expect(a.backoff).toEqual({});
  });

  it('does not restart containers of a pod being deleted', () => {
    const pod: Pod = { ...always, metadata: { ...always.metadata, deletionTimestamp: new Date(NOW).toISOString() } };
    const a = computePodActions(pod, rp(pod, [sb(pod)], [rc(pod, 'a'), exited(pod, 'b', 1)]), {}, NOW);
    expect(a.containersToStart).toEqual([]);
  });
});
