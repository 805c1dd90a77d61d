import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { assembleFileSet } from '../../../src/main/config/manifest-files.js';

function pod(name: string, uid: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  };
}
const uids = (pods: Pod[]) => pods.map((p) => p.metadata?.uid);

describe('assembleFileSet: who holds a full name (issue #11 finding 7)', () => {
  it('gives a new name to the first file in name order, and to the first document within a file', () => {
    const r = assembleFileSet([
      { file: '/m/a.yaml', pods: [pod('web', 'a1'), pod('web', 'a2')] },
      { file: '/m/b.yaml', pods: [pod('web', 'b1'), pod('db', 'b2')] },
    ]);
    expect(uids(r.pods)).toEqual(['a1', 'b2']);
    expect(r.duplicates.map((d) => [d.file, d.heldBy, d.pod.metadata?.uid])).toEqual([
      ['/m/a.yaml', '/m/a.yaml', 'a2'],
      ['/m/b.yaml', '/m/a.yaml', 'b1'],
    ]);
    expect(Object.fromEntries(r.owners)).toEqual({ 'default/web': '/m/a.yaml', 'default/db': '/m/b.yaml' });
  });

  it("keeps the name with the file that held it, although a newcomer's file sorts first", () => {
    const first = assembleFileSet([{ file: '/m/b.yaml', pods: [pod('web', 'b1')] }]);
    const next = assembleFileSet(
      [
        { file: '/m/0-dup.yaml', pods: [pod('web', 'dup')] },
        { file: '/m/b.yaml', pods: [pod('web', 'b1')] },
      ],
      first.owners,
    );
    expect(uids(next.pods)).toEqual(['b1']);
    expect(next.duplicates).toHaveLength(1);
    expect(next.duplicates[0]).toMatchObject({ file: '/m/0-dup.yaml', heldBy: '/m/b.yaml', fullName: 'default/web' });
    expect(next.owners.get('default/web')).toBe('/m/b.yaml');
  });

  it("keeps the name with its holder when the holder's pod changes (new UID) in the same file", () => {
    const owners = new Map([['default/web', '/m/b.yaml']]);
    const r = assembleFileSet(
      [
        { file: '/m/0-dup.yaml', pods: [pod('web', 'dup')] },
        { file: '/m/b.yaml', pods: [pod('web', 'b1-edited')] },
      ],
      owners,
    );
    expect(uids(r.pods)).toEqual(['b1-edited']);
  });

  it('lets the next file take the name over once the holder no longer offers it', () => {
    const owners = new Map([['default/web', '/m/b.yaml']]);
    const r = assembleFileSet(
      [
        { file: '/m/0-dup.yaml', pods: [pod('web', 'dup')] },
        { file: '/m/b.yaml', pods: [pod('other', 'b2')] },
      ],
      owners,
    );
    expect(uids(r.pods)).toEqual(['dup', 'b2']);
    expect(r.duplicates).toEqual([]);
    expect(r.owners.get('default/web')).toBe('/m/0-dup.yaml');
  });
});
