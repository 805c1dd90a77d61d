import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { FakeClock } from '../../fakes/fake-clock.js';
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
  const make = () =>
    newIntakeObjectSource({
      rootDir,
      logger: pino({ level: 'silent' }),
      onUpdate: (u) => store.apply(u),
      owner: (k, ns, n) => store.owner(k, ns, n),
    });
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
    expect(await readdir(dir)).toEqual(['secret_ns_s.json', 'secret_ns_s~2.json']);
    expect((await stat(join(dir, 'secret_ns_s.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'secret_ns_s~2.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(dir, 'secret_ns_s.json'), 'utf8')).data).toEqual({ k: Buffer.from('v').toString('base64') });
    await expect(
      source.create([obj({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } })]),
    ).rejects.toMatchObject({ code: 'ERR_ALREADY_EXISTS', message: 'secrets "s" already exists' });
    const restoredStore = newObjectStore();
    const again = newIntakeObjectSource({
      rootDir,
      logger: pino({ level: 'silent' }),
      onUpdate: (u) => restoredStore.apply(u),
      owner: () => undefined,
    });
    await again.start();
    expect(restoredStore.get('Secret', 'ns', 's')).toBeDefined();
    expect(store.owner('Secret', 'ns', 's')).toBe('api');
    void make;
  });

  it("replace honours immutable, remove deletes the file; an absent one is 404, another source's 403", async () => {
    const { rootDir, store, source } = await setup();
    await source.create([obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' }, immutable: true })]);
    await expect(
      source.replace(obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '2' }, immutable: true })),
    ).rejects.toMatchObject({ code: 'ERR_INVALID_MANIFEST' });
    await source.remove('ConfigMap', 'default', 'c');
    expect(await readdir(join(rootDir, kIntakeObjectsDirName))).toEqual([]);
    expect(store.get('ConfigMap', 'default', 'c')).toBeUndefined();
    await expect(source.remove('ConfigMap', 'default', 'c')).rejects.toMatchObject({
      code: 'ERR_NOT_FOUND',
      message: 'configmaps "c" not found',
    });
    store.apply({ source: 'file', op: 'SET', objects: [obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f' } })] });
    await expect(source.remove('ConfigMap', 'default', 'f')).rejects.toMatchObject({ code: 'ERR_FORBIDDEN' });
    await expect(source.create([obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f' } })])).rejects.toMatchObject({
      code: 'ERR_ALREADY_EXISTS',
    });
  });

  it('issue #39: a create gets a server uid and creationTimestamp; a stale resourceVersion or uid is 409; a dry run stores nothing', async () => {
    const { rootDir, store } = await setup();
    const source = newIntakeObjectSource({
      rootDir,
      logger: pino({ level: 'silent' }),
      onUpdate: (u) => store.apply(u),
      owner: () => undefined,
      current: (k, ns, n) => store.get(k, ns, n),
      clock: new FakeClock(Date.parse('2026-12-07T08:00:00.123Z')),
    });
    await source.start();
    const [made] = await source.create([
      obj({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c', uid: 'client-uid', creationTimestamp: '2001-01-01T00:00:00Z' },
        data: { a: '1' },
      }),
    ]);
    expect(made.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(made.metadata?.creationTimestamp).toBe('2026-12-07T08:00:00Z');
    const rv1 = store.get('ConfigMap', 'default', 'c')!.metadata!.resourceVersion!;
    expect(rv1).toBe(String(store.resourceVersion()));
    await source.replace(obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', resourceVersion: rv1 }, data: { a: '2' } }));
    const rv2 = store.get('ConfigMap', 'default', 'c')!.metadata!.resourceVersion!;
    expect(Number(rv2)).toBeGreaterThan(Number(rv1));
    await expect(
      source.replace(obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', resourceVersion: rv1 }, data: { a: 'stale' } })),
    ).rejects.toMatchObject({
      code: 'ERR_CONFLICT',
      message:
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again',
    });
    await expect(
      source.replace(obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', uid: 'other' }, data: { a: 'x' } })),
    ).rejects.toMatchObject({ code: 'ERR_CONFLICT' });
    await expect(source.remove('ConfigMap', 'default', 'c', { preconditions: { resourceVersion: rv1 } })).rejects.toMatchObject({
      code: 'ERR_CONFLICT',
    });
    // Stored files never hold a resourceVersion (the store stamps it at each start).
    expect(
      JSON.parse(await readFile(join(rootDir, kIntakeObjectsDirName, 'configmap_default_c.json'), 'utf8')).metadata.resourceVersion,
    ).toBeUndefined();
    await source.create([obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' } })], { dryRun: true });
    await source.replace(obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'dry' } }), { dryRun: true });
    await source.remove('ConfigMap', 'default', 'c', { dryRun: true });
    expect(await readdir(join(rootDir, kIntakeObjectsDirName))).toEqual(['configmap_default_c.json', 'configmap_default_c~2.json']);
    expect(store.get('ConfigMap', 'default', 'c')?.data).toEqual({ a: '2' });
    expect(store.resourceVersion()).toBe(Number(rv2));
  });

  it('issue #39: two copies; a torn first copy is restored from its twin and rewritten; a file of another name is replaced by the two', async () => {
    const { rootDir, source } = await setup();
    await source.create([obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } })]);
    const dir = join(rootDir, kIntakeObjectsDirName);
    await writeFile(join(dir, 'configmap_default_c.json'), '{"apiVersion":"v1","ki', { mode: 0o600 });
    await writeFile(
      join(dir, 'old-name.json'),
      JSON.stringify(obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'o' }, data: { b: '2' } })),
      { mode: 0o600 },
    );
    const restored = newObjectStore();
    await newIntakeObjectSource({
      rootDir,
      logger: pino({ level: 'silent' }),
      onUpdate: (u) => restored.apply(u),
      owner: () => undefined,
    }).start();
    expect(restored.get('ConfigMap', 'default', 'c')?.data).toEqual({ a: '1' });
    expect(restored.get('ConfigMap', 'default', 'o')?.data).toEqual({ b: '2' });
    expect((await readdir(dir)).sort()).toEqual([
      'configmap_default_c.json',
      'configmap_default_c~2.json',
      'configmap_default_o.json',
      'configmap_default_o~2.json',
    ]);
    expect(JSON.parse(await readFile(join(dir, 'configmap_default_c.json'), 'utf8')).data).toEqual({ a: '1' });
  });

  it('break 45 finding 4: the files may total maxStoreBytes: a create or replace past it is 403 exceeded quota and writes nothing; a remove frees its bytes', async () => {
    const { rootDir, store } = await setup();
    const cm = (name: string, bytes: number) =>
      obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'x'.repeat(bytes) } });
    // One copy of each counted: 3 objects of 10 KB fit in 32 KB, a fourth does not.
    const source = newIntakeObjectSource({
      rootDir: join(rootDir, 'q'),
      logger: pino({ level: 'silent' }),
      onUpdate: (u) => store.apply(u),
      owner: () => undefined,
      maxStoreBytes: 32 * 1024,
    });
    await source.start();
    for (const name of ['a', 'b', 'c']) await source.create([cm(name, 10 * 1024)]);
    await expect(source.create([cm('d', 10 * 1024)])).rejects.toMatchObject({
      code: 'ERR_FORBIDDEN',
      message: expect.stringMatching(
        /^configmaps "d" is forbidden: exceeded quota: intake object store, requested: \d+ bytes, used: \d+ bytes, limited: 32768 bytes/,
      ),
    });
    await expect(source.create([cm('d', 10 * 1024)], { dryRun: true })).rejects.toMatchObject({ code: 'ERR_FORBIDDEN' });
    await expect(source.replace(cm('c', 20 * 1024))).rejects.toMatchObject({ code: 'ERR_FORBIDDEN' });
    expect(store.get('ConfigMap', 'default', 'c')?.data?.k).toHaveLength(10 * 1024);
    expect((await readdir(join(rootDir, 'q', kIntakeObjectsDirName))).length).toBe(6);
    await source.replace(cm('c', 5 * 1024)); // replacing counts only the difference
    await source.remove('ConfigMap', 'default', 'a');
    await source.create([cm('d', 10 * 1024)]);
    expect(store.get('ConfigMap', 'default', 'd')).toBeDefined();
  });
});

// Issue #38: names of up to 253 characters fit in a file name; a FIFO in the store never wedges the restore.
describe('IntakeObjectSource files (issue #38)', () => {
  it('stores, restores and removes a Secret of a 253-character name', async () => {
    const { rootDir, source } = await setup();
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    await source.create([obj({ apiVersion: 'v1', kind: 'Secret', metadata: { name: long, namespace: 'ns' }, stringData: { k: 'v' } })]);
    const restored = newObjectStore();
    await newIntakeObjectSource({
      rootDir,
      logger: pino({ level: 'silent' }),
      onUpdate: (u) => restored.apply(u),
      owner: () => undefined,
    }).start();
    expect(restored.get('Secret', 'ns', long)).toBeDefined();
    await source.remove('Secret', 'ns', long);
    expect(await readdir(join(rootDir, kIntakeObjectsDirName))).toEqual([]);
  });

  it('a FIFO in intake-objects/ is set aside without being opened; the restore finishes', async () => {
    const { rootDir } = await setup();
    execFileSync('mkfifo', [join(rootDir, kIntakeObjectsDirName, 'secret_ns_fifo.json')]);
    const restored = newObjectStore();
    await newIntakeObjectSource({
      rootDir,
      logger: pino({ level: 'silent' }),
      onUpdate: (u) => restored.apply(u),
      owner: () => undefined,
    }).start();
    expect(await readdir(join(rootDir, kIntakeObjectsDirName))).toEqual([]);
    expect((await readdir(join(rootDir, 'intake-set-aside'))).length).toBe(1);
  });
});
