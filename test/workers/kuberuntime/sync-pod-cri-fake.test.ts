// syncPodCri / killCriPodTask / criRelist on the Docker implementation of the CRI (runtime/docker, dockershim's role) over the in-memory fake: the same syncer code on the second implementation of the seam (#40 item 1), no engine needed.
import { describe, expect, it } from 'vitest';
import { criFakeDeps } from './fake-deps.js';
import type { Pod } from '../../../src/shared/api.js';
import { PROTOCOL_VERSION } from '../../../src/shared/thread-wire.js';
import { killCriPodTask, type CriSyncDeps } from '../../../src/workers/kuberuntime/kill-pod.js';
import { criRelist } from '../../../src/workers/kuberuntime/runtime-pod.js';
import { syncPodCri } from '../../../src/workers/kuberuntime/sync-pod.js';
import { syncPodTask } from '../../support/sync-worker.js';

async function setUp() {
  const { fake, deps, advance } = await criFakeDeps('kts-sync-cri-fake-');
  return { fake, deps, advance };
}

const pod: Pod = {
  metadata: { name: 'web', namespace: 'prod', uid: 'uid-1' },
  spec: {
    restartPolicy: 'Always',
    containers: [{ name: 'app', image: 'kubelet-ts/busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
  },
};

describe('syncPodCri on the Docker implementation of the CRI (fake engine)', () => {
  it('starts the pod, reads it back in the CRI words, does nothing the second time, relists and removes it', async () => {
    const { deps } = await setUp();
    const r = await syncPodCri(deps, syncPodTask(pod));
    expect(r.steps.map((s) => `${s.action} ${s.target} ${s.ok}${s.ok ? '' : ` ${s.message}`}`)).toEqual([
      'CreatePodSandbox POD true',
      'StartContainer app true',
    ]);
    expect(r.runtimePod?.sandboxes.map((s) => [s.name, s.state, s.attempt])).toEqual([['POD', 'running', 0]]);
    expect(r.runtimePod?.containers.map((c) => [c.name, c.state, c.restartCount, c.sandboxId])).toEqual([
      ['app', 'running', 0, r.runtimePod!.sandboxes[0].id],
    ]);
    expect(r.runtimePod?.containers[0].hash).not.toBe('');
    const again = await syncPodCri(deps, syncPodTask(pod));
    expect(again.steps).toEqual([]);
    const relisted = await criRelist(deps.runtime, 'node-a');
    expect(relisted.containers.map((c) => `${c.name}:${c.state}`).sort()).toEqual(['POD:running', 'app:running']);
    const killed = await killCriPodTask(deps, {
      kind: 'killPod',
      protocol: PROTOCOL_VERSION,
      podUid: 'uid-1',
      gracePeriodSeconds: 0,
      remove: true,
    });
    expect(killed.steps.filter((s) => !s.ok)).toEqual([]);
    expect(killed.runtimePod).toBeNull();
    expect((await criRelist(deps.runtime, 'node-a')).containers).toEqual([]);
  });

  it('restarts a container that exited, with the restart count on its annotation, and holds the next restart back', async () => {
    const { fake, deps } = await setUp();
    const first = await syncPodCri(deps, syncPodTask(pod));
    const id = first.runtimePod!.containers[0].id;
    fake.exit(id, 1);
    const second = await syncPodCri(deps, syncPodTask(pod));
    expect(second.steps.map((s) => `${s.action} ${s.target} ${s.ok}`)).toEqual(['StartContainer app true']);
    expect(second.runtimePod?.containers.map((c) => [c.restartCount, c.state])).toEqual([
      [1, 'running'],
      [0, 'exited'],
    ]);
    fake.exit(second.runtimePod!.containers[0].id, 1);
    const third = await syncPodCri(deps, syncPodTask(pod, { backoff: second.backoff }));
    expect(third.waiting.app?.reason).toBe('CrashLoopBackOff');
  });

  it.each([
    [
      'an FQDN hostname over 64 characters fails the sandbox',
      { hostname: 'h'.repeat(40), subdomain: 's'.repeat(20), setHostnameAsFQDN: true },
      {},
      'CreatePodSandbox',
      'CreatePodSandboxError',
      'ContainerCreating',
      /FQDN .* is too long/,
      true,
    ],
    [
      'a missing ConfigMap in the env is CreateContainerConfigError',
      {},
      { env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'absent', key: 'k' } } }] },
      'StartContainer',
      'CreateContainerConfigError',
      'CreateContainerConfigError',
      /configmap "absent" not found/,
      true,
    ],
    [
      'an absent image with pull policy Never is ErrImageNeverPull',
      {},
      { image: 'absent/image:1', imagePullPolicy: 'Never' },
      'PullImage',
      'ErrImageNeverPull',
      'ErrImageNeverPull',
      /is not present with pull policy of Never/,
      false,
    ],
  ] as const)('%s', async (_n, spec, container, action, reason, waiting, message, requeued) => {
    const { deps } = await setUp();
    const p: Pod = {
      ...pod,
      spec: {
        ...pod.spec!,
        ...spec,
        containers: [
          { ...pod.spec!.containers[0], ...container } as Pod['spec'] extends infer S
            ? S extends { containers: Array<infer C> }
              ? C
              : never
            : never,
        ],
      },
    };
    const r = await syncPodCri(deps, syncPodTask(p));
    const failedStep = r.steps.find((s) => !s.ok);
    expect(failedStep).toMatchObject({ action, reason });
    expect(failedStep?.message).toMatch(message);
    expect(r.waiting.app?.reason).toBe(waiting);
    // As the Docker path: a failed step is retried after kFailedStepRequeueMs; ErrImageNeverPull waits for the periodic resync.
    expect(r.requeueAfterMs > 0).toBe(requeued);
  });

  it('fills the termination message: FallbackToLogsOnError takes the log tail of a failed container', async () => {
    const { fake, deps } = await setUp();
    const tails: string[] = [];
    const withLogs: CriSyncDeps = {
      ...deps,
      logs: {
        tailLogs: async (id) => {
          tails.push(id);
          return 'last words\n';
        },
      },
    };
    const p: Pod = {
      ...pod,
      spec: {
        ...pod.spec!,
        restartPolicy: 'Never',
        containers: [
          { ...pod.spec!.containers[0], terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'FallbackToLogsOnError' },
        ],
      },
    };
    const first = await syncPodCri(withLogs, syncPodTask(p));
    const id = first.runtimePod!.containers[0].id;
    fake.exit(id, 2);
    const second = await syncPodCri(withLogs, syncPodTask(p));
    expect(second.runtimePod?.containers[0]).toMatchObject({ id, state: 'exited', exitCode: 2, message: 'last words\n' });
    expect(tails).toContain(id);
  });
});
