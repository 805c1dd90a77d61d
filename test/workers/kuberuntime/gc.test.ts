// Tests of src/workers/kuberuntime/gc.ts: the container and image GC decisions (kuberuntime_gc.go, image_gc_manager.go).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  readPulledImages,
  recordPulledImage,
  selectContainersToRemove,
  selectImagesToRemove,
  type GcContainer,
  type GcImage,
  type ImageGcInput,
  type PulledImages,
} from '../../../src/workers/kuberuntime/gc.js';

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

describe('selectImagesToRemove', () => {
  const img = (id: string, sizeBytes: number, createdAtMs = 0): GcImage => ({ id, repoTags: [`r/${id}:1`], sizeBytes, createdAtMs });
  const rec = (lastUsedMs: number, pulledAtMs = 1): PulledImages[string] => ({ refs: ['x'], pulledAtMs, lastUsedMs });
  const base = (over: Partial<ImageGcInput>): ImageGcInput => ({
    capacityBytes: 1000,
    availableBytes: 100,
    highThresholdPercent: 85,
    lowThresholdPercent: 80,
    images: [],
    pulled: {},
    inUseImageIds: new Set(),
    protectedImageIds: new Set(),
    ...over,
  });
  const cases: Array<{ name: string; input: ImageGcInput; ids: string[]; bytesToFree: number }> = [
    {
      name: 'below the high threshold: nothing',
      input: base({ availableBytes: 151, images: [img('a', 500)], pulled: { a: rec(1) } }),
      ids: [],
      bytesToFree: 0,
    },
    {
      name: 'at the high threshold: frees down to low, oldest last-used first, stops when enough',
      input: base({
        availableBytes: 150,
        images: [img('a', 30), img('b', 30), img('c', 30)],
        pulled: { a: rec(300), b: rec(100), c: rec(200) },
      }),
      ids: ['b', 'c'],
      bytesToFree: 50,
    },
    {
      name: 'only images this agent pulled',
      input: base({ images: [img('foreign', 500, 1), img('mine', 10, 2)], pulled: { mine: rec(0) } }),
      ids: ['mine'],
      bytesToFree: 100,
    },
    {
      name: 'never an image in use (any owner) or the pod infra image',
      input: base({
        images: [img('used', 500), img('pause', 500), img('free', 500)],
        pulled: { used: rec(1), pause: rec(1), free: rec(2) },
        inUseImageIds: new Set(['used']),
        protectedImageIds: new Set(['pause']),
      }),
      ids: ['free'],
      bytesToFree: 100,
    },
    {
      name: 'never used: by pull time, else created time',
      input: base({ images: [img('a', 60, 5), img('b', 60, 1)], pulled: { a: rec(0, 10), b: rec(0, 20) } }),
      ids: ['a', 'b'],
      bytesToFree: 100,
    },
  ];
  it.each(cases)('$name', ({ input, ids, bytesToFree }) => {
    const plan = selectImagesToRemove(input);
    expect(plan.images.map((i) => i.id)).toEqual(ids);
    expect(plan.bytesToFree).toBe(bytesToFree);
  });

  it('rejects bad thresholds', () => {
    expect(() => selectImagesToRemove(base({ highThresholdPercent: 101 }))).toThrow(/imageGCHighThresholdPercent/);
    expect(() => selectImagesToRemove(base({ highThresholdPercent: 50, lowThresholdPercent: 60 }))).toThrow(/must not exceed/);
    expect(() => selectImagesToRemove(base({ capacityBytes: 0 }))).toThrow(/capacityBytes/);
  });
});

describe('pulled.json', () => {
  let dir = '';
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('records pulled images by ID with every ref, and reads {} when absent', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kts-gc-'));
    expect(await readPulledImages(dir)).toEqual({});
    await recordPulledImage(dir, 'reg/a:1', 'sha256:a', 10);
    await recordPulledImage(dir, 'reg/a:latest', 'sha256:a', 20);
    await recordPulledImage(dir, 'reg/b:1', 'sha256:b', 30);
    const got = await readPulledImages(dir);
    expect(got['sha256:a']).toEqual({ refs: ['reg/a:1', 'reg/a:latest'], pulledAtMs: 20, lastUsedMs: 0 });
    expect(got['sha256:b'].refs).toEqual(['reg/b:1']);
    expect(JSON.parse(await readFile(path.join(dir, 'images', 'pulled.json'), 'utf8'))).toEqual(got);
  });
});
