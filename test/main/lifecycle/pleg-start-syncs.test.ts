// The sync a runtime event asks when it says nothing new (issue #42: the main thread's CPU per pod
// start). On Docker, the engine's `start` events of the sandbox and the container a sync has just
// started come while that sync runs or just after it stored its read-back: each asked one more
// sync task, which planned from the cache, found nothing to do and still crossed to a worker and
// back (the task and the result cloned, the status generated again). Counted here per pod start,
// in-process over the fake runtime, with the events given to the sync loop as the evented PLEG
// gives them; the same count with an event that does say something new keeps its sync.
//
// And what a sync task carries to a worker of its pod (objects copied across the thread boundary that
// the other side does not read): a pod written back from `kubectl get -o yaml` (or stored by a
// server-side apply) holds `metadata.managedFields`, a field set per manager that no worker reads;
// each sync task cloned it to the worker.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src/main/agent.js';
import type { PodLifecycleEvent } from '../../../src/main/pleg/generic-pleg.js';
import type { PodSyncResult, SyncPodTask } from '../../../src/shared/sync-tasks.js';
import { startFakeAgentWithWebPod } from '../../support/in-process-runner.js';
import { newPodSyncer, type PodSyncerDeps } from '../../../src/main/lifecycle/pod-syncer.js';
import type { PodRecord } from '../../../src/main/pod/pod-manager.js';
import { realClock } from '../../../src/shared/clock.js';

let started: Agent | undefined;
let dir: string | undefined;
afterEach(async () => {
  await started?.stop();
  started = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

const startedEvent = (uid: string, containerId: string): PodLifecycleEvent => ({ uid, type: 'ContainerStarted', containerId });

/** startsOf: the ContainerStarted events of what a start sync started (its sandbox and containers), as Docker's `start` events say. */
function startsOf(result: PodSyncResult): PodLifecycleEvent[] {
  const rp = result.runtimePod!;
  return [...rp.sandboxes, ...rp.containers].map((c) => startedEvent(rp.uid, c.id));
}

/** A macrotask: every sync the events asked has been posted by then (the pod workers dispatch in microtasks). */
const settle = () => new Promise((r) => setImmediate(r));

/**
 * startAgent: an agent on the fake runtime whose every syncPod task is recorded in `syncs`;
 * `duringSync(result)` runs once per sync, after the runtime calls and before the main thread gets
 * the result (events that come while the sync is in flight).
 */
async function startAgent(duringSync?: (result: PodSyncResult) => Promise<void>) {
  dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-pleg-syncs-'));
  const syncs: SyncPodTask[] = [];
  const results: PodSyncResult[] = [];
  // No resync during the test (no relist either): every sync counted is one the pod's start or the events asked.
  const { agent, running } = await startFakeAgentWithWebPod(
    dir,
    { nodeName: 'pleg-syncs', syncFrequencyMs: 600_000 },
    (task, run) => {
      if (task.kind !== 'syncPod') return undefined;
      syncs.push(task);
      return (async () => {
        const result = (await run()) as PodSyncResult;
        results.push(result);
        await duringSync?.(result);
        return result;
      })();
    },
    (a) => (started = a),
  );
  await settle();
  return { agent, syncs, results, uid: running()!.metadata!.uid! };
}

describe('a pod start: the syncs its runtime events ask', () => {
  it('the start events of what the sync started, coming after it stored its read-back, post no sync task', async () => {
    const { agent, syncs, results, uid } = await startAgent();
    expect(syncs).toHaveLength(1);
    expect(results[0].settled).toBe(true);
    await agent.syncLoop.iteration({ kind: 'pleg', byPod: new Map([[uid, startsOf(results[0])]]) });
    await settle();
    expect(syncs).toHaveLength(1);

    // An event the cache does not show (a container it never read) still syncs, reading the runtime.
    await agent.syncLoop.iteration({ kind: 'pleg', byPod: new Map([[uid, [startedEvent(uid, 'f'.repeat(64))]]]) });
    await settle();
    await expect.poll(() => syncs.length, { timeout: 10_000 }).toBe(2);
    expect(syncs[1].cachedRuntimePod).toBeUndefined();
  });

  it('the start events coming while the start sync is in flight leave no second sync task once its read-back shows them', async () => {
    let injected = false;
    const { syncs, results, uid } = await startAgent(async (result) => {
      if (injected || !result.runtimePod) return;
      injected = true;
      await started!.syncLoop.iteration({ kind: 'pleg', byPod: new Map([[result.podUid, startsOf(result)]]) });
    });
    expect(injected).toBe(true);
    await settle();
    expect(syncs).toHaveLength(1);
    expect(results[0].podUid).toBe(uid);
  });

  it('the syncs the start events ask, after or during the start sync, are not run by the pod workers at all (issue #42)', async () => {
    // kubelet_pod_worker_duration_seconds counts every piece of work the pod workers ran.
    const runs = async () =>
      Number(/^kubelet_pod_worker_duration_seconds_count\{operation_type="sync"\} (\d+)$/m.exec((await started!.metrics()).body)?.[1] ?? 0);
    let injected = false;
    const { agent, results, uid } = await startAgent(async (result) => {
      if (injected || !result.runtimePod) return;
      injected = true;
      await started!.syncLoop.iteration({ kind: 'pleg', byPod: new Map([[result.podUid, startsOf(result)]]) });
    });
    await settle();
    // The start sync only: the events that came while it ran asked for no run after it.
    expect(await runs()).toBe(1);
    await agent.syncLoop.iteration({ kind: 'pleg', byPod: new Map([[uid, startsOf(results[0])]]) });
    await settle();
    expect(await runs()).toBe(1);
    // An event the cache does not show is run, and reads the runtime.
    await agent.syncLoop.iteration({ kind: 'pleg', byPod: new Map([[uid, [startedEvent(uid, 'e'.repeat(64))]]]) });
    await expect.poll(runs, { timeout: 10_000 }).toBe(2);
  });
});

describe('PodSyncer.plegSyncNeeded: what the pod workers ask before a sync only PLEG events asked', () => {
  /** A syncer over stubs: only what plegSyncNeeded reads (the record, the cache's settled flag, the network, the clock). */
  function syncerWith(record: PodRecord | undefined, settled: boolean, networkError = '', nowMs = 1_000_000) {
    const deps = {
      podManager: { get: () => record },
      podCache: { snapshot: () => ({ runtimePod: null, generation: 1, current: settled, settled }) },
      networkError: () => networkError,
      runtimeView: { lastRelistObservedAtMs: () => 0, hasContainersOf: () => false, observePodRemoved: () => {} },
      clock: { ...realClock, now: () => nowMs },
    } as unknown as PodSyncerDeps;
    return newPodSyncer(deps);
  }
  const record = (spec: Record<string, unknown> = {}): PodRecord =>
    ({
      uid: 'u1',
      pod: { metadata: { uid: 'u1', name: 'p' }, spec: { containers: [], ...spec } },
      waiting: {},
      backoff: {},
      startTimeMs: 0,
    }) as PodRecord;

  it('is false only while the entry is settled, the deadline is ahead and the pod network is ready (or not needed)', () => {
    expect(syncerWith(record(), true).plegSyncNeeded!('u1')).toBe(false);
    expect(syncerWith(undefined, true).plegSyncNeeded!('u1')).toBe(false);
    expect(syncerWith(record(), false).plegSyncNeeded!('u1')).toBe(true);
    // The network not ready: the sync runs and reports it (NetworkNotReady), as syncPod does — but not for hostNetwork.
    expect(syncerWith(record(), true, 'cni not ready').plegSyncNeeded!('u1')).toBe(true);
    expect(syncerWith(record({ hostNetwork: true }), true, 'cni not ready').plegSyncNeeded!('u1')).toBe(false);
    // The active deadline passed: the sync runs and fails the pod; ahead of it, not.
    expect(syncerWith(record({ activeDeadlineSeconds: 10 }), true, '', 10_000).plegSyncNeeded!('u1')).toBe(true);
    expect(syncerWith(record({ activeDeadlineSeconds: 10 }), true, '', 9_000).plegSyncNeeded!('u1')).toBe(false);
  });
});

/** managedFields as `kubectl get -o yaml` prints them after a server-side apply and an update. */
const kManagedFields = `  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:labels: {.: {}, f:app: {}}}
      f:spec: {f:containers: {'k:{"name":"main"}': {.: {}, f:image: {}, f:name: {}, f:command: {}}}}
    manager: kubectl
    operation: Apply
    time: "2026-12-07T20:00:00Z"
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {.: {}, f:note: {}}}
    manager: kubectl-edit
    operation: Update
    time: "2026-12-07T20:01:00Z"
`;

describe('what a sync task carries of its pod', () => {
  it('a sync task carries its pod without metadata.managedFields; the pod as listed keeps them', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-task-pod-'));
    const tasks: SyncPodTask[] = [];
    const { agent } = await startFakeAgentWithWebPod(
      dir,
      { nodeName: 'task-pod', syncFrequencyMs: 600_000 },
      (task) => {
        if (task.kind === 'syncPod') tasks.push(structuredClone(task));
        return undefined;
      },
      (a) => (started = a),
    );
    const yaml =
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: applied\n  labels: {app: a}\n  annotations: {note: kept}\n' +
      kManagedFields +
      'spec:\n  containers: [{name: main, image: "busybox:1", command: [sleep, "3600"]}]\n';
    await writeFile(join(dir, 'manifests', 'applied.yaml'), yaml);
    const running = () =>
      agent.listPods().find((p) => p.metadata?.name?.startsWith('applied') && p.status?.containerStatuses?.[0]?.state?.running);
    await expect.poll(running, { timeout: 15_000 }).toBeTruthy();
    const listed = running()!;
    const task = tasks.find((t) => t.pod.metadata?.name === listed.metadata?.name)!;
    expect(task).toBeDefined();
    // What the worker reads is all there; what it does not read is left out.
    expect(task.pod.metadata).toMatchObject({ name: listed.metadata!.name, uid: listed.metadata!.uid, labels: { app: 'a' } });
    expect(task.pod.metadata!.annotations!.note).toBe('kept');
    expect(task.pod.spec).toEqual(listed.spec);
    expect(task.pod.metadata!.managedFields).toBeUndefined();
    // The pod itself is not changed: its record (and so the API) keeps the field sets the file gave.
    const record = agent.podManager.get(listed.metadata!.uid!)!;
    expect(record.pod.metadata!.managedFields).toHaveLength(2);
    expect(listed.metadata!.managedFields).toEqual(record.pod.metadata!.managedFields);
    // The clone a task costs: smaller than the pod's by the field sets.
    expect(serialize(task.pod).length).toBeLessThan(serialize(record.pod).length - 200);
  });
});
