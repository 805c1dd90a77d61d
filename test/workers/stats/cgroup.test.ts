// The stats collector's readers on fixture dirs (test/fixtures/stats): a cgroup v1 host (cpuacct and
// memory hierarchies, a pod cgroup under /kt/kubepods/burstable) and a cgroup v2 host (unified), each
// with a procfs holding one container process's /proc/<pid>/cgroup, /proc/stat and /proc/meminfo.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatsTask } from '../../../src/shared/sync-tasks.js';
import { PROTOCOL_VERSION } from '../../../src/shared/thread-wire.js';
import {
  cgroupOfProcess,
  detectCgroupVersion,
  findPodCgroup,
  parseFlatKeyed,
  parseProcCgroup,
  readCgroupUsage,
  usageFromV1,
  usageFromV2,
} from '../../../src/workers/stats/cgroup.js';
import { collectStats } from '../../../src/workers/runtime/docker/collect-stats.js';
import { parseMeminfo, parseProcStat } from '../../../src/workers/stats/node.js';
import type {
  ContainerDetails,
  ContainerListFilter,
  ContainerRuntime,
  ContainerSummary,
} from '../../../src/workers/runtime/container/runtime.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const fixtures = path.resolve(import.meta.dirname, '../../fixtures/stats');
const v1 = { cgroup: path.join(fixtures, 'v1/cgroup'), proc: path.join(fixtures, 'v1/proc') };
const v2 = { cgroup: path.join(fixtures, 'v2/cgroup'), proc: path.join(fixtures, 'v2/proc') };
const MiB = 1024 * 1024;
const task: StatsTask = { kind: 'stats', protocol: PROTOCOL_VERSION };

describe('cgroup readers', () => {
  it('detects v1 and v2 hierarchies, and none in an empty dir', async () => {
    expect(await detectCgroupVersion(v1.cgroup)).toBe(1);
    expect(await detectCgroupVersion(v2.cgroup)).toBe(2);
    expect(await detectCgroupVersion(path.join(fixtures, 'nowhere'))).toBe(0);
  });

  it('parses /proc/<pid>/cgroup for both layouts', () => {
    expect(parseProcCgroup('12:pids:/a\n4:memory:/docker/x\n3:cpu,cpuacct:/docker/x\n0::/\n')).toEqual({
      memory: '/docker/x',
      cpuacct: '/docker/x',
      unified: '/',
    });
    expect(parseProcCgroup('0::/system.slice/docker-b.scope\n')).toEqual({ unified: '/system.slice/docker-b.scope' });
    expect(parseProcCgroup('garbage\n\n')).toEqual({});
  });

  it('reads a v1 container cgroup: cpuacct.usage, usage − total_inactive_file, total_rss, faults, limit', async () => {
    const ref = await cgroupOfProcess(4242, 1, v1.proc);
    expect(ref).toEqual({ version: 1, cpuacct: '/docker/aaa', memory: '/docker/aaa' });
    expect(await readCgroupUsage(ref!, v1.cgroup)).toEqual({
      cpuUsageNs: 5_000_000_000,
      memoryUsageBytes: 100 * MiB,
      workingSetBytes: 90 * MiB,
      rssBytes: 70 * MiB,
      pageFaults: 1500,
      majorPageFaults: 7,
      memoryLimitBytes: 256 * MiB,
    });
  });

  it('reads a v2 container cgroup: cpu.stat usage_usec, memory.current − inactive_file, anon, faults; max = no limit', async () => {
    const ref = await cgroupOfProcess(4343, 2, v2.proc);
    expect(ref).toEqual({ version: 2, path: '/system.slice/docker-bbb.scope' });
    expect(await readCgroupUsage(ref!, v2.cgroup)).toEqual({
      cpuUsageNs: 2_500_000_000,
      memoryUsageBytes: 50 * MiB,
      workingSetBytes: 46 * MiB,
      rssBytes: 30 * MiB,
      pageFaults: 900,
      majorPageFaults: 3,
    });
  });

  it('returns null for a gone process or cgroup, and for a process without the line', async () => {
    expect(await cgroupOfProcess(99999, 1, v1.proc)).toBeNull();
    expect(await cgroupOfProcess(4343, 1, v2.proc)).toBeNull();
    expect(await readCgroupUsage({ version: 2, path: '/gone' }, v2.cgroup)).toBeNull();
  });

  it('reports a known memory limit without reading the limit file, and an unlimited one as none', async () => {
    const ref = await cgroupOfProcess(4242, 1, v1.proc);
    expect(await readCgroupUsage(ref!, v1.cgroup, { memoryLimitBytes: 7 })).toMatchObject({ cpuUsageNs: 5e9, memoryLimitBytes: 7 });
    expect(await readCgroupUsage(ref!, v1.cgroup, { memoryLimitBytes: undefined })).not.toHaveProperty('memoryLimitBytes');
    const v2ref = await cgroupOfProcess(4343, 2, v2.proc);
    expect(await readCgroupUsage(v2ref!, v2.cgroup, { memoryLimitBytes: 9 })).toMatchObject({ cpuUsageNs: 2.5e9, memoryLimitBytes: 9 });
  });

  it('parses flat-keyed files whole or for the keys asked, skipping garbage', () => {
    const text = 'rss 5\ntotal_rss 10\n  total_pgfault   3  \nbad\ntotal_inactive_file x\n\nlast 4';
    expect([...parseFlatKeyed(text)]).toEqual([
      ['rss', 5],
      ['total_rss', 10],
      ['total_pgfault', 3],
      ['last', 4],
    ]);
    expect([...parseFlatKeyed(text, new Set(['total_rss', 'total_inactive_file', 'last']))]).toEqual([
      ['total_rss', 10],
      ['last', 4],
    ]);
  });

  it('keeps the working set at 0 when inactive_file exceeds usage, and ignores garbage', () => {
    expect(usageFromV1({ cpuacctUsage: 'x', memUsage: '10', memLimit: null, memStat: 'total_inactive_file 20\nbad line here\n' })).toEqual({
      memoryUsageBytes: 10,
      workingSetBytes: 0,
    });
    expect(usageFromV2({ cpuStat: null, memCurrent: null, memMax: null, memStat: null })).toBeNull();
  });

  it('finds a pod cgroup in its QoS tier, and none for another UID or a bad one', async () => {
    expect(await findPodCgroup('u1', '/kt', 1, v1.cgroup)).toEqual({
      version: 1,
      cpuacct: '/kt/kubepods/burstable/podu1',
      memory: '/kt/kubepods/burstable/podu1',
    });
    expect(await findPodCgroup('u2', '/kt', 1, v1.cgroup)).toBeNull();
    expect(await findPodCgroup('../x', '/kt', 1, v1.cgroup)).toBeNull();
  });

  it('parses /proc/stat and /proc/meminfo', () => {
    expect(parseProcStat('cpu  1000 50 300 90000 10 5 5 0 0 0\nbtime 1700000000\n')).toEqual({
      cpuUsageNs: 13_600_000_000,
      bootTimeMs: 1_700_000_000_000,
    });
    expect(() => parseProcStat('intr 1\n')).toThrow(/\/proc\/stat: no cpu line/);
    expect(parseMeminfo('MemTotal: 1000 kB\nMemFree: 200 kB\nMemAvailable: 500 kB\nInactive(file): 100 kB\nAnonPages: 300 kB\n')).toEqual({
      capacityBytes: 1000 * 1024,
      availableBytes: 500 * 1024,
      usageBytes: 800 * 1024,
      workingSetBytes: 700 * 1024,
      rssBytes: 300 * 1024,
    });
    expect(() => parseMeminfo('')).toThrow(/MemTotal/);
  });
});

/** A runtime that lists and inspects the given containers; every other call fails (unit test only). */
function listingRuntime(containers: (ContainerSummary & { pid: number; logPath: string })[]): ContainerRuntime {
  const fail = () => {
    throw new Error('not in this test');
  };
  return new Proxy(
    {
      listContainers: async () => containers,
      inspectContainer: async (id: string): Promise<ContainerDetails> => {
        const c = containers.find((x) => x.id === id);
        if (!c) throw new Error(`no container ${id}`);
        return {
          id,
          name: c.name,
          labels: c.labels,
          image: 'busybox',
          imageId: '',
          status: 'running',
          running: true,
          exitCode: 0,
          oomKilled: false,
          error: '',
          createdAtMs: 1,
          startedAtMs: 1_700_000_100_000,
          finishedAtMs: 0,
          networkMode: 'none',
          pid: c.pid,
          logPath: c.logPath,
        };
      },
      imageFsInfo: async () => null,
    },
    { get: (t, k) => (k in t ? t[k as keyof typeof t] : fail) },
  ) as unknown as ContainerRuntime;
}

const labels = (uid: string, name: string, type = 'container') => ({
  'io.kubernetes.pod.uid': uid,
  'io.kubernetes.pod.name': 'web',
  'io.kubernetes.pod.namespace': 'default',
  'io.kubernetes.container.name': name,
  'io.kubernetes.docker.type': type,
});

describe('collectStats', () => {
  let rootDir: string;
  beforeAll(async () => {
    rootDir = await mkdtemp(path.join(tmpdir(), 'kubelet-ts-stats-'));
    const vol = path.join(rootDir, 'pods', 'u1', 'volumes', 'kubernetes.io~empty-dir', 'scratch');
    await mkdir(vol, { recursive: true });
    await writeFile(path.join(vol, 'data'), Buffer.alloc(64 * 1024, 1));
    await writeFile(path.join(rootDir, 'c1-json.log'), 'x'.repeat(1000));
    await writeFile(path.join(rootDir, 'c1-json.log.1'), 'x'.repeat(500));
  });
  afterAll(async () => rm(rootDir, { recursive: true, force: true }));

  it('assembles pods from the v1 fixture: container cgroup, pod cgroup, logs, emptyDir, node', async () => {
    const runtime = listingRuntime([
      {
        id: 'sb1',
        name: 'k8s_POD_web_default_u1_0',
        labels: labels('u1', 'POD', 'podsandbox'),
        state: 'running',
        createdAtMs: 1,
        imageId: '',
        pid: 0,
        logPath: '',
      },
      {
        id: 'c1',
        name: 'k8s_app_web_default_u1_0',
        labels: labels('u1', 'app'),
        state: 'running',
        createdAtMs: 1,
        imageId: '',
        pid: 4242,
        logPath: path.join(rootDir, 'c1-json.log'),
      },
      {
        id: 'c2',
        name: 'k8s_gone_web_default_u1_0',
        labels: labels('u1', 'gone'),
        state: 'exited',
        createdAtMs: 1,
        imageId: '',
        pid: 0,
        logPath: '',
      },
    ]);
    const s = await collectStats(
      { runtime, rootDir, cgroupRoot: '/kt', clock: new FakeClock(1_700_000_200_000), cgroupFsRoot: v1.cgroup, procRoot: v1.proc },
      task,
    );
    expect(s.cgroupVersion).toBe(1);
    expect(s.errors).toEqual([]);
    expect(s.pods).toHaveLength(1);
    const pod = s.pods[0];
    expect(pod).toMatchObject({ uid: 'u1', name: 'web', namespace: 'default', startedAtMs: 1_700_000_100_000 });
    expect(pod.containers.map((c) => c.name)).toEqual(['app']); // the sandbox is no container; exited ones are not sampled
    expect(pod.containers[0]).toMatchObject({
      metricsName: 'k8s_app_web_default_u1_0',
      cgroupPath: '/docker/aaa',
      logsUsedBytes: 1500,
      cgroup: { cpuUsageNs: 5e9, workingSetBytes: 90 * MiB },
    });
    expect(pod.cgroup).toEqual({ cpuUsageNs: 9e9, memoryUsageBytes: 200 * MiB, workingSetBytes: 200 * MiB - 9_715_200, rssBytes: 1000 });
    expect(pod.volumes).toEqual([{ name: 'scratch', usedBytes: expect.any(Number), inodesUsed: 1 }]);
    expect(pod.volumes[0].usedBytes).toBeGreaterThanOrEqual(64 * 1024);
    expect(s.node).toMatchObject({
      cpuUsageNs: 123_456_789,
      memoryCapacityBytes: 16_384_000 * 1024,
      memoryWorkingSetBytes: (12_288_000 - 2_048_000) * 1024,
      bootTimeMs: 1_700_000_000_000,
      imageFs: null,
    });
    expect(s.node.fs?.capacityBytes).toBeGreaterThan(0);
  });

  it('reads emptyDir usage only under pods/{uid} (pod-dirs.ts): a pod UID label that is not a path segment gets no volumes', async () => {
    // `..` would make pods/../volumes/… — a directory outside every pod's.
    const outside = path.join(rootDir, 'volumes', 'kubernetes.io~empty-dir', 'stolen');
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, 'data'), 'x');
    const runtime = listingRuntime([
      {
        id: 'sb9',
        name: 'k8s_POD_web_default_x_0',
        labels: labels('..', 'POD', 'podsandbox'),
        state: 'running',
        createdAtMs: 1,
        imageId: '',
        pid: 0,
        logPath: '',
      },
      {
        id: 'c9',
        name: 'k8s_app_web_default_x_0',
        labels: labels('..', 'app'),
        state: 'running',
        createdAtMs: 1,
        imageId: '',
        pid: 4242,
        logPath: '',
      },
    ]);
    const s = await collectStats(
      { runtime, rootDir, cgroupRoot: '/kt', clock: new FakeClock(1_700_000_200_000), cgroupFsRoot: v1.cgroup, procRoot: v1.proc },
      task,
    );
    const pod = s.pods.find((p) => p.uid === '..');
    expect(pod).toBeDefined();
    expect(pod?.volumes).toEqual([]);
  });

  it('reads the memory limit of a container at its first collection only (Docker sets it at create)', async () => {
    const cg = await mkdtemp(path.join(tmpdir(), 'kubelet-ts-cgroup-'));
    try {
      const dir = path.join(cg, 'system.slice', 'docker-bbb.scope');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(cg, 'cgroup.controllers'), 'cpu memory\n');
      await writeFile(path.join(dir, 'cpu.stat'), 'usage_usec 1\n');
      await writeFile(path.join(dir, 'memory.current'), '100\n');
      await writeFile(path.join(dir, 'memory.stat'), 'anon 1\n');
      await writeFile(path.join(dir, 'memory.max'), '1000\n');
      const runtime = listingRuntime([
        {
          id: 'c-limit',
          name: 'k8s_app_lim_default_u9_0',
          labels: labels('u9', 'app'),
          state: 'running',
          createdAtMs: 1,
          imageId: '',
          pid: 4343,
          logPath: '',
        },
      ]);
      const deps = { runtime, rootDir, cgroupRoot: '', clock: new FakeClock(3), cgroupFsRoot: cg, procRoot: v2.proc };
      expect((await collectStats(deps, task)).pods[0].containers[0].cgroup).toMatchObject({ cpuUsageNs: 1000, memoryLimitBytes: 1000 });
      await writeFile(path.join(dir, 'memory.max'), '2000\n');
      await writeFile(path.join(dir, 'cpu.stat'), 'usage_usec 2\n');
      expect((await collectStats(deps, task)).pods[0].containers[0].cgroup).toMatchObject({ cpuUsageNs: 2000, memoryLimitBytes: 1000 });
    } finally {
      await rm(cg, { recursive: true, force: true });
    }
  });

  it('reads only the pods a task names, and the node alone without a Docker call for an empty list', async () => {
    let lists = 0;
    const base = listingRuntime([
      {
        id: 'c1',
        name: 'k8s_app_web_default_u1_0',
        labels: labels('u1', 'app'),
        state: 'running',
        createdAtMs: 1,
        imageId: '',
        pid: 4242,
        logPath: '',
      },
      {
        id: 'c7',
        name: 'k8s_app_api_default_u3_0',
        labels: labels('u3', 'app'),
        state: 'running',
        createdAtMs: 1,
        imageId: '',
        pid: 4242,
        logPath: '',
      },
    ]);
    const runtime = {
      ...base,
      listContainers: async (f: ContainerListFilter) => {
        lists++;
        return base.listContainers(f);
      },
    } as ContainerRuntime;
    Object.setPrototypeOf(runtime, base);
    const deps = { runtime, rootDir, cgroupRoot: '/kt', clock: new FakeClock(5), cgroupFsRoot: v1.cgroup, procRoot: v1.proc };
    expect((await collectStats(deps, task)).pods.map((p) => p.uid)).toEqual(['u3', 'u1'].sort());
    expect((await collectStats(deps, { ...task, pods: ['u3', 'u9'] })).pods.map((p) => p.uid)).toEqual(['u3']);
    expect(lists).toBe(2);
    const nodeOnly = await collectStats(deps, { ...task, pods: [] });
    expect(lists).toBe(2);
    expect(nodeOnly.pods).toEqual([]);
    expect(nodeOnly.node.cpuUsageNs).toBe(123_456_789);
  });

  it('reads the v2 fixture and reports a container whose inspect fails as an error, not a throw', async () => {
    const runtime = listingRuntime([
      {
        id: 'c3',
        name: 'k8s_app_api_default_u3_0',
        labels: labels('u3', 'app'),
        state: 'running',
        createdAtMs: 1,
        imageId: '',
        pid: 4343,
        logPath: '',
      },
    ]);
    const broken = {
      ...runtime,
      listContainers: async () => [
        ...(await runtime.listContainers({ labels: [] })),
        { id: 'zz', name: 'x', labels: labels('u3', 'ghost'), state: 'running', createdAtMs: 1, imageId: '' },
      ],
    } as ContainerRuntime;
    Object.setPrototypeOf(broken, runtime);
    const s = await collectStats(
      { runtime: broken, rootDir, cgroupRoot: '', clock: new FakeClock(2), cgroupFsRoot: v2.cgroup, procRoot: v2.proc },
      task,
    );
    expect(s.cgroupVersion).toBe(2);
    expect(s.pods[0].containers[0].cgroup).toMatchObject({ cpuUsageNs: 2.5e9, workingSetBytes: 46 * MiB });
    expect(s.pods[0].cgroup).toBeNull();
    expect(s.node.cpuUsageNs).toBe(77e9);
    expect(s.errors).toEqual([expect.stringMatching(/^container zz: no container zz/)]);
  });
});
