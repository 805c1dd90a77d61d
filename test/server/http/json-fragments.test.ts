// Tests of the per-pod JSON fragments (src/server/http/json-fragments.ts): same bytes as one
// JSON.stringify of the list, and only what changed is serialized again.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { JsonFragments, ListBody, listJson, objectInputs } from '../../../src/server/http/json-fragments.js';
import type { Pod } from '../../../src/shared/api.js';

const pod = (name: string): Pod => ({
  metadata: { namespace: 'default', name, uid: `uid-${name}`, labels: { app: name, 'quote"d': 'ü\u2028' } },
  spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
  status: { phase: 'Pending' },
});

describe('JsonFragments', () => {
  let stringify: MockInstance<typeof JSON.stringify>;
  beforeAll(() => {
    stringify = vi.spyOn(JSON, 'stringify');
  });
  afterAll(() => stringify.mockRestore());
  afterEach(() => stringify.mockClear());
  /** The pods serialized on their own since the last clear. */
  const serializedPods = () =>
    stringify.mock.calls
      .filter((c: unknown[]) => (c[0] as { spec?: unknown } | null)?.spec !== undefined)
      .map((c) => (c[0] as Pod).metadata?.name);

  const render = (f: JsonFragments, pods: Pod[], extra: (p: Pod) => unknown[] = () => []) =>
    listJson(
      { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '3' } },
      pods.map((p) => f.json(p.metadata!, objectInputs(p, extra(p)), () => p)),
    );

  it('gives the bytes of JSON.stringify of the whole list, also for an empty list', () => {
    const pods = [pod('a'), pod('b')];
    expect(render(new JsonFragments(), pods)).toBe(
      JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '3' }, items: pods }),
    );
    expect(listJson({ kind: 'PodList' }, [])).toBe(JSON.stringify({ kind: 'PodList', items: [] }));
  });

  it('serializes again only the pod whose status changed', () => {
    const f = new JsonFragments();
    const records = [pod('a'), pod('b'), pod('c')];
    render(
      f,
      records.map((p) => ({ ...p })),
    );
    expect(serializedPods()).toEqual(['a', 'b', 'c']);
    stringify.mockClear();
    render(
      f,
      records.map((p) => ({ ...p })),
    );
    expect(serializedPods()).toEqual([]);
    records[1] = { ...records[1]!, status: { phase: 'Running' } };
    const body = JSON.parse(
      render(
        f,
        records.map((p) => ({ ...p })),
      ),
    ) as { items: Pod[] };
    expect(serializedPods()).toEqual(['b']);
    expect(body.items.map((p) => p.status?.phase)).toEqual(['Pending', 'Running', 'Pending']);
  });

  it('serializes again when a key is added, removed or reordered, or an extra input changes', () => {
    const f = new JsonFragments();
    const a = pod('a');
    render(f, [a]);
    stringify.mockClear();
    const withoutStatus = { metadata: a.metadata, spec: a.spec };
    expect(JSON.parse(render(f, [withoutStatus])).items[0].status).toBeUndefined();
    const reordered = { spec: a.spec, metadata: a.metadata, status: a.status };
    expect(render(f, [reordered])).toContain('"items":[{"spec"');
    expect(serializedPods()).toEqual(['a', 'a']);
    stringify.mockClear();
    let version = 1;
    const withVersion = () => [version];
    render(f, [a], withVersion);
    render(f, [a], withVersion);
    version = 2;
    render(f, [a], withVersion);
    expect(serializedPods()).toEqual(['a', 'a']);
  });
});

describe('ListBody', () => {
  it('sends the same bytes while head and fragments are the same strings, new bytes after a change', () => {
    const lb = new ListBody();
    const items = ['{"a":1}', '{"b":2}'];
    const one = lb.body({ kind: 'PodList', metadata: { resourceVersion: '1' } }, items);
    expect(one.toString()).toBe('{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[{"a":1},{"b":2}]}');
    expect(lb.body({ kind: 'PodList', metadata: { resourceVersion: '1' } }, [...items])).toBe(one);
    expect(lb.body({ kind: 'PodList', metadata: { resourceVersion: '2' } }, items).toString()).toContain('"resourceVersion":"2"');
    expect(lb.body({ kind: 'PodList', metadata: { resourceVersion: '2' } }, ['{"a":1}']).toString()).toBe(
      '{"kind":"PodList","metadata":{"resourceVersion":"2"},"items":[{"a":1}]}',
    );
  });
});
