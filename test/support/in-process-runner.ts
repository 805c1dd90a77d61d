// An in-process PodSyncRunner over the fake runtime, for agent-level tests on the main thread: every
// task runs on this thread through the sync worker's own handler (src/workers/sync.worker.ts), so a
// test sees each task the agent posts and may answer one itself.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { expect } from 'vitest';
import { newAgent, type Agent } from '../../src/main/agent.js';
import { resolveAgentOptions, type AgentOptions } from '../../src/main/options/agent-options.js';
import type { PodSyncRunner } from '../../src/main/pool/worker-pool.js';
import type { Pod } from '../../src/shared/api.js';
import { fakeWorkerBootstrap } from './sync-worker.js';
import type { WorkerTask } from '../../src/shared/sync-tasks.js';
import { newFakeRuntime, type FakeRuntime } from '../../src/workers/runtime/fake/fake-runtime.js';
import { createWorkerHandler } from '../../src/workers/sync.worker.js';

/**
 * inProcessRunner: a PodSyncRunner that runs every task on this thread with the worker's own
 * handler over `fake`. `intercept` sees each task first, with `run` (the handler's answer to it,
 * rejecting as the pool does on a task error); a value it returns (or a promise of one) answers the
 * task instead.
 */
export function inProcessRunner(
  options: AgentOptions,
  fake: FakeRuntime,
  intercept: (task: WorkerTask, run: () => Promise<unknown>) => unknown,
): PodSyncRunner {
  const handler = createWorkerHandler(fakeWorkerBootstrap(options.rootDir, { nodeName: options.nodeName }), fake);
  const run = async (task: WorkerTask) => {
    const r = await handler(task);
    if (!r.ok) throw Object.assign(new Error(r.error.message), r.error);
    return r.value;
  };
  return {
    run: (async (task: WorkerTask) => {
      const answer = intercept(task, () => run(task));
      if (answer !== undefined) return answer;
      return run(task);
    }) as PodSyncRunner['run'],
    stats: () => ({ threads: 0, queueSize: 0, completed: 0, utilization: 0 }),
    close: async () => {},
  };
}

/** kWebPodYaml: the one-container static pod `web` (busybox:1) the fake agent below runs. */
export const kWebPodYaml = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: main, image: "busybox:1"}]\n';

/**
 * startFakeAgentWithWebPod starts an agent on the fake runtime (images `pause:1`, `busybox:1`) under
 * `dir` with `inProcessRunner(…, intercept)`, no relist for 10 minutes and `overrides` on its
 * options, hands it to `track` at once (the caller's afterEach stops it, also when this fails),
 * writes the static pod `web` and resolves once its container runs, with `running()` (that pod,
 * or undefined while its container does not run).
 */
export async function startFakeAgentWithWebPod(
  dir: string,
  overrides: Partial<AgentOptions>,
  intercept: (task: WorkerTask, run: () => Promise<unknown>) => unknown,
  track: (agent: Agent) => void,
): Promise<{ agent: Agent; fake: FakeRuntime; running: () => Pod | undefined }> {
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  const options = resolveAgentOptions({
    nodeName: 'fake-web',
    podManifestPath: manifests,
    rootDir: join(dir, 'root'),
    runtime: 'fake',
    port: 0,
    logLevel: 'silent',
    relistPeriodMs: 600_000,
    podInfraContainerImage: 'pause:1',
    ...overrides,
  });
  const fake = newFakeRuntime({ images: ['pause:1', 'busybox:1'] });
  const agent = newAgent(options, { logger: pino({ level: 'silent' }), serve: false, runner: inProcessRunner(options, fake, intercept) });
  track(agent);
  await agent.start();
  await writeFile(join(manifests, 'web.yaml'), kWebPodYaml);
  const running = () => agent.listPods().find((p) => p.status?.containerStatuses?.[0]?.state?.running);
  await expect.poll(running, { timeout: 15_000 }).toBeTruthy();
  return { agent, fake, running };
}
