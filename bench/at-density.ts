// The "at density" phase of bench density (`--steady S`, issue #16 item 4): once every pod is
// Running, what the node costs and how quickly it answers while it holds them:
//   - the agent's RSS per pod (process RSS once Running less the RSS before the first pod, over N;
//     the agent runs in the bench's process, so the watch client's share is in it);
//   - idle CPU: process CPU (main + worker threads) over S seconds with nothing changing, as % of a core;
//   - relist duration p99: 20 relists asked one after another after the idle window (the event
//     PLEG lengthens the relist period while Docker's event stream is up, so few come by themselves);
//   - container death → WebSocket frame: `--deaths D` app containers killed one at a time (SIGKILL
//     through dockerode), from the death as Docker's own `die` event dates it (timeNano) to the
//     first watch frame of that pod that no
//     longer shows the container running as it was (new container ID, restart count or state);
//   - GET /pods with every pod known: autocannon in a child process (so it does not share the
//     agent's event loop), 4 connections for 5 s: requests/s and p50/p99 latency.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import type { Pod } from '../src/shared/api.js';
import { kContainerNameLabel, kNodeNameLabel, kPodUidLabel } from '../src/workers/kubetypes/label-keys.js';
import { summary, watchDieEvents, type BenchAgent } from './lib.js';

const run = promisify(execFile);

/** AtDensity: the figures of the phase (milliseconds unless named otherwise). */
export interface AtDensity {
  pods: number;
  rssMiBPerPod: number;
  rssMiB: number;
  idleCpuPercentOfCore: number;
  idleSeconds: number;
  relistMs: ReturnType<typeof summary>;
  /** The PLEG's relist period while the pods were held (lengthened while the event stream is up). */
  relistPeriodMs: number;
  deathToFrameMs: ReturnType<typeof summary>;
  getPods: { requestsPerSec: number; p50Ms: number; p99Ms: number; non2xx: number; errors: number; bytesPerResponse: number };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * kSettleMs: the wait between the last pod Running and the idle window, milliseconds. A burst's
 * tail (status write-backs, the last pods' first probes and events, the pod cache's follow-ups)
 * ran into a 5 s settle and was counted as idle CPU; 30 s lets it end. The 60 s resync of every
 * pod is not waited out: it is what an idle node does.
 */
const kSettleMs = 30_000;

/** The app container's ID, restart count and running state as a frame shows it ('' when none). */
function appState(pod: Pod): string {
  const c = pod.status?.containerStatuses?.[0];
  return c ? `${c.containerID ?? ''}/${c.restartCount}/${c.state?.running ? 'running' : 'not'}` : '';
}

/**
 * measureAtDensity runs the phase on `b` holding `pods` Running pods (see the file comment).
 * `rssBeforeBytes`: process RSS before the first pod was written. Progress lines on stderr.
 * @throws when a killed container's frame does not come within 60 s, or autocannon fails.
 */
export async function measureAtDensity(
  b: BenchAgent,
  docker: Docker,
  pods: number,
  rssBeforeBytes: number,
  steadySeconds: number,
  deaths: number,
): Promise<AtDensity> {
  process.stderr.write(`at density: settling ${kSettleMs / 1000} s, then ${steadySeconds} s idle\n`);
  await sleep(kSettleMs);
  const rssMiB = process.memoryUsage().rss / 2 ** 20;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(steadySeconds * 1000);
  const cpu = process.cpuUsage(cpu0);
  const idleMs = performance.now() - t0;
  const relistPeriodMs = b.agent.pleg.stats().relistPeriodMs;
  process.stderr.write('at density: 20 relists\n');
  const relists: number[] = [];
  for (let i = 0; i < 20; i++) {
    await b.agent.pleg.relist();
    relists.push(b.agent.pleg.stats().lastRelistDurationMs);
    await sleep(250);
  }
  const relistMs = summary(relists);

  process.stderr.write(`at density: ${deaths} container deaths, one at a time\n`);
  const latest = new Map<string, string>();
  const waiters = new Map<string, { before: string; resolve: (atMs: number) => void }>();
  const off = b.onFrame((frame, atMs) => {
    const uid = frame.object.metadata?.uid ?? '';
    const state = appState(frame.object);
    latest.set(uid, state);
    const w = waiters.get(uid);
    if (w && state !== w.before) {
      waiters.delete(uid);
      w.resolve(atMs);
    }
  });
  const lags: number[] = [];
  // Docker's `die` events of this node's containers: when each died, epoch ms by Docker's clock.
  const { died, close } = await watchDieEvents(docker, b.nodeName);
  try {
    const apps = await docker.listContainers({ filters: { label: [`${kNodeNameLabel}=${b.nodeName}`, `${kContainerNameLabel}=main`] } });
    const step = Math.max(1, Math.floor(apps.length / deaths));
    for (let i = 0; i < deaths && i * step < apps.length; i++) {
      const app = apps[i * step];
      const uid = app.Labels[kPodUidLabel];
      const seen = new Promise<number>((resolve) =>
        waiters.set(uid, { before: latest.get(uid) ?? `docker://${app.Id}/0/running`, resolve }),
      );
      await docker.getContainer(app.Id).kill();
      const at = await Promise.race([seen, sleep(60_000).then(() => NaN)]);
      if (Number.isNaN(at)) throw new Error(`at density: no frame for pod ${uid} within 60 s of its container's death`);
      for (let j = 0; j < 50 && !died.has(app.Id); j++) await sleep(100);
      const diedAt = died.get(app.Id);
      if (diedAt === undefined) throw new Error(`at density: Docker sent no die event for ${app.Id.slice(0, 12)}`);
      const lag = performance.timeOrigin + at - diedAt;
      lags.push(lag);
      process.stderr.write(`  death ${i + 1}/${deaths}: ${lag.toFixed(1)} ms\n`);
      await sleep(500);
    }
  } finally {
    off();
    close();
  }

  process.stderr.write('at density: GET /pods, autocannon 4 connections for 5 s\n');
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const url = `http://127.0.0.1:${b.agent.port}/pods`;
  const { stdout } = await run(process.execPath, [bin, '-j', '-c', '4', '-d', '5', url], { maxBuffer: 16 * 2 ** 20 });
  const r = JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
    throughput: { total: number };
  };
  return {
    pods,
    rssMiB,
    rssMiBPerPod: (rssMiB - rssBeforeBytes / 2 ** 20) / pods,
    idleCpuPercentOfCore: ((cpu.user + cpu.system) / 1000 / idleMs) * 100,
    idleSeconds: idleMs / 1000,
    relistMs,
    relistPeriodMs,
    deathToFrameMs: summary(lags),
    getPods: {
      requestsPerSec: Math.round(r.requests.average),
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors,
      bytesPerResponse: r.requests.total ? Math.round(r.throughput.total / r.requests.total) : 0,
    },
  };
}
