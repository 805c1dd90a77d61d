import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../src/shared/api.js';
import { hashContainer } from '../../../src/shared/hash.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';
import { computePodActions } from '../../../src/workers/kuberuntime/compute-pod-actions.js';
import { sandboxHash } from '../../../src/workers/kubetypes/label-keys.js';

const NOW = 1_700_000_000_000;
const UID = 'uid-probe';
const ctr = (name: string): Container => ({
  name,
  image: 'kubelet-ts/busybox:1.35',
  imagePullPolicy: 'IfNotPresent',
  command: ['sleep', '3600'],
});
const mkPod = (restartPolicy: string): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: UID },
    spec: { restartPolicy, containers: [ctr('a'), ctr('b')] },
  }) as Pod;

function running(pod: Pod, name: string, id: string, restartCount = 0): RuntimeContainer {
  return {
    id,
    name,
    sandbox: false,
    attempt: restartCount,
    state: 'running',
    hash: hashContainer(pod.spec!.containers.find((c) => c.name === name)!),
    restartCount,
    image: 'kubelet-ts/busybox:1.35',
    imageId: 'sha256:x',
    createdAtMs: NOW - 60_000,
    startedAtMs: NOW - 60_000,
    finishedAtMs: 0,
    exitCode: 0,
    reason: '',
    message: '',
    sandboxId: 'sb',
  };
}
function rp(pod: Pod, containers: RuntimeContainer[]): RuntimePod {
  const sandbox = { ...running(pod, 'a', 'sb'), name: 'POD', sandbox: true, hash: sandboxHash(pod), sandboxId: '' };
  return { uid: UID, name: 'web', namespace: 'default', sandboxes: [sandbox], containers, podIp: '', terminationGracePeriodSeconds: 30 };
}

describe('computePodActions with liveness/startup probe failures', () => {
  it('kills the failed container and restarts it with the next restart count (restartPolicy Always)', () => {
    const pod = mkPod('Always');
    const a = running(pod, 'a', 'a-1', 2);
    const actions = computePodActions(pod, rp(pod, [a, running(pod, 'b', 'b-1')]), {}, NOW, [
      { name: 'a', containerId: 'a-1', message: 'Container a failed liveness probe', gracePeriodSeconds: 3 },
    ]);
    expect(actions.killPod).toBe(false);
    expect(actions.containersToKill).toEqual([
      { id: 'a-1', name: 'a', message: 'Container a failed liveness probe, will be restarted', probeFailed: true, gracePeriodSeconds: 3 },
    ]);
    expect(actions.containersToStart).toEqual([expect.objectContaining({ name: 'a', reason: 'ProbeFailed', restartCount: 3 })]);
  });

  it('kills without restarting under restartPolicy Never (the pod stops when nothing is left)', () => {
    const pod = mkPod('Never');
    const only = { ...pod, spec: { ...pod.spec!, containers: [ctr('a')] } } as Pod;
    const actions = computePodActions(only, rp(only, [running(only, 'a', 'a-1')]), {}, NOW, [
      { name: 'a', containerId: 'a-1', message: 'Container a failed startup probe' },
    ]);
    expect(actions.containersToStart).toEqual([]);
    expect(actions.killPod).toBe(true);
  });

  it('ignores a failure reported for an older container of that name', () => {
    const pod = mkPod('Always');
    const actions = computePodActions(pod, rp(pod, [running(pod, 'a', 'a-2', 1), running(pod, 'b', 'b-1')]), {}, NOW, [
      { name: 'a', containerId: 'a-1', message: 'Container a failed liveness probe' },
    ]);
    expect(actions.containersToKill).toEqual([]);
    expect(actions.containersToStart).toEqual([]);
    expect(actions.killPod).toBe(false);
  });
});
