// The node's stored spec (src/main/node/node-spec.ts): a cordon is in <root-dir>/node-spec.json when
// setUnschedulable resolves and is read back by a new store (a restart); an unreadable file means
// not cordoned; a write that fails leaves the value as it was.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newNodeSpecStore } from '../../../src/main/node/node-spec.js';
import { newLogger } from '../../../src/shared/logging.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'kubelet-ts-node-spec-'));
  dirs.push(d);
  return d;
};

describe('node spec store', () => {
  it('keeps a cordon across a restart, and its end', async () => {
    const dir = await tmp();
    const a = newNodeSpecStore(dir, newLogger('silent'));
    expect(await a.unschedulable()).toBe(false);
    await a.setUnschedulable(true);
    expect(await a.unschedulable()).toBe(true);
    expect(await newNodeSpecStore(dir, newLogger('silent')).unschedulable()).toBe(true);
    await a.setUnschedulable(false);
    expect(await newNodeSpecStore(dir, newLogger('silent')).unschedulable()).toBe(false);
  });

  it('reads an unreadable file as not cordoned, and keeps the old value when a write fails', async () => {
    const dir = await tmp();
    await writeFile(join(dir, 'node-spec.json'), '{oops');
    expect(await newNodeSpecStore(dir, newLogger('silent')).unschedulable()).toBe(false);
    const gone = newNodeSpecStore(join(dir, 'missing'), newLogger('silent'));
    await expect(gone.setUnschedulable(true)).rejects.toThrow(/ENOENT/);
    expect(await gone.unschedulable()).toBe(false);
  });
});
