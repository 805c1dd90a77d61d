// Eviction thresholds and their flags, as pkg/kubelet/eviction helpers_test.go's TestParseThresholdConfig.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadKubeletConfig } from '../../../src/main/options/kubelet-config.js';
import {
  checkGracePeriodMap,
  checkThresholdMap,
  formatQuantity,
  kDefaultEvictionHard,
  kDefaultHardEvictionReservation,
  parseThresholdConfig,
  thresholdQuantity,
} from '../../../src/main/eviction/thresholds.js';
import { resolveAgentOptions } from '../../../src/main/options/agent-options.js';
import { hardEvictionReservation, kEvictionOptionDescriptors } from '../../../src/main/options/eviction-options.js';
import { buildNode } from '../../../src/main/node/node-status.js';
import { parseCli } from '../../../src/main/cli.js';

describe('eviction thresholds', () => {
  it('parses hard and soft statements with quantities, percentages and grace periods', () => {
    const hard = checkThresholdMap('--eviction-hard', ['memory.available<150Mi', 'nodefs.available<10%']);
    const soft = checkThresholdMap('--eviction-soft', { 'imagefs.available': '20%' });
    const grace = checkGracePeriodMap('--eviction-soft-grace-period', ['imagefs.available=1m30s']);
    expect(grace).toEqual({ 'imagefs.available': 90_000 });
    const t = parseThresholdConfig(hard, soft, grace);
    expect(t).toEqual([
      { signal: 'memory.available', value: { quantity: 150 * 1024 * 1024, text: '150Mi' }, gracePeriodMs: 0, soft: false },
      { signal: 'nodefs.available', value: { percentage: 0.1, text: '10%' }, gracePeriodMs: 0, soft: false },
      { signal: 'imagefs.available', value: { percentage: 0.2, text: '20%' }, gracePeriodMs: 90_000, soft: true },
    ]);
    expect(thresholdQuantity(t[1].value, 1000)).toBe(100);
  });

  it('ignores 0% and 100%, as the kubelet', () => {
    expect(parseThresholdConfig({ 'nodefs.available': '0%', 'imagefs.available': '100%' }, {}, {})).toEqual([]);
  });

  it('refuses bad values naming the flag and the signal', () => {
    expect(() => checkThresholdMap('--eviction-hard', ['memory.available<abc'])).toThrow(
      /^--eviction-hard memory\.available: invalid quantity "abc"/,
    );
    expect(() => checkThresholdMap('--eviction-hard', ['memory.available<0'])).toThrow(
      /--eviction-hard memory\.available: eviction threshold must be positive/,
    );
    expect(() => checkThresholdMap('--eviction-hard', ['nodefs.available<101%'])).toThrow(/must be <= 100%/);
    expect(() => checkThresholdMap('--eviction-hard', ['nodefs.available<-1%'])).toThrow(/must be >= 0%/);
    expect(() => checkThresholdMap('--eviction-hard', ['pid.available<10'])).toThrow(
      /^--eviction-hard: unsupported eviction signal "pid\.available"/,
    );
    expect(() => checkThresholdMap('--eviction-hard', ['memory.available=1Gi'])).toThrow(/^--eviction-hard must be signal<value items/);
    expect(() => checkGracePeriodMap('--eviction-soft-grace-period', ['memory.available=soon'])).toThrow(
      /--eviction-soft-grace-period memory\.available: invalid duration "soon"/,
    );
    expect(() => parseThresholdConfig({}, { 'memory.available': '1Gi' }, {})).toThrow(
      '--eviction-soft-grace-period: grace period must be specified for the soft eviction threshold memory.available',
    );
  });

  it('are agent options with the kubelet defaults, set by flags; a soft threshold without grace period stops the start', async () => {
    const d = resolveAgentOptions({});
    expect(d.evictionHard).toEqual({ 'memory.available': '100Mi', 'nodefs.available': '10%', 'imagefs.available': '15%' });
    expect(d.evictionPressureTransitionPeriodMs).toBe(300_000);
    expect(d.evictionMonitoringIntervalMs).toBe(10_000);
    const args = await parseCli([
      '--eviction-hard',
      'memory.available<1Gi',
      '--eviction-soft',
      'memory.available<2Gi',
      '--eviction-soft-grace-period',
      'memory.available=30s',
      '--eviction-pressure-transition-period',
      '1m',
      '--eviction-max-pod-grace-period',
      '20',
    ]);
    expect(args).toMatchObject({
      evictionHard: { 'memory.available': '1Gi' },
      evictionSoft: { 'memory.available': '2Gi' },
      evictionSoftGracePeriodMs: { 'memory.available': 30_000 },
      evictionPressureTransitionPeriodMs: 60_000,
      evictionMaxPodGracePeriodSeconds: 20,
    });
    expect(() => resolveAgentOptions({ evictionSoft: { 'memory.available': '2Gi' } })).toThrow(/grace period must be specified/);
    await expect(parseCli(['--eviction-hard', 'memory.available<lots'])).rejects.toThrow(
      /--eviction-hard memory\.available: invalid quantity "lots"/,
    );
  });

  it('formats quantities as resource.Quantity prints them', () => {
    expect(formatQuantity(100 * 1024 * 1024)).toBe('100Mi');
    expect(formatQuantity(51_200 * 1024)).toBe('50Mi');
    expect(formatQuantity(1536 * 1024)).toBe('1536Ki');
    expect(formatQuantity(1536)).toBe('1536');
    expect(formatQuantity(123_456_789)).toBe('123456789');
    expect(formatQuantity(0)).toBe('0');
    expect(formatQuantity(1000)).toBe('1k');
    expect(formatQuantity(500)).toBe('500');
    expect(formatQuantity(5000, false)).toBe('5k');
  });

  it('are read from the KubeletConfiguration fields (maps and durations), a bad value naming the file and field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-eviction-'));
    try {
      const good = join(dir, 'good.yaml');
      await writeFile(
        good,
        `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
evictionHard: {memory.available: 500Mi, nodefs.inodesFree: 5%}
evictionSoft: {memory.available: 1Gi}
evictionSoftGracePeriod: {memory.available: 1m30s}
evictionPressureTransitionPeriod: 30s
evictionMaxPodGracePeriod: 60
`,
      );
      const o = resolveAgentOptions(await loadKubeletConfig(good));
      expect(o).toMatchObject({
        evictionHard: { 'memory.available': '500Mi', 'nodefs.inodesFree': '5%' },
        evictionSoft: { 'memory.available': '1Gi' },
        evictionSoftGracePeriodMs: { 'memory.available': 90_000 },
        evictionPressureTransitionPeriodMs: 30_000,
        evictionMaxPodGracePeriodSeconds: 60,
      });
      const bad = join(dir, 'bad.yaml');
      await writeFile(bad, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard: {memory.avail: 1Gi}\n');
      await expect(loadKubeletConfig(bad)).rejects.toThrow(/bad\.yaml: evictionHard: unsupported eviction signal "memory\.avail"/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("have one default (kDefaultEvictionHard): the flag's default and help, the default reservation and the node's fallback pressure", () => {
    expect(kDefaultEvictionHard).toEqual({ 'memory.available': '100Mi', 'nodefs.available': '10%', 'imagefs.available': '15%' });
    expect(kEvictionOptionDescriptors.evictionHard.default).toEqual(kDefaultEvictionHard);
    expect(kEvictionOptionDescriptors.evictionHard.defaultText).toBe('memory.available<100Mi,nodefs.available<10%,imagefs.available<15%');
    expect(kDefaultHardEvictionReservation.memoryBytes(8 * 1024 ** 3)).toBe(100 * 1024 * 1024);
    expect(kDefaultHardEvictionReservation.nodefsBytes(1000)).toBe(100);
    const node = (memoryAvailableBytes: number, availableBytes: number) =>
      buildNode({
        nodeName: 'n',
        nodeIp: '127.0.0.1',
        maxPods: 110,
        kubeletVersion: '0.1.0',
        containerRuntimeVersion: '',
        health: { ok: true },
        port: 1,
        nowMs: 0,
        facts: {
          cpus: 2,
          memoryTotalBytes: 8 * 1024 ** 3,
          memoryAvailableBytes,
          disk: { totalBytes: 1000 * 1024, availableBytes },
          osImage: '',
          kernelVersion: '',
          architecture: 'amd64',
          operatingSystem: 'linux',
          machineID: '',
          bootID: '',
        },
      });
    const cond = (n: ReturnType<typeof buildNode>, type: string) => n.status?.conditions?.find((c) => c.type === type)?.status;
    const low = node(100 * 1024 * 1024 - 1, 100 * 1024 - 1);
    expect([cond(low, 'MemoryPressure'), cond(low, 'DiskPressure')]).toEqual(['True', 'True']);
    const ok = node(100 * 1024 * 1024, 100 * 1024);
    expect([cond(ok, 'MemoryPressure'), cond(ok, 'DiskPressure')]).toEqual(['False', 'False']);
    expect(ok.status?.allocatable).toMatchObject({ memory: `${8 * 1024 * 1024 - 100 * 1024}Ki`, 'ephemeral-storage': '900Ki' });
  });

  it("reserve the hard memory.available and nodefs.available thresholds from the node's allocatable", () => {
    const r = hardEvictionReservation({ 'memory.available': '1Gi', 'nodefs.available': '20%' });
    expect(r.memoryBytes(8 * 1024 ** 3)).toBe(1024 ** 3);
    expect(r.nodefsBytes(1000)).toBe(200);
    expect(hardEvictionReservation({}).memoryBytes(1000)).toBe(0);
    const n = buildNode({
      nodeName: 'n',
      nodeIp: '127.0.0.1',
      maxPods: 110,
      kubeletVersion: '0.1.0',
      containerRuntimeVersion: '',
      health: { ok: true },
      port: 1,
      nowMs: 0,
      facts: {
        cpus: 2,
        memoryTotalBytes: 8 * 1024 ** 3,
        memoryAvailableBytes: 1,
        disk: { totalBytes: 100 * 1024 ** 3, availableBytes: 1 },
        osImage: '',
        kernelVersion: '',
        architecture: 'amd64',
        operatingSystem: 'linux',
        machineID: '',
        bootID: '',
      },
      hardEviction: r,
      pressure: { memory: false, disk: true },
    });
    expect(n.status?.allocatable).toMatchObject({ memory: `${7 * 1024 * 1024}Ki`, 'ephemeral-storage': `${80 * 1024 * 1024}Ki` });
    // The eviction manager's conditions win over the facts (1 byte available would be pressure by the defaults).
    expect(n.status?.conditions?.find((c) => c.type === 'MemoryPressure')?.status).toBe('False');
    expect(n.status?.conditions?.find((c) => c.type === 'DiskPressure')).toMatchObject({
      status: 'True',
      reason: 'KubeletHasDiskPressure',
    });
  });
});
