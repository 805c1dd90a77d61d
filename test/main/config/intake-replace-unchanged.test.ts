// Issue 39 item 10: a replace of an intake pod with the same content (a no-op PUT, the dry-run
// PATCH of `kubectl diff`, a pod read back with its resourceVersion) keeps its config.hash and
// config.seen; a real change gets a new hash and the time it was seen.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newIntakeSource } from '../../../src/main/config/source-intake.js';
import type { Pod } from '../../../src/shared/api.js';
import { applyPodDefaults } from '../../../src/shared/defaults.js';
import { newLogger } from '../../../src/shared/logging.js';
import { FakeClock } from '../../fakes/fake-clock.js';

let root: string;
const clock = new FakeClock(Date.parse('2026-11-30T01:00:00Z'));
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'intake-replace-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

it('keeps config.hash and config.seen for an unchanged pod and on a dry run, and renews them for a real change', async () => {
  const s = newIntakeSource(
    { rootDir: root, nodeName: 'node1' },
    { logger: newLogger('silent'), onUpdate: () => {}, holder: () => undefined, clock },
  );
  await s.start();
  const [stored] = await s.submit([
    applyPodDefaults({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
    }),
  ]);
  const before = stored.metadata!.annotations!;
  clock.step(60_000);
  // As the API hands it back: with a resourceVersion and a status.
  const readBack: Pod = { ...stored, metadata: { ...stored.metadata, resourceVersion: '1234' }, status: { phase: 'Running' } };
  for (const dryRun of [true, false]) {
    const same = await s.replace('default', 'web', readBack, { dryRun });
    expect(same.metadata?.annotations).toEqual(before);
    expect(same.metadata?.resourceVersion).toBeUndefined();
  }
  const relabelled = { ...readBack, metadata: { ...readBack.metadata, labels: { v: '2' } } };
  // A dry run of a change answers with the node's annotations as they are (kubectl diff shows only the change).
  expect((await s.replace('default', 'web', relabelled, { dryRun: true })).metadata?.annotations).toEqual(before);
  const changed = await s.replace('default', 'web', relabelled);
  expect(changed.metadata?.annotations?.['kubernetes.io/config.hash']).not.toBe(before['kubernetes.io/config.hash']);
  expect(changed.metadata?.annotations?.['kubernetes.io/config.seen']).toBe(new Date(clock.now()).toISOString());
});
