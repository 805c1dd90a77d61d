// bench steady: with N pods running and nothing changing, the agent's CPU (process.cpuUsage: the
// main thread, the pool's threads and the events worker) and RSS over a window, and dockerd's CPU
// over the same window (utime + stime from /proc/<dockerd pid>/stat). Prints a table, writes
// bench/results/steady-*.json.
//
//   npm run bench -- steady [--pods 100] [--window 60] [--workers 2] [--relist-period 30s]
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { parseDuration } from '../src/shared/duration.js';
import { engineCpuSeconds, podYaml, positiveInt, startBenchAgent, table, waitUntil, writeResult, progress } from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '100' },
    window: { type: 'string', default: '60' },
    workers: { type: 'string', default: '2' },
    'relist-period': { type: 'string' },
  },
});
const N = positiveInt('pods', args.pods);
const windowS = positiveInt('window', args.window);
const workers = positiveInt('workers', args.workers);
const relistPeriodMs = args['relist-period'] ? parseDuration(args['relist-period'], '--relist-period') : undefined;
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
/** dockerdCpuSeconds: dockerd's utime + stime so far, seconds, or NaN if its pid is unknown. */
const dockerdCpuSeconds = (): number => engineCpuSeconds().dockerd;

const b = await startBenchAgent('steady', { workers, syncFrequencyMs: 60_000, ...(relistPeriodMs ? { relistPeriodMs } : {}) });
try {
  await Promise.all(Array.from({ length: N }, (_, i) => b.write(`steady-${i}.yaml`, podYaml(`steady-${i}`))));
  await waitUntil('pods Running', N, () => b.times.running.size);
  await new Promise((r) => setTimeout(r, 2000)); // let the last syncs and events settle
  const cpu0 = process.cpuUsage();
  const d0 = dockerdCpuSeconds();
  const t0 = performance.now();
  const relists0 = b.agent.pleg.stats().relists;
  const rss: number[] = [];
  const bar = progress(`idle window (${windowS} s)`, windowS);
  for (let s = 1; s <= windowS; s++) {
    await new Promise((r) => setTimeout(r, 1000));
    rss.push(process.memoryUsage().rss);
    bar.update(s);
  }
  bar.end();
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const agentCpuS = (cpu.user + cpu.system) / 1e6;
  const dockerdCpuS = dockerdCpuSeconds() - d0;
  const pleg = b.agent.pleg.stats();
  const result = {
    date: new Date().toISOString(),
    pods: N,
    workers,
    windowS: wallS,
    relistPeriodMs: pleg.relistPeriodMs,
    relistsInWindow: pleg.relists - relists0,
    agent: {
      cpuSeconds: agentCpuS,
      cpuPercentOfCore: (100 * agentCpuS) / wallS,
      rssMaxMiB: Math.max(...rss) / 2 ** 20,
      rssLastMiB: rss.at(-1)! / 2 ** 20,
    },
    dockerd: { cpuSeconds: dockerdCpuS, cpuPercentOfCore: (100 * dockerdCpuS) / wallS },
  };
  console.log(
    `\nsteady: ${N} running pods, idle for ${wallS.toFixed(1)} s, ${workers} worker threads, relist every ${pleg.relistPeriodMs / 1000} s (${result.relistsInWindow} relists), ${result.date}`,
  );
  console.log(
    table([
      ['measure', 'value'],
      ['agent CPU (% of one core)', result.agent.cpuPercentOfCore],
      ['agent RSS max (MiB)', result.agent.rssMaxMiB],
      ['dockerd CPU (% of one core)', Number.isNaN(dockerdCpuS) ? 'n/a' : result.dockerd.cpuPercentOfCore],
    ]),
  );
  console.log(`results: ${writeResult('steady', result)}`);
} finally {
  await Promise.all(Array.from({ length: N }, (_, i) => b.remove(`steady-${i}.yaml`)));
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
