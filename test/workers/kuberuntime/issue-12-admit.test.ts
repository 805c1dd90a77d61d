// Issue #12 item 10: volumeMounts' mountPropagation as Docker bind options (dockershim's
// generateMountBindings), and --node-labels parsing (the kubelet's node-labels flag).
import { describe, expect, it } from 'vitest';
import { bindPropagation } from '../../../src/workers/kuberuntime/container-config.js';
import { resolveAgentOptions } from '../../../src/main/agent-options.js';

describe('bindPropagation', () => {
  it.each([
    [undefined, []],
    ['None', []],
    ['HostToContainer', ['rslave']],
    ['Bidirectional', ['rshared']],
  ] as const)('%s → %j', (mode, want) => {
    expect(bindPropagation(mode)).toEqual(want);
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
