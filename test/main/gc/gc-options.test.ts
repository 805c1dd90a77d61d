// Tests of the GC flags: --image-gc-high-threshold / --image-gc-low-threshold (KubeletConfiguration imageGCHigh/LowThresholdPercent).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveAgentOptions } from '../../../src/main/options/agent-options.js';
import { parseCli } from '../../../src/main/cli.js';
import { loadKubeletConfig } from '../../../src/main/options/kubelet-config.js';

describe('image GC thresholds', () => {
  it('default to 85 and 80, as the kubelet', () => {
    const o = resolveAgentOptions({});
    expect([o.imageGcHighThresholdPercent, o.imageGcLowThresholdPercent]).toEqual([85, 80]);
  });

  it('are read from the flags', async () => {
    const o = await parseCli([
      '--image-gc-high-threshold',
      '70',
      '--image-gc-low-threshold',
      '60',
      '--maximum-dead-containers-per-container',
      '0',
    ]);
    expect([o.imageGcHighThresholdPercent, o.imageGcLowThresholdPercent, o.maximumDeadContainersPerContainer]).toEqual([70, 60, 0]);
  });

  it('reject values outside 0..100 and low above high, naming the flag', () => {
    expect(() => resolveAgentOptions({ imageGcHighThresholdPercent: 101 })).toThrow(/--image-gc-high-threshold/);
    expect(() => resolveAgentOptions({ imageGcLowThresholdPercent: -1 })).toThrow(/--image-gc-low-threshold/);
    expect(() => resolveAgentOptions({ imageGcHighThresholdPercent: 50, imageGcLowThresholdPercent: 60 })).toThrow(
      /--image-gc-low-threshold \(60\) must not exceed --image-gc-high-threshold \(50\)/,
    );
  });

  it('are read from a KubeletConfiguration file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kts-gc-config-'));
    try {
      const file = join(dir, 'config.yaml');
      await writeFile(
        file,
        'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimageGCHighThresholdPercent: 90\nimageGCLowThresholdPercent: 75\n',
      );
      expect(await loadKubeletConfig(file)).toEqual({ imageGcHighThresholdPercent: 90, imageGcLowThresholdPercent: 75 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
