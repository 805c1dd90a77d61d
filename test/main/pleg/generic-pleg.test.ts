import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { diffRelist, newGenericPleg } from '../../../src/main/pleg/generic-pleg.js';
import type { PodSyncRunner } from '../../../src/main/pool/worker-pool.js';
import type { RelistContainer } from '../../../src/shared/messages.js';

const c = (id: string, podUid: string, state: RelistContainer['state']): RelistContainer => ({ id, podUid, name: 'x', state });
const m = (...cs: RelistContainer[]) => new Map(cs.map((x) => [x.id, x]));

describe('diffRelist', () => {
  it('reports started, died, removed and nothing for unchanged containers', () => {
    const before = m(c('1', 'p1', 'running'), c('2', 'p1', 'running'), c('3', 'p2', 'exited'));
    const after = m(c('1', 'p1', 'running'), c('2', 'p1', 'exited'), c('4', 'p3', 'running'), c('5', 'p3', 'created'));
    expect(diffRelist(before, after)).toEqual([
      { uid: 'p1', type: 'ContainerDied', containerId: '2' },
      { uid: 'p3', type: 'ContainerStarted', containerId: '4' },
      { uid: 'p3', type: 'ContainerChanged', containerId: '5' },
      { uid: 'p2', type: 'ContainerRemoved', containerId: '3' },
    ]);
  });
});

describe('generic PLEG', () => {
  function runner(lists: RelistContainer[][]): PodSyncRunner {
    let i = 0;
    return {
      run: (async () => {
        const list = lists[Math.min(i++, lists.length - 1)];
        if (!list) throw new Error('docker down');
        return { containers: list, observedAtMs: Date.now() };
      }) as PodSyncRunner['run'],
      stats: () => ({ threads: 0, queueSize: 0, completed: 0, utilization: 0 }),
      close: async () => {},
    };
  }

  it('groups events by pod and reports every pod with containers', async () => {
    const seen: string[][] = [];
    const uids: string[][] = [];
    const pleg = newGenericPleg({}, {
      runner: runner([[c('1', 'p1', 'running')], [c('1', 'p1', 'exited'), c('2', 'p2', 'running')]]),
      logger: pino({ level: 'silent' }),
      onEvents: (byPod) => seen.push([...byPod.keys()].sort()),
      onRelist: (u) => uids.push([...u].sort()),
    });
    await pleg.relist();
    await pleg.relist();
    expect(seen).toEqual([['p1'], ['p1', 'p2']]);
    expect(uids).toEqual([['p1'], ['p1', 'p2']]);
    expect(pleg.healthy().ok).toBe(true);
  });

  it('a failed relist keeps the last known containers (no spurious removals)', async () => {
    const seen: string[][] = [];
    const lists = [[c('1', 'p1', 'running')], undefined as unknown as RelistContainer[], [c('1', 'p1', 'running')]];
    let i = 0;
    const r = runner([]);
    r.run = (async () => { const l = lists[i++]; if (!l) throw new Error('down'); return { containers: l, observedAtMs: 0 }; }) as PodSyncRunner['run'];
    const pleg = newGenericPleg({}, { runner: r, logger: pino({ level: 'silent' }), onEvents: (b) => seen.push([...b.keys()]), onRelist: () => {} });
    await pleg.relist();
    await pleg.relist();
    await pleg.relist();
    expect(seen).toEqual([['p1']]);
  });
});
