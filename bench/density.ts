// bench density: N static pods through the manifest directory against the real dockerd, all at once
// (burst) or arriving at --rate pods/s (paced, as the upstream density tests do); per-pod startup
// latency (accepted → all containers running, both as a WebSocket watch client saw them) p50/p90/p99/max, time to
// all Running, time to all removed; and, in the same run, the raw floor: dockerode creating and
// starting the same sandbox + container pairs at each of --raw-concurrency, the best one kept,
// with the ratio to it. Paced, the floor begins its pairs at the same rate instead, each one's
// startup counted from when it was due to its container started, and the startup rows get the
// floor's figures and ratios (what no agent can beat at that rate on this engine). Every timed run
// (agent or floor) waits first until the last run's teardown is over (bench/lib.ts settle;
// --no-settle skips it). Prints a table, writes bench/results/density-*.json.
//
// With --network-plugin cni (the default) every pod gets a CNI ADD on the agent's own bridge and a
// DEL at removal; the raw floor has network none, so the ratio counts the network work as the
// agent's. The table says how many IPAM leases were left after the removal (0 expected).
//
// Where the time goes: the agent talks to Docker through a counting proxy in a child process
// (bench/docker-calls.ts), so the table gives the Engine API calls per pod start and per removal
// (the raw floor makes 4 per start: create and start of the sandbox and of the container) with the
// routes behind them, and the agent's CPU per pod while the pods start: the whole process
// (process.cpuUsage: main thread + worker threads + this bench's manifest writes, less the bench's
// watch client, which decodes its frames on a thread of its own since 2026-12-08 and is filed apart
// as `bench-watch`: bench/watch-client.ts) and the main thread alone (its own CPU time from /proc,
// bench/thread-cpu.ts; event-loop utilisation × elapsed before 2026-12-07, which on a loaded machine
// counted the waits for a core too; the watch client's decoding was on it before 2026-12-08). `--no-count-calls` talks to dockerd
// directly (the proxy adds a hop per call; the floor never has one). Beside the agent's CPU, the
// engine's over the same window (dockerd + containerd + shims, from /proc; the shared engine only)
// for the agent and for the floor. The agent asks the engine for more than the floor's bare pairs
// (bind mounts of /etc/hosts, resolv.conf and the termination log, a pod cgroup, log rotation, the
// read-back inspects), and that share of the ratio is the engine's work, not the agent's; which
// part costs what is not measured here. The floor's own client CPU (dockerode) is its row too.
// The proxy also times each pod's own container calls, so the table gives each pod's startup less
// the time one of them was under way: the agent's own part of the startup (main thread, the hop to
// a worker thread, the pod's files, status, the watch frame, and the proxy's hops), which a slow
// engine does not hide. It also holds the waits for a Docker admission slot (on an engine that
// cannot keep up, a pod queues there, where the floor's pairs queue inside dockerd instead) and the
// image inspects on the pod's path, which are no pod's own calls; a call that never answered
// leaves no span. The row cannot tell these apart.
//
// Docker admission (issue #16): the agent's worker threads admit creates, starts and removes through
// an adaptive limit (src/workers/runtime/docker/docker-admission.ts). `--fixed-limit 32` adds runs of the
// same agent with each thread's limit fixed at 32 (KUBELET_TS_DOCKER_CONCURRENCY) to compare.
// `--engine-cpus 0.5` runs everything (agent and floor) against a dockerd of the bench's own whose
// daemon and containerd get 0.5 cores (bench/slow-engine.ts): the slow engine. `--reps 2` repeats
// the agent runs and the floors interleaved and keeps the best of each (the machine is noisy); the
// table also gives the medians over the reps and each rep's agent, floor and ratio (bench/density-reps.ts:
// a rep's floor is the fastest of its --raw-concurrency runs). `--private-engine` runs everything
// against a dockerd of the bench's own without a CPU cap: a dockerd nobody else uses, whose CPU
// (its dockerd, containerd and its own shims) is then the engine CPU row (else the shared engine's, where
// other users' containers count). `--floor-settings binds,cgroup,log,labels,oom,inspect,agent` adds,
// in each rep, a floor run at `--settings-concurrency` (16) of bare pairs and of pairs with each of
// the kubelet's settings (bench/floor-settings.ts): the engine CPU each one costs.
//
// The agent's CPU per pod start is also given by thread (bench/thread-cpu.ts: main, the sync pool,
// the events, logs and manifest workers, V8's platform threads, libuv's threadpool and the rest).
// `--warm-up` starts and removes a burst of the same size through each agent before its timed one:
// the timed burst is then an agent's that has started pods before (its code loaded and compiled, as a
// node's long-running agent's is) rather than a fresh process's first.
//
// At density (issue #16 item 4): `--steady 30` adds, once every pod is Running, bench/at-density.ts's
// figures — RSS per pod, idle CPU, relist p99, container death → watch frame (`--deaths 20`), GET
// /pods — as rows of the same table. `--pods 1000 --network-plugin none --no-raw --steady 30` is the
// 1,000-pod table (the CNI bridge's /24 holds 254 pods).
//
// Runtimes (issue #40 item 6): `--runtime containerd` runs the agent on the containerd of
// tools/lib/containerd.sh (--container-runtime-endpoint) against the raw CRI floor (bench/cri-floor-run.ts,
// at each --raw-concurrency, on the runtime's CNI bridge as the agent's pods), best of --reps;
// `--runtime both` runs the Docker part above and then that one, and adds a table of the two:
// agent on Docker ÷ dockerode floor, agent on containerd ÷ CRI floor, the floors side by side. The
// Docker-only rows (Engine calls, engine CPU, IPAM leases, at-density) are Docker's part's.
//
//   npm run bench -- density [--runtime docker|containerd|both] [--pods 100] [--rate 0 (burst) | 5] [--workers 2] [--raw-concurrency 8,16,32] [--no-raw] [--network-plugin cni|none] [--no-count-calls]
//                            [--fixed-limit N,…] [--engine-cpus X | --private-engine] [--reps 1] [--steady 0 (s) --deaths 20] [--no-settle] [--warm-up]
//                            [--floor-settings none,binds,… --settings-concurrency 16]
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outsideSpansMs, spawnDockerCallCounter, type DockerCallCounts, type RemoteDockerCallCounter } from './docker-calls.js';
import { startSlowEngine } from './slow-engine.js';
import { parseFloorSettings } from './floor-settings.js';
import {
  atDensityRows,
  msTriple,
  repFloor,
  repsRows,
  runFloorSetting,
  settingsRows,
  summarizeReps,
  type SettingRun,
} from './density-reps.js';
import { measureAtDensity, type AtDensity } from './at-density.js';
import { agentCpuMs, formatThreadCpu, startMainThreadCpu, startThreadCpu } from './thread-cpu.js';
import { kFixedLimitEnv } from '../src/workers/runtime/docker/docker-admission.js';
import { onInterrupt } from './interrupt.js';
import { rawFloor, rawFloorPaced, removeByLabel, type PacedFloorRun, type RawFloorRun } from './raw-floor.js';
import { RemoteRuntimeService } from '../src/workers/runtime/cri/remote-runtime.js';
import { benchCriEndpoint } from './cri-floor-run.js';
import { densityOnCri, parseBenchRuntimes, runEachRuntime, runtimesTable, type RuntimeFigures } from './runtime-runs.js';
import {
  engineCpuWindow,
  netnsBaselineAfterCollection,
  parseIntList,
  podYaml,
  positiveInt,
  settle,
  sleepUntil,
  startBenchAgent,
  summary,
  table,
  waitUntil,
  warmUpAgent,
  writeResult,
} from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '100' },
    rate: { type: 'string', default: '0' },
    workers: { type: 'string', default: '2' },
    'raw-concurrency': { type: 'string', default: '8,16,32' },
    'no-raw': { type: 'boolean', default: false },
    'network-plugin': { type: 'string', default: 'cni' },
    'no-count-calls': { type: 'boolean', default: false },
    'fixed-limit': { type: 'string', default: '' },
    'engine-cpus': { type: 'string', default: '' },
    'private-engine': { type: 'boolean', default: false },
    'floor-settings': { type: 'string', default: '' },
    'settings-concurrency': { type: 'string', default: '16' },
    reps: { type: 'string', default: '1' },
    steady: { type: 'string', default: '0' },
    deaths: { type: 'string', default: '20' },
    'no-settle': { type: 'boolean', default: false },
    'warm-up': { type: 'boolean', default: false },
    runtime: { type: 'string', default: 'docker' },
  },
});
const runtimes = parseBenchRuntimes(args.runtime);
const onDocker = runtimes.includes('docker');
const N = positiveInt('pods', args.pods);
const workers = positiveInt('workers', args.workers);
const rate = Number(args.rate);
if (!Number.isFinite(rate) || rate < 0) throw new Error(`--rate must be a number >= 0 (0 = burst), got ${args.rate}`);
const networkPlugin = args['network-plugin'] as 'cni' | 'none';
if (networkPlugin !== 'cni' && networkPlugin !== 'none') throw new Error(`--network-plugin must be cni or none, got ${networkPlugin}`);
const rawConcurrencies = parseIntList('raw-concurrency', args['raw-concurrency']!);
const fixedLimits = args['fixed-limit'] ? parseIntList('fixed-limit', args['fixed-limit']) : [];
const reps = positiveInt('reps', args.reps);
const steadySeconds = Number(args.steady);
if (!Number.isInteger(steadySeconds) || steadySeconds < 0)
  throw new Error(`--steady must be a whole number of seconds >= 0 (0 = no at-density phase), got ${args.steady}`);
const deaths = positiveInt('deaths', args.deaths);
const engineCpus = args['engine-cpus'] ? Number(args['engine-cpus']) : undefined;
if (engineCpus !== undefined && !(engineCpus > 0 && engineCpus <= 64))
  throw new Error(`--engine-cpus must be a number of cores > 0, got ${args['engine-cpus']}`);
if (process.env[kFixedLimitEnv]) throw new Error(`unset ${kFixedLimitEnv}: this bench sets it itself for --fixed-limit runs`);
if (engineCpus !== undefined && !onDocker)
  throw new Error("--engine-cpus slows a dockerd of the bench's own: it needs --runtime docker or both");
const floorSettingNames = args['floor-settings'] ? parseFloorSettings(args['floor-settings']) : [];
const settingsConcurrency = positiveInt('settings-concurrency', args['settings-concurrency']);
if (args['private-engine'] && engineCpus !== undefined)
  throw new Error('--private-engine and --engine-cpus: give one (--engine-cpus is a private engine too)');
if (args['private-engine'] && !onDocker)
  throw new Error("--private-engine is a dockerd of the bench's own: it needs --runtime docker or both");
const engine = engineCpus !== undefined || args['private-engine'] ? await startSlowEngine(engineCpus) : undefined;
const engineSocket = engine?.socketPath ?? '/var/run/docker.sock';
// The engine's CPU (dockerd, containerd, shims with the runc calls they reaped) over each start
// window, from /proc: the bench's own engine's, else the shared one's.
const engineCpu = engine ? engine.engineCpu : engineCpuWindow;
const docker = new Docker({ socketPath: engineSocket });
if (onDocker)
  await docker.ping().catch((err: unknown) => {
    throw new Error(`bench density: Docker does not answer on ${engineSocket} (${(err as Error).message}); start it with tools/up`);
  });
const runId = randomBytes(3).toString('hex');
// Each timed run waits for the last one's network namespaces to be freed (settle); the bench's own engine keeps its under its exec root.
const netnsDir = engine ? join(engine.own.dir, 'exec', 'netns') : undefined;
const netnsBaseline = args['no-settle'] || !onDocker ? NaN : await netnsBaselineAfterCollection(netnsDir);
/** Before a timed run: settle, unless --no-settle (the smoke test's, on a machine that other tests keep busy). */
const settled = () => (args['no-settle'] ? Promise.resolve(0) : settle({ netnsBaseline, netnsDir }));
/** The rows of the both-runtimes table, Docker's first. */
const figures: RuntimeFigures[] = [];

let agentNode = '';

/** The calls of one phase per pod, and the routes that made them (most first). */
function perPod(calls: { byRoute: DockerCallCounts; total: number }) {
  const routes = Object.entries(calls.byRoute)
    .sort((a, b) => b[1] - a[1])
    .map(([route, n]) => ({ route, perPod: n / N }));
  return { total: calls.total, perPod: calls.total / N, routes };
}

/** One agent run; `fixedLimit` fixes each worker thread's Docker admission limit (else adaptive). */
async function agentRun(counter: RemoteDockerCallCounter | undefined, fixedLimit?: number) {
  if (fixedLimit !== undefined) process.env[kFixedLimitEnv] = String(fixedLimit);
  else delete process.env[kFixedLimitEnv];
  const b = await startBenchAgent('density', {
    workers,
    syncFrequencyMs: 60_000,
    networkPlugin,
    dockerEndpoint: `unix://${counter?.socketPath ?? engineSocket}`,
  });
  delete process.env[kFixedLimitEnv]; // the worker threads took their copy of the environment
  agentNode = b.nodeName;
  if (args['warm-up']) await warmUpAgent(b, N, 'agent');
  await settled();
  const rssBefore = process.memoryUsage().rss;
  await counter?.reset();
  const engineSince = engineCpu?.();
  const cpu0 = process.cpuUsage();
  const mainCpu = startMainThreadCpu();
  const threadCpu = startThreadCpu();
  const t0 = performance.now();
  /** When pod i's manifest is written (performance.now() ms): all at t0 in a burst. */
  const dueMs = (i: number) => t0 + (rate === 0 ? 0 : (i * 1000) / rate);
  if (rate === 0) {
    await Promise.all(Array.from({ length: N }, (_, i) => b.write(`density-${i}.yaml`, podYaml(`density-${i}`))));
  } else {
    // Paced: pod i is written at t0 + i / rate seconds.
    for (let i = 0; i < N; i++) {
      await sleepUntil(dueMs(i));
      await b.write(`density-${i}.yaml`, podYaml(`density-${i}`));
    }
  }
  await waitUntil('agent: pods Running', N, () => b.times.running.size);
  const allRunningMs = performance.now() - t0;
  const firstRunningMs = Math.min(...b.times.running.values()) - t0;
  // Manifest written (pod i at t0 + i / rate) → the pod's first watch frame: the file source's
  // part, which pod startup leaves out. A pod far behind the rest is a watch event the source
  // missed until its periodic full check (60 s here; three times on 2026-12-06: README, "A pod the
  // file source missed").
  const acceptedAfterWriteMs = Array.from({ length: N }, (_, i) => {
    const uid = b.times.byName.get(`density-${i}-${b.nodeName}`);
    const at = uid === undefined ? undefined : b.times.accepted.get(uid);
    return at === undefined ? NaN : at - dueMs(i);
  }).filter(Number.isFinite);
  const lateMs = Math.max(...acceptedAfterWriteMs);
  if (lateMs > 10_000)
    process.stderr.write(
      `density: a pod was accepted ${(lateMs / 1000).toFixed(1)} s after its manifest was written (the file source missed its watch event until a full check); time to all Running includes it\n`,
    );
  const cpu = process.cpuUsage(cpu0);
  const main = mainCpu();
  const threads = threadCpu();
  const engineCpuMsPerPod = ((engineSince?.() ?? NaN) * 1000) / N;
  const startCalls = counter ? perPod(await counter.counts()) : undefined;
  // Each pod's startup (accepted → Running) less the time one of its own Docker calls was under
  // way: the agent's part of it (main thread, worker hop, files, status, watch frame), with the
  // waits for an admission slot and for image inspects (see the header).
  const podCalls = counter ? await counter.podCalls() : undefined;
  const epoch = (t: number) => performance.timeOrigin + t;
  const outsideCallsMs = podCalls
    ? [...b.times.running].flatMap(([uid, t]) => {
        const accepted = b.times.accepted.get(uid);
        return accepted === undefined ? [] : [outsideSpansMs(epoch(accepted), epoch(t), podCalls[uid] ?? [])];
      })
    : undefined;
  await counter?.reset();
  const atDensity =
    steadySeconds > 0 && fixedLimit === undefined ? await measureAtDensity(b, docker, N, rssBefore, steadySeconds, deaths) : undefined;
  await counter?.reset();
  const latencies = [...b.times.running].map(([uid, t]) => t - (b.times.accepted.get(uid) ?? t0));
  const t1 = performance.now();
  await Promise.all(Array.from({ length: N }, (_, i) => b.remove(`density-${i}.yaml`)));
  await waitUntil('agent: pods removed', N, () => b.times.removed.size);
  const allRemovedMs = performance.now() - t1;
  const removeCalls = counter ? perPod(await counter.counts()) : undefined;
  // Every pod's network torn down with it: the IPAM holds no lease (counted once the containers are gone).
  for (
    let i = 0;
    i < 600 && (await docker.listContainers({ all: true, filters: { label: [`kubelet-ts.node-name=${b.nodeName}`] } })).length > 0;
    i++
  )
    await new Promise((r) => setTimeout(r, 200));
  const ipamLeasesAfter = await b.ipamLeases();
  const pleg = b.agent.pleg.stats();
  await b.stop();
  await removeByLabel(docker, `kubelet-ts.node-name=${b.nodeName}`);
  const cpuMsPerPod = agentCpuMs((cpu.user + cpu.system) / 1000, threads) / N;
  const mainThreadCpuMsPerPod = main.ms / N;
  const threadCpuMsPerPod = Object.fromEntries(Object.entries(threads).map(([kind, ms]) => [kind, ms / N]));
  return {
    allRunningMs,
    firstRunningMs,
    acceptedAfterWriteMs: summary(acceptedAfterWriteMs),
    allRemovedMs,
    ipamLeasesAfter,
    cpuMsPerPod,
    mainThreadCpuMsPerPod,
    threadCpuMsPerPod,
    engineCpuMsPerPod,
    dockerCallsPerPod: startCalls?.perPod,
    startCalls,
    startupOutsideCallsMs: outsideCallsMs && summary(outsideCallsMs),
    removeCalls,
    atDensity,
    startupMs: summary(latencies),
    relistMs: summary(pleg.relistDurationsMs),
    eventLagMs: summary(pleg.eventLagsMs),
  };
}

/** The Docker part: the agent through the counting proxy and the dockerode floor; its row of the both-runtimes table. */
async function dockerDensity(): Promise<void> {
  const counter = args['no-count-calls']
    ? undefined
    : await spawnDockerCallCounter(join(tmpdir(), `kubelet-ts-bench-docker-${runId}.sock`), engineSocket);
  type AgentResult = Awaited<ReturnType<typeof agentRun>>;
  // The best run: the fastest to all Running in a burst; paced, where the arrivals set that, the lowest startup p99.
  const score = (r: { allRunningMs: number; startupMs?: { p99: number } }) =>
    rate === 0 ? r.allRunningMs : (r.startupMs?.p99 ?? r.allRunningMs);
  const best = <T extends { allRunningMs: number; startupMs?: { p99: number } }>(xs: T[]): T =>
    xs.reduce((a, b) => (score(b) < score(a) ? b : a));
  // The cleanup of the finally below, also on SIGINT/SIGTERM (bench/interrupt.ts).
  const cleanUp = async () => {
    await counter?.close();
    if (agentNode) await removeByLabel(docker, `kubelet-ts.node-name=${agentNode}`);
    await removeByLabel(docker, `kubelet-ts.bench=${runId}`);
    await engine?.remove();
  };
  const unregister = onInterrupt(cleanUp);
  try {
    // Interleaved: each rep runs the adaptive agent, each fixed-limit agent, then each floor.
    const adaptiveRuns: AgentResult[] = [];
    const fixedRuns = new Map<number, AgentResult[]>(fixedLimits.map((l) => [l, []]));
    // Paced, the floor is one paced run per rep (concurrency 0: every arrival begun at once), not one per --raw-concurrency.
    const rawRuns = new Map<number, RawFloorRun[]>((rate > 0 ? [0] : rawConcurrencies).map((c) => [c, []]));
    const settingRuns: SettingRun[] = [];
    for (let rep = 1; rep <= reps; rep++) {
      if (reps > 1) process.stderr.write(`rep ${rep}/${reps}\n`);
      adaptiveRuns.push(await agentRun(counter));
      for (const l of fixedLimits) fixedRuns.get(l)!.push(await agentRun(counter, l));
      if (args['no-raw']) continue;
      if (rate > 0) rawRuns.get(0)!.push(await settled().then(() => rawFloorPaced(docker, N, rate, runId, engineCpu)));
      else for (const c of rawConcurrencies) rawRuns.get(c)!.push(await settled().then(() => rawFloor(docker, N, c, runId, engineCpu)));
      for (const name of floorSettingNames)
        settingRuns.push(
          await settled().then(() => runFloorSetting(docker, name, rep, { pods: N, concurrency: settingsConcurrency, runId, engineCpu })),
        );
      if (reps > 1) {
        // Each rep's figures as it ends, so a run stopped before its last rep (a wedged or slow engine) still leaves them.
        const a = adaptiveRuns.at(-1)!;
        const floors = [...rawRuns.values()].map((runs) => runs.at(-1)!);
        const file = writeResult(`density-rep${rep}of${reps}-${runId}`, { rep, pods: N, agent: a, floors, settingRuns });
        process.stderr.write(
          `rep ${rep}: agent ${(a.allRunningMs / 1000).toFixed(2)} s, engine ${a.engineCpuMsPerPod.toFixed(1)} ms/pod, ${a.dockerCallsPerPod?.toFixed(2) ?? '-'} calls/pod; floors ${floors.map((f) => `${(f.allRunningMs / 1000).toFixed(2)} s, engine ${f.engineCpuMsPerPod.toFixed(1)} ms/pair`).join('; ')} (${file})\n`,
        );
      }
    }
    // Rep by rep: the agent's run against the fastest floor run of the same rep.
    const byRep = args['no-raw']
      ? undefined
      : summarizeReps(
          adaptiveRuns.map((a, i) => {
            const f = repFloor([...rawRuns.values()].map((runs) => runs[i]!));
            return {
              agentAllRunningMs: a.allRunningMs,
              floorAllRunningMs: f.allRunningMs,
              agentEngineCpuMsPerPod: a.engineCpuMsPerPod,
              floorEngineCpuMsPerPod: f.engineCpuMsPerPod,
              agentDockerCallsPerPod: a.dockerCallsPerPod,
            };
          }),
        );
    const agent = best(adaptiveRuns);
    const fixed = fixedLimits.map((l) => ({
      limit: l,
      best: best(fixedRuns.get(l)!),
      runsMs: fixedRuns.get(l)!.map((r) => r.allRunningMs),
    }));
    const raws = args['no-raw']
      ? []
      : [...rawRuns.keys()].map((c) => ({ ...best(rawRuns.get(c)!), runsMs: rawRuns.get(c)!.map((r) => r.allRunningMs) }));
    const raw = raws.length ? best(raws) : null;
    const ratio = raw ? agent.allRunningMs / raw.allRunningMs : NaN;
    const s = (ms: number) => ms / 1000;
    const mode = `${rate === 0 ? 'burst' : `paced at ${rate} pods/s`}${args['warm-up'] ? ', after a warm-up burst' : ''}`;
    const engineWord = engine
      ? engineCpus !== undefined
        ? `own dockerd limited to ${engineCpus} cores`
        : "a dockerd of the bench's own (no CPU cap)"
      : 'the shared dockerd';
    console.log(
      `\ndensity: ${N} pods (sandbox + 1 container each), ${mode}, ${workers} worker threads, pod network ${networkPlugin}, ${engineWord}, best of ${reps}, ${new Date().toISOString()}`,
    );
    console.log(
      table([
        [
          'measure',
          'agent, adaptive admission (s)',
          `raw floor (s)${raw ? (rate > 0 ? `, paced at ${rate} pairs/s` : `, concurrency ${raw.concurrency}`) : ''}`,
          'ratio',
        ],
        ['time to all Running', s(agent.allRunningMs), raw ? s(raw.allRunningMs) : '-', raw ? ratio : '-'],
        [
          'time to the first Running',
          s(agent.firstRunningMs),
          raw ? s(raw.firstRunningMs) : '-',
          raw ? agent.firstRunningMs / raw.firstRunningMs : '-',
        ],
        [
          'manifest written → pod accepted (file source) p50 / max, ms',
          `${agent.acceptedAfterWriteMs.p50.toFixed(0)} / ${agent.acceptedAfterWriteMs.max.toFixed(0)}`,
          '',
          '',
        ],
        ...fixed.map((f) => [
          `  agent, limit fixed at ${f.limit} per thread`,
          s(f.best.allRunningMs),
          '',
          raw ? f.best.allRunningMs / raw.allRunningMs : '-',
        ]),
        ...(reps > 1 ? [['  every run, adaptive', adaptiveRuns.map((r) => s(r.allRunningMs).toFixed(2)).join(' '), '', '']] : []),
        ...(byRep ? repsRows(byRep) : []),
        ['time to all removed', s(agent.allRemovedMs), raw ? s(raw.allRemovedMs) : '-', raw ? agent.allRemovedMs / raw.allRemovedMs : '-'],
        ...(['p50', 'p90', 'p99', 'max'] as const).map((q) => {
          // Paced, the floor's pairs have a startup too (due → container started); in a burst they do not.
          const floor = rate > 0 ? (raw as PacedFloorRun | null)?.startupMs[q] : undefined;
          return [
            `pod startup ${q}`,
            s(agent.startupMs[q]),
            floor !== undefined ? s(floor) : '',
            floor !== undefined ? agent.startupMs[q] / floor : '',
          ];
        }),
        ...(agent.startupOutsideCallsMs
          ? [
              [
                'pod startup outside its container calls (see bench/density.ts) p50 / p99 / max, ms',
                msTriple(agent.startupOutsideCallsMs),
                '',
                '',
              ],
            ]
          : []),
        ['IPAM leases after removal', agent.ipamLeasesAfter, '', ''],
        [
          'agent CPU per pod start, ms (process / main thread; floor: its client)',
          `${agent.cpuMsPerPod.toFixed(1)} / ${agent.mainThreadCpuMsPerPod.toFixed(1)}`,
          raw ? raw.clientCpuMsPerPod.toFixed(1) : '-',
          '',
        ],
        ['  by thread (bench/thread-cpu.ts)', formatThreadCpu(agent.threadCpuMsPerPod), '', ''],
        [
          'engine CPU per pod start, ms (dockerd + containerd + shims)',
          agent.engineCpuMsPerPod,
          raw ? raw.engineCpuMsPerPod : '-',
          raw ? agent.engineCpuMsPerPod / raw.engineCpuMsPerPod : '-',
        ],
        ...(agent.startCalls ? [['Docker calls per pod start', agent.startCalls.perPod, 4, agent.startCalls.perPod / 4]] : []),
        ...(agent.startCalls?.routes ?? []).map((r) => [`  ${r.route}`, r.perPod, '', '']),
        ...(settingRuns.length
          ? [
              [
                `engine CPU of the kubelet's settings on the floor's pairs (concurrency ${settingsConcurrency}; bench/floor-settings.ts)`,
                '',
                '',
                '',
              ],
            ]
          : []),
        ...settingsRows(settingRuns),
        ...(agent.removeCalls ? [['Docker calls per pod removal', agent.removeCalls.perPod, '', '']] : []),
        ...(agent.removeCalls?.routes ?? []).map((r) => [`  ${r.route}`, r.perPod, '', '']),
        ...(agent.atDensity ? atDensityRows(agent.atDensity) : []),
        ...raws.map((r) => [
          r.concurrency === 0 ? 'raw, paced (time to all Running)' : `raw, concurrency ${r.concurrency}`,
          '',
          reps > 1 ? r.runsMs.map((m) => s(m).toFixed(2)).join(' ') : s(r.allRunningMs),
          '',
        ]),
      ]),
    );
    const file = writeResult('density', {
      date: new Date().toISOString(),
      pods: N,
      rate,
      workers,
      networkPlugin,
      engineCpus: engineCpus ?? null,
      reps,
      countedCalls: counter !== undefined,
      agent,
      adaptiveRunsMs: adaptiveRuns.map((r) => r.allRunningMs),
      fixed,
      raw: raws,
      best: raw,
      ratioAllRunning: ratio,
      privateEngine: args['private-engine'],
      byRep,
      settingsConcurrency: settingRuns.length ? settingsConcurrency : null,
      settingRuns,
    });
    console.log(
      `ratio agent/raw (time to all Running): ${raw ? ratio.toFixed(2) : 'n/a (--no-raw)'}${byRep ? `; median of ${reps} reps' ratios: ${byRep.medianRatioAllRunning.toFixed(2)}` : ''}\nresults: ${file}`,
    );
    if (raw) {
      figures.push({
        runtime: 'docker',
        agentAllRunningMs: agent.allRunningMs,
        floorAllRunningMs: raw.allRunningMs,
        floorConcurrency: raw.concurrency,
        agentCpuMsPerPod: agent.cpuMsPerPod,
        agentMainThreadCpuMsPerPod: agent.mainThreadCpuMsPerPod,
        agentThreadCpuMsPerPod: agent.threadCpuMsPerPod,
        floorClientCpuMsPerPod: raw.clientCpuMsPerPod,
      });
    }
  } finally {
    unregister();
    await cleanUp();
  }
}

/** The containerd part: the agent on the CRI runtime and the raw CRI floor; its row of the both-runtimes table. */
async function criDensity(): Promise<void> {
  const endpoint = benchCriEndpoint();
  const rt = new RemoteRuntimeService(endpoint);
  try {
    const cri = await densityOnCri(rt, endpoint, {
      pods: N,
      rate,
      workers,
      reps,
      concurrencies: rawConcurrencies,
      runId,
      settle: settled,
      warmUp: args['warm-up'],
    });
    figures.push(cri.figures);
    console.log(
      `\ndensity on ${cri.runtime.name} ${cri.runtime.version} (CRI): ${N} pods, ${rate === 0 ? 'burst' : `paced at ${rate} pods/s (floor: burst)`}${args['warm-up'] ? ', after a warm-up burst' : ''}, ${workers} worker threads, best of ${reps}`,
    );
    console.log(table(runtimesTable([cri.figures])));
    console.log(`results: ${writeResult('containerd-density', { date: new Date().toISOString(), pods: N, rate, workers, reps, ...cri })}`);
  } finally {
    rt.close();
  }
}

const failures = await runEachRuntime(runtimes.map((r) => ({ runtime: r, run: r === 'docker' ? dockerDensity : criDensity })));
if (runtimes.length > 1) {
  console.log(
    `\ndensity on both runtimes: ${N} pods, ${rate === 0 ? 'burst' : `paced at ${rate} pods/s`}, one run, ${new Date().toISOString()}`,
  );
  console.log(table(runtimesTable(figures)));
  for (const f of failures) console.log(`${f.runtime}: failed (${f.error})`);
  console.log(
    `results: ${writeResult('runtimes-density', { date: new Date().toISOString(), pods: N, rate, workers, reps, figures, failures })}`,
  );
  if (failures.length > 0) process.exitCode = 1;
}
