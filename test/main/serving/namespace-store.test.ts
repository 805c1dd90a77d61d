// The created-namespace store (src/main/serving/namespace-store.ts): what is added or removed is in
// <root-dir>/namespaces.json when the call resolves and is there after a new load; a file that is
// not a list of namespaces is set aside as namespaces.json.broken and the store starts empty.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newNamespaceStore } from '../../../src/main/serving/namespace-store.js';
import { newLogger } from '../../../src/shared/logging.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'kubelet-ts-ns-'));
  dirs.push(d);
  return d;
};

describe('namespace store', () => {
  it('keeps what was added, and forgets what was removed, across a reload', async () => {
    const dir = await tmp();
    const a = newNamespaceStore(dir, newLogger('silent'));
    await a.load();
    expect(a.list()).toEqual([]);
    const made = await a.add({ name: 'team-b', labels: { team: 'b' } });
    await a.add({ name: 'team-a' });
    expect(made).toMatchObject({ name: 'team-b', labels: { team: 'b' } });
    expect(made.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(made.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const b = newNamespaceStore(dir, newLogger('silent'));
    await b.load();
    expect(b.list().map((n) => n.name)).toEqual(['team-a', 'team-b']);
    expect(b.get('team-b')).toEqual(made);
    expect(await b.remove('team-b')).toBe(true);
    expect(await b.remove('team-b')).toBe(false);
    const c = newNamespaceStore(dir, newLogger('silent'));
    await c.load();
    expect(c.list().map((n) => n.name)).toEqual(['team-a']);
  });

  it('sets an unreadable file aside and starts empty', async () => {
    for (const text of ['{not json', '{"name":"x"}', '[{"name":"x","uid":1,"creationTimestamp":"t"}]']) {
      const dir = await tmp();
      await writeFile(join(dir, 'namespaces.json'), text);
      const s = newNamespaceStore(dir, newLogger('silent'));
      await s.load();
      expect(s.list()).toEqual([]);
      expect(await readFile(join(dir, 'namespaces.json.broken'), 'utf8')).toBe(text);
      expect(existsSync(join(dir, 'namespaces.json'))).toBe(false);
      await s.add({ name: 'fresh' });
      expect(JSON.parse(await readFile(join(dir, 'namespaces.json'), 'utf8'))).toHaveLength(1);
    }
  });

  it('does not keep a namespace the file could not take', async () => {
    const dir = join(await tmp(), 'missing-dir');
    const s = newNamespaceStore(dir, newLogger('silent'));
    await s.load();
    await expect(s.add({ name: 'x' })).rejects.toThrow(/ENOENT/);
    expect(s.list()).toEqual([]);
  });

  it('update replaces labels and annotations, keeps uid and creationTimestamp, stores a namespace not stored yet, and survives a reload (issue #38: kubectl label namespace)', async () => {
    const dir = await tmp();
    const a = newNamespaceStore(dir, newLogger('silent'));
    await a.load();
    const made = await a.add({ name: 'team-a', labels: { team: 'a' }, annotations: { note: 'x' } });
    const updated = await a.update({ name: 'team-a', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } });
    expect(updated).toEqual({
      name: 'team-a',
      uid: made.uid,
      creationTimestamp: made.creationTimestamp,
      labels: { 'pod-security.kubernetes.io/enforce': 'restricted' },
    });
    const inUse = await a.update({ name: 'default', labels: { 'pod-security.kubernetes.io/warn': 'restricted' } });
    expect(inUse.uid).toMatch(/^[0-9a-f-]{36}$/);
    const b = newNamespaceStore(dir, newLogger('silent'));
    await b.load();
    expect(b.get('team-a')).toEqual(updated);
    expect(b.get('default')).toEqual(inUse);
  });

  it('an update the file could not take changes nothing', async () => {
    const dir = await tmp();
    const s = newNamespaceStore(dir, newLogger('silent'));
    await s.load();
    const made = await s.add({ name: 'team-a', labels: { team: 'a' } });
    await rm(dir, { recursive: true, force: true });
    await expect(s.update({ name: 'team-a', labels: {} })).rejects.toThrow(/ENOENT/);
    await expect(s.update({ name: 'team-b' })).rejects.toThrow(/ENOENT/);
    expect(s.list()).toEqual([made]);
  });
});
