import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { admitServiceAccount } from '../../../src/shared/service-account-admission.js';
import { intakeFileName, newIntakeSource, writeFilesDurably, type IntakeSource } from '../../../src/main/config/source-intake.js';
import { intakeFileNames } from '../../../src/main/config/intake-pod-files.js';
import type { Pod } from '../../../src/shared/api.js';
import { applyPodDefaults } from '../../../src/shared/defaults.js';
import { newLogger } from '../../../src/shared/logging.js';
import type { PodUpdate } from '../../../src/shared/pod-update.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const pod = (name: string, uid?: string, image = 'kubelet-ts/busybox:1.35'): Pod =>
  applyPodDefaults({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(uid ? { uid } : {}) },
    spec: { containers: [{ name: 'main', image }] },
  });

let root: string;
let updates: PodUpdate[];
let held: Map<string, { uid: string; source: string }>;

function source(): IntakeSource {
  return newIntakeSource(
    { rootDir: root, nodeName: 'node1' },
    {
      logger: newLogger('silent'),
      onUpdate: (u) => updates.push(u),
      holder: (n) => held.get(n),
      clock: new FakeClock(Date.parse('2026-11-30T01:00:00Z')),
    },
  );
}

/** filesOf: the store's file names of `pods` (two per pod), sorted. */
const filesOf = (pods: Pod[]) => pods.flatMap((p) => intakeFileNames(p.metadata!.uid!)).sort();

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'intake-'));
  updates = [];
  held = new Map();
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('IntakeSource', () => {
  it('sends an empty SET at start when nothing is stored', async () => {
    await source().start();
    expect(updates).toEqual([{ op: 'SET', source: 'api', pods: [] }]);
  });

  it('assigns a new UUID, keeps a given uid and the name, sets the api annotations, persists, then sends ADD', async () => {
    const s = source();
    await s.start();
    const stored = await s.submit([pod('web'), pod('db', 'my-uid-1')]);
    expect(stored[0].metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(stored[1].metadata?.uid).toBe('my-uid-1');
    expect(stored[0].metadata?.name).toBe('web');
    expect(stored[0].metadata?.annotations).toMatchObject({
      'kubernetes.io/config.source': 'api',
      'kubernetes.io/config.seen': '2026-11-30T01:00:00.000Z',
    });
    expect(stored[0].metadata?.annotations?.['kubernetes.io/config.hash']).toMatch(/^[0-9a-f]{32}$/);
    expect(stored[0].metadata?.creationTimestamp).toBe('2026-11-30T01:00:00.000Z');
    expect(stored[0].spec?.nodeName).toBe('node1');
    expect(updates.at(-1)).toEqual({ op: 'ADD', source: 'api', pods: stored });
    const files = await readdir(join(root, 'intake'));
    expect(files.sort()).toEqual(filesOf(stored));
    expect(JSON.parse(await readFile(join(root, 'intake', intakeFileName(stored[0])), 'utf8'))).toEqual(stored[0]);
  });

  it("admits as the ServiceAccount plugin: serviceAccountName default and the kube-api-access volume; a replace keeps the volume's name, and adds none to a pod stored without one", async () => {
    const s = source();
    await s.start();
    const [stored] = await s.submit([pod('sa')]);
    expect(stored.spec?.serviceAccountName).toBe('default');
    const vol = stored.spec?.volumes?.find((v) => v.name.startsWith('kube-api-access-'))?.name;
    expect(vol).toMatch(/^kube-api-access-[a-z0-9]{5}$/);
    expect(stored.spec?.containers[0].volumeMounts).toEqual([
      { name: vol, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
    ]);
    // A PUT of the bare manifest: the same volume and mount, so no container changes.
    const replaced = await s.replace('default', 'sa', pod('sa'));
    expect(replaced.spec?.volumes?.map((v) => v.name)).toEqual([vol]);
    expect(replaced.spec?.containers[0].volumeMounts).toEqual(stored.spec?.containers[0].volumeMounts);
    // automountServiceAccountToken: false mounts nothing.
    const [off] = await s.submit([{ ...pod('off'), spec: { ...pod('off').spec!, automountServiceAccountToken: false } }]);
    expect(off.spec?.volumes ?? []).toEqual([]);
    expect(off.spec?.serviceAccountName).toBe('default');
    const again = await s.replace('default', 'off', pod('off'));
    expect(again.spec?.volumes ?? []).toEqual([]);
  });

  it('refuses a pod bound to another node (spec.nodeName), storing nothing, and accepts its own name or none', async () => {
    const s = source();
    await s.start();
    const other = (name: string, nodeName: string): Pod => ({ ...pod(name), spec: { ...pod(name).spec!, nodeName } });
    await expect(s.submit([pod('web'), other('db', 'other-node')])).rejects.toMatchObject({
      errors: [
        {
          field: '[1].spec.nodeName',
          type: 'Invalid value',
          value: 'other-node',
          detail: 'must be empty or this node\'s name "node1": the pod is bound to another node',
        },
      ],
    });
    expect(s.pods()).toEqual([]);
    await expect(readdir(join(root, 'intake'))).resolves.toEqual([]);
    const [mine] = await s.submit([other('db', 'node1')]);
    expect(mine.spec?.nodeName).toBe('node1');
    await expect(s.replace('default', 'db', other('db', 'other-node'))).rejects.toMatchObject({
      errors: [{ field: 'spec.nodeName', value: 'other-node' }],
    });
    expect(s.get('default', 'db')?.spec?.nodeName).toBe('node1');
  });

  it('restores the stored pods with the same UIDs after a restart', async () => {
    const s = source();
    await s.start();
    const [web] = await s.submit([pod('web')]);
    updates = [];
    const again = source();
    await again.start();
    expect(updates).toEqual([{ op: 'SET', source: 'api', pods: [web] }]);
    expect(again.get('default', 'web')?.metadata?.uid).toBe(web.metadata?.uid);
  });

  it('removes leftover temp files and skips a broken file at start (leaving it in place)', async () => {
    const dir = join(root, 'intake');
    const s = source();
    await s.start();
    const ok = await s.submit([pod('ok')]);
    await writeFile(join(dir, '.default_x.json.abcd.tmp'), '{"half');
    await writeFile(
      join(dir, 'default_broken.json'),
      '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "broken"}, "spec": {"containers": []}}',
      { mode: 0o600 },
    );
    updates = [];
    await source().start();
    expect((updates[0] as { pods: Pod[] }).pods.map((p) => p.metadata?.name)).toEqual(['ok']);
    expect((await readdir(dir)).sort()).toEqual(['default_broken.json', ...filesOf(ok)]);
  });

  it('refuses a taken name with ERR_ALREADY_EXISTS and writes nothing of the batch (all or nothing)', async () => {
    const s = source();
    await s.start();
    held.set('default/static-n1', { uid: 'u-static', source: 'file' });
    await expect(s.submit([pod('fresh'), pod('static-n1')])).rejects.toMatchObject({
      code: 'ERR_ALREADY_EXISTS',
      message: expect.stringContaining('source file'),
    });
    const web = await s.submit([pod('web')]);
    await expect(s.submit([pod('web')])).rejects.toMatchObject({ code: 'ERR_ALREADY_EXISTS' });
    expect((await readdir(join(root, 'intake'))).sort()).toEqual(filesOf(web));
  });

  it('refuses an unsafe uid with ERR_INVALID_MANIFEST naming metadata.uid, and a taken uid with ERR_ALREADY_EXISTS', async () => {
    const s = source();
    await s.start();
    await expect(s.submit([pod('a', '../../etc')])).rejects.toMatchObject({
      code: 'ERR_INVALID_MANIFEST',
      errors: [expect.objectContaining({ field: 'metadata.uid' })],
    });
    await s.submit([pod('b', 'u1')]);
    await expect(s.submit([pod('c', 'u1')])).rejects.toMatchObject({ code: 'ERR_ALREADY_EXISTS' });
  });

  it('serialises concurrent submits of one name: exactly one wins', async () => {
    const s = source();
    await s.start();
    const results = await Promise.allSettled([s.submit([pod('race')]), s.submit([pod('race')])]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('replaces a pod keeping its UID and creationTimestamp, persists it, and sends UPDATE', async () => {
    const s = source();
    await s.start();
    const [web] = await s.submit([pod('web')]);
    const replaced = await s.replace('default', 'web', pod('web', undefined, 'kubelet-ts/busybox:1.36'));
    expect(replaced.metadata?.uid).toBe(web.metadata?.uid);
    expect(replaced.spec?.containers[0].image).toBe('kubelet-ts/busybox:1.36');
    expect(replaced.metadata?.annotations?.['kubernetes.io/config.hash']).not.toBe(
      web.metadata?.annotations?.['kubernetes.io/config.hash'],
    );
    expect(updates.at(-1)).toEqual({ op: 'UPDATE', source: 'api', pods: [replaced] });
    expect(JSON.parse(await readFile(join(root, 'intake', intakeFileName(web)), 'utf8')).spec.containers[0].image).toBe(
      'kubelet-ts/busybox:1.36',
    );
  });

  it('a dry-run submit or replace (dryRun=All) answers as stored and runs the checks, but writes no file and sends no update', async () => {
    const s = source();
    await s.start();
    const [web] = await s.submit([pod('web')]);
    const files = await readdir(join(root, 'intake'));
    updates = [];
    const [dry] = await s.submit([pod('dry')], { dryRun: true });
    expect(dry.metadata).toMatchObject({ name: 'dry', uid: expect.any(String), annotations: { 'kubernetes.io/config.source': 'api' } });
    await expect(s.submit([pod('web')], { dryRun: true })).rejects.toMatchObject({ code: 'ERR_ALREADY_EXISTS' });
    const replaced = await s.replace('default', 'web', pod('web', undefined, 'kubelet-ts/busybox:1.36'), { dryRun: true });
    expect(replaced).toMatchObject({ metadata: { uid: web.metadata?.uid }, spec: { containers: [{ image: 'kubelet-ts/busybox:1.36' }] } });
    expect(await readdir(join(root, 'intake'))).toEqual(files);
    expect(updates).toEqual([]);
    expect(s.get('default', 'dry')).toBeUndefined();
    expect(s.get('default', 'web')).toEqual(web);
  });

  it('answers replace and remove of an unknown pod with ERR_NOT_FOUND, and of another source pod with Forbidden', async () => {
    const s = source();
    await s.start();
    await expect(s.replace('default', 'nope', pod('nope'))).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    await expect(s.remove('default', 'nope')).rejects.toMatchObject({ code: 'ERR_NOT_FOUND', message: 'pods "nope" not found' });
    held.set('default/static-n1', { uid: 'u', source: 'file' });
    await expect(s.remove('default', 'static-n1')).rejects.toMatchObject({ code: 'ERR_FORBIDDEN', statusReason: 'Forbidden' });
  });

  it('refuses a replace whose uid differs (Conflict)', async () => {
    const s = source();
    await s.start();
    await s.submit([pod('web')]);
    await expect(s.replace('default', 'web', pod('web', 'other'))).rejects.toMatchObject({
      code: 'ERR_CONFLICT',
      statusReason: 'Conflict',
    });
  });

  it('a submit that arrives while start() restores waits for it: its file is not taken for a leftover temp file, its ADD follows the SET', async () => {
    const s = source();
    const started = s.start();
    const [early] = await s.submit([pod('early')]);
    await started;
    expect(updates.map((u) => u.op)).toEqual(['SET', 'ADD']);
    expect((await readdir(join(root, 'intake'))).sort()).toEqual(filesOf([early]));
    expect(s.get('default', 'early')?.metadata?.uid).toBe(early.metadata?.uid);
  });

  it('removes a pod from disk and sends REMOVE with the pod marked deleted, carrying its grace period', async () => {
    const s = source();
    await s.start();
    const [web] = await s.submit([pod('web')]);
    await s.remove('default', 'web', 4);
    const deleted = { ...web, metadata: { ...web.metadata, deletionTimestamp: '2026-11-30T01:00:00Z', deletionGracePeriodSeconds: 4 } }; // the clock's time
    expect(updates.at(-1)).toEqual({ op: 'REMOVE', source: 'api', pods: [deleted] });
    expect(await readdir(join(root, 'intake'))).toEqual([]);
    expect(s.get('default', 'web')).toBeUndefined();
  });
});

describe('writeFilesDurably', () => {
  it('leaves no file behind when one of the batch cannot be written', async () => {
    const dir = join(root, 'd');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir));
    await expect(
      writeFilesDurably(dir, [
        { name: 'a.json', content: '1' },
        { name: 'sub/b.json', content: '2' },
      ]),
    ).rejects.toThrow();
    expect(await readdir(dir)).toEqual([]);
  });
});

// Issue #11 finding 4: a batch that cannot be admitted, or that would pass the store's byte
// limit, is refused whole with 403 before anything is written.
describe('IntakeSource bounds', () => {
  const bounded = (opts: { free?: number; maxStoreBytes?: number }) =>
    newIntakeSource(
      { rootDir: root, nodeName: 'node1', maxStoreBytes: opts.maxStoreBytes },
      {
        logger: newLogger('silent'),
        onUpdate: (u) => updates.push(u),
        holder: () => undefined,
        freePodSlots: opts.free === undefined ? undefined : () => opts.free!,
      },
    );

  it('refuses a batch needing more pods than the free slots with 403 exceeded quota saying how many fit, and writes nothing', async () => {
    const s = bounded({ free: 3 });
    await s.start();
    updates = [];
    const err = await s.submit(['a', 'b', 'c', 'd'].map((n) => pod(n))).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_FORBIDDEN', statusReason: 'Forbidden' });
    expect((err as Error).message).toMatch(/exceeded quota.*requested: pods=4, free: pods=3; 3 of the 4 would fit/);
    expect(await readdir(join(root, 'intake'))).toEqual([]);
    expect(updates).toEqual([]);
    expect(s.pods()).toEqual([]);
    // A batch that fits is admitted.
    expect(await s.submit(['a', 'b', 'c'].map((n) => pod(n)))).toHaveLength(3);
  });

  it('refuses a write that would take the store past maxStoreBytes, counting restored files, replaced files and deletes', async () => {
    // As stored: with the service account volume admission adds.
    const one = Buffer.byteLength(`${JSON.stringify(admitServiceAccount(pod('a'), { volumeName: 'kube-api-access-xxxxx' }), null, 2)}\n`);
    const s = bounded({ maxStoreBytes: 2 * one + 800 }); // room for two small pods (with their annotations), not three
    await s.start();
    const ab = await s.submit([pod('a'), pod('b')]);
    updates = [];
    const err = await s.submit([pod('c')]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_FORBIDDEN' });
    expect((err as Error).message).toMatch(
      /pods "c" is forbidden: exceeded quota: intake store, requested: \d+ bytes, used: \d+ bytes, limited: \d+ bytes \(--intake-store-bytes\)/,
    );
    expect((await readdir(join(root, 'intake'))).sort()).toEqual(filesOf(ab));
    expect(updates).toEqual([]);
    // A replace by a much bigger pod is refused too; the stored one stays.
    const huge = pod('a', undefined, `kubelet-ts/busybox:${'1'.repeat(2 * one)}`);
    await expect(s.replace('default', 'a', huge)).rejects.toMatchObject({ code: 'ERR_FORBIDDEN' });
    expect(s.get('default', 'a')?.spec?.containers[0].image).toBe('kubelet-ts/busybox:1.35');
    // After a restart the stored files count; after a delete there is room again.
    const again = bounded({ maxStoreBytes: 2 * one + 800 });
    await again.start();
    await expect(again.submit([pod('c')])).rejects.toMatchObject({ code: 'ERR_FORBIDDEN' });
    await again.remove('default', 'b');
    expect(await again.submit([pod('c')])).toHaveLength(1);
  });
});
