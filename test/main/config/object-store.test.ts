import { describe, expect, it } from 'vitest';
import { newObjectStore } from '../../../src/main/config/object-store.js';
import { normalizeConfigObject, type ConfigObject } from '../../../src/shared/config-objects.js';
import type { Pod } from '../../../src/shared/api.js';

const cm = (name: string, data: Record<string, string> = {}, namespace = 'default') =>
  normalizeConfigObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data }).object!;
const secret = (name: string) => normalizeConfigObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { k: 'v' } }).object! as ConfigObject;

describe('ObjectStore', () => {
  it('reports the keys whose object appeared, changed or went; the same object again is no change', () => {
    const s = newObjectStore();
    expect(s.apply({ source: 'api', op: 'ADD', objects: [cm('a', { x: '1' })] }).changed).toEqual(['ConfigMap/default/a']);
    expect(s.apply({ source: 'api', op: 'UPDATE', objects: [cm('a', { x: '1' })] }).changed).toEqual([]);
    expect(s.apply({ source: 'api', op: 'UPDATE', objects: [cm('a', { x: '2' })] }).changed).toEqual(['ConfigMap/default/a']);
    expect(s.apply({ source: 'api', op: 'REMOVE', objects: [cm('a')] }).changed).toEqual(['ConfigMap/default/a']);
    expect(s.size()).toBe(0);
  });

  it('SET replaces a source\'s whole set', () => {
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
    const pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i', envFrom: [{ configMapRef: { name: 'a' } }, { configMapRef: { name: 'missing' } }, { secretRef: { name: 's' } }] }] } } as Pod;
    const got = s.configObjectsFor(pod)!;
    expect(Object.keys(got.configMaps)).toEqual(['a', 'missing']);
    expect(got.configMaps.missing).toBeNull();
    expect(got.secrets.s?.kind).toBe('Secret');
    expect(s.configObjectsFor({ spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod)).toBeUndefined();
  });
});
