// The stats provider's demand-driven collection (stats-provider.ts): per-pod figures are collected
// while someone reads them; a quiet period collects the node's figures and the watched pods only.
// A fake `run` answers each task with the pods its scope asks for, on an injected clock.
import { describe, expect, it } from 'vitest';
import { newStatsProvider, kRateSampleMs } from '../../../src/main/stats/stats-provider.js';
import type { StatsTask } from '../../../src/shared/sync-tasks.js';
import type { PodSample, StatsSample, Summary } from '../../../src/shared/stats.js';
import { newLogger } from '../../../src/shared/logging.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';

const kPeriodMs = 10_000;
const kWindowMs = 60_000;
const kAllUids = ['u1', 'u2', 'u3'];

function pod(uid: string, cpuNs: number): PodSample {
  return {
    uid,
    name: `p-${uid}`,
    namespace: 'default',
    startedAtMs: 0,
    cgroup: null,
    volumes: [],
    containers: [
      {
        id: `${uid}-c`,
        metricsName: `k8s_c_p-${uid}_default_${uid}_0`,
        cgroupPath: '',
        name: 'c',
        image: 'busybox',
        startedAtMs: 0,
        logsUsedBytes: 0,
        cgroup: { cpuUsageNs: cpuNs, memoryUsageBytes: 1 },
      },
    ],
  };
}

/** A provider over a fake collector: each container burns 0.1 core of CPU on the fake clock. */
function setup(opts: { watched?: string[]; fail?: boolean; readWaitLimitMs?: number } = {}) {
  const clock = new FakeClock(1_000_000);
  const tasks: StatsTask[] = [];
  const slept: number[] = [];
  let running = 0;
  let maxRunning = 0;
  const release: (() => void)[] = [];
  let hold = false;
  const run = async (task: StatsTask): Promise<StatsSample> => {
    tasks.push(task);
    running++;
    maxRunning = Math.max(maxRunning, running);
    if (hold) await new Promise<void>((r) => release.push(r));
    await Promise.resolve();
    running--;
    if (opts.fail) throw new Error('runtime unavailable');
    const uids = task.pods === undefined || task.pods === 'all' ? kAllUids : task.pods;
    const cpu = clock.t * 100_000; // 0.1 core: 1e5 ns of CPU per ms
    return {
      observedAtMs: clock.t,
      cgroupVersion: 1,
      errors: [],
      pods: uids.map((u) => pod(u, cpu)),
      node: {
        cpuUsageNs: cpu,
        memoryCapacityBytes: 100,
        memoryAvailableBytes: 50,
        memoryUsageBytes: 50,
        memoryWorkingSetBytes: 50,
        memoryRssBytes: 10,
        fs: null,
        imageFs: null,
        bootTimeMs: 0,
      },
    };
  };
  const provider = newStatsProvider(
    { periodMs: kPeriodMs, demandWindowMs: kWindowMs, nodeName: 'n1', readWaitLimitMs: opts.readWaitLimitMs },
    {
      run,
      logger: newLogger('silent'),
      watchedPods: () => opts.watched ?? [],
      clock,
      sleep: async (ms) => {
        slept.push(ms);
        clock.t += ms;
      },
    },
  );
  return {
    provider,
    tasks,
    slept,
    clock,
    maxRunning: () => maxRunning,
    holdRuns: () => {
      hold = true;
    },
    releaseRuns: () => {
      hold = false;
      for (const r of release.splice(0)) r();
    },
  };
}

const scopes = (tasks: StatsTask[]) => tasks.map((t) => t.pods ?? 'all');

describe('stats provider: per-pod figures on demand', () => {
  it('collects only the node and the watched pods while nobody reads per-pod figures', async () => {
    const t = setup({ watched: ['u2'] });
    await t.provider.collect();
    t.clock.t += kPeriodMs;
    await t.provider.collect();
    expect(scopes(t.tasks)).toEqual([['u2'], ['u2']]);
    expect(t.provider.demanded()).toBe(false);
    // The eviction manager's view: the node, and the watched pod with its CPU rate.
    const s = t.provider.summary()!;
    expect(s.node.cpu?.usageNanoCores).toBe(100_000_000);
    expect(s.pods.map((p) => p.podRef.uid)).toEqual(['u2']);
    expect(s.pods[0].cpu?.usageNanoCores).toBe(100_000_000);
  });

  it('answers the first read after a quiet spell with two collections of every pod, 1 s apart, so the CPU rate is there', async () => {
    const t = setup();
    await t.provider.collect();
    const s = await t.provider.podSummary();
    expect(scopes(t.tasks)).toEqual([[], 'all', 'all']);
    expect(t.slept).toEqual([kRateSampleMs]);
    expect(s!.pods.map((p) => p.podRef.uid)).toEqual(kAllUids);
    for (const p of s!.pods) expect(p.containers[0].cpu?.usageNanoCores).toBe(100_000_000);
    expect(t.provider.demanded()).toBe(true);
  });

  it('keeps collecting every pod each period while read, and goes quiet once the demand window has passed', async () => {
    const t = setup();
    await t.provider.podSummary();
    t.tasks.length = 0;
    for (let i = 0; i < 3; i++) {
      t.clock.t += kPeriodMs;
      await t.provider.collect(); // the period's timer
    }
    expect(scopes(t.tasks)).toEqual(['all', 'all', 'all']);
    // A read within two periods of the last collection is answered without one.
    await t.provider.podSummary();
    await t.provider.resourceMetrics();
    await t.provider.cadvisorMetrics();
    expect(t.tasks).toHaveLength(3);
    t.clock.t += kWindowMs;
    expect(t.provider.demanded()).toBe(false);
    await t.provider.collect();
    expect(scopes(t.tasks).at(-1)).toEqual([]);
  });

  it('a read after a gap of more than two periods (a timer that did not fire) takes two new collections: the rate is over the last second, never over the gap', async () => {
    const t = setup();
    await t.provider.podSummary();
    t.clock.t += kWindowMs / 2; // demanded still, but no period ran
    t.tasks.length = 0;
    t.slept.length = 0;
    const s = await t.provider.podSummary();
    expect(scopes(t.tasks)).toEqual(['all', 'all']);
    expect(t.slept).toEqual([kRateSampleMs]);
    expect(s!.pods[0].containers[0].cpu?.usageNanoCores).toBe(100_000_000);
  });

  it("a fresh collection of every pod paired with a stale one (the eviction manager's, in a quiet spell) is not a current rate: a read collects twice", async () => {
    const t = setup();
    await t.provider.collect('all');
    t.clock.t += 5 * kPeriodMs;
    await t.provider.collect('all');
    t.tasks.length = 0;
    await t.provider.podSummary();
    expect(scopes(t.tasks)).toEqual(['all', 'all']);
  });

  it('overlapping cold reads share one warm-up', async () => {
    const t = setup();
    t.holdRuns();
    const reads = [t.provider.podSummary(), t.provider.resourceMetrics(), t.provider.podSummary()];
    for (let i = 0; i < 2; i++) {
      await flush();
      t.releaseRuns();
      t.holdRuns();
    }
    await flush();
    t.releaseRuns();
    const [a, metrics, b] = await Promise.all(reads);
    expect(a).toBe(b);
    expect((a as Summary).pods).toHaveLength(kAllUids.length);
    expect((metrics as { body: string }).body).toMatch(/^scrape_error 0$/m);
    expect(scopes(t.tasks)).toEqual(['all', 'all']);
    expect(t.slept).toEqual([kRateSampleMs]);
  });

  it('answers from the samples it has when a collection does not finish within readWaitLimitMs (a wedged dockerd)', async () => {
    const t = setup({ readWaitLimitMs: 20 });
    const before = await t.provider.podSummary();
    t.clock.t += kWindowMs / 2;
    t.holdRuns();
    let late: unknown = 'waiting';
    const read = t.provider.podSummary().then((s) => (late = s));
    await t.clock.advance(19);
    expect(late).toBe('waiting');
    await t.clock.advance(1);
    await read;
    expect(late).toBe(before);
    t.releaseRuns();
  });

  it('after stop() a read answers at once from the samples it has and starts no collection', async () => {
    const t = setup();
    await t.provider.stop();
    await expect(t.provider.podSummary()).resolves.toBeUndefined();
    t.provider.start();
    expect(t.tasks).toEqual([]);
  });

  it('runs one collection at a time: a collection of every pod asked during a quiet one follows it', async () => {
    const t = setup();
    t.holdRuns();
    const quiet = t.provider.collect();
    const all1 = t.provider.collect('all');
    const all2 = t.provider.collect('all');
    await Promise.resolve();
    t.releaseRuns();
    await quiet;
    await flush();
    t.releaseRuns();
    const [a, b] = await Promise.all([all1, all2]);
    expect(a).toBe(b);
    expect(scopes(t.tasks)).toEqual([[], 'all']);
    expect(t.maxRunning()).toBe(1);
  });

  it('never rejects a read: undefined when no collection of every pod succeeded, scrape_error 1 in the metric text', async () => {
    const t = setup({ fail: true });
    await expect(t.provider.podSummary()).resolves.toBeUndefined();
    expect((await t.provider.resourceMetrics()).body).toMatch(/^scrape_error 1$/m);
    await expect(t.provider.collect()).rejects.toThrow('runtime unavailable');
  });

  it('refuses a zero period or demand window', () => {
    const deps = {
      run: async () => {
        throw new Error('no');
      },
      logger: newLogger('silent'),
    };
    expect(() => newStatsProvider({ nodeName: 'n', periodMs: 0 }, deps)).toThrow(RangeError);
    expect(() => newStatsProvider({ nodeName: 'n', demandWindowMs: 0 }, deps)).toThrow(/demand window/);
  });
});
