// --max-pods admission against the real dockerd: a pod beyond the limit is rejected (phase Failed,
// reason OutOfpods, as the kubelet's PredicateAdmitHandler) and never half-started: no container of
// it ever exists, not even after a slot frees up.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { busyboxPod, containersOf, isRunningAndReady, startTestNode, waitForPod, type TestNode } from '../support/agent.js';

describe.skipIf(!inject('dockerAvailable'))('--max-pods', () => {
  let node: TestNode | undefined;
  afterEach(async () => {
    await node?.cleanup();
    node = undefined;
  });

  it('rejects the pod beyond the limit with OutOfpods and starts nothing of it', async () => {
    node = await startTestNode({ maxPods: 2 });
    await node.writeManifest('a.yaml', `${busyboxPod('one', 'exec sleep 3600')}---\n${busyboxPod('two', 'exec sleep 3600')}`);
    await waitForPod(node, 'one', isRunningAndReady);
    await waitForPod(node, 'two', isRunningAndReady);

    await node.writeManifest('b.yaml', busyboxPod('three', 'exec sleep 3600'));
    const three = await waitForPod(node, 'three', (p) => p.status?.phase === 'Failed');
    expect(three.status?.reason).toBe('OutOfpods');
    expect(three.status?.message).toMatch(/capacity: 2/);

    // A slot frees up: the rejected pod stays rejected (admission is final), still with no container.
    await node.writeManifest('a.yaml', busyboxPod('one', 'exec sleep 3600'));
    await expect.poll(async () => (await node!.pod('two')) === undefined, { timeout: 30_000 }).toBe(true);
    await node.agent.pleg.relist();
    expect(await containersOf(three.metadata!.uid!)).toEqual([]);
    expect((await node.pod('three'))?.status?.phase).toBe('Failed');
  });
});
