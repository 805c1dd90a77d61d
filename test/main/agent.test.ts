// Agent-level behaviour, in-process over the fake runtime:
// - the periodic resync plans from the cached runtime state (SyncPodTask.cachedRuntimePod) only
//   while no PLEG event has arrived for the pod since the sync that read it;
// - a restarted agent's resourceVersions are above the previous run's;
// - housekeeping kills no containers of pods whose ADD is still queued behind a big update.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { newAgent, type Agent } from '../../src/main/agent.js';
import type { Pod } from '../../src/shared/api.js';
import { resolveAgentOptions, type AgentOptions } from '../../src/main/options/agent-options.js';
import type { KillPodTask, SyncPodTask } from '../../src/shared/sync-tasks.js';
import { newFakeRuntime } from '../../src/workers/runtime/fake/fake-runtime.js';
import { inProcessRunner, startFakeAgentWithWebPod } from '../support/in-process-runner.js';

/**
 * quietFakeOptions: an agent of node `nodeName` on the fake runtime under `dir` (no server port),
 * whose relists and resyncs come only when a test asks (600 s periods); `extra` overrides.
 */
function quietFakeOptions(nodeName: string, dir: string, extra: Partial<AgentOptions> = {}): AgentOptions {
  return resolveAgentOptions({
    nodeName,
    rootDir: join(dir, 'root'),
    runtime: 'fake',
    port: 0,
    logLevel: 'silent',
    relistPeriodMs: 600_000,
    syncFrequencyMs: 600_000,
    podInfraContainerImage: 'pause:1',
    ...extra,
  });
}

let agent: Agent | undefined;
let dir: string | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  if (dir) await unmountUnder(dir).catch(() => undefined); // the API pods' tmpfs volumes (service account tokens)
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('resync from the cached runtime state', () => {
  it('is used for a pod nothing happened to, and dropped after a PLEG event', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-resync-'));
    const syncs: SyncPodTask[] = [];
    const { fake, running } = await startFakeAgentWithWebPod(
      dir,
      { nodeName: 'resync-cache', syncFrequencyMs: 1000 },
      (task) => {
        if (task.kind === 'syncPod') syncs.push(task);
        return undefined;
      },
      (a) => (agent = a),
    );

    // A resync of the running pod carries the cache and makes no runtime call.
    const n = syncs.length;
    await expect.poll(() => syncs.slice(n).some((t) => t.cachedRuntimePod), { timeout: 10_000 }).toBe(true);
    fake.calls.length = 0;
    await expect.poll(() => syncs.length, { timeout: 10_000 }).toBeGreaterThan(n + 1);
    expect(fake.calls.filter((c) => c !== 'list')).toEqual([]);

    // The container dies; the relist reports it; the sync that follows reads the runtime and restarts it.
    const id = running()!.status!.containerStatuses![0].containerID!.replace(/^[a-z]+:\/\//, '');
    fake.exit(id, 1);
    const m = syncs.length;
    await agent!.pleg.relist();
    await expect.poll(() => agent!.listPods()[0]?.status?.containerStatuses?.[0]?.restartCount, { timeout: 15_000 }).toBe(1);
    expect(syncs[m].cachedRuntimePod).toBeUndefined();
  });
});

describe('resourceVersions across agent restarts', () => {
  it("a restarted agent hands out versions above the previous run's (so an old watch position is expired, not replayed)", async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-rv-'));
    const manifests = join(dir, 'manifests');
    await mkdir(manifests);
    await writeFile(
      join(manifests, 'a.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: main, image: "busybox:1"}]\n',
    );
    const opts = resolveAgentOptions({
      nodeName: 'rv-node',
      podManifestPath: manifests,
      rootDir: join(dir, 'root'),
      runtime: 'fake',
      workers: 1,
      port: 0,
      logLevel: 'silent',
    });
    const first = newAgent(opts, { logger: pino({ level: 'silent' }), serve: false });
    await first.start();
    // The first run hands out versions for its pod's statuses (read once the pod runs: its changes may
    // all land before start() resolves, so "a change after start" is not a condition to wait on).
    await expect.poll(() => first.listPods()[0]?.status?.phase, { timeout: 15_000 }).toBe('Running');
    const before = first.statusManager.resourceVersion();
    expect(before).toBeGreaterThan(0);
    await first.stop();
    agent = newAgent(opts, { logger: pino({ level: 'silent' }), serve: false });
    expect(agent.statusManager.resourceVersion()).toBeGreaterThan(before);
  });
});

describe('housekeeping while a big update is being handled', () => {
  it('kills no containers of pods whose ADD is still queued (they are not in the pod manager yet)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-orphans-'));
    const options = quietFakeOptions('orphans', dir, { maxPods: 2000 });
    const pods: Pod[] = Array.from({ length: 1000 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${i}`, namespace: 'default', uid: `orphan-guard-${i}` },
      // No service-account volume: 1,000 tmpfs mounts made this unit test slow to start and to clean up.
      spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'busybox:1' }] },
    }));
    // Once the 1,000-pod ADD has started to be handled (the first sync), a relist reports
    // containers for every one of the pods, as after an agent restart.
    let reportAll = false;
    const kills: string[] = [];
    const runner = inProcessRunner(options, newFakeRuntime({ images: ['pause:1', 'busybox:1'] }), (task) => {
      if (task.kind === 'relist') {
        return {
          containers: reportAll ? pods.map((p, i) => ({ id: `c${i}`, podUid: p.metadata!.uid!, name: 'main', state: 'running' })) : [],
          observedAtMs: Date.now(),
        };
      }
      if (task.kind === 'killPod') kills.push(task.podUid);
      if (task.kind === 'syncPod' && !reportAll) {
        reportAll = true;
        // Housekeeping runs while the rest of the ADD is still queued.
        void agent!.pleg.relist().then(() => agent!.syncLoop.iteration({ kind: 'housekeeping' }));
      }
      return undefined;
    });
    agent = newAgent(options, { logger: pino({ level: 'silent' }), serve: false, runner });
    await agent.start();
    await agent.host.submitPods!(pods);
    expect(reportAll).toBe(true);
    expect(agent.listPods()).toHaveLength(1000);
    await agent.pleg.relist();
    await agent.syncLoop.iteration({ kind: 'housekeeping' });
    expect(kills).toEqual([]);
  });
});

describe("a deleted pod's kill tasks", () => {
  it("carry the pod cache's runtime pod to the stop, and the stop's result to the removal (neither reads the runtime first)", async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-kill-known-'));
    const options = quietFakeOptions('kill-known', dir);
    const kills: KillPodTask[] = [];
    const runner = inProcessRunner(options, newFakeRuntime({ images: ['pause:1', 'busybox:1'] }), (task) => {
      if (task.kind === 'killPod') kills.push(structuredClone(task));
      return undefined;
    });
    agent = newAgent(options, { logger: pino({ level: 'silent' }), serve: false, runner });
    await agent.start();
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', uid: 'kill-known-1' },
      spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'busybox:1' }] },
    };
    await agent.host.submitPods!([pod]);
    const running = () => agent!.listPods().find((p) => p.status?.containerStatuses?.[0]?.state?.running);
    await expect.poll(running, { timeout: 15_000 }).toBeTruthy();
    await agent.host.deletePod!('default', 'web', 0);
    await expect.poll(() => agent!.listPods().length, { timeout: 15_000 }).toBe(0);
    expect(kills.map((k) => k.remove)).toEqual([false, true]);
    expect(kills[0].knownAbsent).toBeUndefined();
    expect(kills[0].cachedRuntimePod).toMatchObject({
      uid: 'kill-known-1',
      containers: [{ name: 'main', state: 'running' }],
      sandboxes: [{ state: 'running' }],
    });
    expect(kills[1].cachedRuntimePod).toMatchObject({ containers: [{ name: 'main', state: 'exited' }], sandboxes: [{ state: 'exited' }] });
  });
});
