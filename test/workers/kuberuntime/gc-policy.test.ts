// Tests of src/workers/kuberuntime/gc-policy.ts: the container GC decision (kuberuntime_gc.go).
import { describe, expect, it } from 'vitest';
import { selectContainersToRemove, type GcContainer } from '../../../src/workers/kuberuntime/gc-policy.js';

function c(id: string, over: Partial<GcContainer> = {}): GcContainer {
  return { id, podUid: 'u1', name: 'app', sandbox: false, sandboxId: 's1', state: 'exited', createdAtMs: 0, attempt: 0, ...over };
}
function sb(id: string, createdAtMs: number, state: GcContainer['state'] = 'exited', podUid = 'u1'): GcContainer {
  return { id, podUid, name: 'POD', sandbox: true, sandboxId: '', state, createdAtMs, attempt: 0 };
}

describe('selectContainersToRemove', () => {
  const cases: Array<{ name: string; max: number; active?: string[]; list: GcContainer[]; containers: string[]; sandboxes: string[] }> = [
    {
      name: 'keeps the newest dead one per container name with max 1; running never removed',
      max: 1,
      list: [
        sb('s1', 1, 'running'),
        c('a3', { createdAtMs: 30, state: 'running' }),
        c('a2', { createdAtMs: 20 }),
        c('a1', { createdAtMs: 10 }),
        c('a0', { createdAtMs: 5 }),
      ],
      containers: ['a1', 'a0'],
      sandboxes: [],
    },
    {
      name: 'max 0 removes every dead container but not running or created ones',
      max: 0,
      list: [
        sb('s1', 1, 'running'),
        c('a2', { createdAtMs: 20, state: 'running' }),
        c('a1', { createdAtMs: 10 }),
        c('n1', { name: 'new', state: 'created' }),
        c('u', { name: 'x', state: 'unknown' }),
      ],
      containers: ['a1'],
      sandboxes: [],
    },
    {
      name: 'max 2 keeps two dead per name, counted per name and per pod',
      max: 2,
      list: [
        c('a3', { createdAtMs: 40 }),
        c('a2', { createdAtMs: 30 }),
        c('a1', { createdAtMs: 20 }),
        c('b1', { name: 'side', createdAtMs: 10 }),
        c('p1', { podUid: 'u2', createdAtMs: 1 }),
        c('p2', { podUid: 'u2', createdAtMs: 2 }),
        c('p3', { podUid: 'u2', createdAtMs: 3 }),
      ],
      containers: ['a1', 'p1'],
      sandboxes: [],
    },
    {
      name: 'same created time: the higher attempt counts as newer',
      max: 1,
      list: [c('x1', { attempt: 1, createdAtMs: 7 }), c('x2', { attempt: 2, createdAtMs: 7 })],
      containers: ['x1'],
      sandboxes: [],
    },
    {
      name: 'older dead sandboxes go unless a kept container still belongs to them; the newest stays',
      max: 1,
      list: [
        sb('s3', 30),
        sb('s2', 20),
        sb('s1', 10),
        c('a2', { sandboxId: 's2', createdAtMs: 25 }),
        c('a1', { sandboxId: 's1', createdAtMs: 15 }),
      ],
      containers: ['a1'],
      sandboxes: ['s1'],
    },
    {
      name: 'a running older sandbox is never removed',
      max: 1,
      list: [sb('s2', 20), sb('s1', 10, 'running')],
      containers: [],
      sandboxes: [],
    },
    {
      name: 'pods not known: all dead containers and sandboxes go, running ones stay',
      max: 1,
      active: ['u1'],
      list: [
        c('k1', { createdAtMs: 1 }),
        sb('gs1', 5, 'exited', 'gone'),
        c('g1', { podUid: 'gone', sandboxId: 'gs1', createdAtMs: 6 }),
        sb('rs1', 5, 'running', 'gone2'),
        c('r1', { podUid: 'gone2', sandboxId: 'rs1', state: 'running' }),
      ],
      containers: ['g1'],
      sandboxes: ['gs1'],
    },
    {
      name: 'containers without a pod UID are ignored',
      max: 0,
      list: [c('z', { podUid: '' })],
      containers: [],
      sandboxes: [],
    },
  ];
  it.each(cases)('$name', ({ max, active, list, containers, sandboxes }) => {
    const plan = selectContainersToRemove(list, { maxPerPodContainer: max, ...(active ? { activePodUids: new Set(active) } : {}) });
    expect(plan.containers.slice().sort()).toEqual(containers.slice().sort());
    expect(plan.sandboxes.slice().sort()).toEqual(sandboxes.slice().sort());
  });

  it('rejects a negative or fractional maximum', () => {
    expect(() => selectContainersToRemove([], { maxPerPodContainer: -1 })).toThrow(/maximumDeadContainersPerContainer/);
    expect(() => selectContainersToRemove([], { maxPerPodContainer: 1.5 })).toThrow(RangeError);
  });
});
