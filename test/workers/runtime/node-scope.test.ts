// Tests of the node scope's ownership guard (src/workers/runtime/node-scope.ts) on the fake runtime:
// it refuses containers that are not this node's, and inspects a target only until its ID is known
// to be ours (created, listed or inspected through the scope).
import { describe, expect, it } from 'vitest';
import { newFakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import { scopeToNode } from '../../../src/workers/runtime/node-scope.js';
import type { ContainerCreateSpec, ContainerRuntime } from '../../../src/workers/runtime/container/runtime.js';

const spec = (name: string, labels: Record<string, string>): ContainerCreateSpec => ({
  name,
  image: 'busybox',
  labels,
  cmd: ['sleep', '1'],
  hostConfig: { networkMode: 'none' },
});

/** The fake runtime with its inspects counted. */
function counted() {
  const inner = newFakeRuntime();
  const inspected: string[] = [];
  const wrapped: ContainerRuntime = Object.create(inner, {
    inspectContainer: {
      value: (id: string) => {
        inspected.push(id);
        return inner.inspectContainer(id);
      },
    },
  });
  return { inner, inspected, scoped: scopeToNode(wrapped, 'n1') };
}

const ours = { 'io.kubernetes.pod.uid': 'u1', 'kubelet-ts.node-name': 'n1' };

describe('node scope guard', () => {
  it('spares the inspect for a container it created, and inspects again once it was removed', async () => {
    const { inspected, scoped } = counted();
    const id = await scoped.createContainer(spec('k8s_a', ours));
    await scoped.startContainer(id);
    await scoped.stopContainer(id, 0);
    await scoped.removeContainer(id);
    expect(inspected).toEqual([]);
    // Forgotten with the remove: the guard looks again, and the engine says it is gone.
    await expect(scoped.startContainer(id)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    expect(inspected).toEqual([id]);
  });

  it('trusts an ID a list showed with its labels, and still refuses a foreign one asked for by ID', async () => {
    const { inner, inspected, scoped } = counted();
    const mine = await inner.createContainer(spec('k8s_b', ours));
    const foreign = await inner.createContainer(spec('k8s_c', { 'io.kubernetes.pod.uid': 'u2', 'kubelet-ts.node-name': 'n2' }));
    expect((await scoped.listContainers({ labels: [] })).map((c) => c.id)).toEqual([mine]);
    await scoped.startContainer(mine);
    expect(inspected).toEqual([]);
    await expect(scoped.startContainer(foreign)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    await expect(scoped.startContainer(foreign)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    // A refused ID is never remembered: every attempt is checked.
    expect(inspected).toEqual([foreign, foreign]);
  });

  it('remembers an ID its guard verified, and refuses to create a container without the owner labels', async () => {
    const { inner, inspected, scoped } = counted();
    const id = await inner.createContainer(spec('k8s_d', ours));
    await scoped.startContainer(id);
    await scoped.stopContainer(id, 0);
    expect(inspected).toEqual([id]);
    await expect(scoped.createContainer(spec('k8s_e', { 'io.kubernetes.pod.uid': 'u1' }))).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
  });

  it('trusts an ID an inspect through the scope showed with its labels (a sandbox inspected before its stop), never a foreign one', async () => {
    const { inner, inspected, scoped } = counted();
    const mine = await inner.createContainer(spec('k8s_f', ours));
    const foreign = await inner.createContainer(spec('k8s_g', { 'io.kubernetes.pod.uid': 'u2', 'kubelet-ts.node-name': 'n2' }));
    await scoped.inspectContainer(mine);
    await scoped.inspectContainer(foreign);
    await scoped.stopContainer(mine, 0);
    await expect(scoped.stopContainer(foreign, 0)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    expect(inspected).toEqual([mine, foreign, foreign]);
  });
});
