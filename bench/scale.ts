// bench scale: the fake runtime (`--runtime fake`, no containers) with 10,000 pods in one agent,
// kubemark-style: time to converge (every pod Running), pods/s, for each --workers value; memory
// per pod (process RSS and main-thread heap growth / N); and the main thread's event-loop delay p99
// (perf_hooks.monitorEventLoopDelay) while it converges. Prints a table, writes
// bench/results/scale-*.json.
//
//   npm run bench -- scale [--pods 10000] [--workers 1,2,4] [--pods-per-file 2000] [--tasks-per-worker 16]
//                          [--latency create=5ms,start=5ms] [--failure-rate start=0.01]
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { newPinnedWorkerPool } from '../src/main/pool/pinned-pool.js';
import { PROTOCOL_VERSION } from '../src/shared/thread-wire.js';
import { parseFakeFailureRates, parseFakeLatencies, type FakeWorkerBootstrap } from '../src/shared/fake-runtime-tuning.js';
import { parseIntList, positiveInt, startBenchAgent, summary, table, waitUntil, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '10000' },
    workers: { type: 'string', default: '1,2,4' },
    latency: { type: 'string', default: 'create=5ms,start=5ms,list=1ms,inspect=1ms' },
    'failure-rate': { type: 'string', default: '' },
    'tasks-per-worker': { type: 'string', default: '16' },
    'pods-per-file': { type: 'string', default: '2000' },
  },
});
const N = positiveInt('pods', args.pods);
const workerCounts = parseIntList('workers', args.workers!);
const tuning = { latencyMs: parseFakeLatencies(args.latency!), failureRate: parseFakeFailureRates(args['failure-rate']!) };
const tasksPerWorker = positiveInt('tasks-per-worker', args['tasks-per-worker']);
const perFile = positiveInt('pods-per-file', args['pods-per-file']); // the file source takes at most 1 MiB per file

function manifest(from: number, to: number): string {
  const docs: string[] = [];
  for (let i = from; i < to; i++) {
    docs.push(
      `apiVersion: v1\nkind: Pod\nmetadata: {name: scale-${i}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers: [{name: main, image: "kubelet-ts/busybox:1.35", command: ["sleep", "3600"]}]\n`,
    );
  }
  return docs.join('---\n');
}

async function once(workers: number) {
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const heap0 = process.memoryUsage().heapUsed;
  const b = await startBenchAgent(
    'scale',
    { workers, runtime: 'fake', maxPods: N + 1, syncFrequencyMs: 600_000, relistPeriodMs: 10_000 },
    {},
    (o) => {
      // The agent would build this pool itself for --runtime fake; the bench builds it to add the tuning.
      const bootstrap: FakeWorkerBootstrap = {
        protocol: PROTOCOL_VERSION,
        runtime: 'fake',
        dockerSocketPath: o.dockerSocketPath,
        nodeName: o.nodeName,
        rootDir: o.rootDir,
        podInfraContainerImage: o.podInfraContainerImage,
        logLevel: 'silent',
        fakeRuntime: tuning,
      };
      return newPinnedWorkerPool(bootstrap, { threads: workers, concurrentTasksPerWorker: tasksPerWorker });
    },
  );
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const t0 = performance.now();
  for (let i = 0; i < N; i += perFile) await b.write(`scale-${i}.yaml`, manifest(i, Math.min(N, i + perFile)));
  await waitUntil(`workers ${workers}: pods Running`, N, () => b.times.running.size, 30 * 60_000);
  const convergeMs = performance.now() - t0;
  loop.disable();
  const rss1 = process.memoryUsage().rss;
  const heap1 = process.memoryUsage().heapUsed;
  const latencies = [...b.times.running].map(([uid, t]) => t - (b.times.accepted.get(uid) ?? t0));
  await b.agent.pleg.relist();
  const relistMs = b.agent.pleg.lastRelistDurationMs();
  await b.stop();
  return {
    workers,
    convergeMs,
    podsPerSecond: N / (convergeMs / 1000),
    startupMs: summary(latencies),
    relistMs,
    eventLoopDelayMs: { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
    rssPerPodKiB: (rss1 - rss0) / N / 1024,
    heapPerPodKiB: (heap1 - heap0) / N / 1024,
  };
}

const runs = [];
for (const w of workerCounts) runs.push(await once(w));
const date = new Date().toISOString();
console.log(
  `\nscale: ${N} pods on the fake runtime (latency ${args.latency || 'none'}${args['failure-rate'] ? `, failure rate ${args['failure-rate']}` : ''}), ${tasksPerWorker} tasks per worker, ${date}`,
);
console.log(
  table([
    [
      'workers',
      'converge (s)',
      'pods/s',
      'startup p99 (s)',
      'event-loop delay p99 (ms)',
      'max (ms)',
      'RSS/pod (KiB)',
      'main heap/pod (KiB)',
      'relist (ms)',
    ],
    ...runs.map((r) => [
      r.workers,
      r.convergeMs / 1000,
      r.podsPerSecond,
      r.startupMs.p99 / 1000,
      r.eventLoopDelayMs.p99,
      r.eventLoopDelayMs.max,
      r.rssPerPodKiB,
      r.heapPerPodKiB,
      r.relistMs,
    ]),
  ]),
);
console.log(`results: ${writeResult('scale', { date, pods: N, tuning, tasksPerWorker, runs })}`);
