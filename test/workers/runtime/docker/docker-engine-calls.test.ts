// The Engine calls dockershim makes for a pod start (issue #42 item 2), counted on the in-memory fake
// (node-scoped, as the workers use it): ListPodSandbox + ListContainers asked together share one list,
// every answer comes from a list begun after the request, and the PodSandboxStatus right after
// RunPodSandbox needs no inspect of its own — with the same answer an inspect gives.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CriInput, PodSandboxConfig } from '../../../../src/workers/runtime/cri/types.js';
import { newDockerNodeRuntime } from '../../../../src/workers/runtime/docker/docker-node-runtime.js';
import { kJustStartedMs } from '../../../../src/workers/runtime/docker/docker-sandbox.js';
import { matchesLabels } from '../../../../src/workers/runtime/docker/list-coalescer.js';
import { newFakeRuntime } from '../../../../src/workers/runtime/fake/fake-runtime.js';
import { scopeToNode } from '../../../../src/workers/runtime/node-scope.js';
import type { ContainerRuntime } from '../../../../src/workers/runtime/container/runtime.js';

const dirs: string[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** The node-scoped fake behind a counter of its calls by method; `gate` (when set) holds every listContainers until released. */
async function setUp() {
  const rootDir = await mkdtemp(join(tmpdir(), 'kts-engine-calls-'));
  dirs.push(rootDir);
  const fake = newFakeRuntime();
  const scoped = scopeToNode(fake, 'node-a');
  const calls: Record<string, number> = {};
  const listLabels: string[][] = [];
  let gate: Promise<void> | undefined;
  let listsFail = false;
  const counted = new Proxy(scoped, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return async (...a: unknown[]) => {
        calls[String(prop)] = (calls[String(prop)] ?? 0) + 1;
        if (prop === 'listContainers') {
          listLabels.push([...(a[0] as { labels: string[] }).labels]);
          if (listsFail) throw new Error('engine down');
          const held = gate;
          const answer = (v as (...x: unknown[]) => Promise<unknown>).apply(target, a);
          if (held) await held;
          return answer;
        }
        return (v as (...x: unknown[]) => unknown).apply(target, a);
      };
    },
  }) as ContainerRuntime;
  const nr = newDockerNodeRuntime(counted, {
    rootDir,
    podInfraImage: 'kubelet-ts/pause:1.0',
    oomScoreAdjFloor: async () => -1000,
  });
  return {
    nr,
    calls,
    listLabels,
    failLists: (on: boolean) => {
      listsFail = on;
    },
    reset: () => {
      for (const k of Object.keys(calls)) delete calls[k];
      listLabels.length = 0;
    },
    hold: () => {
      let release!: () => void;
      gate = new Promise<void>((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

function sandboxConfig(uid: string): CriInput<PodSandboxConfig> {
  return {
    metadata: { name: `web-${uid}`, namespace: 'prod', uid, attempt: 0 },
    hostname: 'web',
    labels: {
      'io.kubernetes.pod.uid': uid,
      'io.kubernetes.pod.name': `web-${uid}`,
      'io.kubernetes.pod.namespace': 'prod',
      'kubelet-ts.node-name': 'node-a',
      app: 'web',
    },
    annotations: { 'io.kubernetes.container.hash': 'h1' },
  };
}

const containerConfig = (sb: CriInput<PodSandboxConfig>) => ({
  metadata: { name: 'app', attempt: 0 },
  image: { image: 'kubelet-ts/busybox:1.35' },
  command: ['sleep', '3600'],
  labels: { ...sb.labels, 'io.kubernetes.container.name': 'app' },
  annotations: {},
});

/** A pod started through the CRI: its sandbox and one running container. */
async function startPod(nr: Awaited<ReturnType<typeof setUp>>['nr'], uid: string) {
  const sb = sandboxConfig(uid);
  const sandboxId = await nr.runtime.runPodSandbox(sb);
  const id = await nr.runtime.createContainer(sandboxId, containerConfig(sb), sb);
  await nr.runtime.startContainer(id);
  return { sandboxId, id };
}

describe("dockershim's Engine calls per pod start", () => {
  it("answers a pod's ListPodSandbox + ListContainers, asked together, with one list, each with its own kind", async () => {
    const { nr, calls, listLabels, reset } = await setUp();
    const a = await startPod(nr, 'u-a');
    const b = await startPod(nr, 'u-b');
    reset();
    const selector = { 'io.kubernetes.pod.uid': 'u-a' };
    const [sandboxes, containers] = await Promise.all([
      nr.runtime.listPodSandbox({ label_selector: selector }),
      nr.runtime.listContainers({ label_selector: selector }),
    ]);
    expect(sandboxes.map((s) => s.id)).toEqual([a.sandboxId]);
    expect(containers.map((c) => c.id)).toEqual([a.id]);
    expect(calls.listContainers).toBe(1);
    expect(listLabels[0]).not.toContain('io.kubernetes.docker.type=podsandbox');
    // The whole node (the PLEG's relist): one list for both kinds too.
    reset();
    const [allSandboxes, allContainers] = await Promise.all([nr.runtime.listPodSandbox({}), nr.runtime.listContainers({})]);
    expect(allSandboxes.map((s) => s.id).sort()).toEqual([a.sandboxId, b.sandboxId].sort());
    expect(allContainers.map((c) => c.id).sort()).toEqual([a.id, b.id].sort());
    expect(calls.listContainers).toBe(1);
    // Asked alone, a list keeps its kind's filter on the engine.
    reset();
    expect((await nr.runtime.listContainers({ label_selector: selector })).map((c) => c.id)).toEqual([a.id]);
    expect(listLabels).toEqual([expect.arrayContaining(['io.kubernetes.docker.type=container', 'io.kubernetes.pod.uid=u-a'])]);
  });

  it('never answers a list with one the engine began before it was asked', async () => {
    const { nr, calls, reset, hold } = await setUp();
    const a = await startPod(nr, 'u-a');
    reset();
    const release = hold();
    const early = nr.runtime.listContainers({});
    await new Promise((r) => setTimeout(r, 0)); // the first list is under way (held)
    const b = await startPod(nr, 'u-b');
    const late = nr.runtime.listContainers({});
    release();
    expect((await early).map((c) => c.id)).toEqual([a.id]);
    expect((await late).map((c) => c.id).sort()).toEqual([a.id, b.id].sort());
    expect(calls.listContainers).toBe(2);
  });

  it('rejects every request that shared a failed list, and lists again after', async () => {
    const { nr, failLists, calls, reset } = await setUp();
    await startPod(nr, 'u-a');
    failLists(true);
    reset();
    const both = await Promise.allSettled([nr.runtime.listPodSandbox({}), nr.runtime.listContainers({})]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls.listContainers).toBe(1);
    failLists(false);
    expect(await nr.runtime.listContainers({})).toHaveLength(1);
  });

  it("answers the first PodSandboxStatus of a sandbox without the pod network from Docker's inspect, the same as every later one", async () => {
    // With the pod network, RunPodSandbox's own inspect (for the netns) answers it; without, nothing
    // the start knew holds Docker's created time, and the read-back of a start must equal a full read.
    const { nr, calls, reset } = await setUp();
    const sb = sandboxConfig('u-s');
    reset();
    const id = await nr.runtime.runPodSandbox(sb);
    const first = (await nr.runtime.podSandboxStatus(id)).status!;
    expect(calls.inspectContainer).toBe(1);
    const second = (await nr.runtime.podSandboxStatus(id)).status!;
    expect(calls.inspectContainer).toBe(2);
    expect(first).toEqual(second);
  });

  it('inspects when the sandbox was stopped, or when asked later than kJustStartedMs after the start', async () => {
    const { nr, calls, reset } = await setUp();
    const stopped = await nr.runtime.runPodSandbox(sandboxConfig('u-1'));
    await nr.runtime.stopPodSandbox(stopped);
    reset();
    expect((await nr.runtime.podSandboxStatus(stopped)).status!.state).toBe('SANDBOX_NOTREADY');
    expect(calls.inspectContainer).toBe(1);

    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const late = await nr.runtime.runPodSandbox(sandboxConfig('u-2'));
    vi.setSystemTime(Date.now() + kJustStartedMs + 1);
    reset();
    await nr.runtime.podSandboxStatus(late);
    expect(calls.inspectContainer).toBe(1);
  });

  it("matches labels as Docker's label filter: key present, key=value equal", () => {
    expect(matchesLabels({ a: '1', b: '' }, ['a=1', 'b'])).toBe(true);
    expect(matchesLabels({ a: '1' }, ['a=2'])).toBe(false);
    expect(matchesLabels({ a: '1' }, ['b'])).toBe(false);
    expect(matchesLabels({ a: 'x=y' }, ['a=x=y'])).toBe(true);
  });
});
