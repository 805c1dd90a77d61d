// The benches' runtime (issue #40 item 6, #42 item 4): `--runtime docker|containerd|both` of bench
// density and interleaved. On containerd the agent gets `--container-runtime-endpoint` (the CRI,
// as the upstream kubelet takes it) and its floor is the raw CRI floor of bench/cri-floor-run.ts
// (RunPodSandbox + CreateContainer + StartContainer through grpc-js) on the runtime's CNI bridge, as
// the agent's pods are; on Docker, the dockerode floor of bench/raw-floor.ts. With both, one run
// gives agent on Docker ÷ Docker floor, agent on containerd ÷ CRI floor, and the two floors side by side.
import { kAgentOptionDescriptors } from '../src/main/options/agent-option-descriptors.js';
import type { AgentOptions } from '../src/main/options/agent-options.js';
import type { RemoteRuntimeService } from '../src/workers/runtime/cri/remote-runtime.js';
import { criFloor, removeCriByLabel, type CriFloorRun } from './cri-floor-run.js';
import { onInterrupt } from './interrupt.js';
import { errorLines } from './peer-plan.js';
import { podYaml, sleepUntil, startBenchAgent, summary, waitUntil, warmUpAgent } from './lib.js';
import { agentCpuMs, formatThreadCpu, startMainThreadCpu, startThreadCpu } from './thread-cpu.js';

/** BenchRuntime: where the agent's pods (and the floor's) run. */
export type BenchRuntime = 'docker' | 'containerd';

/**
 * parseBenchRuntimes reads `--runtime`: `docker`, `containerd`, or `both` (Docker first).
 * @throws Error naming the flag and the value for anything else.
 */
export function parseBenchRuntimes(text: string | undefined): BenchRuntime[] {
  switch (text ?? 'docker') {
    case 'docker':
      return ['docker'];
    case 'containerd':
      return ['containerd'];
    case 'both':
      return ['docker', 'containerd'];
    default:
      throw new Error(`--runtime must be docker, containerd or both, got ${JSON.stringify(text)}`);
  }
}

/**
 * criAgentOverrides: the agent options that put a bench agent on the CRI runtime at `endpoint`
 * (`containerRuntimeEndpoint`, the kubelet's `--container-runtime-endpoint`).
 * @throws Error when this agent has no such option yet (the CRI seam of issue #40 not in the tree).
 */
export function criAgentOverrides(endpoint: string): Partial<AgentOptions> {
  if (!('containerRuntimeEndpoint' in kAgentOptionDescriptors)) {
    throw new Error(
      '--runtime containerd: this agent has no --container-runtime-endpoint option (containerRuntimeEndpoint) yet: the CRI seam of issue #40 is not in this tree',
    );
  }
  return { containerRuntimeEndpoint: endpoint } as Partial<AgentOptions>;
}

/** CriAgentRun: one agent run on the CRI runtime; milliseconds, CPU in ms per pod start. */
export interface CriAgentRun {
  allRunningMs: number;
  firstRunningMs: number;
  allRemovedMs: number;
  /** The whole process (main thread, worker threads, the bench's watch client) per pod start. */
  cpuMsPerPod: number;
  /** The main thread alone (its CPU time from /proc) per pod start. */
  mainThreadCpuMsPerPod: number;
  /** The process's CPU per pod start by thread kind (bench/thread-cpu.ts startThreadCpu). */
  threadCpuMsPerPod: Record<string, number>;
  startupMs: ReturnType<typeof summary>;
}

/**
 * agentOnCri runs `pods` busybox pods through a bench agent on the CRI runtime at `endpoint` —
 * all at once (`rate` 0) or `rate` a second — waits for all Running (as its watch client saw them),
 * removes them, and removes what is left of its sandboxes through `rt` (by its node label).
 * `settle` runs after the agent started and before the timed part.
 * @throws as criAgentOverrides, or when the pods are not Running within waitUntil's 15 minutes.
 */
export async function agentOnCri(
  rt: RemoteRuntimeService,
  endpoint: string,
  opts: { pods: number; rate: number; workers: number; settle?: () => Promise<unknown>; warmUp?: boolean },
): Promise<CriAgentRun> {
  const { pods, rate, workers } = opts;
  const b = await startBenchAgent('density-cri', { workers, syncFrequencyMs: 60_000, ...criAgentOverrides(endpoint) });
  const unregister = onInterrupt(() => removeCriByLabel(rt, { 'kubelet-ts.node-name': b.nodeName }));
  try {
    if (opts.warmUp) await warmUpAgent(b, pods, 'agent on containerd');
    await opts.settle?.();
    const cpu0 = process.cpuUsage();
    const mainCpu = startMainThreadCpu();
    const threadCpu = startThreadCpu();
    const t0 = performance.now();
    if (rate === 0) {
      await Promise.all(Array.from({ length: pods }, (_, i) => b.write(`density-${i}.yaml`, podYaml(`density-${i}`))));
    } else {
      for (let i = 0; i < pods; i++) {
        await sleepUntil(t0 + (i * 1000) / rate);
        await b.write(`density-${i}.yaml`, podYaml(`density-${i}`));
      }
    }
    await waitUntil('agent on containerd: pods Running', pods, () => b.times.running.size);
    const allRunningMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const main = mainCpu();
    const threads = threadCpu();
    const firstRunningMs = Math.min(...b.times.running.values()) - t0;
    const startupMs = summary([...b.times.running].map(([uid, t]) => t - (b.times.accepted.get(uid) ?? t0)));
    const t1 = performance.now();
    await Promise.all(Array.from({ length: pods }, (_, i) => b.remove(`density-${i}.yaml`)));
    await waitUntil('agent on containerd: pods removed', pods, () => b.times.removed.size);
    return {
      allRunningMs,
      firstRunningMs,
      allRemovedMs: performance.now() - t1,
      startupMs,
      cpuMsPerPod: agentCpuMs((cpu.user + cpu.system) / 1000, threads) / pods,
      mainThreadCpuMsPerPod: main.ms / pods,
      threadCpuMsPerPod: Object.fromEntries(Object.entries(threads).map(([kind, ms]) => [kind, ms / pods])),
    };
  } finally {
    unregister();
    await b.stop();
    await removeCriByLabel(rt, { 'kubelet-ts.node-name': b.nodeName }).catch(() => 0);
  }
}

/** RuntimeFigures: one runtime's row of the both-runtimes table (milliseconds; CPU in ms per pod start). */
export interface RuntimeFigures {
  runtime: BenchRuntime;
  agentAllRunningMs: number;
  floorAllRunningMs: number;
  /** The floor's concurrency (0: paced at the run's rate). */
  floorConcurrency: number;
  agentCpuMsPerPod: number;
  agentMainThreadCpuMsPerPod: number;
  /** The agent process's CPU per pod start by thread kind (bench/thread-cpu.ts), where measured. */
  agentThreadCpuMsPerPod?: Record<string, number>;
  floorClientCpuMsPerPod: number;
}

/**
 * runtimesTable: the both-runtimes rows (pure; bench/lib.ts table() prints them): per runtime the
 * agent's time to all Running, its floor's, agent ÷ floor, and the CPU per pod start; then, when
 * both are there, the floors side by side (CRI floor ÷ Docker floor) and the agents' (containerd ÷ Docker).
 */
export function runtimesTable(rows: readonly RuntimeFigures[]): (string | number)[][] {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  const floorName = (r: RuntimeFigures) =>
    `${r.runtime === 'docker' ? 'dockerode' : 'CRI'} floor${r.floorConcurrency > 0 ? `, concurrency ${r.floorConcurrency}` : ', paced'}`;
  const out: (string | number)[][] = [
    [
      'runtime',
      'agent: all Running (s)',
      'its raw floor (s)',
      'agent ÷ floor',
      'agent CPU ms/pod (process / main thread)',
      'floor client CPU ms/pod',
    ],
    ...rows.map((r) => [
      r.runtime,
      s(r.agentAllRunningMs),
      `${s(r.floorAllRunningMs)} (${floorName(r)})`,
      (r.agentAllRunningMs / r.floorAllRunningMs).toFixed(2),
      `${r.agentCpuMsPerPod.toFixed(1)} / ${r.agentMainThreadCpuMsPerPod.toFixed(1)}`,
      r.floorClientCpuMsPerPod.toFixed(1),
    ]),
  ];
  for (const r of rows)
    if (r.agentThreadCpuMsPerPod)
      out.push([`${r.runtime}: agent CPU ms/pod by thread`, formatThreadCpu(r.agentThreadCpuMsPerPod), '', '', '', '']);
  const docker = rows.find((r) => r.runtime === 'docker');
  const cri = rows.find((r) => r.runtime === 'containerd');
  if (docker && cri) {
    out.push([
      'containerd ÷ Docker',
      (cri.agentAllRunningMs / docker.agentAllRunningMs).toFixed(2),
      (cri.floorAllRunningMs / docker.floorAllRunningMs).toFixed(2),
      '',
      '',
      '',
    ]);
  }
  return out;
}

/** CriDensity: bench density's containerd part: the best agent run, every CRI floor run, the row of the both-runtimes table. */
export interface CriDensity {
  runtime: { name: string; version: string };
  agent: CriAgentRun;
  agentRunsMs: number[];
  floors: CriFloorRun[];
  figures: RuntimeFigures;
}

/**
 * densityOnCri: bench density on the CRI runtime at `endpoint` — per rep, the agent (agentOnCri),
 * then the raw CRI floor at each of `concurrencies` on the runtime's CNI bridge (network `pod`, as
 * the agent's pods); the best of each (time to all Running). Paced (`rate` > 0) the agent is paced
 * and the floor is still its burst (no paced CRI floor is built). `settle` before each timed run.
 * @throws as agentOnCri and criFloor; whatever a run left is removed by its label first.
 */
export async function densityOnCri(
  rt: RemoteRuntimeService,
  endpoint: string,
  opts: {
    pods: number;
    rate: number;
    workers: number;
    reps: number;
    concurrencies: readonly number[];
    runId: string;
    settle: () => Promise<unknown>;
    /** Start and remove a burst of `pods` before each timed agent run (bench/lib.ts warmUpAgent). */
    warmUp?: boolean;
  },
): Promise<CriDensity> {
  const version = await rt.version('0.1.0');
  const agents: CriAgentRun[] = [];
  const floors: CriFloorRun[] = [];
  for (let rep = 1; rep <= opts.reps; rep++) {
    agents.push(await agentOnCri(rt, endpoint, { ...opts, settle: opts.settle }));
    for (const c of opts.concurrencies) {
      const label = `${opts.runId}-cri-${rep}-${c}`;
      await opts.settle();
      try {
        floors.push(await criFloor(rt, opts.pods, c, label, 'pod'));
      } finally {
        await removeCriByLabel(rt, { 'kubelet-ts.bench': label }).catch(() => 0);
      }
    }
  }
  const fastest = <T extends { allRunningMs: number }>(xs: T[]): T => xs.reduce((a, b) => (b.allRunningMs < a.allRunningMs ? b : a));
  const agent = fastest(agents);
  const floor = fastest(floors);
  return {
    runtime: { name: version.runtime_name, version: version.runtime_version },
    agent,
    agentRunsMs: agents.map((a) => a.allRunningMs),
    floors,
    figures: {
      runtime: 'containerd',
      agentAllRunningMs: agent.allRunningMs,
      floorAllRunningMs: floor.allRunningMs,
      floorConcurrency: floor.concurrency,
      agentCpuMsPerPod: agent.cpuMsPerPod,
      agentMainThreadCpuMsPerPod: agent.mainThreadCpuMsPerPod,
      agentThreadCpuMsPerPod: agent.threadCpuMsPerPod,
      floorClientCpuMsPerPod: floor.clientCpuMsPerPod,
    },
  };
}

/** RuntimeFailure: a runtime's part of a bench that failed, and the last lines of its error. */
export interface RuntimeFailure {
  runtime: BenchRuntime;
  error: string;
}

/**
 * runEachRuntime runs each runtime's part of a bench in order. With one part its error is
 * thrown as it is. With more, a part that rejects (an engine too slow for a wait, a runtime down)
 * is said on stderr (`warn`) and recorded, and the next part runs: one runtime's failure does not
 * lose the other's figures (as bench/peer-plan.ts does for peers, issue #42 item 5). Resolves with
 * the failures, in order.
 */
export async function runEachRuntime(
  parts: readonly { runtime: BenchRuntime; run: () => Promise<void> }[],
  warn: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
): Promise<RuntimeFailure[]> {
  if (parts.length === 1) {
    await parts[0]!.run();
    return [];
  }
  const failures: RuntimeFailure[] = [];
  for (const part of parts) {
    try {
      await part.run();
    } catch (err) {
      const error = errorLines(err);
      failures.push({ runtime: part.runtime, error });
      warn(`bench: the ${part.runtime} part failed, recorded as its failure; going on: ${error}`);
    }
  }
  return failures;
}
