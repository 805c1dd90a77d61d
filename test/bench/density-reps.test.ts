// The density bench's figures over its reps (bench/density-reps.ts) and its floor settings
// (bench/floor-settings.ts): medians rep by rep, and what each setting asks Docker for. No timing is
// asserted: figures, not tests.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { median, repFloor, summarizeReps } from '../../bench/density-reps.js';
import { floorSettings, parseFloorSettings } from '../../bench/floor-settings.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('bench density over its reps', () => {
  it('takes the median (the middle two averaged when even), NaN of none', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it("compares each rep's agent with that rep's fastest floor, and states the medians of the runs and of the ratios", () => {
    const floor = (allRunningMs: number, engineCpuMsPerPod: number) => ({
      concurrency: 16,
      firstRunningMs: 1,
      allRunningMs,
      allRemovedMs: 1,
      engineCpuMsPerPod,
      clientCpuMsPerPod: 1,
    });
    expect(repFloor([floor(30, 1), floor(20, 2), floor(25, 3)]).allRunningMs).toBe(20);
    const m = summarizeReps([
      { agentAllRunningMs: 22, floorAllRunningMs: 20, agentEngineCpuMsPerPod: 110, floorEngineCpuMsPerPod: 100 },
      { agentAllRunningMs: 60, floorAllRunningMs: 30, agentEngineCpuMsPerPod: 300, floorEngineCpuMsPerPod: 100 },
      { agentAllRunningMs: 20, floorAllRunningMs: 20, agentEngineCpuMsPerPod: 100, floorEngineCpuMsPerPod: 100 },
    ]);
    expect(m).toMatchObject({
      medianAgentAllRunningMs: 22,
      medianFloorAllRunningMs: 20,
      medianRatioAllRunning: 1.1,
      medianAgentEngineCpuMsPerPod: 110,
      medianRatioEngineCpu: 1.1,
    });
  });
});

describe('bench density --floor-settings', () => {
  it('refuses an unknown setting, naming the flag and the ones it takes', () => {
    expect(parseFloorSettings('none, binds,log')).toEqual(['none', 'binds', 'log']);
    expect(() => parseFloorSettings('binds,mounts')).toThrow('--floor-settings: unknown setting "mounts" (one of none, binds,');
  });

  it("asks for one setting at a time, or for all of them as the agent's pairs; the files of the binds made and removed", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-floor-settings-'));
    dirs.push(dir);
    expect(floorSettings('none', 'r1', dir, 0).shape.container(0)).toEqual({ HostConfig: {} });
    const binds = floorSettings('binds', 'r1', dir, 0);
    const body = binds.shape.container(3);
    expect(body.HostConfig!.Binds).toEqual([
      `${dir}/pod-3/etc-hosts:/etc/hosts`,
      `${dir}/pod-3/resolv.conf:/etc/resolv.conf`,
      `${dir}/pod-3/termination-log:/dev/termination-log`,
    ]);
    expect(readFileSync(join(dir, 'pod-3', 'resolv.conf'), 'utf8')).toContain('nameserver');
    expect(binds.shape.sandbox(3)).toEqual({ HostConfig: {} }); // the sandbox gets no binds
    binds.cleanUp();
    expect(() => readFileSync(join(dir, 'pod-3', 'resolv.conf'))).toThrow();

    const agent = floorSettings('agent', 'r1', mkdtempSync(join(tmpdir(), 'kts-floor-settings-')), -500);
    expect(agent.shape.inspect).toBe(true);
    expect(agent.shape.sandbox(1).HostConfig).toEqual({
      CgroupParent: '/kts-bench-r1/besteffort/podr1-uid-1',
      LogConfig: { Type: 'json-file', Config: { 'max-size': '10485760', 'max-file': '5' } },
      OomScoreAdj: -500, // never below the engine's floor
    });
    expect(agent.shape.container(1).Labels).toMatchObject({ 'io.kubernetes.docker.type': 'container' });
    agent.cleanUp();
  });
});
