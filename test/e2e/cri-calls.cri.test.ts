// The CRI calls an agent makes per pod start and per removal on the real containerd (issue #42 item 4,
// #40 item 6), by method, counted by a gRPC proxy between the agent and the runtime
// (test/support/cri-call-counter.ts) for the density bench's pod (bench/lib.ts podYaml: a sandbox and
// one busybox container). The kubelet's kuberuntime makes RunPodSandbox, PodSandboxStatus (the IP),
// ImageStatus (EnsureImageExists), CreateContainer and StartContainer, and reads the rest on its PLEG
// relist (pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod, pkg/kubelet/pleg/generic.go); the
// agent reads the container it started back once (ContainerStatus: its startedAt and image ID for
// the status). The relist's own node-wide ListPodSandbox + ListContainers every second are a cost
// per second, not per pod: counted apart. Skips without containerd unless KUBELET_TS_REQUIRE_CRI=1.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { podYaml } from '../../bench/lib.js';
import { isRunningAndReady, useTestNodes, waitForPod, type TestNode } from '../support/agent.js';
import { criEndpointOrSkip } from '../support/cri.js';
import { countByMethod, startCriCallCounter, type CriCall, type CriCallCounter } from '../support/cri-call-counter.js';
import { waitFor } from '../support/docker.js';

const endpoint = criEndpointOrSkip();

/**
 * The calls of one pod start: the kubelet's RunPodSandbox, PodSandboxStatus (the pod IP),
 * ImageStatus (EnsureImageExists; the image's ref and user from the same answer), CreateContainer and
 * StartContainer, and the ContainerStatus of the started container (the sync's read-back: its
 * startedAt, image ID and state for the status, which no other answer holds).
 */
const kPodStartCalls = { ContainerStatus: 1, CreateContainer: 1, ImageStatus: 1, PodSandboxStatus: 1, RunPodSandbox: 1, StartContainer: 1 };

/** The calls of pod `uid` among `calls`: attributed to it, or its image's (the only image of the test). */
function podCalls(calls: readonly CriCall[], uid: string): CriCall[] {
  return calls.filter((c) => c.podUid === uid || c.method === 'ImageStatus' || c.method === 'PullImage');
}

/**
 * The pod start's calls among `calls` for pod `uid`: kPodStartCalls, and one more ContainerStatus
 * when the container log manager's round (every 10 s: a ListContainers of the running containers,
 * then the log path of each it sees for the first time) listed the pod's container in the window.
 */
function podStartCalls(calls: readonly CriCall[], uid: string, counter: CriCallCounter): Record<string, number> {
  const rotationSaw = calls.some(
    (c) =>
      c.method === 'ListContainers' &&
      !c.podUid &&
      (c.request.filter as { state?: { state?: string } } | null)?.state?.state === 'CONTAINER_RUNNING' &&
      (c.answerIds ?? []).some((id) => counter.podOf(id) === uid),
  );
  return { ...kPodStartCalls, ContainerStatus: kPodStartCalls.ContainerStatus + (rotationSaw ? 1 : 0) };
}

/** Resolves once the agent's PLEG has finished `n` more relists than now: the syncs their events cause have been asked for. */
async function relists(node: TestNode, n: number): Promise<void> {
  const from = node.agent.pleg.stats().relists;
  await waitFor(() => node.agent.pleg.stats().relists >= from + n || undefined, {
    timeoutMs: 60_000,
    intervalMs: 100,
    description: `${n} relists`,
  });
}

/** Resolves once every pod sync task the agent started is over (its pool idle), after `n` relists. */
async function settled(node: TestNode, counter: CriCallCounter, n = 3): Promise<void> {
  await relists(node, n);
  await waitFor(() => counter.calls.every((c) => c.done) || undefined, {
    timeoutMs: 60_000,
    intervalMs: 100,
    description: 'calls answered',
  });
}

describe.skipIf(!endpoint)('the CRI calls of a pod start and removal on containerd', { timeout: 240_000 }, () => {
  let dir: string | undefined;
  let counter: CriCallCounter | undefined;
  // Registered before useTestNodes' hook, so it runs after the node's cleanup (after-hooks run in reverse).
  afterEach(async () => {
    await counter?.close();
    counter = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const start = useTestNodes();

  /** A node on containerd through a counting proxy, as the density bench starts its agent (2 sync workers, a 1 s relist), after its first relist. */
  async function countedNode(): Promise<{ node: TestNode; counter: CriCallCounter }> {
    dir = await mkdtemp(join(tmpdir(), 'kts-cri-calls-'));
    counter = await startCriCallCounter(endpoint!, dir);
    const node = await start({ containerRuntimeEndpoint: counter.endpoint, workers: 2, relistPeriodMs: 1_000, syncFrequencyMs: 60_000 });
    await relists(node, 1);
    return { node, counter };
  }

  it('a pod start: the five calls of the kubelet and one ContainerStatus of the started container; no read of the pod again', async () => {
    const { node, counter } = await countedNode();
    const from = counter.calls.length;
    await node.writeManifest('density-0.yaml', podYaml('density-0'));
    const pod = await waitForPod(node, 'density-0', isRunningAndReady);
    await settled(node, counter);
    const calls = counter.calls.slice(from);
    expect(countByMethod(podCalls(calls, pod.metadata!.uid!))).toEqual(podStartCalls(calls, pod.metadata!.uid!, counter));
  });

  it('a relist that sees the container created but not yet started costs no read of the pod', async () => {
    const { node, counter } = await countedNode();
    // StartContainer waits for two relists after the create: the second began after the create was
    // answered, so it lists the container CONTAINER_CREATED while the sync is still under way.
    counter.hold(async (call) => {
      if (call.method === 'StartContainer') await relists(node, 2);
    });
    const from = counter.calls.length;
    await node.writeManifest('density-0.yaml', podYaml('density-0'));
    const pod = await waitForPod(node, 'density-0', isRunningAndReady);
    counter.hold(undefined);
    await settled(node, counter);
    const calls = counter.calls.slice(from);
    expect(countByMethod(podCalls(calls, pod.metadata!.uid!))).toEqual(podStartCalls(calls, pod.metadata!.uid!, counter));
  });

  it('a removal: its calls by method, and the relists apart', async () => {
    const { node, counter } = await countedNode();
    await node.writeManifest('density-0.yaml', podYaml('density-0'));
    const pod = await waitForPod(node, 'density-0', isRunningAndReady);
    const uid = pod.metadata!.uid!;
    await settled(node, counter);
    const from = counter.calls.length;
    await rm(join(node.manifestDir, 'density-0.yaml'));
    await waitFor(async () => ((await node.pod('density-0')) ? undefined : true), { timeoutMs: 90_000, description: 'pod removed' });
    await waitFor(() => (node.agent.pleg.runtimePodUids().has(uid) ? undefined : true), {
      timeoutMs: 90_000,
      description: 'runtime empty',
    });
    await settled(node, counter);
    const calls = counter.calls.slice(from);
    const removal = countByMethod(podCalls(calls, uid));
    // What a removal must do, whatever else it reads: stop and remove the container and the sandbox.
    expect(removal).toMatchObject({ StopContainer: 1, StopPodSandbox: 1, RemovePodSandbox: 1 });
    process.stdout.write(`[cri-calls] removal of one pod: ${JSON.stringify(removal)}\n`);
  });
});
