import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newObjectStore } from '../../../src/main/config/object-store.js';
import { kIntakeObjectsDirName, newIntakeObjectSource } from '../../../src/main/config/source-intake-objects.js';
import { normalizeConfigObject, type ConfigObject } from '../../../src/shared/config-objects.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function setup() {
  const rootDir = await mkdtemp(join(tmpdir(), 'kts-intake-objects-'));
  dirs.push(rootDir);
  const store = newObjectStore();
  const make = () => newIntakeObjectSource({ rootDir, logger: pino({ level: 'silent' }), onUpdate: (u) => store.apply(u), owner: (k, ns, n) => store.owner(k, ns, n) });
  const source = make();
  await source.start();
  return { rootDir, store, source, make };
}
const obj = (raw: unknown) => normalizeConfigObject(raw).object as ConfigObject;

describe('IntakeObjectSource', () => {
  it('stores objects durably (mode 0600), restores them at start, refuses an existing name with 409', async () => {
    const { rootDir, store, source, make } = await setup();
    await source.create([obj({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' }, stringData: { k: 'v' } })]);
    const dir = join(rootDir, kIntakeObjectsDirName);
    expect(await readdir(dir)).toEqual(['secret_ns_s.json']);
    expect((await stat(join(dir, 'secret_ns_s.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(dir, 'secret_ns_s.json'), 'utf8')).data).toEqual({ k: Buffer.from('v').toString('base64') });
    await expect(source.create([obj({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } })])).rejects.toMatchObject({ code: 'ERR_ALREADY_EXISTS', message: 'secrets "s" already exists' });
    const restoredStore = newObjectStore();
    const again = newIntakeObjectSource({ rootDir, logger: pino({ level: 'silent' }), onUpdate: (u) => restoredStore.apply(u), owner: () => undefined });
    await again.start();
    expect(restoredStore.get('Secret', 'ns', 's')).toBeDefined();
    expect(store.owner('Secret', 'ns', 's')).toBe('api');
    void make;
  });

  it('replace honours immutable, remove deletes the file; an absent one is 404, another source\'s 403', async () => {
    const { rootDir, store, source } = await setup();
    await source.create([obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' }, immutable: true })]);
    await expect(source.replace(obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '2' }, immutable: true }))).rejects.toMatchObject({ code: 'ERR_INVALID_MANIFEST' });
    await source.remove('ConfigMap', 'default', 'c');
    expect(await readdir(join(rootDir, kIntakeObjectsDirName))).toEqual([]);
    expect(store.get('ConfigMap', 'default', 'c')).toBeUndefined();
    await expect(source.remove('ConfigMap', 'default', 'c')).rejects.toMatchObject({ code: 'ERR_NOT_FOUND', message: 'configmaps "c" not found' });
    store.apply({ source: 'file', op: 'SET', objects: [obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f' } })] });
    await expect(source.remove('ConfigMap', 'default', 'f')).rejects.toMatchObject({ code: 'ERR_FORBIDDEN' });
    await expect(source.create([obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f' } })])).rejects.toMatchObject({ code: 'ERR_ALREADY_EXISTS' });
  });
});

// Issue #38: names of up to 253 characters fit in a file name; a FIFO in the store never wedges the restore.
describe('IntakeObjectSource files (issue #38)', () => {
  it('stores, restores and removes a Secret of a 253-character name', async () => {
    const { rootDir, source } = await setup();
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    await source.create([obj({ apiVersion: 'v1', kind: 'Secret', metadata: { name: long, namespace: 'ns' }, stringData: { k: 'v' } })]);
    const restored = newObjectStore();
    await newIntakeObjectSource({ rootDir, logger: pino({ level: 'silent' }), onUpdate: (u) => restored.apply(u), owner: () => undefined }).start();
    expect(restored.get('Secret', 'ns', long)).toBeDefined();
    await source.remove('Secret', 'ns', long);
    expect(await readdir(join(rootDir, kIntakeObjectsDirName))).toEqual([]);
  });

  it('a FIFO in intake-objects/ is set aside without being opened; the restore finishes', async () => {
    const { rootDir } = await setup();
    execFileSync('mkfifo', [join(rootDir, kIntakeObjectsDirName, 'secret_ns_fifo.json')]);
    const restored = newObjectStore();
    await newIntakeObjectSource({ rootDir, logger: pino({ level: 'silent' }), onUpdate: (u) => restored.apply(u), owner: () => undefined }).start();
    expect(await readdir(join(rootDir, kIntakeObjectsDirName))).toEqual([]);
    expect((await readdir(join(rootDir, 'intake-set-aside'))).length).toBe(1);
  });
});
