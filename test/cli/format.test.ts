import { describe, expect, it } from 'vitest';
import { formatAge, formatTable } from '../../src/cli/client.js';
import { describePod } from '../../src/cli/describe.js';
import { formatPods, podRow, podStatusReason } from '../../src/cli/get.js';
import { sameDesiredState } from '../../src/cli/apply.js';
import type { Pod } from '../../src/shared/api.js';
import { applyPodDefaults } from '../../src/shared/defaults.js';

const now = Date.parse('2026-11-30T02:00:00Z');

function pod(name: string, statuses: NonNullable<Pod['status']>['containerStatuses'], extra: Partial<Pod> = {}): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `u-${name}`, creationTimestamp: '2026-11-30T01:55:00Z', ...extra.metadata },
    spec: { nodeName: 'node1', containers: (statuses ?? []).map((s) => ({ name: s.name, image: 'busybox' })) },
    status: { phase: 'Running', podIP: '', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: statuses, ...extra.status },
  };
}

describe('formatAge (kubectl HumanDuration)', () => {
  it.each([
    [0, '0s'],
    [-5000, '0s'],
    [45_000, '45s'],
    [119_000, '119s'],
    [125_000, '2m5s'],
    [600_000, '10m'],
    [3 * 3600_000 - 1, '179m'],
    [3 * 3600_000 + 60_000, '3h1m'],
    [10 * 3600_000, '10h'],
    [3 * 86400_000 + 3600_000, '3d1h'],
    [30 * 86400_000, '30d'],
    [800 * 86400_000, '2y70d'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatAge(ms)).toBe(text);
  });
});

describe('podStatusReason (kubectl printPod)', () => {
  it('shows the waiting reason, e.g. CrashLoopBackOff, and counts restarts', () => {
    const p = pod('crash', [
      {
        name: 'main',
        image: 'b',
        imageID: '',
        ready: false,
        restartCount: 4,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { exitCode: 3, finishedAt: '2026-11-30T01:59:00Z' } },
      },
    ]);
    expect(podStatusReason(p)).toMatchObject({ reason: 'CrashLoopBackOff', ready: 0, total: 1, restarts: 4 });
    expect(podRow(p, false, now, false)).toEqual(['crash', '0/1', 'CrashLoopBackOff', '4 (60s ago)', '5m']);
  });

  it('shows Completed, ExitCode:N and Signal:N for terminated containers', () => {
    const t = (terminated: object) =>
      pod('t', [
        { name: 'main', image: 'b', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, ...terminated } } },
      ]);
    expect(podStatusReason(t({ reason: 'Completed' })).reason).toBe('Completed');
    expect(podStatusReason(t({ exitCode: 2 })).reason).toBe('ExitCode:2');
    expect(podStatusReason(t({ exitCode: 137, signal: 9 })).reason).toBe('Signal:9');
  });

  it('shows Running when a container still runs next to a Completed one, and Terminating once deleted', () => {
    const statuses = [
      { name: 'a', image: 'b', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
      { name: 'b', image: 'b', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
    ];
    expect(podStatusReason(pod('mix', statuses))).toMatchObject({ reason: 'Running', ready: 1, total: 2 });
    expect(podStatusReason(pod('del', statuses, { metadata: { name: 'del', deletionTimestamp: '2026-11-30T01:59:00Z' } })).reason).toBe(
      'Terminating',
    );
  });
});

describe('formatPods', () => {
  const running = pod('web', [{ name: 'main', image: 'b', imageID: '', ready: true, restartCount: 0, state: { running: {} } }]);
  it('prints a kubectl table', () => {
    expect(formatPods([running], { output: 'table', namespace: 'default', noHeaders: false }, now)).toBe(
      'NAME   READY   STATUS    RESTARTS   AGE\nweb    1/1     Running   0          5m\n',
    );
  });
  it('prints the wide columns and a NAMESPACE column for every namespace', () => {
    const out = formatPods([running], { output: 'wide', namespace: '', noHeaders: false }, now);
    expect(out.split('\n')[0].split(/\s{2,}/)).toEqual([
      'NAMESPACE',
      'NAME',
      'READY',
      'STATUS',
      'RESTARTS',
      'AGE',
      'IP',
      'NODE',
      'NOMINATED NODE',
      'READINESS GATES',
    ]);
    expect(out.split('\n')[1].split(/\s{2,}/)).toEqual([
      'default',
      'web',
      '1/1',
      'Running',
      '0',
      '5m',
      '<none>',
      'node1',
      '<none>',
      '<none>',
    ]);
  });
  it('prints a List for json and the Pod for one name', () => {
    expect(JSON.parse(formatPods([running], { output: 'json', namespace: 'default', noHeaders: false }, now))).toMatchObject({
      kind: 'List',
      items: [{ kind: 'Pod', metadata: { name: 'web' } }],
    });
    expect(formatPods([running], { output: 'yaml', namespace: 'default', name: 'web', noHeaders: false }, now)).toMatch(
      /^apiVersion: v1\nkind: Pod\n/,
    );
  });
});

describe('formatTable', () => {
  it('pads columns by three spaces like kubectl', () => {
    expect(
      formatTable([
        ['A', 'BB'],
        ['CCC', 'D'],
      ]),
    ).toBe('A     BB\nCCC   D\n');
  });
});

/** A pod with two init containers (`a`, a sidecar when asked, and `b`) in the given states. */
const withInit = (init: NonNullable<Pod['status']>['initContainerStatuses'], sidecar = false, initialized = false): Pod => ({
  metadata: { name: 'i', namespace: 'default', uid: 'u-i' },
  spec: {
    containers: [{ name: 'main', image: 'b' }],
    initContainers: [
      { name: 'a', image: 'b', ...(sidecar ? { restartPolicy: 'Always' } : {}) },
      { name: 'b', image: 'b' },
    ],
  },
  status: {
    phase: 'Pending',
    conditions: [{ type: 'Initialized', status: initialized ? 'True' : 'False' }],
    initContainerStatuses: init,
    containerStatuses: [
      { name: 'main', image: 'b', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } },
    ],
  },
});
const done = {
  name: 'a',
  image: 'b',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode: 0, reason: 'Completed' } },
};

describe('podStatusReason with init containers (printPod)', () => {
  it('counts Init:i/n while an init container runs, and names its failure or wait', () => {
    expect(
      podStatusReason(withInit([done, { name: 'b', image: 'b', imageID: '', ready: false, restartCount: 0, state: { running: {} } }]))
        .reason,
    ).toBe('Init:1/2');
    expect(
      podStatusReason(
        withInit([
          done,
          { name: 'b', image: 'b', imageID: '', ready: false, restartCount: 2, state: { terminated: { exitCode: 1, reason: 'Error' } } },
        ]),
      ),
    ).toMatchObject({ reason: 'Init:Error', restarts: 2 });
    expect(
      podStatusReason(
        withInit([done, { name: 'b', image: 'b', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 7 } } }]),
      ).reason,
    ).toBe('Init:ExitCode:7');
    expect(podStatusReason(withInit([{ ...done, state: { waiting: { reason: 'ImagePullBackOff' } } }])).reason).toBe(
      'Init:ImagePullBackOff',
    );
  });
  it('passes a started sidecar, counts it in READY, and reads the app containers once initialized', () => {
    const sidecar = { name: 'a', image: 'b', imageID: '', ready: true, started: true, restartCount: 1, state: { running: {} } };
    const b = { ...done, name: 'b' };
    expect(podStatusReason(withInit([sidecar, b], true, true))).toMatchObject({
      reason: 'PodInitializing',
      ready: 1,
      total: 2,
      restarts: 1,
    });
  });
});

describe('describePod', () => {
  it('shows status, container states, conditions and the pod events', () => {
    const p = pod(
      'web',
      [
        {
          name: 'main',
          image: 'busybox',
          imageID: 'sha256:1',
          containerID: 'docker://abc',
          ready: false,
          restartCount: 2,
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 20s restarting failed container' } },
          lastState: {
            terminated: { exitCode: 3, reason: 'Error', startedAt: '2026-11-30T01:58:00Z', finishedAt: '2026-11-30T01:59:00Z' },
          },
        },
      ],
      { metadata: { name: 'web', labels: { app: 'web' } } },
    );
    const text = describePod(
      p,
      [
        {
          metadata: { name: 'e1' },
          involvedObject: { uid: 'u-web', name: 'web', namespace: 'default' },
          type: 'Warning',
          reason: 'BackOff',
          message: 'Back-off restarting failed container',
          count: 3,
          firstTimestamp: '2026-11-30T01:56:00Z',
          lastTimestamp: '2026-11-30T01:59:00Z',
          source: { component: 'kubelet' },
        },
        {
          metadata: { name: 'e2' },
          involvedObject: { uid: 'other', name: 'other', namespace: 'default' },
          type: 'Normal',
          reason: 'Pulled',
          message: 'not mine',
        },
      ],
      now,
    );
    expect(text).toMatch(/^Name:\s+web\nNamespace:\s+default\n/);
    expect(text).toMatch(/Labels:\s+app=web/);
    expect(text).toMatch(/State:\s+Waiting\n\s+Reason:\s+CrashLoopBackOff/);
    expect(text).toMatch(/Last State:\s+Terminated\n\s+Reason:\s+Error\n\s+Exit Code:\s+3/);
    expect(text).toMatch(/Restart Count:\s+2/);
    expect(text).toMatch(/Conditions:\n\s+Type\s+Status\n\s+Ready\s+True/);
    expect(text).toMatch(/Warning\s+BackOff\s+60s \(x3 over 4m\)\s+kubelet\s+Back-off restarting failed container/);
    expect(text).not.toContain('not mine');
    expect(text).toMatch(/QoS Class:\s+BestEffort/);
  });

  it('shows ports, limits, requests and mounts, and only the events of this UID (not an earlier pod of the same name)', () => {
    const p = pod('db', [
      {
        name: 'main',
        image: 'busybox',
        imageID: '',
        ready: true,
        restartCount: 0,
        state: { running: { startedAt: '2026-11-30T01:58:00Z' } },
      },
    ]);
    p.spec!.containers[0] = {
      name: 'main',
      image: 'busybox',
      ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP', hostPort: 5353 }],
      resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m', memory: '128Mi' } },
      volumeMounts: [
        { name: 'data', mountPath: '/data' },
        { name: 'cfg', mountPath: '/etc/x', readOnly: true, subPath: 'x' },
      ],
    };
    const text = describePod(
      p,
      [
        {
          metadata: { name: 'old' },
          involvedObject: { uid: 'u-earlier', name: 'db', namespace: 'default' },
          type: 'Normal',
          reason: 'Killing',
          message: 'the earlier pod',
        },
        {
          metadata: { name: 'new' },
          involvedObject: { uid: 'u-db', name: 'db', namespace: 'default' },
          type: 'Normal',
          reason: 'Started',
          message: 'this pod',
        },
      ],
      now,
    );
    expect(text).toMatch(/Ports:\s+80\/TCP, 53\/UDP\n\s+Host Ports:\s+0\/TCP, 5353\/UDP/);
    expect(text).toMatch(/Limits:\n\s+cpu:\s+500m\n\s+memory:\s+128Mi\n\s+Requests:\n\s+cpu:\s+250m/);
    expect(text).toMatch(/Mounts:\n\s+\/data from data \(rw\)\n\s+\/etc\/x from cfg \(ro,path="x"\)/);
    expect(text).toMatch(/QoS Class:\s+Burstable/);
    expect(text).toContain('this pod');
    expect(text).not.toContain('the earlier pod');
  });

  it("shows an Init Containers section before Containers, with each init container's state, and none without init containers", () => {
    const p = withInit([
      done,
      { name: 'b', image: 'b', imageID: '', ready: false, restartCount: 1, state: { running: { startedAt: '2026-11-30T01:58:00Z' } } },
    ]);
    p.spec!.initContainers = [
      { name: 'a', image: 'b' },
      { name: 'b', image: 'b', command: ['sh', '-c', 'sleep 5'] },
    ];
    const text = describePod(p, [], now);
    expect(text).toMatch(
      /Init Containers:\n  a:\n[\s\S]*State:\s+Terminated\n\s+Reason:\s+Completed[\s\S]*\n  b:\n[\s\S]*State:\s+Running[\s\S]*Restart Count:\s+1\n[\s\S]*Containers:\n  main:\n/,
    );
    expect(text.indexOf('Init Containers:')).toBeLessThan(text.indexOf('\nContainers:'));
    expect(describePod(pod('web', []), [], now)).not.toContain('Init Containers:');
  });
});

describe('sameDesiredState (apply)', () => {
  it('is true for the same manifest after server defaulting and false after a change', () => {
    const local: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a', labels: { x: '1' } },
      spec: { containers: [{ name: 'm', image: 'busybox' }] },
    };
    const remote = applyPodDefaults(structuredClone(local));
    expect(sameDesiredState(local, remote)).toBe(true);
    expect(sameDesiredState(local, { ...remote, spec: { ...remote.spec!, nodeName: 'node1' } })).toBe(true);
    expect(
      sameDesiredState(
        { ...local, spec: { ...local.spec!, nodeName: 'other' } },
        { ...remote, spec: { ...remote.spec!, nodeName: 'node1' } },
      ),
    ).toBe(false);
    expect(sameDesiredState({ ...local, spec: { containers: [{ name: 'm', image: 'busybox:2' }] } }, remote)).toBe(false);
    expect(sameDesiredState({ ...local, metadata: { name: 'a', labels: { x: '2' } } }, remote)).toBe(false);
  });
});
