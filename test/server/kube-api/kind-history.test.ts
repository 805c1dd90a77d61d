// Unit tests of the generic watch history (kind-history.ts), the chunked list pages
// (list-pages.ts) and the query booleans (query-bool.ts) of issue 39 items 5 and 10.
import { describe, expect, it } from 'vitest';
import { newKindHistory, newVersionClock, type KindObject } from '../../../src/server/kube-api/kind-history.js';
import { encodeContinue, pageOf, parseListPage } from '../../../src/server/kube-api/list-pages.js';
import { queryBool } from '../../../src/server/http/query-bool.js';
import { parseLogOptions } from '../../../src/server/routes/logs.js';
import type { WatchEvent } from '../../../src/server/host/watch-event.js';

const obj = (name: string, namespace?: string, extra: Record<string, string> = {}): KindObject & { data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(namespace ? { namespace } : {}) },
  data: extra,
});
const rv = (o: unknown) => Number((o as KindObject).metadata?.resourceVersion);

describe('KindHistory', () => {
  it('diffs a re-list into ADDED, MODIFIED and DELETED with growing resourceVersions, lists in key order', () => {
    const h = newKindHistory<ReturnType<typeof obj>>(newVersionClock(100), { kind: 'ConfigMap' });
    expect(h.resourceVersion()).toBe(100);
    h.resync([obj('b', 'ns1'), obj('a', 'ns2'), obj('a', 'ns1')]);
    expect(h.list().map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)).toEqual(['ns1/a', 'ns1/b', 'ns2/a']);
    expect(h.list().map(rv)).toEqual([103, 101, 102]);
    const seen: WatchEvent[] = [];
    const cancel = h.watch(h.resourceVersion(), (e) => seen.push(e));
    h.resync([obj('b', 'ns1', { k: 'v' }), obj('a', 'ns2')]);
    h.resync([obj('b', 'ns1', { k: 'v' }), obj('a', 'ns2')]); // unchanged: nothing
    cancel();
    expect(seen.map((e) => [e.type, (e.object as KindObject).metadata?.name, e.resourceVersion])).toEqual([
      ['BOOKMARK', undefined, 103],
      ['MODIFIED', 'b', 104],
      ['DELETED', 'a', 105],
    ]);
    expect(h.resourceVersion()).toBe(105);
  });

  it('starts a watch from 0 with one ADDED per object and a BOOKMARK; resumes from a version; answers 410 from a compacted or future one', () => {
    const h = newKindHistory<ReturnType<typeof obj>>(newVersionClock(10), { kind: 'ConfigMap', historySize: 2 });
    h.publish({ type: 'ADDED', object: obj('a') });
    h.publish({ type: 'MODIFIED', object: obj('a', undefined, { x: '1' }) });
    h.publish({ type: 'ADDED', object: obj('b') });
    const from0: string[] = [];
    h.watch(undefined, (e) => from0.push(`${e.type}:${(e.object as KindObject).metadata?.name ?? ''}`))();
    expect(from0).toEqual(['ADDED:a', 'ADDED:b', 'BOOKMARK:']);
    const resumed: number[] = [];
    h.watch(12, (e) => resumed.push(e.resourceVersion))();
    expect(resumed).toEqual([13, 13]);
    for (const from of [10, 99]) {
      const out: WatchEvent[] = [];
      h.watch(from, (e) => out.push(e));
      expect(out).toHaveLength(1);
      expect(out[0]).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    }
  });

  it("takes a feed's own resourceVersions when they grow", () => {
    const h = newKindHistory<ReturnType<typeof obj>>(newVersionClock(5), { kind: 'ConfigMap' });
    h.publish({ type: 'ADDED', object: obj('a'), resourceVersion: 500 });
    expect(h.list().map(rv)).toEqual([500]);
    expect(h.resourceVersion()).toBe(500);
  });
});

describe('list pages', () => {
  const keys = ['a/1', 'a/2', 'b/1', 'b/2', 'c/1'];
  it('cuts a list into pages with a continue token and remainingItemCount, the token resuming at the next key', () => {
    const p1 = pageOf(keys, (k) => k, { limit: 2 }, 42, false);
    expect(p1.items).toEqual(['a/1', 'a/2']);
    expect(p1.metadata).toMatchObject({ resourceVersion: '42', remainingItemCount: 3 });
    const next = parseListPage(new URLSearchParams({ limit: '2', continue: p1.metadata.continue! }));
    expect(next).toEqual({ limit: 2, continueFrom: { resourceVersion: 42, start: 'b/1' } });
    const p2 = pageOf(['a/1', 'b/1', 'b/2', 'c/1'], (k) => k, next as never, 50, true);
    expect(p2.items).toEqual(['b/1', 'b/2']);
    expect(p2.metadata.resourceVersion).toBe('42');
    expect(p2.metadata.remainingItemCount).toBeUndefined();
    const p3 = pageOf(
      keys,
      (k) => k,
      parseListPage(new URLSearchParams({ limit: '2', continue: p2.metadata.continue! })) as never,
      50,
      false,
    );
    expect(p3).toEqual({ items: ['c/1'], metadata: { resourceVersion: '42' } });
  });
  it('refuses a bad limit, a token not of this server, and a continue with a resourceVersion, naming the parameter', () => {
    expect(parseListPage(new URLSearchParams({ limit: '-1' }))).toMatchObject({ code: 400, message: expect.stringContaining('limit') });
    expect(parseListPage(new URLSearchParams({ continue: 'xyz' }))).toMatchObject({
      code: 400,
      message: expect.stringContaining('continue'),
    });
    expect(parseListPage(new URLSearchParams({ continue: encodeContinue(3, 'a'), resourceVersion: '7' }))).toMatchObject({ code: 400 });
  });
});

describe('queryBool', () => {
  it.each([
    ['true', true],
    ['True', true],
    ['TRUE', true],
    ['1', true],
    ['t', true],
    ['', true],
    ['false', false],
    ['False', false],
    ['0', false],
  ])('reads watch=%j as %j (Convert_Slice_string_To_bool)', (v, want) => {
    expect(queryBool(new URLSearchParams({ watch: v }), 'watch')).toBe(want);
  });
  it('reads an absent parameter as false', () => {
    expect(queryBool(new URLSearchParams(), 'watch')).toBe(false);
  });
});

describe('PodLogOptions booleans', () => {
  it.each([
    ['follow=True&timestamps=1', { follow: true, timestamps: true, previous: false }],
    ['follow=maybe', { follow: true }],
    ['follow=False&previous=0', { follow: false, previous: false }],
    ['follow', { follow: true }],
  ])('reads %s as the apiserver and the kubelet do', (q, want) => {
    expect(parseLogOptions({ namespace: 'default', pod: 'p', container: 'c' }, new URLSearchParams(q))).toMatchObject(want);
  });
});
