// The intake methods of src/main/serving/intake-api.ts answer once the agent has handled their update: a
// big update ahead of them is handled in chunks (src/main/lifecycle/sync-handler.ts), so the agent's
// onUpdate returns a promise, and the answers (status, the DELETE's grace period) wait for it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newIntakeApi, type IntakeApi } from '../../../src/main/serving/intake-api.js';
import { newPodManager } from '../../../src/main/pod/pod-manager.js';
import type { Pod } from '../../../src/shared/api.js';
import type { PodUpdate } from '../../../src/shared/pod-update.js';

const macrotasks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

let host: IntakeApi | undefined;
let dir: string | undefined;
afterEach(async () => {
  host = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * An agent stand-in: every update waits until the test handles it (handleNext). `merged` plays the
 * PodConfig merge's holders of full names (pods whose ADD the agent has not handled yet).
 */
async function setup(merged: Record<string, { uid: string; source: string }> = {}) {
  dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-intake-api-'));
  const podManager = newPodManager();
  const waiting: { update: PodUpdate; handle: () => void }[] = [];
  host = newIntakeApi(
    { rootDir: dir, nodeName: 'n1' },
    {
      logger: pino({ level: 'silent' }),
      podManager,
      mergedOwner: (fullName) => merged[fullName],
      onUpdate: (update) =>
        new Promise<void>((resolve) => {
          waiting.push({ update, handle: resolve });
        }),
    },
  );
  const started = host.start();
  await expect.poll(() => waiting.length).toBe(1);
  waiting.shift()!.handle();
  await started;
  return { podManager, waiting };
}

const web: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'img:1' }] },
};

describe('intake API: answers wait for the agent to handle the update', () => {
  it('submitPods answers after the ADD is handled, with the status the agent gave the pod', async () => {
    const { podManager, waiting } = await setup();
    let answered: Pod[] | undefined;
    const submitted = host!.submitPods([web]).then((p) => {
      answered = p;
    });
    await expect.poll(() => waiting.length).toBe(1);
    await macrotasks(5);
    expect(answered).toBeUndefined();
    const { update, handle } = waiting.shift()!;
    expect(update.op).toBe('ADD');
    const pod = update.pods[0];
    podManager.set({ uid: pod.metadata!.uid!, pod, waiting: {}, backoff: {}, startTimeMs: 0, status: { phase: 'Pending' } });
    handle();
    await submitted;
    expect(answered![0].status?.phase).toBe('Pending');
  });

  it('deletePod carries its grace period to SyncLoop REMOVE in the REMOVE itself, and answers once it is handled', async () => {
    const { podManager, waiting } = await setup();
    const submitted = host!.submitPods([web]);
    await expect.poll(() => waiting.length).toBe(1);
    const add = waiting.shift()!;
    const uid = add.update.pods[0].metadata!.uid!;
    podManager.set({ uid, pod: add.update.pods[0], waiting: {}, backoff: {}, startTimeMs: 0 });
    add.handle();
    await submitted;

    const deleted = host!.deletePod('default', 'web', 3);
    await expect.poll(() => waiting.length).toBe(1);
    await macrotasks(5);
    const remove = waiting.shift()!;
    expect(remove.update.op).toBe('REMOVE');
    // What the agent's SyncLoop REMOVE reads when it gets to the pod:
    expect(remove.update.pods[0].metadata?.deletionGracePeriodSeconds).toBe(3);
    expect(remove.update.pods[0].metadata?.uid).toBe(uid);
    let answered = false;
    void deleted.then(() => {
      answered = true;
    });
    await macrotasks(5);
    expect(answered).toBe(false);
    remove.handle();
    const answer = await deleted;
    expect(answer.metadata?.deletionGracePeriodSeconds).toBe(3);
  });

  it('a write that comes before start() (the server answers before the sources start) waits for the restore, then succeeds', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-intake-api-'));
    const updates: PodUpdate[] = [];
    host = newIntakeApi(
      { rootDir: join(dir, 'root-not-yet-created'), nodeName: 'n1' },
      {
        logger: pino({ level: 'silent' }),
        podManager: newPodManager(),
        onUpdate: (u) => {
          updates.push(u);
        },
      },
    );
    let answered = false;
    const submitted = host.submitPods([web]).then(() => {
      answered = true;
    });
    await macrotasks(5);
    expect(answered).toBe(false);
    expect(updates).toEqual([]);
    await host.start();
    await submitted;
    expect(updates.map((u) => u.op)).toEqual(['SET', 'ADD']);
  });

  it('refuses a name that a pod still queued for SyncLoop ADD holds in the merge (409, and 403 on DELETE)', async () => {
    await setup({ 'default/web': { uid: 'f1', source: 'file' } });
    await expect(host!.submitPods([web])).rejects.toMatchObject({
      code: 'ERR_ALREADY_EXISTS',
      message: expect.stringContaining('held by a pod from source file'),
    });
    await expect(host!.deletePod('default', 'web')).rejects.toMatchObject({ code: 'ERR_FORBIDDEN', statusReason: 'Forbidden' });
  });
});
