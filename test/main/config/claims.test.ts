// Unit tests of the claim controller (src/main/config/claims.ts) over the real object store and
// intake object source on a temporary root dir: the claim's directory made and removed, deletion
// protection (marked while a pod uses it, nothing finished before start()), ReadWriteOncePod.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { kClaimReconcileMs, newClaimController, type ClaimController } from '../../../src/main/config/claims.js';
import { newObjectStore } from '../../../src/main/config/object-store.js';
import { newIntakeObjectSource } from '../../../src/main/config/source-intake-objects.js';
import type { Pod } from '../../../src/shared/api.js';
import { normalizeConfigObject, type ConfigObject } from '../../../src/shared/config-objects.js';
import { claimDir, type PersistentVolumeClaim } from '../../../src/shared/pvc.js';
import { waitFor } from '../../support/docker.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';

const dirs: string[] = [];
const controllers: ClaimController[] = [];
afterEach(async () => {
  for (const c of controllers.splice(0)) c.stop();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const claim = (name: string, mode = 'ReadWriteOnce') =>
  normalizeConfigObject({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: [mode], resources: { requests: { storage: '1Gi' } } },
  }).object as ConfigObject;
const podOf = (name: string, claimName: string, phase = 'Running'): Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { containers: [], volumes: [{ name: 'v', persistentVolumeClaim: { claimName } }] },
  status: { phase },
});

async function setup() {
  const rootDir = await mkdtemp(join(tmpdir(), 'kts-claims-'));
  dirs.push(rootDir);
  const objects = newObjectStore();
  const intakeObjects = newIntakeObjectSource({
    rootDir,
    logger: pino({ level: 'silent' }),
    onUpdate: (u) => objects.apply(u),
    owner: (k, ns, n) => objects.owner(k, ns, n),
    current: (k, ns, n) => objects.get(k, ns, n),
  });
  const pods: Pod[] = [];
  const clock = new FakeClock(Date.parse('2026-12-07T10:00:00.600Z'));
  const claims = newClaimController({ rootDir, logger: pino({ level: 'silent' }), objects, intakeObjects, pods: () => pods, clock });
  controllers.push(claims);
  await intakeObjects.start();
  const dirOf = (name: string) => claimDir(rootDir, objects.get('PersistentVolumeClaim', 'default', name) as PersistentVolumeClaim);
  const exists = (p: string) =>
    stat(p).then(
      () => true,
      () => false,
    );
  return { objects, intakeObjects, pods, claims, dirOf, exists, clock };
}

describe('claim controller', () => {
  it('makes the directory of a new claim and removes it with the claim no pod uses', async () => {
    const { objects, intakeObjects, claims, dirOf, exists } = await setup();
    claims.start();
    await intakeObjects.create([claim('a')]);
    const dir = dirOf('a');
    await waitFor(() => exists(dir), { timeoutMs: 10_000, description: 'directory made' });
    await claims.remove('default', 'a');
    expect(objects.get('PersistentVolumeClaim', 'default', 'a')).toBeUndefined();
    await waitFor(async () => !(await exists(dir)), { timeoutMs: 10_000, description: 'directory removed' });
  });

  it('marks a claim in use deleted, keeps the mark over a replace, and finishes once no pod uses it — never before start()', async () => {
    const { objects, intakeObjects, pods, claims, dirOf, exists, clock } = await setup();
    await intakeObjects.create([claim('b')]);
    const dir = dirOf('b');
    await waitFor(() => exists(dir), { timeoutMs: 10_000, description: 'directory made' });
    // Before start(): no pod is known yet, and still the claim is only marked.
    const marked = await claims.remove('default', 'b');
    expect(marked.metadata?.deletionTimestamp).toBe('2026-12-07T10:00:00Z'); // the clock's time, whole seconds
    const { deletionTimestamp: _d, resourceVersion: _rv, ...meta } = objects.get('PersistentVolumeClaim', 'default', 'b')!.metadata!;
    await intakeObjects.replace({ ...objects.get('PersistentVolumeClaim', 'default', 'b')!, metadata: meta } as ConfigObject);
    expect(objects.get('PersistentVolumeClaim', 'default', 'b')?.metadata?.deletionTimestamp).toBe(marked.metadata?.deletionTimestamp);
    pods.push(podOf('user', 'b'));
    claims.start();
    // In use: the controller's passes leave it.
    clock.step(3 * kClaimReconcileMs);
    await flush();
    expect(objects.get('PersistentVolumeClaim', 'default', 'b')).toBeDefined();
    expect(await exists(dir)).toBe(true);
    pods[0] = podOf('user', 'b', 'Succeeded');
    clock.step(kClaimReconcileMs);
    await waitFor(() => objects.get('PersistentVolumeClaim', 'default', 'b') === undefined, {
      timeoutMs: 10_000,
      description: 'claim gone',
    });
    await waitFor(async () => !(await exists(dir)), { timeoutMs: 10_000, description: 'directory removed' });
  });

  it('ReadWriteOncePod: the first pod holds the claim; a second is refused until the first is done', async () => {
    const { intakeObjects, pods, claims } = await setup();
    claims.start();
    await intakeObjects.create([claim('solo', 'ReadWriteOncePod'), claim('shared', 'ReadWriteMany')]);
    const first = podOf('first', 'solo');
    const second = podOf('second', 'solo');
    pods.push(first, second);
    expect(claims.configObjectsFor(first)?.claimsRefused).toBeUndefined();
    expect(claims.configObjectsFor(second)?.claimsRefused).toEqual({
      solo: 'persistentvolumeclaim "solo" has the ReadWriteOncePod access mode and is already in use by pod "first"',
    });
    expect(claims.configObjectsFor(first)?.claims?.solo?.metadata?.name).toBe('solo');
    pods[0] = podOf('first', 'solo', 'Failed');
    expect(claims.configObjectsFor(second)?.claimsRefused).toBeUndefined();
    expect(claims.configObjectsFor(podOf('third', 'shared'))?.claimsRefused).toBeUndefined();
    expect(claims.configObjectsFor(podOf('fourth', 'shared'))?.claimsRefused).toBeUndefined();
  });
});
