// readSettled: a manifest rewritten in place is read as the writer left it, not as the truncation
// left it (issue #11 finding 7); a file really emptied or changed is taken once it stops changing.
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kSettleMs, readManifestFile, readSettled } from '../../../src/main/config/manifest-read.js';

const kOld = 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n';
const kNew = 'apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n';

describe('readSettled', () => {
  let dir: string;
  let file: string;
  let prev: { contentHash: string };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-manifest-read-'));
    file = join(dir, 'pod.yaml');
    await writeFile(file, kOld);
    const read = await readManifestFile(file);
    if (read === 'not a file') throw new Error('expected a file');
    prev = { contentHash: read.hash };
  });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  it('an in-place rewrite whose write comes more than one settle period after the truncation is read with its new content', async () => {
    const fh = await open(file, 'w'); // O_TRUNC: empty from here...
    const written = new Promise<void>((resolve, reject) => {
      setTimeout(() => { fh.writeFile(kNew).then(() => fh.close()).then(resolve, reject); }, 3 * kSettleMs);
    });
    const read = await readSettled(file, prev, () => false);
    await written;
    expect(read).not.toBe('unsettled');
    expect((read as { text: string }).text).toBe(kNew);
  });

  it('a file emptied for good is taken as empty', async () => {
    await writeFile(file, '');
    const read = await readSettled(file, prev, () => false);
    expect((read as { text: string }).text).toBe('');
  });

  it('a file changed for good is taken with its new content', async () => {
    await writeFile(file, kNew);
    const read = await readSettled(file, prev, () => false);
    expect((read as { text: string }).text).toBe(kNew);
  });

  it('the content last accepted, read again, is taken at once', async () => {
    const read = await readSettled(file, prev, () => false);
    expect((read as { text: string }).text).toBe(kOld);
  });
});
