import { describe, expect, it } from 'vitest';
import { kObjectChangeHistory, newObjectStore } from '../../../src/main/config/object-store.js';
import { normalizeConfigObject, type ConfigObject } from '../../../src/shared/config-objects.js';
import type { Pod } from '../../../src/shared/api.js';

const cm = (name: string, data: Record<string, string> = {}, namespace = 'default') =>
  normalizeConfigObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data }).object!;
const secret = (name: string) =>
  normalizeConfigObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { k: 'v' } }).object! as ConfigObject;

describe('ObjectStore', () => {
  it('reports the keys whose object appeared, changed or went; the same object again is no change', () => {
    const s = newObjectStore();
    expect(s.apply({ source: 'api', op: 'ADD', objects: [cm('a', { x: '1' })] }).changed).toEqual(['ConfigMap/default/a']);
    expect(s.apply({ source: 'api', op: 'UPDATE', objects: [cm('a', { x: '1' })] }).changed).toEqual([]);
    expect(s.apply({ source: 'api', op: 'UPDATE', objects: [cm('a', { x: '2' })] }).changed).toEqual(['ConfigMap/default/a']);
    expect(s.apply({ source: 'api', op: 'REMOVE', objects: [cm('a')] }).changed).toEqual(['ConfigMap/default/a']);
    expect(s.size()).toBe(0);
  });

  it("SET replaces a source's whole set", () => {
    const s = newObjectStore();
    s.apply({ source: 'file', op: 'SET', objects: [cm('a'), cm('b')] });
    expect(s.apply({ source: 'file', op: 'SET', objects: [cm('b')] }).changed).toEqual(['ConfigMap/default/a']);
    expect(s.get('ConfigMap', 'default', 'b')).toBeDefined();
  });

  it('first seen wins across sources, keeps its key while offered, and the next takes over when it goes', () => {
    const s = newObjectStore();
    s.apply({ source: 'file', op: 'SET', objects: [cm('a', { from: 'file' })] });
    const r = s.apply({ source: 'api', op: 'ADD', objects: [cm('a', { from: 'api' })] });
    expect(r.changed).toEqual([]);
    expect(r.conflicts).toEqual([{ key: 'ConfigMap/default/a', source: 'api', heldBy: 'file' }]);
    expect(s.owner('ConfigMap', 'default', 'a')).toBe('file');
    expect(s.apply({ source: 'file', op: 'SET', objects: [] }).changed).toEqual(['ConfigMap/default/a']);
    expect((s.get('ConfigMap', 'default', 'a') as { data?: Record<string, string> }).data).toEqual({ from: 'api' });
  });

  it('is scoped by namespace', () => {
    const s = newObjectStore();
    s.apply({ source: 'api', op: 'ADD', objects: [cm('a', {}, 'other')] });
    expect(s.get('ConfigMap', 'default', 'a')).toBeUndefined();
    expect(s.get('ConfigMap', 'other', 'a')).toBeDefined();
  });

  it('configObjectsFor gives exactly the referenced objects, null for the missing, undefined when none', () => {
    const s = newObjectStore();
    s.apply({ source: 'api', op: 'ADD', objects: [cm('a'), cm('unused'), secret('s')] });
    const pod = {
      metadata: { name: 'p' },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'i',
            envFrom: [{ configMapRef: { name: 'a' } }, { configMapRef: { name: 'missing' } }, { secretRef: { name: 's' } }],
          },
        ],
      },
    } as Pod;
    const got = s.configObjectsFor(pod)!;
    expect(Object.keys(got.configMaps)).toEqual(['a', 'missing']);
    expect(got.configMaps.missing).toBeNull();
    expect(got.secrets.s?.kind).toBe('Secret');
    expect(s.configObjectsFor({ spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod)).toBeUndefined();
  });

  it('issue #39: stamps each change with a resourceVersion from one counter and feeds ADDED, MODIFIED, DELETED', () => {
    const s = newObjectStore();
    const seen: string[] = [];
    const stop = s.subscribe((c) =>
      seen.push(`${c.type} ${c.object.kind}/${c.object.metadata?.name} ${c.resourceVersion} ${c.object.metadata?.resourceVersion}`),
    );
    s.apply({ source: 'api', op: 'ADD', objects: [cm('a', { x: '1' }), secret('s')] });
    s.apply({ source: 'api', op: 'UPDATE', objects: [cm('a', { x: '1' })] });
    s.apply({ source: 'api', op: 'UPDATE', objects: [cm('a', { x: '2' })] });
    s.apply({ source: 'api', op: 'REMOVE', objects: [cm('a')] });
    expect(seen).toEqual(['ADDED ConfigMap/a 1 1', 'ADDED Secret/s 2 2', 'MODIFIED ConfigMap/a 3 3', 'DELETED ConfigMap/a 4 4']);
    expect(s.resourceVersion()).toBe(4);
    expect(s.get('Secret', 'default', 's')?.metadata?.resourceVersion).toBe('2');
    expect(s.list().map((o) => o.metadata?.resourceVersion)).toEqual(['2']);
    expect(s.changesSince(2)?.map((c) => c.resourceVersion)).toEqual([3, 4]);
    expect(s.changesSince(4)).toEqual([]);
    expect(s.changesSince(5)).toBeUndefined();
    stop();
    s.apply({ source: 'api', op: 'ADD', objects: [cm('b')] });
    expect(seen).toHaveLength(4);
  });

  it("issue #39: a resume from before the kept history is refused (undefined: the watch's 410)", () => {
    const s = newObjectStore();
    for (let i = 0; i <= kObjectChangeHistory; i++) s.apply({ source: 'api', op: 'UPDATE', objects: [cm('a', { i: String(i) })] });
    expect(s.changesSince(0)).toBeUndefined();
    expect(s.changesSince(1)).toHaveLength(kObjectChangeHistory);
  });
});
