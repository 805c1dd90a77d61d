// Issue #39 item 8: the pure parts of ephemeral containers: computePodActions'
// EphemeralContainersToStart (kuberuntime_manager.go), their validation
// (validateEphemeralContainers, ValidatePodEphemeralContainersUpdate) and ephemeralContainerStatuses.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { applyPodDefaults } from '../../../src/shared/defaults.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';
import { validatePod } from '../../../src/shared/validation.js';
import { validateEphemeralContainersUpdate } from '../../../src/shared/validation-ephemeral.js';
import { formatFieldError } from '../../../src/shared/errors.js';
import { generatePodStatus } from '../../../src/main/status/generate.js';
import { computePodActions } from '../../../src/workers/kuberuntime/compute-pod-actions.js';
import { hashContainer } from '../../../src/shared/hash.js';
import { sandboxHash } from '../../../src/workers/kubetypes/label-keys.js';

const NOW = 1_700_000_000_000;
const UID = 'aaaaaaaa-2222-3333-4444-555555555555';
const image = 'kubelet-ts/busybox:1.35';

function mkPod(ephemeral: Array<Record<string, unknown>> = [{ name: 'dbg', image, targetContainerName: 'main' }]): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: UID },
    spec: {
      restartPolicy: 'Always',
      containers: [{ name: 'main', image, command: ['sleep', '3600'] }],
      ephemeralContainers: ephemeral as never,
    },
  };
}
function ctr(name: string, o: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    id: `${name}-id`,
    name,
    sandbox: false,
    attempt: 0,
    state: 'running',
    hash: name === 'main' ? hashContainer(mkPod().spec!.containers[0]) : 'h',
    restartCount: 0,
    image,
    imageId: 'sha256:x',
    createdAtMs: NOW,
    startedAtMs: NOW,
    finishedAtMs: 0,
    exitCode: 0,
    reason: '',
    message: '',
    sandboxId: 'sb',
    ...o,
  };
}
function runtime(pod: Pod, containers: RuntimeContainer[]): RuntimePod {
  const sandbox = { ...ctr('POD'), id: 'sb', sandbox: true, hash: sandboxHash(pod), sandboxId: '' };
  return { uid: UID, name: 'web', namespace: 'default', sandboxes: [sandbox], containers, podIp: '', terminationGracePeriodSeconds: 30 };
}
const plan = (pod: Pod, containers: RuntimeContainer[]) => computePodActions(pod, runtime(pod, containers), {}, NOW);

describe('ephemeral containers: EphemeralContainersToStart', () => {
  it('starts an ephemeral container that has no container yet, in the running sandbox, and nothing else', () => {
    const a = plan(mkPod(), [ctr('main')]);
    expect(a).toMatchObject({ killPod: false, createSandbox: false, containersToKill: [] });
    expect(a.containersToStart).toEqual([
      { index: 0, ephemeral: true, name: 'dbg', reason: 'NotPresent', hash: expect.any(String), restartCount: 0 },
    ]);
  });
  it('never restarts one that exited, and never kills a running one as "not in the pod spec"', () => {
    expect(plan(mkPod(), [ctr('main'), ctr('dbg', { state: 'exited', exitCode: 1, finishedAtMs: NOW - 1 })]).containersToStart).toEqual([]);
    const running = plan(mkPod(), [ctr('main'), ctr('dbg')]);
    expect(running.containersToStart).toEqual([]);
    expect(running.containersToKill).toEqual([]);
  });
  it('starts none while the pod is killed or gets a new sandbox', () => {
    const pod = mkPod();
    const a = computePodActions(pod, null, {}, NOW);
    expect(a.createSandbox).toBe(true);
    expect(a.containersToStart.map((c) => c.name)).toEqual(['main']);
    const deleting = { ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date(NOW).toISOString() } };
    expect(plan(deleting, [ctr('main')]).containersToStart).toEqual([]);
  });
});

describe('ephemeral containers: validation', () => {
  const errors = (ephemeral: Array<Record<string, unknown>>) => validatePod(applyPodDefaults(mkPod(ephemeral))).map(formatFieldError);
  it('accepts a plain debug container, and refuses ports, probes, lifecycle, resources, a name in use and an unknown target', () => {
    expect(errors([{ name: 'dbg', image, targetContainerName: 'main', stdin: true, tty: true, resources: {} }])).toEqual([]);
    expect(
      errors([
        {
          name: 'dbg',
          image,
          ports: [{ containerPort: 80 }],
          readinessProbe: { exec: { command: ['true'] } },
          resources: { limits: { cpu: '1' } },
        },
      ]),
    ).toEqual([
      'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
    ]);
    expect(errors([{ name: 'main', image }])).toEqual(['spec.ephemeralContainers[0].name: Duplicate value: "main"']);
    expect(
      errors([
        { name: 'dbg', image },
        { name: 'dbg', image },
      ]),
    ).toEqual(['spec.ephemeralContainers[1].name: Duplicate value: "dbg"']);
    expect(errors([{ name: 'dbg', image, targetContainerName: 'nope' }])).toEqual([
      'spec.ephemeralContainers[0].targetContainerName: Not found: "nope"',
    ]);
  });
  it('allows only additions on update', () => {
    const old = applyPodDefaults(mkPod());
    const added = applyPodDefaults(
      mkPod([
        { name: 'dbg', image, targetContainerName: 'main' },
        { name: 'two', image },
      ]),
    );
    expect(validateEphemeralContainersUpdate(added, old)).toEqual([]);
    expect(validateEphemeralContainersUpdate(applyPodDefaults(mkPod([{ name: 'two', image }])), old).map(formatFieldError)).toEqual([
      'spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed',
    ]);
    expect(
      validateEphemeralContainersUpdate(applyPodDefaults(mkPod([{ name: 'dbg', image: 'other' }])), old).map(formatFieldError),
    ).toEqual(['spec.ephemeralContainers[0]: Forbidden: existing ephemeral containers "dbg" may not be changed']);
  });
});

describe('ephemeral containers: status', () => {
  it('reports ephemeralContainerStatuses in spec order, never ready, outside phase and readiness', () => {
    const pod = mkPod([
      { name: 'dbg', image },
      { name: 'later', image },
    ]);
    const status = generatePodStatus({
      pod,
      runtimePod: runtime(pod, [ctr('main'), ctr('dbg', { state: 'exited', exitCode: 0, finishedAtMs: NOW, reason: 'Completed' })]),
      waiting: {},
      nowMs: NOW,
      hostIp: '127.0.0.1',
      startTimeMs: NOW,
    } as never);
    expect(status.phase).toBe('Running');
    expect(status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(status.ephemeralContainerStatuses).toMatchObject([
      { name: 'dbg', ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } },
      { name: 'later', ready: false, state: { waiting: { reason: 'ContainerCreating' } } },
    ]);
    expect(
      generatePodStatus({
        pod: { ...pod, spec: { ...pod.spec!, ephemeralContainers: undefined } },
        runtimePod: runtime(pod, [ctr('main')]),
        waiting: {},
        nowMs: NOW,
        hostIp: '127.0.0.1',
        startTimeMs: NOW,
      } as never),
    ).not.toHaveProperty('ephemeralContainerStatuses');
  });
});
