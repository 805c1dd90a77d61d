// Issue #12 item 10: nodeSelector / required node affinity and extended resources at admission, as
// the kubelet's predicate admit handler (component-helpers nodeaffinity; noderesources fit).
import { describe, expect, it } from 'vitest';
import { admitPod } from '../../../src/main/pod/admission.js';
import {
  kNodeAffinityMessage,
  podMatchesNodeAffinity,
  requirementMatches,
  termMatches,
  type NodeIdentity,
} from '../../../src/main/pod/node-affinity.js';
import { nodeLabels } from '../../../src/main/node/node-status.js';
import type { Pod } from '../../../src/shared/api.js';

const node: NodeIdentity = { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a', disktype: 'ssd', zone: 'eu-1', cores: '8' } };

describe('requirementMatches (labels.Requirement.Matches)', () => {
  it.each([
    ['In: present with one of the values', { key: 'disktype', operator: 'In', values: ['hdd', 'ssd'] }, true],
    ['In: another value', { key: 'disktype', operator: 'In', values: ['hdd'] }, false],
    ['In: absent key', { key: 'gpu', operator: 'In', values: ['yes'] }, false],
    ['NotIn: another value', { key: 'disktype', operator: 'NotIn', values: ['hdd'] }, true],
    ['NotIn: absent key matches', { key: 'gpu', operator: 'NotIn', values: ['yes'] }, true],
    ['NotIn: one of the values', { key: 'disktype', operator: 'NotIn', values: ['ssd'] }, false],
    ['Exists', { key: 'zone', operator: 'Exists' }, true],
    ['Exists: absent', { key: 'gpu', operator: 'Exists' }, false],
    ['DoesNotExist', { key: 'gpu', operator: 'DoesNotExist' }, true],
    ['DoesNotExist: present', { key: 'zone', operator: 'DoesNotExist' }, false],
    ['Gt: greater', { key: 'cores', operator: 'Gt', values: ['4'] }, true],
    ['Gt: equal is not greater', { key: 'cores', operator: 'Gt', values: ['8'] }, false],
    ['Lt: less', { key: 'cores', operator: 'Lt', values: ['16'] }, true],
    ['Gt: label not an integer', { key: 'zone', operator: 'Gt', values: ['1'] }, false],
    ['Gt: value not an integer', { key: 'cores', operator: 'Gt', values: ['x'] }, false],
    ['Lt: absent key', { key: 'gpu', operator: 'Lt', values: ['1'] }, false],
    ['unknown operator', { key: 'zone', operator: 'Near', values: ['eu-1'] }, false],
  ])('%s', (_n, r, want) => {
    expect(requirementMatches(r, node.labels)).toBe(want);
  });
});

describe('termMatches and podMatchesNodeAffinity', () => {
  const pod = (spec: Record<string, unknown>): Pod =>
    ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } }) as Pod;
  const required = (...nodeSelectorTerms: unknown[]) => ({
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms } } },
  });

  it('ANDs the expressions and fields of a term; an empty term matches nothing', () => {
    expect(
      termMatches(
        {
          matchExpressions: [
            { key: 'disktype', operator: 'In', values: ['ssd'] },
            { key: 'zone', operator: 'Exists' },
          ],
        },
        node,
      ),
    ).toBe(true);
    expect(
      termMatches(
        {
          matchExpressions: [
            { key: 'disktype', operator: 'In', values: ['ssd'] },
            { key: 'gpu', operator: 'Exists' },
          ],
        },
        node,
      ),
    ).toBe(false);
    expect(termMatches({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] }, node)).toBe(true);
    expect(termMatches({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-a'] }] }, node)).toBe(false);
    expect(termMatches({}, node)).toBe(false);
  });

  it.each([
    ['no selector and no affinity', {}, true],
    ['nodeSelector matching every key', { nodeSelector: { disktype: 'ssd', zone: 'eu-1' } }, true],
    ['nodeSelector with one key off', { nodeSelector: { disktype: 'ssd', zone: 'us-1' } }, false],
    ['nodeSelector on the hostname label', { nodeSelector: { 'kubernetes.io/hostname': 'node-a' } }, true],
    [
      'required terms are ORed',
      required(
        { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] },
        { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] },
      ),
      true,
    ],
    ['no required term matches', required({ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }), false],
    [
      'nodeSelector AND affinity: both must hold',
      { nodeSelector: { disktype: 'hdd' }, ...required({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }) },
      false,
    ],
    [
      'preferred affinity is ignored',
      {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, preference: { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] } },
            ],
          },
        },
      },
      true,
    ],
  ])('%s', (_n, spec, want) => {
    expect(podMatchesNodeAffinity(pod(spec), node)).toBe(want);
  });
});

describe('admitPod with node affinity and extended resources', () => {
  const capacity = { pods: 10, cpuMilli: 2000, memoryBytes: 2 ** 30 };
  const used = { pods: 0, cpuMilli: 0, memoryBytes: 0 };
  const withResources = (limits: Record<string, string>): Pod =>
    ({
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'i', resources: { limits, requests: { ...limits } } }] },
    }) as Pod;

  it('refuses a pod whose nodeSelector does not match, with the kubelet reason and message', () => {
    const pod = { metadata: { name: 'p' }, spec: { nodeSelector: { disktype: 'hdd' }, containers: [{ name: 'c', image: 'i' }] } } as Pod;
    expect(admitPod(pod, used, capacity, node)).toEqual({
      admit: false,
      reason: 'NodeAffinity',
      message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    });
    expect(kNodeAffinityMessage).toBe("Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector");
    expect(admitPod({ ...pod, spec: { ...pod.spec!, nodeSelector: { disktype: 'ssd' } } }, used, capacity, node)).toEqual({ admit: true });
  });

  it.each([
    [
      'example.com/foo',
      '2',
      'OutOfexample.com/foo',
      "Node didn't have enough resource: example.com/foo, requested: 2, used: 0, capacity: 0",
    ],
    ['nvidia.com/gpu', '1', 'OutOfnvidia.com/gpu', "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0"],
    [
      'hugepages-2Mi',
      '4Mi',
      'OutOfhugepages-2Mi',
      "Node didn't have enough resource: hugepages-2Mi, requested: 4194304, used: 0, capacity: 0",
    ],
  ])('refuses a request of %s: no device plugin offers it', (name, q, reason, message) => {
    expect(admitPod(withResources({ [name]: q, memory: '64Mi' }), used, capacity, node)).toEqual({ admit: false, reason, message });
  });

  it('admits ephemeral-storage requests (not a scalar resource the node lacks)', () => {
    expect(admitPod(withResources({ 'ephemeral-storage': '1Gi' }), used, capacity, node)).toEqual({ admit: true });
  });

  it('checks resources before node affinity, as generalFilter', () => {
    const pod = withResources({ 'example.com/foo': '1' });
    pod.spec!.nodeSelector = { disktype: 'hdd' };
    expect(admitPod(pod, used, capacity, node)).toMatchObject({ reason: 'OutOfexample.com/foo' });
  });
});

describe('nodeLabels (the Node labels the kubelet sets)', () => {
  it('sets the well-known labels, and --node-labels over them', () => {
    expect(nodeLabels('n1', 'linux', 'amd64', { disktype: 'ssd', 'kubernetes.io/arch': 'arm64' })).toEqual({
      'kubernetes.io/hostname': 'n1',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'arm64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'amd64',
      disktype: 'ssd',
    });
  });
});
