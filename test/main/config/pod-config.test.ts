import { describe, expect, it } from 'vitest';
import { newPodConfig } from '../../../src/main/config/pod-config.js';
import type { Pod } from '../../../src/shared/api.js';

function pod(name: string, uid: string, image = 'img:1', namespace = 'default'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid, annotations: { 'kubernetes.io/config.seen': String(Math.random()) } },
    spec: { containers: [{ name: 'c', image }] },
  };
}
const names = (pods: Pod[]) => pods.map((p) => p.metadata!.uid).sort();

describe('PodConfig merge', () => {
  it('turns a first SET into adds and reports the source as seen', () => {
    const config = newPodConfig(['file']);
    expect(config.seenAllSources()).toBe(false);
    const changes = config.apply({ op: 'SET', source: 'file', pods: [pod('a', 'u1'), pod('b', 'u2')] });
    expect(names(changes.adds)).toEqual(['u1', 'u2']);
    expect(changes.removes).toEqual([]);
    expect(config.seenAllSources()).toBe(true);
  });

  it('an empty SET still marks the source seen', () => {
    const config = newPodConfig(['file', 'api']);
    config.apply({ op: 'SET', source: 'file', pods: [] });
    expect(config.seenAllSources()).toBe(false);
    config.apply({ op: 'SET', source: 'api', pods: [] });
    expect(config.seenAllSources()).toBe(true);
  });

  it('diffs a later SET into add, update and remove, ignoring config.seen', () => {
    const config = newPodConfig(['file']);
    config.apply({ op: 'SET', source: 'file', pods: [pod('a', 'u1'), pod('b', 'u2'), pod('c', 'u3')] });
    const changes = config.apply({ op: 'SET', source: 'file', pods: [pod('a', 'u1'), pod('b', 'u2', 'img:2'), pod('d', 'u4')] });
    expect(names(changes.adds)).toEqual(['u4']);
    expect(names(changes.updates)).toEqual(['u2']);
    expect(names(changes.removes)).toEqual(['u3']);
    expect(names(config.pods())).toEqual(['u1', 'u2', 'u4']);
  });

  it('a static pod whose UID changed is a remove of the old UID and an add of the new one', () => {
    const config = newPodConfig(['file']);
    config.apply({ op: 'SET', source: 'file', pods: [pod('a', 'old')] });
    const changes = config.apply({ op: 'SET', source: 'file', pods: [pod('a', 'new', 'img:2')] });
    expect(names(changes.removes)).toEqual(['old']);
    expect(names(changes.adds)).toEqual(['new']);
  });

  it('rejects the same full name from a second source while the first holds it, then admits it when freed', () => {
    const config = newPodConfig(['file', 'api']);
    config.apply({ op: 'SET', source: 'file', pods: [pod('a', 'f1')] });
    const clash = config.apply({ op: 'ADD', source: 'api', pods: [pod('a', 'a1')] });
    expect(clash.adds).toEqual([]);
    expect(clash.conflicts).toHaveLength(1);
    expect(clash.conflicts[0].heldBy).toEqual({ source: 'file', uid: 'f1' });
    const freed = config.apply({ op: 'SET', source: 'file', pods: [] });
    expect(names(freed.removes)).toEqual(['f1']);
    expect(names(freed.adds)).toEqual(['a1']);
  });

  it("refuses a pod whose UID another source's pod holds, under any name, and changes nothing else (issue 11: UID takeover)", () => {
    const config = newPodConfig(['file', 'api']);
    config.apply({ op: 'SET', source: 'file', pods: [pod('static-node', 'f1')] });
    const takeover = config.apply({ op: 'ADD', source: 'api', pods: [pod('web', 'f1')] });
    expect(takeover).toMatchObject({ adds: [], updates: [], removes: [] });
    expect(takeover.conflicts).toEqual([expect.objectContaining({ source: 'api', heldBy: { source: 'file', uid: 'f1' }, uid: true })]);
    expect(config.get('f1')?.metadata?.name).toBe('static-node');
    expect(config.pods()).toHaveLength(1);
    // The refused pod's REMOVE does not touch the holder; once the holder is gone, its UID is free.
    expect(config.apply({ op: 'REMOVE', source: 'api', pods: [pod('web', 'f1')] }).removes).toEqual([]);
    config.apply({ op: 'SET', source: 'file', pods: [] });
    expect(names(config.apply({ op: 'ADD', source: 'api', pods: [pod('web', 'f1')] }).adds)).toEqual(['f1']);
  });

  it('owner names the merged holder of a full name, and none once it is gone', () => {
    const config = newPodConfig(['file', 'api']);
    config.apply({ op: 'SET', source: 'file', pods: [pod('a', 'f1')] });
    config.apply({ op: 'ADD', source: 'api', pods: [pod('a', 'a1')] });
    expect(config.owner('default/a')).toEqual({ uid: 'f1', source: 'file' });
    expect(config.owner('other/a')).toBeUndefined();
    config.apply({ op: 'SET', source: 'file', pods: [] });
    expect(config.owner('default/a')).toEqual({ uid: 'a1', source: 'api' });
    config.apply({ op: 'REMOVE', source: 'api', pods: [pod('a', 'a1')] });
    expect(config.owner('default/a')).toBeUndefined();
  });

  it('the same name in two namespaces is no conflict', () => {
    const config = newPodConfig(['file']);
    const changes = config.apply({ op: 'SET', source: 'file', pods: [pod('a', 'u1', 'i', 'ns1'), pod('a', 'u2', 'i', 'ns2')] });
    expect(names(changes.adds)).toEqual(['u1', 'u2']);
    expect(changes.conflicts).toEqual([]);
  });

  it('REMOVE and UPDATE deltas', () => {
    const config = newPodConfig(['api']);
    config.apply({ op: 'ADD', source: 'api', pods: [pod('a', 'u1'), pod('b', 'u2')] });
    expect(names(config.apply({ op: 'UPDATE', source: 'api', pods: [pod('a', 'u1', 'img:9')] }).updates)).toEqual(['u1']);
    expect(names(config.apply({ op: 'REMOVE', source: 'api', pods: [pod('b', 'u2')] }).removes)).toEqual(['u2']);
    expect(config.get('u2')).toBeUndefined();
    expect(config.get('u1')?.spec?.containers[0].image).toBe('img:9');
  });
});
