import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newProberManager, type ProbeRunner } from '../../../src/main/prober/prober-manager.js';
import { applyProbeResult, newProbeWorkerState } from '../../../src/main/prober/results-manager.js';
import type { Pod, Probe } from '../../../src/shared/api.js';
import type { PodEventRecord } from '../../../src/shared/sync-tasks.js';
import type { ExecProbeTask, GrpcProbeTask, NetProbeTask, ProbeOutcome } from '../../../src/shared/probe-tasks.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const T0 = 1_000_000;

function pod(probes: { liveness?: Probe; readiness?: Probe; startup?: Probe }, extra: Partial<Pod['spec']> = {}): Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'uid-1' },
    spec: {
      ...extra,
      containers: [
        {
          name: 'main',
          image: 'busybox',
          ports: [{ name: 'http', containerPort: 8080 }],
          ...(probes.liveness ? { livenessProbe: probes.liveness } : {}),
          ...(probes.readiness ? { readinessProbe: probes.readiness } : {}),
          ...(probes.startup ? { startupProbe: probes.startup } : {}),
        },
      ],
    },
  } as Pod;
}

function container(id: string, state: RuntimeContainer['state'] = 'running', startedAtMs = T0): RuntimeContainer {
  return {
    id,
    name: 'main',
    sandbox: false,
    attempt: 0,
    state,
    hash: 'h',
    restartCount: 0,
    image: 'busybox',
    imageId: '',
    createdAtMs: startedAtMs,
    startedAtMs,
    finishedAtMs: 0,
    exitCode: 0,
    reason: '',
    message: '',
    sandboxId: 'sandbox-1',
  };
}

function runtimePod(...containers: RuntimeContainer[]): RuntimePod {
  const sandbox = { ...container('sandbox-1'), name: 'POD', sandbox: true, sandboxId: '' };
  return { uid: 'uid-1', name: 'p', namespace: 'default', sandboxes: [sandbox], containers, podIp: '', terminationGracePeriodSeconds: 30 };
}

/** A runner whose verdicts a test sets per probe command / target; records every task. */
function fakeRunner() {
  const tasks: Array<ExecProbeTask | NetProbeTask | GrpcProbeTask> = [];
  const verdicts = new Map<string, ProbeOutcome['result']>();
  const direct: NetProbeTask[] = [];
  const runner: ProbeRunner = {
    async run(task) {
      tasks.push(task);
      const key =
        task.kind === 'execProbe' ? task.command.join(' ') : task.kind === 'grpcProbe' ? `grpc:${task.port}` : `${task.mode}:${task.port}`;
      const result = verdicts.get(key) ?? 'success';
      return { result, output: result === 'failure' ? `${key} failed` : '' };
    },
  };
  // Direct probes (no sandbox netns) run on the main thread: recorded in `tasks` too (and in `direct`), answered alike.
  const directProbe = (task: NetProbeTask) => {
    direct.push(task);
    return runner.run(task);
  };
  return { runner, tasks, verdicts, direct, directProbe };
}

function setup(hostIp = '127.0.0.1') {
  const clock = new FakeClock();
  clock.t = T0;
  const { runner, tasks, verdicts, direct, directProbe } = fakeRunner();
  const events: PodEventRecord[] = [];
  const statusChanges: string[] = [];
  const kills: string[] = [];
  const m = newProberManager(
    { hostIp, maxInFlight: 4 },
    {
      runner,
      directProbe,
      clock,
      logger: pino({ level: 'silent' }),
      recordEvent: (_pod, e) => events.push(e),
      onStatusChange: (uid) => statusChanges.push(uid),
      onKill: (uid) => kills.push(uid),
    },
  );
  return { clock, m, tasks, verdicts, direct, events, statusChanges, kills };
}

const exec = (cmd: string, p: Partial<Probe> = {}): Probe => ({
  exec: { command: cmd.split(' ') },
  periodSeconds: 1,
  timeoutSeconds: 1,
  successThreshold: 1,
  failureThreshold: 3,
  ...p,
});

describe('probe worker thresholds (applyProbeResult)', () => {
  it.each([
    [
      'readiness starts not ready and needs successThreshold successes in a row',
      'readiness',
      2,
      3,
      ['success', 'failure', 'success', 'success'],
      ['failure', 'failure', 'failure', 'success'],
    ],
    [
      'readiness goes unready only after failureThreshold failures in a row',
      'readiness',
      1,
      2,
      ['success', 'failure', 'success', 'failure', 'failure'],
      ['success', 'success', 'success', 'success', 'failure'],
    ],
    [
      'liveness starts healthy and fails after failureThreshold failures',
      'liveness',
      1,
      3,
      ['failure', 'failure', 'failure'],
      ['success', 'success', 'failure'],
    ],
    ['unknown verdicts change nothing', 'liveness', 1, 2, ['failure', 'unknown', 'failure'], ['success', 'success', 'failure']],
  ] as const)('%s', (_name, type, successThreshold, failureThreshold, verdicts, published) => {
    const s = newProbeWorkerState(type, 'c1');
    const seen = verdicts.map((v) => (applyProbeResult(s, v, { successThreshold, failureThreshold }), s.result));
    expect(seen).toEqual(published);
  });

  it('puts a liveness worker on hold after a published failure', () => {
    const s = newProbeWorkerState('liveness', 'c1');
    const t = { successThreshold: 1, failureThreshold: 1 };
    expect(applyProbeResult(s, 'failure', t)).toEqual({ changed: true, kill: true });
    expect(s.onHold).toBe(true);
    expect(applyProbeResult(s, 'success', t)).toEqual({ changed: false, kill: false });
    expect(s.result).toBe('failure');
  });
});

/** Where a probe without a host goes: [pod spec extra, pod IP, the task's target], with node address 10.0.0.5. */
const kProbeTargets = [
  [{}, '', { host: '127.0.0.1', sandboxId: 'sandbox-1' }],
  [{ hostNetwork: true }, '', { host: '10.0.0.5' }],
  [{}, '172.17.0.9', { host: '172.17.0.9' }],
] as const;

describe('probe manager', () => {
  it('keeps a container with a readiness probe unready until the probe succeeds, without kills', async () => {
    const { clock, m, verdicts, events, statusChanges, kills } = setup();
    verdicts.set('cat /ready', 'failure');
    const p = pod({ readiness: exec('cat /ready', { failureThreshold: 1 }) });
    m.updatePod(p, runtimePod(container('c1')), '');
    expect(m.probeStatus('uid-1', 'main', 'c1')).toEqual({ ready: false, started: true });
    await clock.advance(3_500);
    expect(m.probeStatus('uid-1', 'main', 'c1')).toEqual({ ready: false, started: true });
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events[0]).toEqual({
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: cat /ready failed',
      fieldPath: 'spec.containers{main}',
    });
    verdicts.set('cat /ready', 'success');
    await clock.advance(1_000);
    expect(m.probeStatus('uid-1', 'main', 'c1')).toEqual({ ready: true, started: true });
    expect(statusChanges).toEqual(['uid-1']);
    verdicts.set('cat /ready', 'failure');
    await clock.advance(1_000);
    expect(m.probeStatus('uid-1', 'main', 'c1')?.ready).toBe(false);
    expect(kills).toEqual([]);
    expect(m.probeKills('uid-1')).toEqual([]);
    await m.stop();
  });

  it('asks for a kill after failureThreshold liveness failures, then holds until a new container runs', async () => {
    const { clock, m, tasks, verdicts, events, kills } = setup();
    verdicts.set('false', 'failure');
    const p = pod({ liveness: exec('false', { failureThreshold: 3, terminationGracePeriodSeconds: 5 }) });
    m.updatePod(p, runtimePod(container('c1')), '');
    await clock.advance(1_500); // probes at ~0 s and ~1 s (first run jittered by < 10 % of the period)
    expect(kills).toEqual([]);
    await clock.advance(1_000);
    expect(kills).toEqual(['uid-1']);
    expect(m.probeKills('uid-1')).toEqual([
      { name: 'main', containerId: 'c1', message: 'Container main failed liveness probe', gracePeriodSeconds: 5 },
    ]);
    expect(events.filter((e) => e.message === 'Liveness probe failed: false failed')).toHaveLength(3);
    const probed = tasks.length;
    await clock.advance(5_000);
    expect(tasks.length).toBe(probed); // on hold: no more probes of c1
    // The sync restarted it: a new container ID resets the worker.
    m.updatePod(p, runtimePod(container('c2', 'running', clock.now()), container('c1', 'exited')), '');
    expect(m.probeKills('uid-1')).toEqual([]);
    verdicts.set('false', 'success');
    await clock.advance(3_000);
    expect(tasks.length).toBeGreaterThan(probed);
    expect(tasks.at(-1)).toMatchObject({ kind: 'execProbe', containerId: 'c2', command: ['false'], timeoutMs: 1000 });
    expect(kills).toEqual(['uid-1']);
    await m.stop();
  });

  it('holds liveness and readiness back until the startup probe succeeds', async () => {
    const { clock, m, tasks, verdicts, statusChanges } = setup();
    verdicts.set('startup', 'failure');
    const p = pod({ startup: exec('startup', { failureThreshold: 100 }), liveness: exec('live'), readiness: exec('ready') });
    m.updatePod(p, runtimePod(container('c1')), '');
    await clock.advance(5_000);
    expect(new Set(tasks.map((t) => (t as ExecProbeTask).command[0]))).toEqual(new Set(['startup']));
    expect(m.probeStatus('uid-1', 'main', 'c1')).toEqual({ ready: false, started: false });
    verdicts.set('startup', 'success');
    await clock.advance(1_000);
    expect(m.probeStatus('uid-1', 'main', 'c1')?.started).toBe(true);
    await clock.advance(2_000);
    expect(m.probeStatus('uid-1', 'main', 'c1')).toEqual({ ready: true, started: true });
    const kinds = tasks.map((t) => (t as ExecProbeTask).command[0]);
    expect(kinds).toContain('live');
    expect(kinds).toContain('ready');
    const startupRuns = kinds.filter((k) => k === 'startup').length;
    await clock.advance(3_000);
    expect(tasks.map((t) => (t as ExecProbeTask).command[0]).filter((k) => k === 'startup').length).toBe(startupRuns); // done once started
    expect(statusChanges.length).toBeGreaterThanOrEqual(2);
    await m.stop();
  });

  it('runs the readiness probe as soon as the startup probe succeeds, not a readiness period later (upstream e2e "should be ready immediately after startupProbe succeeds")', async () => {
    const { clock, m, tasks, verdicts } = setup();
    verdicts.set('startup', 'failure');
    const p = pod({
      startup: exec('startup', { periodSeconds: 1, failureThreshold: 100 }),
      readiness: exec('ready', { periodSeconds: 60 }),
    });
    m.updatePod(p, runtimePod(container('c1')), '');
    await clock.advance(4_000);
    expect(m.probeStatus('uid-1', 'main', 'c1')).toEqual({ ready: false, started: false });
    verdicts.set('startup', 'success');
    await clock.advance(1_000); // the startup probe's next run passes
    expect(m.probeStatus('uid-1', 'main', 'c1')?.started).toBe(true);
    await clock.advance(200); // the readiness probe runs at the end of this tick, 55 s before its next period
    expect(tasks.map((t) => (t as ExecProbeTask).command[0])).toContain('ready');
    expect(m.probeStatus('uid-1', 'main', 'c1')).toEqual({ ready: true, started: true });
    await m.stop();
  });

  it('kills a container whose startup probe keeps failing', async () => {
    const { clock, m, verdicts, kills } = setup();
    verdicts.set('startup', 'failure');
    m.updatePod(pod({ startup: exec('startup', { failureThreshold: 2 }) }), runtimePod(container('c1')), '');
    await clock.advance(2_500);
    expect(kills).toEqual(['uid-1']);
    expect(m.probeKills('uid-1')).toEqual([{ name: 'main', containerId: 'c1', message: 'Container main failed startup probe' }]);
    await m.stop();
  });

  it('waits initialDelaySeconds after the container started before the first probe', async () => {
    const { clock, m, tasks } = setup();
    m.updatePod(pod({ liveness: exec('live', { initialDelaySeconds: 10 }) }), runtimePod(container('c1', 'running', T0)), '');
    await clock.advance(9_000);
    expect(tasks).toHaveLength(0);
    await clock.advance(3_000);
    expect(tasks.length).toBeGreaterThan(0);
    await m.stop();
  });

  it('stops probing when the container stops or the pod goes', async () => {
    const { clock, m, tasks } = setup();
    const p = pod({ liveness: exec('live') });
    m.updatePod(p, runtimePod(container('c1')), '');
    await clock.advance(2_500);
    const n = tasks.length;
    m.updatePod(p, runtimePod(container('c1', 'exited')), '');
    await clock.advance(5_000);
    expect(tasks.length).toBe(n);
    m.updatePod(p, runtimePod(container('c2')), '');
    await clock.advance(2_000);
    expect(tasks.length).toBeGreaterThan(n);
    m.removePod('uid-1');
    const after = tasks.length;
    await clock.advance(5_000);
    expect(tasks.length).toBe(after);
    expect(m.stats()).toMatchObject({ workers: 0, jobs: 0, timers: 0 });
    await m.stop();
  });

  it('sends httpGet and tcpSocket probes to the sandbox netns without a pod IP, to the node on hostNetwork, to the pod IP otherwise', async () => {
    const http: Probe = {
      httpGet: { path: '/healthz', port: 'http', httpHeaders: [{ name: 'X-A', value: 'b' }] },
      periodSeconds: 1,
      timeoutSeconds: 2,
    };
    const tcp: Probe = { tcpSocket: { port: 8080 }, periodSeconds: 1 };
    for (const [extra, podIp, want] of kProbeTargets) {
      const { clock, m, tasks, direct } = setup('10.0.0.5');
      m.updatePod(pod({ liveness: http, readiness: tcp }, extra), runtimePod(container('c1')), podIp);
      await clock.advance(1_500);
      // Only the netns probes take the worker-pool hop; the others are dialled by the main thread.
      expect(direct.length > 0).toBe(!('sandboxId' in want));
      const h = tasks.find((t) => t.kind === 'netProbe' && t.mode === 'http') as NetProbeTask;
      const t = tasks.find((x) => x.kind === 'netProbe' && x.mode === 'tcp') as NetProbeTask;
      expect(h).toEqual({
        kind: 'netProbe',
        protocol: 1,
        mode: 'http',
        port: 8080,
        scheme: 'HTTP',
        path: '/healthz',
        headers: [{ name: 'X-A', value: 'b' }],
        timeoutMs: 2000,
        ...want,
      });
      expect(t).toEqual({ kind: 'netProbe', protocol: 1, mode: 'tcp', port: 8080, timeoutMs: 1000, ...want });
      await m.stop();
    }
  });

  it("sends grpc probes to the worker pool: the sandbox netns without a pod IP, the node on hostNetwork, the pod IP otherwise; service as given, '' by default", async () => {
    for (const [extra, podIp, want] of kProbeTargets) {
      const { clock, m, tasks, direct } = setup('10.0.0.5');
      m.updatePod(
        pod(
          {
            liveness: { grpc: { port: 9000, service: 'db' }, periodSeconds: 1, timeoutSeconds: 2 },
            readiness: { grpc: { port: 9001 }, periodSeconds: 1 },
          },
          extra,
        ),
        runtimePod(container('c1')),
        podIp,
      );
      await clock.advance(1_500);
      expect(direct).toEqual([]);
      const grpc = tasks.filter((t): t is GrpcProbeTask => t.kind === 'grpcProbe');
      expect([9000, 9001].map((port) => grpc.find((t) => t.port === port))).toEqual([
        { kind: 'grpcProbe', protocol: 1, port: 9000, service: 'db', timeoutMs: 2000, ...want },
        { kind: 'grpcProbe', protocol: 1, port: 9001, service: '', timeoutMs: 1000, ...want },
      ]);
      await m.stop();
    }
  });
});
