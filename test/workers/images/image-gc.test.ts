// Tests of src/workers/images/image-gc.ts: the image GC decision and the record of pulled images (image_gc_manager.go).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  readPulledImages,
  recordPulledImage,
  selectImagesToRemove,
  type GcImage,
  type ImageGcInput,
  type PulledImages,
} from '../../../src/workers/images/image-gc.js';

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
