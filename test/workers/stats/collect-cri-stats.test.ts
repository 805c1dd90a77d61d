// The CRI stats collector (src/workers/stats/collect-cri-stats.ts) on a scripted CRI runtime and the cgroup v1 fixture of test/fixtures/stats: the runtime's figures where it gives them, the cgroups where it gives none, the CRI log files, a failing stats call listed as an error.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../../src/shared/thread-wire.js';
import type { StatsTask } from '../../../src/shared/sync-tasks.js';
import type { ContainerStats, PodSandboxStats } from '../../../src/workers/runtime/cri/types-status.js';
import type { Container, PodSandbox } from '../../../src/workers/runtime/cri/types.js';
import { collectCriStats, usageFromCri, type CriStatsDeps } from '../../../src/workers/stats/collect-cri-stats.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const fixtures = path.resolve(import.meta.dirname, '../../fixtures/stats');
const v1 = { cgroup: path.join(fixtures, 'v1/cgroup'), proc: path.join(fixtures, 'v1/proc') };
const task: StatsTask = { kind: 'stats', protocol: PROTOCOL_VERSION };
const MiB = 1024 * 1024;
const u = (value: number) => ({ value });

const sandbox: PodSandbox = {
  id: 'sb1',
  metadata: { name: 'web', uid: 'u1', namespace: 'default', attempt: 0 },
  state: 'SANDBOX_READY',
  created_at: 1_700_000_100_000 * 1e6,
  labels: {},
  annotations: {},
  runtime_handler: '',
};
const ctr = (id: string, name: string): Container => ({
  id,
  pod_sandbox_id: 'sb1',
  metadata: { name, attempt: 0 },
  image: { image: 'busybox:1.35' } as Container['image'],
  image_ref: 'sha256:b',
  state: 'CONTAINER_RUNNING',
  created_at: 1_700_000_150_000 * 1e6,
  labels: {},
  annotations: {},
  image_id: '',
});
const stats = (id: string, withFigures: boolean): ContainerStats => ({
  attributes: { id, metadata: null, labels: {}, annotations: {} },
  cpu: withFigures ? { timestamp: 1, usage_core_nano_seconds: u(42), usage_nano_cores: u(1) } : null,
  memory: withFigures
    ? {
        timestamp: 1,
        working_set_bytes: u(10 * MiB),
        available_bytes: u(54 * MiB),
        usage_bytes: u(12 * MiB),
        rss_bytes: u(8 * MiB),
        page_faults: u(3),
        major_page_faults: u(0),
      }
    : null,
  writable_layer: null,
  swap: null,
});

describe('collectCriStats', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kubelet-ts-cri-stats-'));
    await mkdir(path.join(dir, 'app'), { recursive: true });
    await writeFile(path.join(dir, 'app', '0.log'), 'x'.repeat(1000));
    await writeFile(path.join(dir, 'app', '0.log.20261207-120000'), 'x'.repeat(500));
    await writeFile(path.join(dir, 'app', '1.log'), 'x'.repeat(7)); // another attempt's file: not this container's
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  function runtime(podStats: () => Promise<PodSandboxStats[]>): CriStatsDeps['runtime'] & { statusCalls: string[] } {
    const statusCalls: string[] = [];
    return {
      statusCalls,
      listPodSandbox: async () => [sandbox],
      listContainers: async () => [ctr('c-cri', 'app'), ctr('c-cg', 'side')],
      // The runtime gives figures for one container only: the other's come from its cgroup.
      listContainerStats: async () => [stats('c-cri', true), stats('c-cg', false)],
      listPodSandboxStats: podStats,
      containerStatus: async (id: string, verbose?: boolean) => {
        statusCalls.push(`${id}${verbose ? ' verbose' : ''}`);
        return {
          status: { log_path: id === 'c-cri' ? path.join(dir, 'app', '0.log') : '' } as never,
          info: (verbose ? { info: JSON.stringify({ pid: 4242 }) } : {}) as Record<string, string>,
        };
      },
    };
  }

  it("takes the runtime's figures, the cgroups where it gives none, the CRI log files; asks each container's status once", async () => {
    const rt = runtime(async () => {
      throw new Error('rpc error: code = Unknown desc = cgroupPath is empty');
    });
    const deps: CriStatsDeps = {
      runtime: rt,
      images: { imageFsInfo: async () => ({ image_filesystems: [], container_filesystems: [] }) },
      rootDir: dir,
      cgroupRoot: '/kt',
      clock: new FakeClock(7),
      cgroupFsRoot: v1.cgroup,
      procRoot: v1.proc,
    };
    const s = await collectCriStats(deps, task);
    expect(s.errors).toEqual(['ListPodSandboxStats: rpc error: code = Unknown desc = cgroupPath is empty']);
    expect(s.pods).toHaveLength(1);
    const [pod] = s.pods;
    expect(pod).toMatchObject({ uid: 'u1', name: 'web', namespace: 'default', startedAtMs: 1_700_000_100_000 });
    expect(pod!.containers.map((c) => [c.name, c.metricsName, c.startedAtMs])).toEqual([
      ['app', 'c-cri', 1_700_000_150_000],
      ['side', 'c-cg', 1_700_000_150_000],
    ]);
    expect(pod!.containers[0]).toMatchObject({
      cgroup: {
        cpuUsageNs: 42,
        workingSetBytes: 10 * MiB,
        memoryUsageBytes: 12 * MiB,
        rssBytes: 8 * MiB,
        pageFaults: 3,
        majorPageFaults: 0,
        memoryLimitBytes: 64 * MiB,
      },
      logsUsedBytes: 1500,
      image: 'busybox:1.35',
    });
    // The fixture's /proc/4242/cgroup is /docker/aaa: 5 s of CPU, 90 MiB working set.
    expect(pod!.containers[1]).toMatchObject({
      cgroupPath: '/docker/aaa',
      cgroup: { cpuUsageNs: 5e9, workingSetBytes: 90 * MiB },
      logsUsedBytes: 0,
    });
    // No sandbox stats: the pod cgroup under --cgroup-root.
    expect(pod!.cgroup).toMatchObject({ cpuUsageNs: 9e9 });
    expect(s.node.imageFs).toBeNull();
    await collectCriStats(deps, task);
    expect(rt.statusCalls).toEqual(['c-cri verbose', 'c-cg verbose']); // verbose: the PID gives the cgroup path (cAdvisor's id label) either way
  });

  it("takes the pod's figures from ListPodSandboxStats when it answers", async () => {
    const podStats: PodSandboxStats = {
      attributes: { id: 'sb1', metadata: null, labels: {}, annotations: {} },
      linux: {
        cpu: { timestamp: 1, usage_core_nano_seconds: u(77), usage_nano_cores: null },
        memory: null,
        network: null,
        process: null,
        containers: [],
      },
    };
    const deps: CriStatsDeps = {
      runtime: runtime(async () => [podStats]),
      images: {
        imageFsInfo: async () => {
          throw new Error('down');
        },
      },
      rootDir: dir,
      cgroupRoot: '/kt',
      clock: new FakeClock(7),
      cgroupFsRoot: v1.cgroup,
      procRoot: v1.proc,
    };
    const s = await collectCriStats(deps, task);
    expect(s.errors).toEqual([]);
    expect(s.pods[0]!.cgroup).toEqual({ cpuUsageNs: 77 });
  });

  it('usageFromCri: null without figures; no limit without an available figure', () => {
    expect(usageFromCri(null, null)).toBeNull();
    expect(
      usageFromCri(null, {
        timestamp: 1,
        working_set_bytes: u(5),
        available_bytes: u(0),
        usage_bytes: null,
        rss_bytes: null,
        page_faults: null,
        major_page_faults: null,
      }),
    ).toEqual({ workingSetBytes: 5 });
  });
});
