// The pod workers' start gate (src/main/lifecycle/pod-start-gate.ts: the kubelet's allowPodStart and its wait
// for an older pod of the same full name, pkg/kubelet/pod_workers.go), alone as a table, and inside
// the real pod workers (src/main/lifecycle/pod-workers.ts), which open it once they forgot a removed pod.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newPodStartGate } from '../../../src/main/lifecycle/pod-start-gate.js';
import { newPodWorkers, type PodSyncer } from '../../../src/main/lifecycle/pod-workers.js';
import { newPodManager } from '../../../src/main/pod/pod-manager.js';
import type { Pod } from '../../../src/shared/api.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';

const logger = pino({ level: 'silent' });
const pod = (name: string, uid: string): Pod => ({
  metadata: { name, namespace: 'default', uid },
  spec: { containers: [{ name: 'c', image: 'i' }] },
});

describe('pod start gate: allowPodStart', () => {
  // Each row: the pod already known under the full name (and whether it is being removed), the
  // runtime's old copies of that name, the pod that asks; whether it may start and what is killed.
  it.each([
    ['no pod of that name', undefined, false, [], true, []],
    ['an older pod of that name running (an update, not a replacement)', 'uid-old', false, [], true, []],
    ['an older pod of that name being removed', 'uid-old', true, [], false, []],
    ['the same UID coming back while it is removed (restartRequested)', 'uid-new', true, [], false, []],
    ['an old copy of that name found only in the runtime', undefined, false, ['uid-copy'], false, ['uid-copy']],
    ['two old copies in the runtime: both killed', undefined, false, ['uid-a', 'uid-b'], false, ['uid-a', 'uid-b']],
  ] as const)('%s', (_what, knownUid, removing, copies, allowed, killed) => {
    const podManager = newPodManager();
    if (knownUid) podManager.set({ uid: knownUid, pod: pod('web', knownUid), waiting: {}, backoff: {}, startTimeMs: 0 });
    const kills: string[] = [];
    const gate = newPodStartGate(
      {
        logger,
        podManager,
        runtime: { oldRuntimeCopies: (fullName, uid) => (fullName === 'default/web' ? copies.filter((u) => u !== uid) : []) },
      },
      {
        shouldPodContentBeRemoved: (uid) => removing && uid === knownUid,
        killOldCopy: (uid) => kills.push(uid),
      },
    );
    expect(gate.allowPodStart(pod('web', 'uid-new'))).toBe(allowed);
    expect(kills).toEqual(killed);
    expect(gate.waiting()).toBe(allowed ? 0 : 1);
  });

  it('hands a waiting pod to the listener once the pod it waits for terminated, and not for another; a removed waiting pod is forgotten', () => {
    const podManager = newPodManager();
    podManager.set({ uid: 'uid-old', pod: pod('web', 'uid-old'), waiting: {}, backoff: {}, startTimeMs: 0 });
    const gate = newPodStartGate({ logger, podManager }, { shouldPodContentBeRemoved: () => true, killOldCopy: () => {} });
    const started: string[] = [];
    gate.onStartAllowed((p) => started.push(p.metadata!.uid!));
    expect(gate.allowPodStart(pod('web', 'uid-new'))).toBe(false);
    gate.podTerminated('uid-other');
    expect(started).toEqual([]);
    gate.podTerminated('uid-old');
    expect(started).toEqual(['uid-new']);
    expect(gate.waiting()).toBe(0);
    // A waiting pod that leaves the desired set no longer waits.
    expect(gate.allowPodStart(pod('web', 'uid-third'))).toBe(false);
    gate.forgetPod(pod('web', 'uid-third'));
    expect(gate.waiting()).toBe(0);
    gate.podTerminated('uid-old');
    expect(started).toEqual(['uid-new']);
  });
});

describe('pod start gate inside the pod workers', () => {
  it('an old runtime copy is killed by the pod workers, and the waiting pod is handed over only after its removal (syncTerminatedPod) finished', async () => {
    const order: string[] = [];
    let finishKill!: () => void;
    const syncer: PodSyncer = {
      syncPod: async () => ({}),
      syncTerminatingPod: (uid, gracePeriodSeconds, remove) =>
        new Promise<void>((resolve) => {
          order.push(`kill ${uid} ${gracePeriodSeconds} ${remove}`);
          finishKill = resolve;
        }),
      syncTerminatedPod: (uid) => {
        order.push(`terminated ${uid}`);
      },
    };
    const podManager = newPodManager();
    const copies = new Set(['uid-copy']);
    const workers = newPodWorkers(
      { maxInFlight: 4 },
      {
        logger,
        syncer,
        clock: new FakeClock(),
        startGate: {
          podManager,
          runtime: { oldRuntimeCopies: (fullName, uid) => [...copies].filter((u) => u !== uid && fullName === 'default/web') },
        },
      },
    );
    workers.startGate.onStartAllowed((p) => order.push(`start ${p.metadata!.uid}`));
    expect(workers.startGate.allowPodStart(pod('web', 'uid-new'))).toBe(false);
    await flush();
    // The old copy's kill with the grace period on its labels (-1), removing it.
    expect(order).toEqual(['kill uid-copy -1 true']);
    expect(workers.shouldPodContentBeRemoved('uid-copy')).toBe(true);
    copies.delete('uid-copy');
    finishKill();
    await flush();
    expect(order).toEqual(['kill uid-copy -1 true', 'terminated uid-copy', 'start uid-new']);
    expect(workers.startGate.waiting()).toBe(0);
    await workers.stop();
  });

  it('without start-gate dependencies every pod may start', () => {
    const workers = newPodWorkers(
      {},
      { logger, syncer: { syncPod: async () => ({}), syncTerminatingPod: async () => {}, syncTerminatedPod: () => {} } },
    );
    expect(workers.startGate.allowPodStart(pod('web', 'u'))).toBe(true);
  });
});
