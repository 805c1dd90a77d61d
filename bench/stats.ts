// bench stats: the stats collector's CPU cost (issue 14: "at 300 pods the collector adds <= 1 % of a
// core at a 10 s period"). With N real pods running (sandbox + one sleeping busybox container each,
// on the shared dockerd, removed after), the agent's periodic collection is turned off and the
// bench runs K collections back to back (`stats` task in the pool + the Summary built on the main
// thread), then K scrapes of both metric texts (reported apart: a scrape's cost), measuring the whole process's
// CPU (process.cpuUsage: main thread + worker threads) against an idle window of the same length.
// cost per period = (CPU during the collections − idle CPU rate × their duration) / K; at a 10 s
// period that is cost / 10 s of a core. The first (cold) collection, which inspects every container
// once, is reported apart; so is a quiet period's collection (nobody reading per-pod figures: the
// node's figures alone, stats-provider.ts). Prints a table, writes bench/results/stats-*.json.
//
//   npm run bench -- stats [--pods 300] [--collections 20] [--period 10s] [--workers 2]
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { parseDuration } from '../src/shared/duration.js';
import { podYaml, positiveInt, startBenchAgent, summary, table, waitUntil, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '300' },
    collections: { type: 'string', default: '20' },
    period: { type: 'string', default: '10s' },
    workers: { type: 'string', default: '2' },
  },
});
const N = positiveInt('pods', args.pods);
const K = positiveInt('collections', args.collections);
const periodMs = parseDuration(args.period ?? '10s', '--period');
const workers = positiveInt('workers', args.workers);
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// The agent's own collector timer is set an hour out: the bench drives every collection itself.
// No pod network: the collector reads no network figures, and the agent's CNI bridge (a /24) holds
// 254 pods, fewer than the default 300.
const b = await startBenchAgent('stats', { workers, syncFrequencyMs: 600_000, housekeepingIntervalMs: 3_600_000, networkPlugin: 'none' });
try {
  process.stderr.write(`creating ${N} pods (sandbox + 1 sleeping container each)\n`);
  for (let i = 0; i < N; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, N - i) }, (_, j) => b.write(`stats-${i + j}.yaml`, podYaml(`stats-${i + j}`))));
  }
  await waitUntil('pods Running', N, () => b.times.running.size);
  await new Promise((r) => setTimeout(r, 5000)); // let the start-up syncs settle

  const stats = b.agent.stats;
  const t0 = performance.now();
  const c0 = cpuMs();
  const first = await stats.collect('all');
  stats.summary();
  const coldCpuMs = cpuMs() - c0;
  const coldWallMs = performance.now() - t0;

  // A quiet period's collection (nobody has read per-pod figures yet: the node's figures alone).
  const q0 = cpuMs();
  const qt0 = performance.now();
  for (let i = 0; i < K; i++) await stats.collect();
  const quietCpu = cpuMs() - q0;
  const quietWall = performance.now() - qt0;
  if (stats.demanded()) throw new Error('bench stats: the collector was demanded before any read');

  // Idle baseline: the agent with N pods and no collection, for as long as the K collections take (estimated from a warm one).
  const w0 = performance.now();
  await stats.collect('all');
  await stats.resourceMetrics();
  await stats.cadvisorMetrics();
  const warmWall = performance.now() - w0;
  const idleMs = Math.max(2000, warmWall * K);
  const i0 = cpuMs();
  const it0 = performance.now();
  await new Promise((r) => setTimeout(r, idleMs));
  const idleRate = (cpuMs() - i0) / (performance.now() - it0);

  const perCollectionCpu: number[] = [];
  const perCollectionWall: number[] = [];
  const k0 = cpuMs();
  const kt0 = performance.now();
  for (let i = 0; i < K; i++) {
    const a = cpuMs();
    const t = performance.now();
    await stats.collect('all');
    stats.summary();
    perCollectionWall.push(performance.now() - t);
    perCollectionCpu.push(cpuMs() - a);
  }
  const totalCpu = cpuMs() - k0;
  const totalWall = performance.now() - kt0;
  // A scrape (both metric texts), apart: it costs per scrape, not per period.
  const scrapeCpu: number[] = [];
  for (let i = 0; i < K; i++) {
    const a = cpuMs();
    await stats.resourceMetrics();
    await stats.cadvisorMetrics();
    scrapeCpu.push(cpuMs() - a);
  }
  const costMs = Math.max(0, (totalCpu - idleRate * totalWall) / K);
  const quietCostMs = Math.max(0, (quietCpu - idleRate * quietWall) / K);
  const cost = stats.cost();
  const last = stats.summary()!;
  const result = {
    date: new Date().toISOString(),
    pods: N,
    containers: 2 * N,
    sampledContainers: first.pods.reduce((n: number, p) => n + p.containers.length, 0),
    workers,
    periodMs,
    collections: K,
    cgroupVersion: first.cgroupVersion,
    errors: first.errors.length,
    coldCollection: { cpuMs: coldCpuMs, wallMs: coldWallMs },
    perCollectionCpuMs: summary(perCollectionCpu),
    perCollectionWallMs: summary(perCollectionWall),
    idleCpuPercentOfCore: idleRate * 100,
    costPerPeriodCpuMs: costMs,
    percentOfCoreAtPeriod: (costMs / periodMs) * 100,
    quietCostPerPeriodCpuMs: quietCostMs,
    quietPercentOfCoreAtPeriod: (quietCostMs / periodMs) * 100,
    mainThreadRenderMsPerCollection: cost.totalRenderMs / Math.max(1, cost.collections),
    podsInSummary: last.pods.length,
    scrapeBothTextsCpuMs: summary(scrapeCpu),
  };
  console.log(
    `\nstats: ${N} running pods (${result.sampledContainers} app containers sampled, cgroup v${result.cgroupVersion}), ${workers} worker threads, ${result.date}`,
  );
  console.log(
    table([
      ['measure', 'value'],
      ['cold collection (first: inspects every container) CPU ms', result.coldCollection.cpuMs.toFixed(1)],
      [
        'collection + summary, CPU ms p50 / p99',
        `${result.perCollectionCpuMs.p50.toFixed(1)} / ${result.perCollectionCpuMs.p99.toFixed(1)}`,
      ],
      ['collection wall ms p50', result.perCollectionWallMs.p50.toFixed(1)],
      ['idle agent (no collection), % of a core', result.idleCpuPercentOfCore.toFixed(2)],
      ['cost per period above idle, CPU ms', result.costPerPeriodCpuMs.toFixed(1)],
      [`=> % of a core at a ${periodMs / 1000} s period`, result.percentOfCoreAtPeriod.toFixed(2)],
      ['quiet period (nobody reads per-pod figures: the node only), CPU ms above idle', result.quietCostPerPeriodCpuMs.toFixed(2)],
      [`=> % of a core at a ${periodMs / 1000} s period`, result.quietPercentOfCoreAtPeriod.toFixed(3)],
      ['main thread (summary and texts) ms per collection', result.mainThreadRenderMsPerCollection.toFixed(1)],
      ['one scrape of /metrics/resource + /metrics/cadvisor, CPU ms p50', result.scrapeBothTextsCpuMs.p50.toFixed(1)],
    ]),
  );
  console.log(`results: ${writeResult('stats', result)}`);
} finally {
  process.stderr.write(`removing ${N} pods\n`);
  await Promise.all(Array.from({ length: N }, (_, i) => b.remove(`stats-${i}.yaml`)));
  await waitUntil('pods removed', N, () => b.times.removed.size, 5 * 60_000).catch(() => {});
  await b.stop();
  const list = await docker.listContainers({ all: true, filters: { label: [`kubelet-ts.node-name=${b.nodeName}`] } });
  await Promise.all(
    list.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
}
