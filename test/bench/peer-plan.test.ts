// bench peers' run loop and report (bench/peer-plan.ts) with injected peers: one failing peer is
// recorded as that peer's failure, in the table and the JSON, and the other peers' figures stay.
// And the benches' progress line past its end (bench/progress.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { peerReport, runPeerPlan, type PeerRun, type PlannedPeer } from '../../bench/peer-plan.js';
import { progress, progressLine } from '../../bench/progress.js';

const ok = (name: string, ms: number[]): PlannedPeer => {
  let i = 0;
  return { name, run: async (): Promise<PeerRun> => ({ allRunningMs: ms[i++ % ms.length], allRemovedMs: 500 }) };
};

describe('bench peers plan', () => {
  it('records a failing peer as its failure, clears up after it, and keeps the other peers figures', async () => {
    const warned: string[] = [];
    const after: string[] = [];
    let cleanups = 0;
    let composeRuns = 0;
    const compose: PlannedPeer = {
      name: 'docker-compose up',
      run: async () => {
        if (++composeRuns === 1)
          throw new Error(
            'docker-compose -p x up -d exited 1: ERROR: for p46-pause  UnixHTTPConnectionPool(...): Read timed out. (read timeout=60)',
          );
        return { allRunningMs: 9000, allRemovedMs: 3000 };
      },
      cleanup: async () => void cleanups++,
    };
    const plan = [ok('kubelet-ts', [4000, 3800]), ok('raw floor', [2000, 1900]), compose];
    const outcomes = await runPeerPlan(plan, 2, {
      warn: (l) => warned.push(l),
      after: (peer, rep, f) => after.push(`${rep}:${peer}:${f ? 'failed' : 'ok'}`),
    });
    expect(after).toEqual([
      '1:kubelet-ts:ok',
      '1:raw floor:ok',
      '1:docker-compose up:failed',
      '2:kubelet-ts:ok',
      '2:raw floor:ok',
      '2:docker-compose up:ok',
    ]);
    expect(cleanups).toBe(1);
    expect(warned).toEqual([
      expect.stringMatching(/^bench peers: docker-compose up failed in rep 1\/2, recorded as its failure; going on: .*Read timed out/),
    ]);
    expect(outcomes.get('docker-compose up')).toEqual({
      runs: [{ allRunningMs: 9000, allRemovedMs: 3000 }],
      failures: [{ rep: 1, error: expect.stringContaining('Read timed out') }],
    });

    const report = peerReport(outcomes, 'raw floor');
    expect(report.rows.slice(1)).toEqual([
      ['kubelet-ts', '3.80', '2.00', '4.00 3.80', '0.50'],
      ['raw floor', '1.90', '1.00', '2.00 1.90', '0.50'],
      ['docker-compose up', '9.00', '4.74', '9.00, 1 failed', '3.00'],
    ]);
    expect(report.peers['docker-compose up']).toMatchObject({ ratio: 9000 / 1900, failures: [{ rep: 1 }] });
    expect(JSON.parse(JSON.stringify(report.peers))['kubelet-ts'].best).toEqual({ allRunningMs: 3800, allRemovedMs: 500 });
  });

  it('reads `failed` for a peer without a successful run, the floor included, and a failing before-hook or cleanup does not stop the plan', async () => {
    const warned: string[] = [];
    const floor: PlannedPeer = {
      name: 'raw floor',
      run: async () => {
        throw new Error('settle gave up');
      },
      cleanup: async () => {
        throw new Error('docker gone');
      },
    };
    const outcomes = await runPeerPlan([ok('kubelet-ts', [4000]), floor], 1, {
      warn: (l) => warned.push(l),
      before: async (peer) => {
        if (peer === 'kubelet-ts') throw new RangeError('Invalid count value: -1');
      },
    });
    expect(outcomes.get('kubelet-ts')!.failures).toEqual([{ rep: 1, error: 'Invalid count value: -1' }]);
    expect(warned).toHaveLength(3); // two failures and the cleanup's own error
    const report = peerReport(outcomes, 'raw floor');
    expect(report.rows.slice(1)).toEqual([
      ['kubelet-ts', 'failed', '-', '1 failed', 'last error: Invalid count value: -1'],
      ['raw floor', 'failed', '-', '1 failed', 'last error: settle gave up'],
    ]);
    expect(report.peers['raw floor']).toEqual({ best: null, ratio: null, runs: [], failures: [{ rep: 1, error: 'settle gave up' }] });
  });
});

describe('bench progress line', () => {
  afterEach(() => vi.restoreAllMocks());

  it('draws a full bar past its end, an empty one below zero or for no number, and never throws', () => {
    expect(progressLine('settle', 66, 65)).toBe(`settle [${'#'.repeat(30)}] 66/65`);
    expect(progressLine('settle', 130, 65)).toBe(`settle [${'#'.repeat(30)}] 130/65`);
    expect(progressLine('settle', -1, 5)).toBe(`settle [${'.'.repeat(30)}] -1/5`);
    expect(progressLine('settle', NaN, 5)).toBe(`settle [${'.'.repeat(30)}] NaN/5`);
    expect(progressLine('settle', 3, 0)).toBe(`settle [${'.'.repeat(30)}] 3/0`);
    expect(progressLine('x', 15, 30)).toBe(`x [${'#'.repeat(15)}${'.'.repeat(15)}] 15/30`);
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      written.push(String(s));
      return true;
    });
    const bar = progress('seconds of at most', 65);
    expect(() => {
      bar.update(66);
      bar.update(-1);
      bar.end();
    }).not.toThrow();
    expect(written.join('')).toContain('66/65');
  });
});
