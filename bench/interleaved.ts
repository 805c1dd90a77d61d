// bench interleaved: paced pod startup through the agent and through the raw dockerode floor in
// ONE stream, so both see the same engine at the same moment. Arrivals come every 1 / --rate
// seconds and alternate: even ones are agent pods (a manifest written into its directory), odd
// ones floor pairs (bench/raw-floor.ts startPair: create and start of a pause sandbox, then of a
// busybox container in its namespaces). --pods N is N of each, so the engine gets --rate pairs a
// second in all. An agent pod's startup is from its first watch frame to Running (as in `density`);
// a floor pair's from when it was due to its container started.
//
// Why: `density --rate` runs the agent and then the floor, a minute or more apart, and this
// machine's engine changes speed by more than the gap between them within minutes (README,
// 2026-12-06 afternoon: the floor's paced p99 went from 0.43 to 3.3 s within 35 minutes). Here the
// drift is shared, so the ratio of the two is the agent's own cost — while the engine keeps up.
// When it falls behind (the floor's p90 well above its p50), the agent's Docker admission keeps
// its own calls at the engine's knee and queues the rest, while the floor's pairs keep calling:
// the floor then takes the larger share of the engine, and the ratio measures that queueing, not
// the agent's cost. Pod network none, no counting proxy; the run begins once the engine has
// settled (bench/lib.ts settle; --no-settle skips it).
// `--runtime containerd` (issue #40 item 6): the agent on the containerd of tools/lib/containerd.sh
// (--container-runtime-endpoint) and the floor's pods through the CRI (bench/cri-floor-run.ts
// startCriPod: RunPodSandbox + CreateContainer + StartContainer, on the runtime's CNI bridge as
// the agent's pods); the settle is Docker's and is skipped there.
// Prints a table, writes bench/results/interleaved-*.json.
//
//   npm run bench -- interleaved [--runtime docker|containerd] [--pods 50] [--rate 5] [--workers 2] [--no-settle]
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { startPair, removeByLabel } from './raw-floor.js';
import { RemoteRuntimeService } from '../src/workers/runtime/cri/remote-runtime.js';
import { benchCriEndpoint, removeCriByLabel, startCriPod } from './cri-floor-run.js';
import { criAgentOverrides, parseBenchRuntimes } from './runtime-runs.js';
import {
  netnsBaselineAfterCollection,
  podYaml,
  positiveInt,
  progress,
  settle,
  sleepUntil,
  startBenchAgent,
  summary,
  table,
  waitUntil,
  writeResult,
} from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '50' },
    rate: { type: 'string', default: '5' },
    workers: { type: 'string', default: '2' },
    'no-settle': { type: 'boolean', default: false },
    runtime: { type: 'string', default: 'docker' },
  },
});
const [runtime, ...more] = parseBenchRuntimes(args.runtime);
if (more.length > 0) throw new Error('--runtime: interleaved runs on one runtime at a time (docker or containerd)');
const onCri = runtime === 'containerd';
const N = positiveInt('pods', args.pods);
const workers = positiveInt('workers', args.workers);
const rate = Number(args.rate);
if (!Number.isFinite(rate) || rate <= 0) throw new Error(`--rate must be a number of arrivals per second > 0, got ${args.rate}`);

const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const runId = randomBytes(3).toString('hex');
const label = { 'kubelet-ts.bench': runId };
const endpoint = onCri ? benchCriEndpoint() : '';
const rt = onCri ? new RemoteRuntimeService(endpoint) : undefined;
/** One floor pod: dockerode's pair (network none), or the CRI's sandbox and container (the runtime's CNI). */
const startFloorPod = (k: number) =>
  rt ? startCriPod(rt, `interleaved-${k}`, `${runId}-${k}`, label, 'pod') : startPair(docker, `bench-raw-${runId}-interleaved-${k}`, label);
const netnsBaseline = args['no-settle'] || onCri ? NaN : await netnsBaselineAfterCollection();
const b = await startBenchAgent('interleaved', {
  workers,
  syncFrequencyMs: 60_000,
  ...(onCri ? criAgentOverrides(endpoint) : { networkPlugin: 'none' }),
});
try {
  if (!args['no-settle'] && !onCri) await settle({ netnsBaseline });
  const bar = progress(`interleaved at ${rate}/s: floor pairs started`, N);
  const floorMs: number[] = [];
  const pairs: Promise<void>[] = [];
  // The first failure of a pair, kept at once (a rejection left alone while the loop waits would be unhandled) and thrown after.
  let failure: { err: unknown } | undefined;
  const t0 = performance.now();
  for (let i = 0; i < 2 * N && !failure; i++) {
    const due = t0 + (i * 1000) / rate;
    await sleepUntil(due);
    const k = i >> 1;
    if (i % 2 === 0) {
      await b.write(`interleaved-${k}.yaml`, podYaml(`interleaved-${k}`));
      continue;
    }
    pairs.push(
      startFloorPod(k).then(
        () => {
          floorMs.push(performance.now() - due);
          bar.update(floorMs.length);
        },
        (err: unknown) => {
          failure ??= { err };
        },
      ),
    );
  }
  await Promise.all(pairs);
  bar.end();
  if (failure) throw failure.err;
  await waitUntil('agent: pods Running', N, () => b.times.running.size);
  const agentMs = [...b.times.running].map(([uid, t]) => t - (b.times.accepted.get(uid) ?? t));
  const agent = summary(agentMs);
  const floor = summary(floorMs);
  const s = (ms: number) => (ms / 1000).toFixed(2);
  console.log(
    `\ninterleaved: ${N} agent pods and ${N} floor pairs alternating at ${rate} arrivals/s, ${workers} worker threads, ${onCri ? "on containerd (CRI), the runtime's CNI" : 'on Docker, pod network none'}, ${new Date().toISOString()}`,
  );
  console.log(
    table([
      ['pod startup (s)', 'agent', 'raw floor', 'ratio'],
      ...(['p50', 'p90', 'p99', 'max'] as const).map((q) => [q, s(agent[q]), s(floor[q]), agent[q] / floor[q]]),
    ]),
  );
  const file = writeResult('interleaved', {
    date: new Date().toISOString(),
    runtime,
    pods: N,
    rate,
    workers,
    agentStartupMs: agent,
    floorStartupMs: floor,
    ratioP99: agent.p99 / floor.p99,
  });
  console.log(`ratio agent/floor (startup p99): ${(agent.p99 / floor.p99).toFixed(2)}\nresults: ${file}`);
} finally {
  for (let k = 0; k < N; k++) await b.remove(`interleaved-${k}.yaml`);
  await waitUntil('agent: pods removed', b.times.accepted.size, () => b.times.removed.size, 120_000).catch(() => 0);
  await b.stop();
  if (rt) {
    await removeCriByLabel(rt, { 'kubelet-ts.node-name': b.nodeName }).catch(() => 0);
    await removeCriByLabel(rt, label).catch(() => 0);
    rt.close();
  } else {
    await removeByLabel(docker, `kubelet-ts.node-name=${b.nodeName}`);
    await removeByLabel(docker, `kubelet-ts.bench=${runId}`);
  }
}
