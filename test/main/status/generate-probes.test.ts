import { describe, expect, it } from 'vitest';
import { generatePodStatus } from '../../../src/main/status/generate.js';
import type { Pod, Probe } from '../../../src/shared/api.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';

const probe: Probe = { exec: { command: ['true'] } };
const pod = (extra: Record<string, unknown>): Pod =>
  ({ metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers: [{ name: 'main', image: 'i', ...extra }] } }) as Pod;
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
const gen = (p: Pod, probeStatus?: (n: string, id: string) => { ready: boolean; started: boolean } | undefined, idScheme = 'docker') =>
  generatePodStatus({ pod: p, runtimePod, waiting: {}, hostIp: '127.0.0.1', startTimeMs: 0, nowMs: 1000, probeStatus, idScheme });
const cond = (s: ReturnType<typeof gen>, type: string) => s.conditions!.find((c) => c.type === type)!.status;

describe('status from probe results', () => {
  it.each([
    ['no probes: running means ready and started', {}, undefined, true, true],
    ['readiness probe without a result yet: not ready', { readinessProbe: probe }, undefined, false, true],
    ['readiness probe that succeeded: ready', { readinessProbe: probe }, { ready: true, started: true }, true, true],
    ['readiness probe that failed: not ready', { readinessProbe: probe }, { ready: false, started: true }, false, true],
    ['startup probe not passed yet: neither started nor ready', { startupProbe: probe }, { ready: false, started: false }, false, false],
    ['startup probe without a result yet', { startupProbe: probe }, undefined, false, false],
  ] as const)('%s', (_name, extra, result, ready, started) => {
    const s = gen(pod(extra), () => result);
    expect(s.containerStatuses![0]).toMatchObject({ ready, started });
    expect(cond(s, 'Ready')).toBe(ready ? 'True' : 'False');
    expect(cond(s, 'ContainersReady')).toBe(ready ? 'True' : 'False');
  });

  it('asks the probe manager about the running container by its Docker ID', () => {
    const asked: string[] = [];
    gen(pod({ readinessProbe: probe }), (n, id) => void asked.push(`${n}/${id}`));
    expect(asked).toEqual(['main/c1']);
  });

  it.each(['docker', 'containerd', ''])('asks the prober by the runtime ID whatever the ID scheme (%j)', (scheme) => {
    const asked: string[] = [];
    const s = gen(
      pod({ readinessProbe: probe }),
      (_n, id) => {
        asked.push(id);
        return { ready: true, started: true };
      },
      scheme,
    );
    expect(asked).toEqual(['c1']);
    expect(s.containerStatuses![0]).toMatchObject({ ready: true, containerID: scheme ? `${scheme}://c1` : 'c1' });
  });
});
