import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/shared/api.js';
import { applyPodDefaults } from '../../src/shared/defaults.js';
import { containerOOMScoreAdjust, getPodQOS, isNodeCriticalPod } from '../../src/shared/qos.js';
import { countingContainers } from '../support/read-counter.js';

const Gi = 1024 ** 3;
const c = (name: string, resources?: Container['resources'], extra: Partial<Container> = {}): Container => ({
  name,
  image: 'i',
  ...(resources ? { resources } : {}),
  ...extra,
});
const pod = (containers: Container[], spec: Record<string, unknown> = {}, annotations: Record<string, string> = {}): Pod =>
  ({ metadata: { name: 'p', namespace: 'default', uid: 'u', annotations }, spec: { containers, ...spec } }) as Pod;

describe('getPodQOS (GetPodQOS)', () => {
  it.each([
    ['no resources', [c('a')], 'BestEffort'],
    ['zero requests only', [c('a', { requests: { cpu: '0' } })], 'BestEffort'],
    [
      'limits = requests for cpu and memory',
      [c('a', { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1Gi' } })],
      'Guaranteed',
    ],
    ['memory limit only', [c('a', { limits: { memory: '1Gi' } })], 'Burstable'],
    ['one container without limits', [c('a', { limits: { cpu: '1', memory: '1Gi' } }), c('b')], 'Burstable'],
    ['requests below limits', [c('a', { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } })], 'Burstable'],
  ])('%s → %s', (_what, containers, want) => {
    expect(getPodQOS(applyPodDefaults(pod(containers)))).toBe(want);
  });

  it('counts init containers', () => {
    const p = pod([c('a', { limits: { cpu: '1', memory: '1Gi' } })], { initContainers: [c('i')] });
    expect(getPodQOS(applyPodDefaults(p))).toBe('Burstable');
  });
});

describe('containerOOMScoreAdjust (pkg/kubelet/qos/policy.go)', () => {
  const capacity = 8 * Gi;
  it.each([
    ['BestEffort', [c('a')], 1000],
    ['Guaranteed', [c('a', { limits: { cpu: '1', memory: '1Gi' } })], -997],
    ['Burstable, 1Gi of 8Gi', [c('a', { requests: { memory: '1Gi' } })], 875],
    ["Burstable, no memory request: 999, never BestEffort's 1000", [c('a', { requests: { cpu: '1' } })], 999],
    ['Burstable, all the memory: at least 3', [c('a', { requests: { memory: '8Gi' } })], 3],
    ['Burstable, more than the memory', [c('a', { requests: { memory: '16Gi' } })], 3],
  ])('%s → %d', (_what, containers, want) => {
    const p = applyPodDefaults(pod(containers));
    expect(containerOOMScoreAdjust(p, p.spec!.containers[0], capacity)).toBe(want);
  });

  it('a node-critical pod gets -997 whatever its QoS; cluster-critical does not', () => {
    const node = applyPodDefaults(pod([c('a')], { priorityClassName: 'system-node-critical' }));
    expect(node.spec?.priority).toBe(2000001000);
    expect(isNodeCriticalPod(node)).toBe(true);
    expect(containerOOMScoreAdjust(node, node.spec!.containers[0], capacity)).toBe(-997);
    const cluster = applyPodDefaults(pod([c('a')], { priorityClassName: 'system-cluster-critical' }));
    expect(containerOOMScoreAdjust(cluster, cluster.spec!.containers[0], capacity)).toBe(1000);
  });

  it('a sidecar scores no higher than the regular container with the smallest request', () => {
    const p = applyPodDefaults(
      pod([c('a', { requests: { memory: '2Gi' } })], {
        initContainers: [c('s', { requests: { memory: '1Gi' } }, { restartPolicy: 'Always' })],
      }),
    );
    expect(containerOOMScoreAdjust(p, p.spec!.initContainers![0], capacity)).toBe(750);
    expect(containerOOMScoreAdjust(p, p.spec!.containers[0], capacity)).toBe(750);
  });
});

describe('getPodQOS per spec object (issue #42: a pod start classed its spec 3–4 times)', () => {
  it('classes a spec once: asking again for the same spec reads no resources; a replaced spec is classed anew', () => {
    const counted = countingContainers([c('a', { requests: { cpu: '1' }, limits: { cpu: '1', memory: '1Gi' } })]);
    const p = pod(counted.containers);
    expect(getPodQOS(p)).toBe('Burstable');
    const first = counted.reads();
    expect(first).toBeGreaterThan(0);
    expect(getPodQOS(p)).toBe('Burstable');
    expect(getPodQOS({ ...p, status: { phase: 'Running' } })).toBe('Burstable'); // a new pod object, the same spec
    expect(counted.reads()).toBe(first);
    const resized = {
      ...p,
      spec: { ...p.spec!, containers: [c('a', { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } })] },
    };
    expect(getPodQOS(resized)).toBe('Guaranteed');
  });
});
