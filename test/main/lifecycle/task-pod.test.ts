// What a sync task carries to a worker of its pod (issue #42 item 1: objects copied across the thread
// boundary that the other side does not read). A pod written back from `kubectl get -o yaml` (or
// stored by a server-side apply) holds `metadata.managedFields`, a field set per manager that no
// worker reads; each sync task cloned it to the worker. In-process over the fake runtime, the tasks
// recorded as the pool would receive them.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { afterEach, expect, it } from 'vitest';
import type { Agent } from '../../../src/main/agent.js';
import type { SyncPodTask } from '../../../src/shared/sync-tasks.js';
import { startFakeAgentWithWebPod } from '../../support/in-process-runner.js';

let started: Agent | undefined;
let dir: string | undefined;
afterEach(async () => {
  await started?.stop();
  started = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
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
