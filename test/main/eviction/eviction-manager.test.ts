// The eviction manager with a fake stats source, as pkg/kubelet/eviction eviction_manager_test.go
// (TestMemoryPressure, TestDiskPressureNodeFs, TestAdmitUnderNodeConditions) and helpers_test.go
// (TestMakeSignalObservations, TestOrderedByExceedsRequestMemory/Priority, TestEvictionMessage).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import type { PodStats, Summary } from '../../../src/shared/stats.js';
import {
  admitUnderPressure,
  cachedStatsFunc,
  evictionMessage,
  makeSignalObservations,
  rankPods,
  thresholdsMet,
} from '../../../src/main/eviction/helpers.js';
import { newEvictionManager, type EvictionManagerDeps } from '../../../src/main/eviction/eviction-manager.js';
import { parseThresholdConfig } from '../../../src/main/eviction/thresholds.js';
import { hasLocalStorageLimit, localStorageViolation } from '../../../src/main/eviction/local-storage.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { countingContainers } from '../../support/read-counter.js';

const Mi = 1024 * 1024;
const Gi = 1024 * Mi;
const logger = pino({ level: 'silent' });

function pod(
  name: string,
  opts: {
    requests?: string;
    limits?: string;
    priority?: number;
    static?: boolean;
    tolerations?: Pod['spec'] extends infer S ? (S extends { tolerations?: infer T } ? T : never) : never;
  } = {},
): Pod {
  const resources: Record<string, Record<string, string>> = {};
  if (opts.requests) resources.requests = { memory: opts.requests };
  if (opts.limits) resources.limits = { memory: opts.limits };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      annotations: opts.static ? { 'kubernetes.io/config.source': 'file' } : { 'kubernetes.io/config.source': 'api' },
    },
    spec: {
      containers: [{ name: `${name}-c`, image: 'busybox', resources }],
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
      ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
    },
  };
}

function podStats(p: Pod, workingSet: number, logs = 0): PodStats {
  return {
    podRef: { name: p.metadata!.name!, namespace: 'default', uid: p.metadata!.uid! },
    startTime: '2026-12-02T00:00:00Z',
    containers: [
      {
        name: p.spec!.containers[0].name,
        startTime: '2026-12-02T00:00:00Z',
        memory: { time: 't', workingSetBytes: workingSet },
        logs: { time: 't', usedBytes: logs },
      },
    ],
    memory: { time: 't', workingSetBytes: workingSet },
    'ephemeral-storage': { time: 't', usedBytes: logs },
  };
}

function summary(timeS: number, nodeWorkingSet: number, pods: PodStats[], fs = { avail: 50 * Gi, cap: 100 * Gi }): Summary {
  const time = new Date(timeS * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    node: {
      nodeName: 'n',
      startTime: time,
      memory: { time, workingSetBytes: nodeWorkingSet, availableBytes: 1 },
      fs: { time, availableBytes: fs.avail, capacityBytes: fs.cap, inodes: 1000, inodesFree: 900 },
      runtime: { imageFs: { time, availableBytes: fs.avail, capacityBytes: fs.cap, inodes: 1000, inodesFree: 900 } },
    },
    pods,
  };
}

describe('eviction helpers', () => {
  it('observes memory.available as capacity minus the working set (not MemAvailable), and the filesystems', () => {
    const o = makeSignalObservations(summary(100, 3 * Gi, [], { avail: 8 * Gi, cap: 100 * Gi }), 4 * Gi);
    expect(o['memory.available']).toEqual({ available: Gi, capacity: 4 * Gi, timeMs: 100_000 });
    expect(o['nodefs.available']).toMatchObject({ available: 8 * Gi, capacity: 100 * Gi });
    expect(o['imagefs.inodesFree']).toMatchObject({ available: 900, capacity: 1000 });
    const t = parseThresholdConfig({ 'memory.available': '1500Mi', 'nodefs.available': '10%', 'imagefs.available': '5%' }, {}, {});
    expect(thresholdsMet(t, o).map((x) => x.signal)).toEqual(['memory.available', 'nodefs.available']);
  });

  it('ranks for memory: usage above requests first, then lower priority, then the larger usage above requests', () => {
    const be = pod('besteffort');
    const withinRequests = pod('guaranteed', { requests: '1Gi', limits: '1Gi' });
    const over = pod('burstable', { requests: '100Mi' });
    const overHighPriority = pod('important', { requests: '10Mi', priority: 1000 });
    const stats = cachedStatsFunc(
      summary(1, 0, [
        podStats(be, 5 * Mi),
        podStats(withinRequests, 900 * Mi),
        podStats(over, 300 * Mi),
        podStats(overHighPriority, 2 * Gi),
      ]),
    );
    const ranked = rankPods([withinRequests, overHighPriority, be, over], stats, 'memory');
    expect(ranked.map((p) => p.metadata!.name)).toEqual(['burstable', 'besteffort', 'important', 'guaranteed']);
    // A pod without stats goes first.
    const unknown = pod('nostats');
    expect(rankPods([be, unknown], stats, 'memory')[0].metadata!.name).toBe('nostats');
  });

  it('ranks for disk by usage of logs and volumes above the ephemeral-storage request', () => {
    const a = pod('a');
    const b = pod('b');
    const stats = cachedStatsFunc(summary(1, 0, [podStats(a, 0, 10 * Mi), podStats(b, 0, 20 * Mi)]));
    expect(rankPods([a, b], stats, 'ephemeral-storage').map((p) => p.metadata!.name)).toEqual(['b', 'a']);
  });

  it('writes the kubelet eviction message', () => {
    const be = pod('hog');
    const s = summary(1, 0, [podStats(be, 1536 * Mi)]);
    const o = makeSignalObservations(summary(1, 4 * Gi - 50 * Mi, []), 4 * Gi);
    const t = parseThresholdConfig({ 'memory.available': '100Mi' }, {}, {});
    const { message, annotations } = evictionMessage('memory', be, cachedStatsFunc(s), t, o);
    expect(message).toBe(
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container hog-c was using 1536Mi, request is 0, has larger consumption of memory. ',
    );
    expect(annotations).toEqual({ offending_containers: 'hog-c', offending_containers_usage: '1536Mi', starved_resource: 'memory' });
    const within = pod('ok', { requests: '2Gi', limits: '2Gi' });
    const m2 = evictionMessage('memory', within, cachedStatsFunc(summary(1, 0, [podStats(within, Gi)])), t, o).message;
    expect(m2).toBe('The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ');
  });

  it('admits under pressure as the kubelet: BestEffort refused under MemoryPressure unless tolerating it, everything under DiskPressure, critical pods always', () => {
    const be = pod('be');
    expect(admitUnderPressure(be, [], 'BestEffort', false)).toEqual({ admit: true });
    expect(admitUnderPressure(be, ['MemoryPressure'], 'BestEffort', false)).toEqual({
      admit: false,
      reason: 'Evicted',
      message: 'The node had condition: [MemoryPressure]. ',
    });
    expect(admitUnderPressure(be, ['MemoryPressure'], 'Burstable', false)).toEqual({ admit: true });
    const tolerant = pod('t', { tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] });
    expect(admitUnderPressure(tolerant, ['MemoryPressure'], 'BestEffort', false)).toEqual({ admit: true });
    expect(admitUnderPressure(be, ['DiskPressure'], 'Guaranteed', false)).toMatchObject({
      admit: false,
      message: 'The node had condition: [DiskPressure]. ',
    });
    expect(admitUnderPressure(be, ['MemoryPressure', 'DiskPressure'], 'Burstable', false)).toMatchObject({
      admit: false,
      message: 'The node had condition: [MemoryPressure DiskPressure]. ',
    });
    expect(admitUnderPressure(be, ['DiskPressure'], 'BestEffort', true)).toEqual({ admit: true });
  });
});

/** A manager over a fake stats source and fake pod workers; `state` is what the test changes. */
function harness(
  hard: Record<string, string>,
  soft: Record<string, string> = {},
  grace: Record<string, number> = {},
  extra: { transitionMs?: number; maxPodGrace?: number } = {},
) {
  const clock = new FakeClock(1_000_000);
  const state = {
    get nowMs() {
      return clock.t;
    },
    set nowMs(ms: number) {
      clock.t = ms;
    },
    summary: undefined as Summary | undefined,
    allSummary: undefined as Summary | undefined,
    failAll: false,
    pods: [] as Pod[],
    evicted: [] as { name: string; message: string; grace: number }[],
    cleaned: new Set<string>(),
    signals: [] as string[],
    collects: [] as string[],
  };
  const deps: EvictionManagerDeps = {
    logger,
    memoryCapacityBytes: 4 * Gi,
    clock,
    summary: () => state.summary,
    collect: async (scope) => {
      state.collects.push(scope ?? 'period');
      if (scope !== 'all') return;
      if (state.failAll) throw new Error('docker: context deadline exceeded');
      // As the stats provider: a collection of every pod becomes the latest Summary.
      if (state.allSummary) state.summary = state.allSummary;
    },
    activePods: () => state.pods.filter((p) => !state.evicted.some((e) => e.name === p.metadata!.name)),
    evictPod: (p, e) => {
      state.evicted.push({ name: p.metadata!.name!, message: e.message, grace: e.gracePeriodSeconds });
      return true;
    },
    podCleanedUp: (uid) => state.cleaned.has(uid),
    onEviction: (s) => state.signals.push(s),
  };
  const m = newEvictionManager(
    {
      thresholds: parseThresholdConfig(hard, soft, grace),
      pressureTransitionPeriodMs: extra.transitionMs ?? 60_000,
      maxPodGracePeriodSeconds: extra.maxPodGrace ?? 0,
    },
    deps,
  );
  return { m, state, deps };
}

describe('eviction manager', () => {
  it('admits every pod without pressure without classing it (reads no resources), as the kubelet Admit returns first (issue #42)', () => {
    const { m } = harness({ 'memory.available': '1Gi' });
    const p = pod('new', { requests: '1Mi' });
    const counted = countingContainers(p.spec!.containers);
    expect(m.admit({ ...p, spec: { ...p.spec!, containers: counted.containers } })).toEqual({ admit: true });
    expect(counted.reads()).toBe(0);
  });

  it('under memory pressure evicts the BestEffort pod first, one per pass, after the previous one is cleaned up', async () => {
    const { m, state } = harness({ 'memory.available': '1Gi' });
    const be = pod('besteffort');
    const g = pod('guaranteed', { requests: '1Gi', limits: '1Gi' });
    state.pods = [g, be];
    // Plenty free: nothing happens, no condition.
    state.summary = summary(1, Gi, [podStats(be, 10 * Mi), podStats(g, 900 * Mi)]);
    expect(await m.synchronize()).toBeNull();
    expect(m.conditions()).toEqual([]);
    expect(m.admit(pod('new')).admit).toBe(true);
    expect(state.collects).toEqual([]); // no threshold met: the periodic (node-level) figures are enough
    // 3.5Gi working set of 4Gi: 512Mi available < 1Gi.
    state.nowMs += 10_000;
    // A quiet period's Summary has the node's figures only; the ranking must collect every pod
    // (ranked without figures, the guaranteed pod, listed first, would go).
    state.summary = summary(11, 3.5 * Gi, []);
    state.allSummary = summary(11, 3.5 * Gi, [podStats(be, 10 * Mi), podStats(g, 900 * Mi)]);
    const first = await m.synchronize();
    expect(first?.metadata?.name).toBe('besteffort');
    expect(state.evicted).toEqual([
      {
        name: 'besteffort',
        grace: 1,
        message:
          'The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. Container besteffort-c was using 10Mi, request is 0, has larger consumption of memory. ',
      },
    ]);
    expect(state.signals).toEqual(['memory.available']);
    expect(state.collects).toEqual(['all']); // every pod's figures before the ranking
    state.allSummary = undefined;
    expect(m.conditions()).toEqual(['MemoryPressure']);
    expect(m.admit(pod('new'))).toEqual({ admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
    expect(m.admit(pod('b', { requests: '1Mi' })).admit).toBe(true);
    // Not cleaned up yet: no second eviction even with fresh stats.
    state.nowMs += 10_000;
    state.summary = summary(21, 3.5 * Gi, [podStats(g, 900 * Mi)]);
    expect(await m.synchronize()).toBeNull();
    state.cleaned.add('uid-besteffort');
    state.nowMs += 10_000;
    state.summary = summary(31, 3.5 * Gi, [podStats(g, 900 * Mi)]);
    expect((await m.synchronize())?.metadata?.name).toBe('guaranteed');
    // The same stats again: no eviction on stale figures (thresholdsUpdatedStats).
    state.cleaned.add('uid-guaranteed');
    state.pods.push(pod('late', { requests: '1Mi' }));
    expect(await m.synchronize()).toBeNull();
    expect(state.evicted.map((e) => e.name)).toEqual(['besteffort', 'guaranteed']);
  });

  it('evicts nothing when the collection of every pod fails (no ranking on a partial sample), and evicts once it succeeds', async () => {
    const { m, state } = harness({ 'memory.available': '1Gi' });
    const be = pod('besteffort');
    const g = pod('guaranteed', { requests: '1Gi', limits: '1Gi' });
    state.pods = [g, be];
    state.summary = summary(1, 3.5 * Gi, []);
    state.failAll = true;
    expect(await m.synchronize()).toBeNull();
    expect(state.collects).toEqual(['all']);
    expect(state.evicted).toEqual([]);
    expect(m.conditions()).toEqual(['MemoryPressure']); // the node's figures still set the condition
    state.failAll = false;
    state.nowMs += 10_000;
    state.summary = summary(11, 3.5 * Gi, []);
    state.allSummary = summary(11, 3.5 * Gi, [podStats(be, 10 * Mi), podStats(g, 900 * Mi)]);
    expect((await m.synchronize())?.metadata?.name).toBe('besteffort');
  });

  it('keeps the condition for the pressure transition period after the threshold is no longer met', async () => {
    const { m, state } = harness({ 'memory.available': '1Gi' }, {}, {}, { transitionMs: 30_000 });
    state.summary = summary(1, 3.5 * Gi, []);
    await m.synchronize();
    expect(m.conditions()).toEqual(['MemoryPressure']);
    state.nowMs += 20_000;
    state.summary = summary(21, Gi, []);
    await m.synchronize();
    expect(m.conditions()).toEqual(['MemoryPressure']);
    state.nowMs += 11_000;
    state.summary = summary(32, Gi, []);
    await m.synchronize();
    expect(m.conditions()).toEqual([]);
  });

  it("evicts for a soft threshold only after its grace period, with min(max-pod-grace-period, the pod's)", async () => {
    const { m, state } = harness({}, { 'memory.available': '1Gi' }, { 'memory.available': 60_000 }, { maxPodGrace: 10 });
    const be = pod('be');
    state.pods = [be];
    state.summary = summary(1, 3.5 * Gi, [podStats(be, Mi)]);
    expect(await m.synchronize()).toBeNull();
    // The condition is reported at once (node conditions ignore the grace period, as upstream).
    expect(m.conditions()).toEqual(['MemoryPressure']);
    state.nowMs += 30_000;
    state.summary = summary(31, 3.5 * Gi, [podStats(be, Mi)]);
    expect(await m.synchronize()).toBeNull();
    state.nowMs += 30_000;
    state.summary = summary(61, 3.5 * Gi, [podStats(be, Mi)]);
    expect((await m.synchronize())?.metadata?.name).toBe('be');
    expect(state.evicted[0].grace).toBe(10);
  });

  it('evicts for nodefs with DiskPressure, never a critical (static) pod, and refuses every pod under DiskPressure', async () => {
    const { m, state } = harness({ 'nodefs.available': '10%' });
    const stat = pod('static', { static: true });
    const logs = pod('logs');
    state.pods = [stat, logs];
    state.summary = summary(1, 0, [podStats(stat, 0, 500 * Mi), podStats(logs, 0, 100 * Mi)], { avail: 5 * Gi, cap: 100 * Gi });
    expect((await m.synchronize())?.metadata?.name).toBe('logs');
    expect(state.evicted[0].message).toBe(
      'The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 5Gi. Container logs-c was using 100Mi, request is 0, has larger consumption of ephemeral-storage. ',
    );
    expect(m.conditions()).toEqual(['DiskPressure']);
    expect(m.admit(pod('g', { requests: '1Gi', limits: '1Gi' }))).toMatchObject({
      admit: false,
      message: 'The node had condition: [DiskPressure]. ',
    });
    expect(m.admit(pod('s', { static: true })).admit).toBe(true);
    state.cleaned.add('uid-logs');
    state.summary = summary(11, 0, [podStats(stat, 0, 500 * Mi)], { avail: 5 * Gi, cap: 100 * Gi });
    expect(await m.synchronize()).toBeNull();
    expect(state.evicted).toHaveLength(1);
  });
});

describe('node-level reclaim on disk pressure', () => {
  it('runs the disk reclaim first and evicts nothing when it relieved the threshold; evicts when it did not', async () => {
    const { m, state, deps } = harness({ 'imagefs.available': '15%' });
    const p = pod('p');
    state.pods = [p];
    let reclaims = 0;
    let freed = false;
    deps.reclaimDisk = async () => {
      reclaims++;
      if (freed) state.summary = summary(2, 0, [podStats(p, 0, Mi)], { avail: 50 * Gi, cap: 100 * Gi });
    };
    deps.collect = async () => undefined;
    freed = true;
    state.summary = summary(1, 0, [podStats(p, 0, Mi)], { avail: 10 * Gi, cap: 100 * Gi });
    expect(await m.synchronize()).toBeNull();
    expect(reclaims).toBe(1);
    expect(state.evicted).toEqual([]);
    // The condition was observed (it holds for the transition period).
    expect(m.conditions()).toEqual(['DiskPressure']);
    freed = false;
    state.nowMs += 10_000;
    state.summary = summary(11, 0, [podStats(p, 0, Mi)], { avail: 10 * Gi, cap: 100 * Gi });
    expect((await m.synchronize())?.metadata?.name).toBe('p');
    expect(reclaims).toBe(2);
  });

  it('does not reclaim disk for memory pressure', async () => {
    const { m, state, deps } = harness({ 'memory.available': '1Gi' });
    let reclaims = 0;
    deps.reclaimDisk = async () => {
      reclaims++;
    };
    state.pods = [pod('p')];
    state.summary = summary(1, 3.5 * Gi, [podStats(state.pods[0], Mi)]);
    expect((await m.synchronize())?.metadata?.name).toBe('p');
    expect(reclaims).toBe(0);
  });
});

describe('local storage eviction', () => {
  const withVolume = (name: string, sizeLimit: string): Pod => {
    const p = pod(name);
    p.spec!.volumes = [{ name: 'scratch', emptyDir: { sizeLimit } }];
    return p;
  };
  const withLimit = (name: string, limit: string): Pod => {
    const p = pod(name);
    p.spec!.containers[0].resources = { limits: { 'ephemeral-storage': limit } };
    return p;
  };

  it('names the pods with a local-storage limit (the stats provider reads them every period)', () => {
    expect(hasLocalStorageLimit(withVolume('v', '1Mi'))).toBe(true);
    expect(hasLocalStorageLimit(withVolume('zero', '0'))).toBe(false);
    expect(hasLocalStorageLimit(withLimit('l', '10Mi'))).toBe(true);
    expect(hasLocalStorageLimit(pod('plain'))).toBe(false);
  });

  it("finds an emptyDir over its sizeLimit, a pod over its containers' ephemeral-storage limits, a container's logs over its limit", () => {
    const v = withVolume('v', '1Mi');
    const vs = { ...podStats(v, 0), volume: [{ name: 'scratch', time: 't', usedBytes: 2 * Mi }] };
    expect(localStorageViolation(v, vs)).toEqual({
      signal: 'emptydirfs.limit',
      message: 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ',
    });
    expect(localStorageViolation(v, { ...vs, volume: [{ name: 'scratch', time: 't', usedBytes: Mi / 2 }] })).toBeNull();
    const l = withLimit('l', '10Mi');
    const ls = podStats(l, 0, 5 * Mi);
    expect(localStorageViolation(l, ls)).toBeNull();
    expect(localStorageViolation(l, { ...ls, 'ephemeral-storage': { time: 't', usedBytes: 11 * Mi } })).toEqual({
      signal: 'ephemeralpodfs.limit',
      message: 'Pod ephemeral local storage usage exceeds the total limit of containers 10Mi. ',
    });
    expect(localStorageViolation(l, { ...podStats(l, 0, 12 * Mi), 'ephemeral-storage': { time: 't', usedBytes: 9 * Mi } })).toEqual({
      signal: 'ephemeralcontainerfs.limit',
      message: 'Container l-c exceeded its local ephemeral storage limit "10Mi". ',
    });
    expect(localStorageViolation(l, undefined)).toBeNull();
  });

  it('evicts such pods whatever the pressure, with the immediate grace period, and counts them by their own signal', async () => {
    const { m, state } = harness({});
    const v = withVolume('v', '1Mi');
    const ok = pod('ok');
    state.pods = [v, ok];
    state.summary = summary(1, 0, [{ ...podStats(v, 0), volume: [{ name: 'scratch', time: 't', usedBytes: 2 * Mi }] }, podStats(ok, 0)]);
    expect((await m.synchronize())?.metadata?.name).toBe('v');
    expect(state.evicted).toEqual([{ name: 'v', grace: 1, message: 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ' }]);
    expect(state.signals).toEqual(['emptydirfs.limit']);
    expect(m.conditions()).toEqual([]);
  });
});
