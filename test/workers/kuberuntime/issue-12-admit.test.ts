// Issue #12 item 10: volumeMounts' mountPropagation as the CRI's (makeMountBindings) and, on
// Docker, as bind options (dockershim's generateMountBindings), and --node-labels parsing (the
// kubelet's node-labels flag).
import { describe, expect, it } from 'vitest';
import { resolveAgentOptions } from '../../../src/main/options/agent-options.js';
import { criMount } from '../../../src/workers/kuberuntime/container-config.js';
import { mountBinds } from '../../../src/workers/runtime/docker/docker-container-create.js';

describe('mountPropagation', () => {
  it.each([
    [undefined, 'PROPAGATION_PRIVATE', '/h:/c'],
    ['None', 'PROPAGATION_PRIVATE', '/h:/c'],
    ['HostToContainer', 'PROPAGATION_HOST_TO_CONTAINER', '/h:/c:rslave'],
    ['Bidirectional', 'PROPAGATION_BIDIRECTIONAL', '/h:/c:rshared'],
  ] as const)('%s → %s → %s', (mode, cri, bind) => {
    const m = criMount({ hostPath: '/h', containerPath: '/c', readOnly: false, propagation: mode });
    expect(m.propagation).toBe(cri);
    expect(mountBinds([m])).toEqual([bind]);
  });
});

describe('--node-labels', () => {
  it('reads key=value items into the node labels', () => {
    expect(
      resolveAgentOptions({
        nodeLabels: ['disktype=ssd', 'example.com/tier = gold', 'node.kubernetes.io/pool=a'] as unknown as Record<string, string>,
      }).nodeLabels,
    ).toEqual({ disktype: 'ssd', 'example.com/tier': 'gold', 'node.kubernetes.io/pool': 'a' });
  });

  it.each([
    [['disktype'], /must be key=value items/],
    [['bad key!=x'], /keys must be qualified names/],
    [['a=not a value'], /must be a valid label value/],
    [['kubernetes.io/role=master'], /may not set 'kubernetes.io' or 'k8s.io' labels/],
  ])('refuses %j', (items, msg) => {
    expect(() => resolveAgentOptions({ nodeLabels: items as unknown as Record<string, string> })).toThrow(msg);
  });
});
