import { describe, expect, it, vi } from 'vitest';
import { containerStatus, generatePodStatus, qosClass } from '../../../src/main/status/generate.js';
import { getPhase } from '../../../src/shared/pod-policy.js';
import type { Pod } from '../../../src/shared/api.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';

const T = Date.parse('2026-11-30T00:00:00Z');
function rc(
  name: string,
  state: RuntimeContainer['state'],
  exitCode = 0,
  restartCount = 0,
  extra: Partial<RuntimeContainer> = {},
): RuntimeContainer {
  return {
    id: `${name}-${restartCount}`.padEnd(64, '0'),
    name,
    sandbox: name === 'POD',
    attempt: restartCount,
    state,
    hash: 'h',
    restartCount,
    image: 'img',
    imageId: 'sha256:abc',
    createdAtMs: T + restartCount,
    startedAtMs: T + restartCount,
    finishedAtMs: state === 'exited' ? T + 1000 + restartCount : 0,
    exitCode,
    reason: state === 'exited' ? (exitCode === 0 ? 'Completed' : 'Error') : '',
    message: '',
    sandboxId: 'sb',
    ...extra,
  };
}
function pod(restartPolicy: 'Always' | 'OnFailure' | 'Never', names = ['a', 'b']): Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u' },
    spec: { restartPolicy, containers: names.map((name) => ({ name, image: 'img' })) },
  };
}
function runtimePod(containers: RuntimeContainer[], sandbox: RuntimeContainer['state'] = 'running'): RuntimePod {
  return {
    uid: 'u',
    name: 'p',
    namespace: 'default',
    sandboxes: [rc('POD', sandbox)],
    containers,
    podIp: '',
    terminationGracePeriodSeconds: 30,
  };
}
const phaseOf = (p: Pod, containers: RuntimeContainer[], waiting = {}) =>
  generatePodStatus({ pod: p, runtimePod: runtimePod(containers), waiting, hostIp: '127.0.0.1', startTimeMs: T, nowMs: T }).phase;

describe('getPhase (kubelet getPhase)', () => {
  it.each([
    ['no containers yet', 'Always', [], {}, 'Pending'],
    ['all running', 'Always', [rc('a', 'running'), rc('b', 'running')], {}, 'Running'],
    ['one running, one not created', 'Always', [rc('a', 'running')], {}, 'Pending'],
    ['all exited 0, Never', 'Never', [rc('a', 'exited'), rc('b', 'exited')], {}, 'Succeeded'],
    ['one exited 1, Never', 'Never', [rc('a', 'exited'), rc('b', 'exited', 1)], {}, 'Failed'],
    ['all exited 0, OnFailure', 'OnFailure', [rc('a', 'exited'), rc('b', 'exited')], {}, 'Succeeded'],
    ['one exited 1, OnFailure (will restart)', 'OnFailure', [rc('a', 'exited'), rc('b', 'exited', 1)], {}, 'Running'],
    ['all exited, Always (will restart)', 'Always', [rc('a', 'exited'), rc('b', 'exited')], {}, 'Running'],
    [
      'crash loop, Always',
      'Always',
      [rc('a', 'running'), rc('b', 'exited', 1, 3)],
      { b: { reason: 'CrashLoopBackOff', message: 'back-off' } },
      'Running',
    ],
    ['image never pulled', 'Always', [rc('a', 'running')], { b: { reason: 'ErrImageNeverPull', message: 'x' } }, 'Pending'],
  ] as const)('%s → %s', (_name, policy, containers, waiting, want) => {
    expect(phaseOf(pod(policy), [...containers], waiting)).toBe(want);
  });

  it('a terminal pod with a failure is Failed whatever the policy', () => {
    expect(getPhase(pod('Always', ['a']), [containerStatus('a', 'img', [rc('a', 'exited', 2)], undefined)], true)).toBe('Failed');
  });
});

describe('containerStatus', () => {
  it('writes every state with the same fields in the same order (what kubectl -o json and the watch frames show)', () => {
    const fields = ['name', 'image', 'imageID', 'containerID', 'restartCount', 'ready', 'started', 'state', 'lastState'];
    const cases = [
      containerStatus('a', 'img', [rc('a', 'running', 0, 1), rc('a', 'exited', 1, 0)], undefined),
      containerStatus('a', 'img', [rc('a', 'exited', 1, 1)], undefined),
      containerStatus('a', 'img', [rc('a', 'exited', 1, 1)], { reason: 'CrashLoopBackOff', message: 'back-off' }),
      containerStatus('a', 'img', [rc('a', 'created', 0, 0)], undefined),
    ];
    for (const s of cases) expect(Object.keys(s)).toEqual(fields);
    expect(cases.map((s) => [s.ready, s.started, Object.keys(s.state ?? {})[0], Object.keys(s.lastState ?? {})[0]])).toEqual([
      [true, true, 'running', 'terminated'],
      [false, false, 'terminated', undefined],
      [false, false, 'waiting', 'terminated'],
      [false, false, 'waiting', undefined],
    ]);
  });

  it('running with a previous failed attempt has lastState terminated and the restart count', () => {
    const s = containerStatus('a', 'img', [rc('a', 'running', 0, 2), rc('a', 'exited', 1, 1)], undefined);
    expect(s.state?.running?.startedAt).toBe('2026-11-30T00:00:00Z');
    expect(s.lastState?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(s.restartCount).toBe(2);
    expect(s.ready).toBe(true);
    expect(s.containerID).toBe(`a-2${'0'.repeat(61)}`);
  });

  it("names IDs with the runtime's scheme (kubecontainer.ContainerID: <runtime_name>://<id>)", () => {
    const d = containerStatus('a', 'img', [rc('a', 'running', 0, 1), rc('a', 'exited', 1, 0)], undefined, 'ContainerCreating', 'docker');
    expect([d.containerID, d.imageID, d.lastState?.terminated?.containerID]).toEqual([
      `docker://a-1${'0'.repeat(61)}`,
      'docker://sha256:abc',
      `docker://a-0${'0'.repeat(61)}`,
    ]);
    const ref = 'docker.io/kubelet-ts/busybox@sha256:0123';
    const c = containerStatus('a', 'img', [rc('a', 'running', 0, 0, { imageId: ref })], undefined, 'ContainerCreating', 'containerd');
    // A CRI image_ref (a repo digest) is the imageID verbatim, as the kubelet shows it.
    expect([c.containerID, c.imageID]).toEqual([`containerd://a-0${'0'.repeat(61)}`, ref]);
    const s = generatePodStatus({
      pod: pod('Always', ['a']),
      runtimePod: runtimePod([rc('a', 'running')]),
      waiting: {},
      hostIp: '127.0.0.1',
      startTimeMs: T,
      nowMs: T,
      idScheme: 'containerd',
    });
    expect(s.containerStatuses?.[0]?.containerID).toBe(`containerd://a-0${'0'.repeat(61)}`);
  });

  it('a dead container in backoff is waiting CrashLoopBackOff with the dead attempt as lastState', () => {
    const s = containerStatus('a', 'img', [rc('a', 'exited', 1, 4)], { reason: 'CrashLoopBackOff', message: 'back-off 2m40s' });
    expect(s.state?.waiting).toEqual({ reason: 'CrashLoopBackOff', message: 'back-off 2m40s' });
    expect(s.lastState?.terminated?.exitCode).toBe(1);
    expect(s.ready).toBe(false);
  });

  it('OOMKilled keeps its reason', () => {
    const s = containerStatus('a', 'img', [rc('a', 'exited', 137, 0, { reason: 'OOMKilled' })], undefined);
    expect(s.state?.terminated?.reason).toBe('OOMKilled');
  });

  it('not created yet is waiting ContainerCreating', () => {
    expect(containerStatus('a', 'img', [], undefined).state).toEqual({ waiting: { reason: 'ContainerCreating' } });
  });
});

describe('conditions', () => {
  it('Ready and ContainersReady name the unready containers; transition time moves only on change', () => {
    const p = pod('Always');
    const first = generatePodStatus({
      pod: p,
      runtimePod: runtimePod([rc('a', 'running')]),
      waiting: {},
      hostIp: '10.0.0.1',
      startTimeMs: T,
      nowMs: T,
    });
    const ready = first.conditions!.find((c) => c.type === 'Ready')!;
    expect(ready).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [b]' });
    expect(first.conditions!.map((c) => c.type)).toEqual([
      'PodReadyToStartContainers',
      'Initialized',
      'Ready',
      'ContainersReady',
      'PodScheduled',
    ]);
    expect(first.hostIP).toBe('10.0.0.1');
    expect(first.podIP).toBeUndefined();
    const later = generatePodStatus({
      pod: p,
      runtimePod: runtimePod([rc('a', 'running')]),
      waiting: {},
      hostIp: '10.0.0.1',
      startTimeMs: T,
      nowMs: T + 5000,
      previous: first,
    });
    expect(later.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime).toBe(ready.lastTransitionTime);
    const both = generatePodStatus({
      pod: p,
      runtimePod: runtimePod([rc('a', 'running'), rc('b', 'running')]),
      waiting: {},
      hostIp: '10.0.0.1',
      startTimeMs: T,
      nowMs: T + 9000,
      previous: later,
    });
    const nowReady = both.conditions!.find((c) => c.type === 'Ready')!;
    expect(nowReady.status).toBe('True');
    expect(nowReady.lastTransitionTime).toBe('2026-11-30T00:00:09Z');
  });

  it('hostNetwork pods get the host IP as pod IP', () => {
    const p = pod('Always', ['a']);
    p.spec!.hostNetwork = true;
    const s = generatePodStatus({
      pod: p,
      runtimePod: runtimePod([rc('a', 'running')]),
      waiting: {},
      hostIp: '127.0.0.1',
      startTimeMs: T,
      nowMs: T,
    });
    expect(s.podIP).toBe('127.0.0.1');
    expect(s.podIPs).toEqual([{ ip: '127.0.0.1' }]);
  });

  it.each([
    [{}, 'BestEffort'],
    [{ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } }, 'Guaranteed'],
    [{ requests: { cpu: '100m' } }, 'Burstable'],
  ])('qosClass(%j) = %s', (resources, want) => {
    expect(qosClass({ spec: { containers: [{ name: 'a', resources }] } })).toBe(want);
  });
});

describe('generatePodStatus: the times of one status', () => {
  it("formats each second once: a new pod's five conditions, startTime and containers' startedAt, all in one second, cost one Date formatting (issue #42)", () => {
    const spy = vi.spyOn(Date.prototype, 'toISOString');
    try {
      const now = T + 7_000; // a second no other test formats last
      const status = generatePodStatus({
        pod: pod('Always'),
        runtimePod: runtimePod([rc('a', 'running', 0, 0, { startedAtMs: now + 5 }), rc('b', 'running', 0, 0, { startedAtMs: now + 9 })]),
        waiting: {},
        hostIp: '127.0.0.1',
        startTimeMs: now,
        nowMs: now + 20,
      });
      expect(status.conditions?.map((c) => c.lastTransitionTime)).toEqual(Array(5).fill('2026-11-30T00:00:07Z'));
      expect(status.startTime).toBe('2026-11-30T00:00:07Z');
      expect(status.containerStatuses?.map((c) => c.state?.running?.startedAt)).toEqual(['2026-11-30T00:00:07Z', '2026-11-30T00:00:07Z']);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('generatePodStatus: the fields of a status and their order (what kubectl -o json and the watch frames show)', () => {
  it('writes the optional fields only when set, in the order of the API', () => {
    const plain = generatePodStatus({
      pod: pod('Always', ['a']),
      runtimePod: null,
      waiting: {},
      hostIp: '10.0.0.1',
      startTimeMs: T,
      nowMs: T,
    });
    expect(Object.keys(plain)).toEqual(['phase', 'conditions', 'hostIP', 'hostIPs', 'startTime', 'containerStatuses', 'qosClass']);
    expect(Object.keys(plain.conditions![0])).toEqual(['type', 'status', 'lastProbeTime', 'lastTransitionTime']);
    expect(Object.keys(plain.conditions![1])).toEqual(['type', 'status', 'lastProbeTime', 'lastTransitionTime']);
    expect(Object.keys(plain.conditions![2])).toEqual(['type', 'status', 'lastProbeTime', 'lastTransitionTime', 'reason', 'message']);
    const p: Pod = { ...pod('Always', ['a']), spec: { ...pod('Always', ['a']).spec!, initContainers: [{ name: 'i', image: 'img' }] } };
    const full = generatePodStatus({
      pod: p,
      runtimePod: { ...runtimePod([rc('a', 'running')]), podIp: '10.1.0.5' },
      waiting: {},
      hostIp: '10.0.0.1',
      startTimeMs: T,
      nowMs: T,
      failure: { reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' },
    });
    expect(Object.keys(full)).toEqual([
      'phase',
      'reason',
      'message',
      'conditions',
      'hostIP',
      'hostIPs',
      'podIP',
      'podIPs',
      'startTime',
      'initContainerStatuses',
      'containerStatuses',
      'qosClass',
    ]);
  });
});
