// Issue #12 item 9: sidecars (init containers with restartPolicy Always) are probed as the kubelet
// does (prober_manager.go AddPod / UpdatePodStatus, kuberuntime computeInitContainerActions), and a
// completed init container reports ready: true.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newProberManager, type ProbeRunner } from '../../../src/main/prober/prober-manager.js';
import { generatePodStatus } from '../../../src/main/status/generate.js';
import type { Container, Pod, Probe } from '../../../src/shared/api.js';
import { hashContainer } from '../../../src/shared/hash.js';
import type { PodEventRecord } from '../../../src/shared/sync-tasks.js';
import type { ProbeKill } from '../../../src/shared/probe-tasks.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';
import { computePodActions } from '../../../src/workers/kuberuntime/compute-pod-actions.js';
import { sandboxHash } from '../../../src/workers/kubetypes/label-keys.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const NOW = 1_000_000;
const UID = 'uid-1';
const exec = (cmd: string, p: Partial<Probe> = {}): Probe => ({
  exec: { command: [cmd] },
  periodSeconds: 1,
  timeoutSeconds: 1,
  successThreshold: 1,
  failureThreshold: 1,
  ...p,
});
const ctr = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: 'busybox', command: ['sleep', '3600'], ...extra });

function mkPod(initContainers: Container[], containers: Container[] = [ctr('app')], restartPolicy = 'Always'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', uid: UID },
    spec: { restartPolicy, initContainers, containers },
  } as Pod;
}

let seq = 0;
function rc(pod: Pod, name: string, o: Partial<RuntimeContainer> = {}): RuntimeContainer {
  const spec = [...(pod.spec!.initContainers ?? []), ...pod.spec!.containers].find((c) => c.name === name)!;
  seq++;
  return {
    id: `${name}-${seq}`,
    name,
    sandbox: false,
    attempt: 0,
    state: 'running',
    hash: hashContainer(spec),
    restartCount: 0,
    image: 'busybox',
    imageId: '',
    createdAtMs: NOW - 60_000 + seq,
    startedAtMs: NOW,
    finishedAtMs: 0,
    exitCode: 0,
    reason: '',
    message: '',
    sandboxId: 'sb',
    ...o,
  };
}
const done = (pod: Pod, name: string, exitCode = 0) =>
  rc(pod, name, { state: 'exited', exitCode, finishedAtMs: NOW - 1000, reason: exitCode ? 'Error' : 'Completed' });
function rp(pod: Pod, containers: RuntimeContainer[]): RuntimePod {
  const sb: RuntimeContainer = {
    ...rc(pod, pod.spec!.containers[0].name),
    id: 'sb',
    name: 'POD',
    sandbox: true,
    hash: sandboxHash(pod),
    sandboxId: '',
  };
  return {
    uid: UID,
    name: 'p',
    namespace: 'default',
    sandboxes: [sb],
    containers: containers.slice().sort((a, b) => b.createdAtMs - a.createdAtMs),
    podIp: '',
    terminationGracePeriodSeconds: 30,
  };
}

function setup() {
  const clock = new FakeClock();
  clock.t = NOW;
  const verdicts = new Map<string, 'success' | 'failure'>();
  const runner: ProbeRunner = {
    async run(task) {
      const key = task.kind === 'execProbe' ? task.command.join(' ') : String(task.port);
      const result = verdicts.get(key) ?? 'success';
      return { result, output: result === 'failure' ? `${key} failed` : '' };
    },
  };
  const events: PodEventRecord[] = [];
  const syncs: string[] = [];
  const statusChanges: string[] = [];
  const m = newProberManager(
    { hostIp: '127.0.0.1' },
    {
      runner,
      clock,
      logger: pino({ level: 'silent' }),
      recordEvent: (_p, e) => events.push(e),
      onStatusChange: (uid) => statusChanges.push(uid),
      onKill: (uid) => syncs.push(uid),
    },
  );
  return { clock, m, verdicts, events, syncs, statusChanges };
}

describe('sidecar probes (probe manager)', () => {
  it('runs a sidecar readiness probe: failing keeps it unready, passing makes it ready', async () => {
    const { clock, m, verdicts, events, statusChanges } = setup();
    const pod = mkPod([ctr('proxy', { restartPolicy: 'Always', readinessProbe: exec('ready') } as Partial<Container>)]);
    verdicts.set('ready', 'failure');
    m.updatePod(pod, rp(pod, [{ ...rc(pod, 'proxy'), id: 'px1' }]), '');
    await clock.advance(2_500);
    expect(m.probeStatus(UID, 'proxy', 'px1')).toEqual({ ready: false, started: true });
    expect(events[0]).toMatchObject({
      reason: 'Unhealthy',
      message: 'Readiness probe failed: ready failed',
      fieldPath: 'spec.initContainers{proxy}',
    });
    verdicts.set('ready', 'success');
    await clock.advance(1_000);
    expect(m.probeStatus(UID, 'proxy', 'px1')).toEqual({ ready: true, started: true });
    expect(statusChanges).toContain(UID);
    await m.stop();
  });

  it('asks to restart a sidecar that fails its liveness probe, with the init container message', async () => {
    const { clock, m, verdicts, syncs } = setup();
    const pod = mkPod([ctr('proxy', { restartPolicy: 'Always', livenessProbe: exec('live') } as Partial<Container>)]);
    verdicts.set('live', 'failure');
    m.updatePod(pod, rp(pod, [{ ...rc(pod, 'proxy'), id: 'px1' }]), '');
    await clock.advance(1_500);
    expect(syncs).toEqual([UID]);
    expect(m.probeKills(UID)).toEqual([{ name: 'proxy', containerId: 'px1', message: 'Init container proxy failed liveness probe' }]);
    await m.stop();
  });

  it('reports a sidecar as started once its startup probe succeeds, and asks for a sync then', async () => {
    const { clock, m, verdicts, syncs } = setup();
    const pod = mkPod([
      ctr('proxy', { restartPolicy: 'Always', startupProbe: exec('start', { failureThreshold: 100 }) } as Partial<Container>),
    ]);
    verdicts.set('start', 'failure');
    m.updatePod(pod, rp(pod, [{ ...rc(pod, 'proxy'), id: 'px1' }]), '');
    await clock.advance(2_500);
    expect(m.startedSidecars(UID)).toEqual([]);
    expect(m.probeStatus(UID, 'proxy', 'px1')).toEqual({ ready: false, started: false });
    verdicts.set('start', 'success');
    await clock.advance(1_000);
    expect(m.startedSidecars(UID)).toEqual(['px1']);
    expect(syncs).toEqual([UID]);
    await m.stop();
  });

  it('does not probe regular init containers (their probes are forbidden by validation)', async () => {
    const { clock, m } = setup();
    const pod = mkPod([ctr('setup', { readinessProbe: exec('ready') })]);
    m.updatePod(pod, rp(pod, [{ ...rc(pod, 'setup'), id: 's1' }]), '');
    await clock.advance(2_000);
    expect(m.stats().workers).toBe(0);
    await m.stop();
  });
});

describe('sidecar startup and liveness in computePodActions', () => {
  const startup = ctr('proxy', { restartPolicy: 'Always', startupProbe: exec('start') } as Partial<Container>);
  const pod = mkPod([startup, ctr('setup', { command: ['true'] })]);

  it('holds the next init container back until the sidecar startup probe succeeded', () => {
    const proxy = rc(pod, 'proxy');
    expect(computePodActions(pod, rp(pod, [proxy]), {}, NOW).containersToStart).toEqual([]);
    expect(computePodActions(pod, rp(pod, [proxy]), {}, NOW, [], [proxy.id]).containersToStart.map((s) => s.name)).toEqual(['setup']);
  });

  it('holds the app containers back while the last init container is an unstarted sidecar', () => {
    const last = mkPod([startup]);
    const proxy = rc(last, 'proxy');
    expect(computePodActions(last, rp(last, [proxy]), {}, NOW).containersToStart).toEqual([]);
    expect(computePodActions(last, rp(last, [proxy]), {}, NOW, [], [proxy.id]).containersToStart.map((s) => s.name)).toEqual(['app']);
  });

  it.each([
    ['during initialization', (p: Pod, proxy: RuntimeContainer) => [proxy]],
    ['beside running app containers', (p: Pod, proxy: RuntimeContainer) => [proxy, done(p, 'setup'), rc(p, 'app')]],
  ])('kills and restarts a sidecar that failed its liveness probe %s, even under restartPolicy Never', (_n, containers) => {
    const p = mkPod(
      [ctr('proxy', { restartPolicy: 'Always', livenessProbe: exec('live') } as Partial<Container>), ctr('setup', { command: ['true'] })],
      [ctr('app')],
      'Never',
    );
    const proxy = rc(p, 'proxy');
    const kill: ProbeKill = {
      name: 'proxy',
      containerId: proxy.id,
      message: 'Init container proxy failed liveness probe',
      gracePeriodSeconds: 3,
    };
    const a = computePodActions(p, rp(p, containers(p, proxy)), {}, NOW, [kill]);
    expect(a.containersToKill).toEqual([
      {
        id: proxy.id,
        name: 'proxy',
        message: 'Init container proxy failed liveness probe, will be restarted',
        probeFailed: true,
        gracePeriodSeconds: 3,
      },
    ]);
    expect(a.containersToStart.map((s) => [s.name, s.init, s.reason])).toEqual([['proxy', true, 'ProbeFailed']]);
    expect(a.killPod).toBe(false);
  });
});

describe('init container statuses (generatePodStatus)', () => {
  const status = (
    pod: Pod,
    containers: RuntimeContainer[],
    probeStatus?: (n: string, id: string) => { ready: boolean; started: boolean } | undefined,
  ) =>
    generatePodStatus({
      pod,
      runtimePod: rp(pod, containers),
      waiting: {},
      hostIp: '127.0.0.1',
      startTimeMs: NOW,
      nowMs: NOW,
      ...(probeStatus ? { probeStatus } : {}),
    });

  it('reports a completed init container (exit 0) as ready, a running or failed one as not ready', () => {
    const pod = mkPod([ctr('a', { command: ['true'] }), ctr('b', { command: ['false'] })]);
    expect(status(pod, [done(pod, 'a'), rc(pod, 'b')]).initContainerStatuses!.map((s) => [s.name, s.ready])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    expect(status(pod, [done(pod, 'a'), done(pod, 'b', 1)]).initContainerStatuses!.map((s) => s.ready)).toEqual([true, false]);
  });

  it('makes a sidecar with a failing readiness probe not ready, and the pod not Ready', () => {
    const pod = mkPod([ctr('proxy', { restartPolicy: 'Always', readinessProbe: exec('ready') } as Partial<Container>)]);
    const proxy = rc(pod, 'proxy');
    const containers = [proxy, rc(pod, 'app')];
    const noResult = status(pod, containers);
    expect(noResult.initContainerStatuses![0]).toMatchObject({ name: 'proxy', ready: false, started: true });
    const failing = status(pod, containers, (n) => (n === 'proxy' ? { ready: false, started: true } : undefined));
    expect(failing.initContainerStatuses![0].ready).toBe(false);
    expect(failing.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      message: 'containers with unready status: [proxy]',
    });
    const passing = status(pod, containers, (n) => (n === 'proxy' ? { ready: true, started: true } : undefined));
    expect(passing.initContainerStatuses![0].ready).toBe(true);
    expect(passing.conditions!.find((c) => c.type === 'Ready')!.status).toBe('True');
  });

  it('reports a sidecar waiting for its startup probe as not started and not ready', () => {
    const pod = mkPod([ctr('proxy', { restartPolicy: 'Always', startupProbe: exec('start') } as Partial<Container>)]);
    const s = status(pod, [rc(pod, 'proxy')]);
    expect(s.initContainerStatuses![0]).toMatchObject({ started: false, ready: false });
    expect(s.phase).toBe('Pending');
    expect(s.conditions!.find((c) => c.type === 'Initialized')).toMatchObject({
      status: 'False',
      message: 'containers with incomplete status: [proxy]',
    });
    const started = status(pod, [rc(pod, 'proxy')], () => ({ ready: true, started: true }));
    expect(started.conditions!.find((c) => c.type === 'Initialized')!.status).toBe('True');
  });
});
