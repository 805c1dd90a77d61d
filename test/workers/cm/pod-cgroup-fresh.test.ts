// ensurePodCgroup on the host's cgroup v1 file system (root only): a cgroup it just made holds the
// limits resourceConfigForPod gives although only those that differ from the kernel's defaults are
// written; one that was there gets every limit again. Under a cgroup root of the test's own, removed after.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { ensurePodCgroup, kCgroupMount, removePodCgroup } from '../../../src/workers/cm/pod-cgroup.js';

const kRoot = `/kts-test-pod-cgroup-${process.pid}`;
const supported = process.getuid?.() === 0 && ['cpu', 'memory', 'pids'].every((c) => existsSync(join(kCgroupMount, c, 'tasks')));

afterEach(async () => {
  for (const uid of ['pc-best', 'pc-guar']) await removePodCgroup(uid, kRoot);
  for (const c of ['cpu', 'memory', 'pids', 'freezer'])
    for (const d of ['kubepods/besteffort', 'kubepods/burstable', 'kubepods', ''])
      if (existsSync(join(kCgroupMount, c, kRoot, d))) rmdirSync(join(kCgroupMount, c, kRoot, d));
});

const read = (ctl: string, name: string, file: string) => readFileSync(join(kCgroupMount, ctl, name, file), 'utf8').trim();
const limits = (name: string) => ({
  shares: read('cpu', name, 'cpu.shares'),
  period: read('cpu', name, 'cpu.cfs_period_us'),
  quota: read('cpu', name, 'cpu.cfs_quota_us'),
  memory: read('memory', name, 'memory.limit_in_bytes'),
  pids: read('pids', name, 'pids.max'),
});
const kUnlimitedMemory = '9223372036854771712';

const pod = (uid: string, resources?: Record<string, Record<string, string>>): Pod => ({
  metadata: { name: uid, namespace: 'ns', uid },
  spec: { containers: [{ name: 'a', image: 'i', resources }] },
});

describe.skipIf(!supported)('ensurePodCgroup on cgroup v1', () => {
  it('a fresh BestEffort cgroup: cpu.shares 2, no quota, no memory limit, pids.max max (or --pod-max-pids)', async () => {
    const name = await ensurePodCgroup(pod('pc-best'), kRoot, -1);
    expect(limits(name)).toEqual({ shares: '2', period: '100000', quota: '-1', memory: kUnlimitedMemory, pids: 'max' });
    await removePodCgroup('pc-best', kRoot);
    expect(limits(await ensurePodCgroup(pod('pc-best'), kRoot, 42)).pids).toBe('42');
  });

  it('a fresh Guaranteed cgroup: the summed limits; an existing one gets every limit rewritten', async () => {
    const p = pod('pc-guar', { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } });
    const name = await ensurePodCgroup(p, kRoot, 77);
    const want = { shares: '204', period: '100000', quota: '20000', memory: String(64 * 1024 * 1024), pids: '77' };
    expect(limits(name)).toEqual(want);
    writeFileSync(join(kCgroupMount, 'cpu', name, 'cpu.cfs_quota_us'), '-1');
    writeFileSync(join(kCgroupMount, 'pids', name, 'pids.max'), 'max');
    expect(await ensurePodCgroup(p, kRoot, 77)).toBe(name);
    expect(limits(name)).toEqual(want);
  });

  it('removePodCgroup removes the pod cgroup from every hierarchy, the child cgroups a runtime made in it first', async () => {
    const name = await ensurePodCgroup(pod('pc-best'), kRoot, -1);
    mkdirSync(join(kCgroupMount, 'cpu', name, 'ctr-1', 'deeper'), { recursive: true });
    mkdirSync(join(kCgroupMount, 'freezer', name, 'ctr-1'), { recursive: true });
    expect(await removePodCgroup('pc-best', kRoot)).toEqual([]);
    for (const c of ['cpu', 'memory', 'pids', 'freezer']) expect(existsSync(join(kCgroupMount, c, name))).toBe(false);
    expect(await removePodCgroup('pc-best', kRoot)).toEqual([]);
  });
});
