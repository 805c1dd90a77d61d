// The benches' runtime choice (bench/runtime-runs.ts) and the raw CRI floor's run (bench/cri-floor-run.ts)
// on the real containerd of tools/lib/containerd.sh. No timing is asserted: figures, not tests.
import { describe, expect, it } from 'vitest';
import { kAgentOptionDescriptors } from '../../src/main/options/agent-option-descriptors.js';
import { RemoteRuntimeService } from '../../src/workers/runtime/cri/remote-runtime.js';
import { criFloor, removeCriByLabel } from '../../bench/cri-floor-run.js';
import { criAgentOverrides, parseBenchRuntimes, runEachRuntime, runtimesTable, type RuntimeFigures } from '../../bench/runtime-runs.js';
import { criEndpointOrSkip } from '../support/cri.js';

describe('bench --runtime', () => {
  it('takes docker, containerd or both (Docker first), and refuses anything else naming the flag', () => {
    expect(parseBenchRuntimes(undefined)).toEqual(['docker']);
    expect(parseBenchRuntimes('containerd')).toEqual(['containerd']);
    expect(parseBenchRuntimes('both')).toEqual(['docker', 'containerd']);
    expect(() => parseBenchRuntimes('podman')).toThrow('--runtime must be docker, containerd or both, got "podman"');
  });

  it.skipIf('containerRuntimeEndpoint' in kAgentOptionDescriptors)('says so when the agent cannot run on a CRI runtime yet', () => {
    expect(() => criAgentOverrides('unix:///x.sock')).toThrow(/no --container-runtime-endpoint option/);
  });

  it('tables each runtime against its own floor, then the floors and the agents side by side', () => {
    const row = (runtime: 'docker' | 'containerd', agent: number, floor: number, c: number): RuntimeFigures => ({
      runtime,
      agentAllRunningMs: agent,
      floorAllRunningMs: floor,
      floorConcurrency: c,
      agentCpuMsPerPod: 20,
      agentMainThreadCpuMsPerPod: 8,
      floorClientCpuMsPerPod: 4.5,
    });
    const rows = runtimesTable([row('docker', 30_000, 25_000, 32), row('containerd', 18_000, 15_000, 16)]);
    expect(rows.slice(1)).toEqual([
      ['docker', '30.00', '25.00 (dockerode floor, concurrency 32)', '1.20', '20.0 / 8.0', '4.5'],
      ['containerd', '18.00', '15.00 (CRI floor, concurrency 16)', '1.20', '20.0 / 8.0', '4.5'],
      ['containerd ÷ Docker', '0.60', '0.60', '', '', ''],
    ]);
    expect(runtimesTable([row('containerd', 1000, 500, 0)]).slice(1)).toEqual([
      ['containerd', '1.00', '0.50 (CRI floor, paced)', '2.00', '20.0 / 8.0', '4.5'],
    ]);
  });
});

describe('bench density --runtime both: one runtime failing', () => {
  it('records the failing runtime, says so, and still runs the other', async () => {
    const warned: string[] = [];
    const ran: string[] = [];
    const failures = await runEachRuntime(
      [
        {
          runtime: 'docker',
          run: async () => {
            ran.push('docker');
            throw new RangeError('Invalid count value: -1');
          },
        },
        {
          runtime: 'containerd',
          run: async () => {
            ran.push('containerd');
          },
        },
      ],
      (l) => warned.push(l),
    );
    expect(ran).toEqual(['docker', 'containerd']);
    expect(failures).toEqual([{ runtime: 'docker', error: 'Invalid count value: -1' }]);
    expect(warned).toEqual(['bench: the docker part failed, recorded as its failure; going on: Invalid count value: -1']);
  });

  it('throws the error as it is when there is one runtime', async () => {
    await expect(
      runEachRuntime(
        [
          {
            runtime: 'containerd',
            run: async () => {
              throw new Error('no CRI endpoint');
            },
          },
        ],
        () => undefined,
      ),
    ).rejects.toThrow('no CRI endpoint');
  });
});

const endpoint = criEndpointOrSkip();
describe.skipIf(endpoint === null)('the raw CRI floor (containerd)', () => {
  it("starts its pods on the runtime's CNI bridge and leaves none behind", async () => {
    const rt = new RemoteRuntimeService(endpoint!, { requestTimeoutMs: 60_000 });
    const runId = `bench-test-${process.pid}-${Date.now()}`;
    try {
      const run = await criFloor(rt, 2, 2, runId, 'pod');
      expect(run).toMatchObject({ concurrency: 2, allRunningMs: expect.any(Number), clientCpuMsPerPod: expect.any(Number) });
      expect(run.allRunningMs).toBeGreaterThanOrEqual(run.firstRunningMs);
      expect(await rt.listPodSandbox({ label_selector: { 'kubelet-ts.bench': runId } })).toEqual([]);
    } finally {
      await removeCriByLabel(rt, { 'kubelet-ts.bench': runId });
      rt.close();
    }
  }, 120_000);
});
