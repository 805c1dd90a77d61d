// The density bench's figures over its interleaved reps (issue #42 item 3: the burst ratio stated
// robustly) and its floor-settings runs (item 2: what each of the kubelet's per-container settings
// costs the engine, bench/floor-settings.ts). A rep runs the agent, then each floor; the best of
// the floors' concurrencies in a rep is that rep's floor. The medians (of the agent's runs, of the
// reps' floors, of the ratios rep by rep) are what a claim quotes; the best-of rows stay for
// comparison with earlier tables. Also the at-density rows of its table. Not used by src/ or by tests.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { floorSettings, type FloorSettingName } from './floor-settings.js';
import { rawFloor, type RawFloorRun } from './raw-floor.js';
import type { AtDensity } from './at-density.js';
import { oomScoreAdjFloor } from '../src/workers/cm/oom-score-floor.js';

/** median of `xs` (the mean of the middle two when even); NaN when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** RepFigures: one rep's agent run and its floor (the fastest of the rep's floor runs). */
export interface RepFigures {
  agentAllRunningMs: number;
  floorAllRunningMs: number;
  agentEngineCpuMsPerPod: number;
  floorEngineCpuMsPerPod: number;
  agentDockerCallsPerPod?: number;
}

/** repFloor: the fastest to all Running of one rep's floor runs (one per --raw-concurrency). */
export function repFloor(runs: RawFloorRun[]): RawFloorRun {
  return runs.reduce((a, b) => (b.allRunningMs < a.allRunningMs ? b : a));
}

/** RepsSummary: the medians over the reps (milliseconds; ratios agent ÷ floor). */
export interface RepsSummary {
  reps: RepFigures[];
  medianAgentAllRunningMs: number;
  medianFloorAllRunningMs: number;
  /** The median of the reps' ratios agent ÷ floor (time to all Running). */
  medianRatioAllRunning: number;
  medianAgentEngineCpuMsPerPod: number;
  medianFloorEngineCpuMsPerPod: number;
  /** The median of the reps' ratios agent ÷ floor (engine CPU per pod start). */
  medianRatioEngineCpu: number;
}

/** summarizeReps: the medians of `reps`. */
export function summarizeReps(reps: RepFigures[]): RepsSummary {
  return {
    reps,
    medianAgentAllRunningMs: median(reps.map((r) => r.agentAllRunningMs)),
    medianFloorAllRunningMs: median(reps.map((r) => r.floorAllRunningMs)),
    medianRatioAllRunning: median(reps.map((r) => r.agentAllRunningMs / r.floorAllRunningMs)),
    medianAgentEngineCpuMsPerPod: median(reps.map((r) => r.agentEngineCpuMsPerPod)),
    medianFloorEngineCpuMsPerPod: median(reps.map((r) => r.floorEngineCpuMsPerPod)),
    medianRatioEngineCpu: median(reps.map((r) => r.agentEngineCpuMsPerPod / r.floorEngineCpuMsPerPod)),
  };
}

/** repsRows: the table rows of a RepsSummary (measure, agent, floor, ratio). */
export function repsRows(m: RepsSummary): (string | number)[][] {
  const n = m.reps.length;
  const list = (f: (r: RepFigures) => number, digits: number) => m.reps.map((r) => f(r).toFixed(digits)).join(' ');
  return [
    [
      `time to all Running, median of ${n} interleaved reps (s); ratio: median of the reps' ratios`,
      m.medianAgentAllRunningMs / 1000,
      m.medianFloorAllRunningMs / 1000,
      m.medianRatioAllRunning,
    ],
    [
      '  each rep: agent / floor (s), ratio',
      list((r) => r.agentAllRunningMs / 1000, 2),
      list((r) => r.floorAllRunningMs / 1000, 2),
      list((r) => r.agentAllRunningMs / r.floorAllRunningMs, 2),
    ],
    [
      `engine CPU per pod start, median of ${n} reps (ms); ratio: median of the reps' ratios`,
      m.medianAgentEngineCpuMsPerPod,
      m.medianFloorEngineCpuMsPerPod,
      m.medianRatioEngineCpu,
    ],
    [
      '  each rep: agent / floor (ms), ratio',
      list((r) => r.agentEngineCpuMsPerPod, 1),
      list((r) => r.floorEngineCpuMsPerPod, 1),
      list((r) => r.agentEngineCpuMsPerPod / r.floorEngineCpuMsPerPod, 3),
    ],
  ];
}

/** SettingRun: one floor run of one setting (bench/floor-settings.ts) in one rep. */
export interface SettingRun {
  setting: FloorSettingName;
  rep: number;
  engineCpuMsPerPod: number;
  allRunningMs: number;
}

/**
 * runFloorSetting: one rawFloor run of `pods` pairs at `concurrency` with setting `name`, its files
 * and pod cgroups removed after (the pairs are removed by rawFloor itself).
 * @throws what rawFloor throws.
 */
export async function runFloorSetting(
  docker: Docker,
  name: FloorSettingName,
  rep: number,
  o: { pods: number; concurrency: number; runId: string; engineCpu?: () => () => number },
): Promise<SettingRun> {
  const dir = mkdtempSync(join(tmpdir(), 'kts-bench-floor-'));
  const s = floorSettings(name, `${o.runId}${rep}`, dir, await oomScoreAdjFloor());
  try {
    const r = await rawFloor(docker, o.pods, o.concurrency, o.runId, o.engineCpu, { name, shape: s.shape });
    return { setting: name, rep, engineCpuMsPerPod: r.engineCpuMsPerPod, allRunningMs: r.allRunningMs };
  } finally {
    s.cleanUp();
  }
}

/** settingsRows: per setting, the median engine CPU per pair over its reps, its difference to `none`'s and each rep's. */
export function settingsRows(runs: SettingRun[]): (string | number)[][] {
  const names = [...new Set(runs.map((r) => r.setting))];
  const med = (n: string) => median(runs.filter((r) => r.setting === n).map((r) => r.engineCpuMsPerPod));
  const bare = med('none');
  return names.map((n) => [
    `  floor + ${n}: engine CPU per pair, median (ms) / − bare floor's / each rep`,
    med(n),
    n === 'none' ? '' : (med(n) - bare).toFixed(1),
    runs
      .filter((r) => r.setting === n)
      .map((r) => r.engineCpuMsPerPod.toFixed(1))
      .join(' '),
  ]);
}

/** `p50 / p99 / max` of a summary, whole milliseconds. */
export const msTriple = (x: { p50: number; p99: number; max: number }) => `${x.p50.toFixed(0)} / ${x.p99.toFixed(0)} / ${x.max.toFixed(0)}`;

/** The at-density rows of the table (see bench/at-density.ts). */
export function atDensityRows(d: AtDensity): (string | number)[][] {
  const ms = (x: number) => x.toFixed(1);
  return [
    [`at ${d.pods} pods: agent RSS per pod, MiB (process RSS ${Math.round(d.rssMiB)} MiB)`, d.rssMiBPerPod, '', ''],
    [`at ${d.pods} pods: idle CPU over ${Math.round(d.idleSeconds)} s, % of a core`, d.idleCpuPercentOfCore, '', ''],
    [
      `at ${d.pods} pods: relist p50 / p99 / max, ms (${d.relistMs.n} asked; period ${d.relistPeriodMs / 1000} s)`,
      `${ms(d.relistMs.p50)} / ${ms(d.relistMs.p99)} / ${ms(d.relistMs.max)}`,
      '',
      '',
    ],
    [
      `at ${d.pods} pods: container death → watch frame p50 / p99 / max, ms (${d.deathToFrameMs.n} deaths)`,
      `${ms(d.deathToFrameMs.p50)} / ${ms(d.deathToFrameMs.p99)} / ${ms(d.deathToFrameMs.max)}`,
      '',
      '',
    ],
    [
      `at ${d.pods} pods: GET /pods req/s, p50 / p99 ms (${Math.round(d.getPods.bytesPerResponse / 1024)} KiB each)`,
      `${d.getPods.requestsPerSec}, ${d.getPods.p50Ms} / ${d.getPods.p99Ms}`,
      '',
      '',
    ],
  ];
}
