// Tests of the pods' watch history (src/main/watch/watch-cache.ts).
import { describe, expect, it } from 'vitest';
import { newStatusManager } from '../../../src/main/status/status-manager.js';
import { newWatchCache } from '../../../src/main/watch/watch-cache.js';
import type { WatchEvent } from '../../../src/server/host/watch-event.js';
import type { Pod } from '../../../src/shared/api.js';

const pod = (name: string): Pod => ({ metadata: { name, namespace: 'default', uid: `u-${name}` } });
const show = (e: WatchEvent) =>
  `${e.type}:${(e.object as Pod).metadata?.name ?? ''}@${(e.object as Pod).metadata?.resourceVersion ?? e.resourceVersion}`;

describe('newWatchCache', () => {
  it('lists current pods as ADDED at their latest resourceVersion (deleted ones left out), then a BOOKMARK', () => {
    const sm = newStatusManager();
    const cache = newWatchCache(sm, { historySize: 10 });
    sm.setPodStatus(pod('a'), { phase: 'Pending' }); // 1
    sm.setPodStatus(pod('b'), { phase: 'Pending' }); // 2
    sm.setPodStatus(pod('a'), { phase: 'Running' }); // 3
    sm.setPodStatus(pod('c'), { phase: 'Pending' }); // 4
    sm.deletePodStatus('u-c'); // 5
    const got: WatchEvent[] = [];
    cache.watch(undefined, (e) => got.push(e));
    expect(got.map(show)).toEqual(['ADDED:b@2', 'ADDED:a@3', 'BOOKMARK:@5']);
    expect((got[1].object as Pod).status?.phase).toBe('Running');
  });

  it("keeps each pod's resourceVersion (its last change), also past the ring; a deleted pod has none (issue #41: one record of it)", () => {
    const sm = newStatusManager();
    const cache = newWatchCache(sm, { historySize: 2 });
    sm.setPodStatus(pod('a'), { phase: 'Pending' }); // 1
    sm.setPodStatus(pod('b'), { phase: 'Pending' }); // 2
    sm.setPodStatus(pod('b'), { phase: 'Running' }); // 3
    sm.setPodStatus(pod('c'), { phase: 'Pending' }); // 4
    sm.deletePodStatus('u-c'); // 5
    expect([
      cache.podResourceVersion('u-a'),
      cache.podResourceVersion('u-b'),
      cache.podResourceVersion('u-c'),
      cache.podResourceVersion('u-none'),
    ]).toEqual([1, 3, undefined, undefined]);
    // The same version the pods' watch lists the pod at.
    const got: WatchEvent[] = [];
    cache.watch(undefined, (e) => got.push(e));
    expect(got.map(show)).toEqual(['ADDED:a@1', 'ADDED:b@3', 'BOOKMARK:@5']);
  });

  it('resumes exactly at the edge of the ring and answers one step beyond it with a 410 ERROR', () => {
    const sm = newStatusManager();
    const cache = newWatchCache(sm, { historySize: 3 });
    for (let i = 0; i < 5; i++) sm.setPodStatus(pod('a'), { phase: 'Running', message: `${i}` }); // rv 1..5, ring holds 3..5
    expect(cache.oldestResumableVersion()).toBe(2);
    const ok: WatchEvent[] = [];
    cache.watch(2, (e) => ok.push(e));
    expect(ok.map(show)).toEqual(['MODIFIED:a@3', 'MODIFIED:a@4', 'MODIFIED:a@5', 'BOOKMARK:@5']);
    const gone: WatchEvent[] = [];
    cache.watch(1, (e) => gone.push(e));
    expect(gone).toHaveLength(1);
    expect(gone[0]).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired', message: 'too old resource version: 1 (2)' } });
  });

  it('delivers live changes until cancelled', () => {
    const sm = newStatusManager();
    const cache = newWatchCache(sm);
    const got: WatchEvent[] = [];
    const cancel = cache.watch(0, (e) => got.push(e));
    sm.setPodStatus(pod('a'), { phase: 'Pending' });
    expect(cache.watchers()).toBe(1);
    cancel();
    sm.setPodStatus(pod('a'), { phase: 'Running' });
    expect(got.map(show)).toEqual(['BOOKMARK:@0', 'ADDED:a@1']);
    expect(cache.watchers()).toBe(0);
  });

  it('drops the oldest changes once their frames pass historyBytes, and answers a resume from before them with 410', () => {
    const sm = newStatusManager();
    const cache = newWatchCache(sm, { historySize: 100, historyBytes: 20_000 });
    const big = 'x'.repeat(6_000); // each change's frame is a little over 6,000 bytes
    for (let i = 0; i < 10; i++) sm.setPodStatus(pod('a'), { phase: 'Running', message: `${i}${big}` }); // rv 1..10
    // 3 frames fit in 20,000 bytes: the ring holds rv 8..10, far below its count bound of 100.
    expect(cache.historyUsage().changes).toBe(3);
    expect(cache.historyUsage().bytes).toBeLessThanOrEqual(20_000);
    expect(cache.oldestResumableVersion()).toBe(7);
    const ok: WatchEvent[] = [];
    cache.watch(7, (e) => ok.push(e));
    expect(ok.map(show)).toEqual(['MODIFIED:a@8', 'MODIFIED:a@9', 'MODIFIED:a@10', 'BOOKMARK:@10']);
    expect((ok[0].object as Pod).status?.message).toBe(`7${big}`);
    const gone: WatchEvent[] = [];
    cache.watch(6, (e) => gone.push(e));
    expect(gone).toEqual([
      expect.objectContaining({
        type: 'ERROR',
        object: expect.objectContaining({ code: 410, reason: 'Expired', message: 'too old resource version: 6 (7)' }),
      }),
    ]);
  });

  it('always keeps the newest change, even one larger than historyBytes', () => {
    const sm = newStatusManager();
    const cache = newWatchCache(sm, { historySize: 10, historyBytes: 1_000 });
    sm.setPodStatus(pod('a'), { phase: 'Pending' }); // 1
    sm.setPodStatus(pod('a'), { phase: 'Running', message: 'y'.repeat(5_000) }); // 2
    expect(cache.historyUsage().changes).toBe(1);
    const got: WatchEvent[] = [];
    cache.watch(1, (e) => got.push(e));
    expect(got.map(show)).toEqual(['MODIFIED:a@2', 'BOOKMARK:@2']);
  });

  it('keeps byte accounting right when the count bound drops the oldest change', () => {
    const sm = newStatusManager();
    const cache = newWatchCache(sm, { historySize: 2, historyBytes: 1_000_000 });
    for (let i = 0; i < 5; i++) sm.setPodStatus(pod('a'), { phase: 'Running', message: `${i}` });
    const { changes, bytes } = cache.historyUsage();
    expect(changes).toBe(2);
    const one: WatchEvent[] = [];
    cache.watch(4, (e) => one.push(e));
    expect(bytes).toBeGreaterThan(Buffer.byteLength(JSON.stringify({ type: one[0].type, object: one[0].object })));
    expect(bytes).toBeLessThan(3 * Buffer.byteLength(JSON.stringify({ type: one[0].type, object: one[0].object })));
  });

  it('refuses historyBytes below 1', () => {
    expect(() => newWatchCache(newStatusManager(), { historyBytes: 0 })).toThrow('--watch-history-bytes');
  });

  it('refuses a history size below 1', () => {
    expect(() => newWatchCache(newStatusManager(), { historySize: 0 })).toThrow('historySize');
  });
});
