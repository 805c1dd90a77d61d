// Issue #38 findings 9 and 10 (first item), unit level: what the intake store's restore trusts,
// its two copies per pod, and file names that fit whatever the pod's name.
import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { intakeFileNames } from '../../../src/main/config/intake-pod-files.js';
import { kIntakeSetAsideDirName } from '../../../src/main/config/intake-store.js';
import { newIntakeSource, type IntakeSource } from '../../../src/main/config/source-intake.js';
import type { Pod } from '../../../src/shared/api.js';
import { applyPodDefaults } from '../../../src/shared/defaults.js';
import { newLogger } from '../../../src/shared/logging.js';
import type { PodEventRecord } from '../../../src/shared/sync-tasks.js';
import type { PodUpdate } from '../../../src/shared/pod-update.js';

const pod = (name: string, uid?: string): Pod =>
  applyPodDefaults({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(uid ? { uid } : {}) },
    spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
  });

let root: string;
let updates: PodUpdate[];
let events: { pod: Pod; event: PodEventRecord }[];

function source(): IntakeSource {
  return newIntakeSource(
    { rootDir: root, nodeName: 'node1' },
    {
      logger: newLogger('silent'),
      onUpdate: (u) => updates.push(u),
      holder: () => undefined,
      recordEvent: (p, e) => events.push({ pod: p, event: e }),
    },
  );
}

/** restart: a new source on the same root dir, started; returns it and the names it restored. */
async function restart(): Promise<{ s: IntakeSource; names: string[] }> {
  updates = [];
  const s = source();
  await s.start();
  return { s, names: (updates[0] as { pods: Pod[] }).pods.map((p) => p.metadata!.name!).sort() };
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'intake-files-'));
  updates = [];
  events = [];
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const dir = () => join(root, 'intake');

describe('intake store restore (issue #38 finding 9)', () => {
  it('a truncated or torn copy: the pod is restored from its twin, and the copy is mended', async () => {
    const s = source();
    await s.start();
    const [a, b] = await s.submit([pod('a'), pod('b')]);
    const [a1] = intakeFileNames(a.metadata!.uid!);
    const [, b2] = intakeFileNames(b.metadata!.uid!);
    await truncate(join(dir(), a1), 10);
    await writeFile(join(dir(), b2), '');
    const { s: again, names } = await restart();
    expect(names).toEqual(['a', 'b']);
    expect(again.heldUids().size).toBe(0);
    expect(JSON.parse(await readFile(join(dir(), a1), 'utf8'))).toEqual(a);
    expect(JSON.parse(await readFile(join(dir(), b2), 'utf8'))).toEqual(b);
  });

  it('no readable copy: the pod is not restored, its UID is held, an event says so, the files stay in place', async () => {
    const s = source();
    await s.start();
    const [a] = await s.submit([pod('a')]);
    for (const n of intakeFileNames(a.metadata!.uid!)) await truncate(join(dir(), n), 5);
    const { s: again, names } = await restart();
    expect(names).toEqual([]);
    expect([...again.heldUids()]).toEqual([a.metadata!.uid]);
    expect(events).toEqual([
      expect.objectContaining({
        event: expect.objectContaining({ type: 'Warning', reason: 'FailedRestore', message: expect.stringContaining('left alone') }),
      }),
    ]);
    expect((await readdir(dir())).sort()).toEqual(intakeFileNames(a.metadata!.uid!).sort());
  });

  it('a copy of another owner or writable by others is refused and set aside with an event; the pod comes from its trusted twin', async () => {
    const s = source();
    await s.start();
    const [a, b] = await s.submit([pod('a'), pod('b')]);
    const [a1, a2] = intakeFileNames(a.metadata!.uid!);
    const [b1, b2] = intakeFileNames(b.metadata!.uid!);
    // a: one copy edited (hostPath added) and made 0666; b: both copies handed to another user.
    const tampered = { ...a, spec: { ...a.spec!, volumes: [{ name: 'host', hostPath: { path: '/' } }] } };
    await writeFile(join(dir(), a1), JSON.stringify(tampered));
    await chmod(join(dir(), a1), 0o666);
    await chown(join(dir(), b1), 4242, 4242);
    await chown(join(dir(), b2), 4242, 4242);
    const { s: again, names } = await restart();
    expect(names).toEqual(['a']);
    // Restored from the trusted twin: its volumes (the service account's, added at admission), not the hostPath.
    expect(again.get('default', 'a')?.spec?.volumes).toEqual(a.spec!.volumes);
    expect(again.get('default', 'a')?.spec?.volumes?.some((v) => v.hostPath)).toBe(false);
    expect([...again.heldUids()]).toEqual([b.metadata!.uid]);
    const aside = await readdir(join(root, kIntakeSetAsideDirName));
    expect(aside.filter((n) => n.startsWith(a1)).length).toBe(1);
    expect(aside.filter((n) => n.startsWith(b1) || n.startsWith(b2)).length).toBe(2);
    expect(
      events
        .filter((e) => e.event.reason === 'FailedRestore' && e.event.message.includes('Refused'))
        .map((e) => e.pod.metadata?.name)
        .sort(),
    ).toEqual(['a', b.metadata!.uid, b.metadata!.uid].sort());
    // The refused copy of a was mended from the trusted one.
    expect(JSON.parse(await readFile(join(dir(), a1), 'utf8'))).toEqual(a);
    expect(a2).toBeTruthy();
  });

  it('a FIFO, a symlink or a directory in intake/ is skipped without being opened and set aside; the restore finishes', async () => {
    const s = source();
    await s.start();
    await s.submit([pod('a')]);
    execFileSync('mkfifo', [join(dir(), 'default_fifo.json')]);
    execFileSync('mkfifo', [join(dir(), 'pod~fifo-uid.json')]);
    await writeFile(join(root, 'elsewhere.json'), JSON.stringify(pod('linked', 'l1')), { mode: 0o600 });
    await symlink(join(root, 'elsewhere.json'), join(dir(), 'pod~l1.json'));
    await mkdir(join(dir(), 'default_dir.json'));
    const { names } = await restart();
    expect(names).toEqual(['a']);
    expect((await readdir(join(root, kIntakeSetAsideDirName))).length).toBe(4);
  });

  it('a file of the old naming ({namespace}_{name}.json) is restored and rewritten as two copies', async () => {
    await mkdir(dir(), { recursive: true, mode: 0o700 });
    const old = {
      ...pod('legacy', 'uid-legacy'),
      metadata: { ...pod('legacy', 'uid-legacy').metadata, namespace: 'default', annotations: { 'kubernetes.io/config.source': 'api' } },
    };
    await writeFile(join(dir(), 'default_legacy.json'), JSON.stringify(old), { mode: 0o600 });
    const { s, names } = await restart();
    expect(names).toEqual(['legacy']);
    expect((await readdir(dir())).sort()).toEqual(intakeFileNames('uid-legacy').sort());
    await s.remove('default', 'legacy');
    expect(await readdir(dir())).toEqual([]);
  });
});

describe('intake store names (issue #38 finding 10)', () => {
  it('a pod name of 253 characters is stored, restored and removed (file names fit in 255 bytes)', async () => {
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(long).toHaveLength(253);
    const s = source();
    await s.start();
    expect(await s.submit([pod(long)], { dryRun: true })).toHaveLength(1);
    const [p] = await s.submit([pod(long)]);
    const { s: again, names } = await restart();
    expect(names).toEqual([long]);
    await again.remove('default', long);
    expect(await readdir(dir())).toEqual([]);
    expect(p.metadata?.name).toBe(long);
  });
});
