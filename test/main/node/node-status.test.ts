import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildNode, gatherNodeFacts, kubeletTsVersion, type NodeFacts, type NodeInputs } from '../../../src/main/node/node-status.js';

const facts: NodeFacts = {
  cpus: 2,
  memoryTotalBytes: 8 * 1024 ** 3,
  memoryAvailableBytes: 4 * 1024 ** 3,
  disk: { totalBytes: 100 * 1024 ** 3, availableBytes: 50 * 1024 ** 3 },
  pids: { running: 100, max: 32768 },
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  kernelVersion: '6.1.0',
  architecture: 'amd64',
  operatingSystem: 'linux',
  machineID: 'm1',
  bootID: 'b1',
};
const inputs = (over: Partial<NodeInputs> = {}): NodeInputs => ({
  nodeName: 'node1',
  nodeIp: '127.0.0.1',
  maxPods: 110,
  kubeletVersion: '0.1.0',
  containerRuntimeVersion: 'docker://20.10.24',
  health: { ok: true },
  port: 10250,
  facts,
  nowMs: Date.parse('2026-11-30T01:00:00Z'),
  ...over,
});
const cond = (n: ReturnType<typeof buildNode>, type: string) => n.status?.conditions?.find((c) => c.type === type);

describe('buildNode', () => {
  it('reports capacity, allocatable (minus the hard eviction thresholds), nodeInfo and addresses', () => {
    const n = buildNode(inputs());
    expect(n).toMatchObject({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'node1',
        labels: { 'kubernetes.io/hostname': 'node1', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux' },
      },
    });
    expect(n.status?.capacity).toEqual({ cpu: '2', memory: '8388608Ki', pods: '110', 'ephemeral-storage': '104857600Ki' });
    expect(n.status?.allocatable).toEqual({ cpu: '2', memory: `${8388608 - 102400}Ki`, pods: '110', 'ephemeral-storage': '94371840Ki' });
    expect(n.status?.nodeInfo).toMatchObject({
      kubeletVersion: 'v0.1.0',
      containerRuntimeVersion: 'docker://20.10.24',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      kernelVersion: '6.1.0',
      architecture: 'amd64',
      operatingSystem: 'linux',
    });
    expect(n.status?.addresses).toEqual([
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: 'node1' },
    ]);
    expect(n.status?.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10250 } });
  });

  it('lists MemoryPressure, DiskPressure, PIDPressure, Ready with the kubelet reasons', () => {
    const n = buildNode(inputs());
    expect(n.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
    expect(cond(n, 'Ready')?.message).toBe('kubelet is posting ready status');
  });

  it.each([
    ['MemoryPressure', { memoryAvailableBytes: 50 * 1024 ** 2 }, 'KubeletHasInsufficientMemory'],
    ['DiskPressure', { disk: { totalBytes: 100, availableBytes: 5 } }, 'KubeletHasDiskPressure'],
    ['PIDPressure', { pids: { running: 32000, max: 32768 } }, 'KubeletHasInsufficientPID'],
  ])('sets %s when the threshold is crossed', (type, over, reason) => {
    const n = buildNode(inputs({ facts: { ...facts, ...over } }));
    expect(cond(n, type)).toMatchObject({ status: 'True', reason });
  });

  it('is NotReady with the failing checks when the agent is unhealthy', () => {
    const n = buildNode(inputs({ health: { ok: false, message: 'pleg: relist stuck' } }));
    expect(cond(n, 'Ready')).toMatchObject({ status: 'False', reason: 'KubeletNotReady', message: 'pleg: relist stuck' });
  });

  it('is NotReady with NetworkUnavailable True while the pod network is not ready, and lists it False once ready', () => {
    const message =
      'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized';
    const down = buildNode(inputs({ network: { ready: false, message } }));
    expect(cond(down, 'Ready')).toMatchObject({ status: 'False', reason: 'KubeletNotReady', message });
    expect(cond(down, 'NetworkUnavailable')).toMatchObject({ status: 'True', reason: 'NetworkPluginNotReady', message });
    const both = buildNode(inputs({ network: { ready: false, message }, health: { ok: false, message: 'container runtime is down' } }));
    expect(cond(both, 'Ready')?.message).toBe(`container runtime is down, ${message}`);
    const up = buildNode(inputs({ network: { ready: true, message: '' } }));
    expect(cond(up, 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(cond(up, 'NetworkUnavailable')).toMatchObject({ status: 'False', reason: 'CniPluginIsUp' });
    expect(cond(buildNode(inputs()), 'NetworkUnavailable')).toBeUndefined();
  });

  it('keeps lastTransitionTime while a condition holds and moves it when it flips', () => {
    const first = buildNode(inputs());
    const same = buildNode(inputs({ nowMs: Date.parse('2026-11-30T01:05:00Z'), previous: first }));
    expect(cond(same, 'Ready')).toMatchObject({ lastTransitionTime: '2026-11-30T01:00:00Z', lastHeartbeatTime: '2026-11-30T01:05:00Z' });
    const flipped = buildNode(inputs({ nowMs: Date.parse('2026-11-30T01:06:00Z'), previous: same, health: { ok: false } }));
    expect(cond(flipped, 'Ready')?.lastTransitionTime).toBe('2026-11-30T01:06:00Z');
  });
});

describe('gatherNodeFacts', () => {
  it('reads this machine', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'facts-'));
    try {
      const f = await gatherNodeFacts(dir);
      expect(f.cpus).toBeGreaterThan(0);
      expect(f.memoryTotalBytes).toBeGreaterThan(f.memoryAvailableBytes);
      expect(f.disk?.totalBytes).toBeGreaterThan(0);
      expect(f.operatingSystem).toBe('linux');
      expect(f.kernelVersion).not.toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads the package version', () => {
    expect(kubeletTsVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
