// readSettled: a manifest rewritten in place is read as the writer left it, not as the truncation
// left it (issue #11 finding 7); a file really emptied or changed is taken once it stops changing.
import { execFileSync } from 'node:child_process';
import { promises as fsPromises } from 'node:fs';
import { appendFile, mkdtemp, open, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { kMaxManifestBytes } from '../../../src/main/config/manifest-files.js';
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
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('an in-place rewrite whose write comes more than one settle period after the truncation is read with its new content', async () => {
    const fh = await open(file, 'w'); // O_TRUNC: empty from here...
    const written = new Promise<void>((resolve, reject) => {
      setTimeout(() => {
        fh.writeFile(kNew)
          .then(() => fh.close())
          .then(resolve, reject);
      }, 3 * kSettleMs);
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

describe('readManifestFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-manifest-read-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a file whose size is known, with the stat of what it read', async () => {
    const file = join(dir, 'pod.yaml');
    await writeFile(file, kOld);
    const read = await readManifestFile(file);
    expect(read).not.toBe('not a file');
    const st = await stat(file, { bigint: true });
    expect(read).toMatchObject({ text: kOld, stat: `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` });
  });

  it('refuses a file that stat says is empty but holds more than the cap (a symlink to /proc/kallsyms, several MiB)', async () => {
    expect((await stat('/proc/kallsyms')).size).toBe(0);
    const file = join(dir, 'pod.yaml');
    await symlink('/proc/kallsyms', file);
    await expect(readManifestFile(file)).rejects.toThrow(`has more than ${kMaxManifestBytes} bytes`);
  });

  it('refuses a file that grew past the cap after its stat', async () => {
    const file = join(dir, 'pod.yaml');
    await writeFile(file, kOld);
    const realStat = fsPromises.stat.bind(fsPromises);
    // The stat answers first, then the file grows before it is opened.
    const spy = vi.spyOn(fsPromises, 'stat').mockImplementationOnce((async (p: string) => {
      const st = await realStat(p);
      await appendFile(file, 'x'.repeat(kMaxManifestBytes));
      return st;
    }) as typeof fsPromises.stat);
    try {
      await expect(readManifestFile(file)).rejects.toThrow(`has more than ${kMaxManifestBytes} bytes`);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps the stat taken before the read, so a write during the read is seen as a change', async () => {
    const file = join(dir, 'pod.yaml');
    await writeFile(file, kOld);
    const realOpen = fsPromises.open.bind(fsPromises);
    const spy = vi.spyOn(fsPromises, 'open').mockImplementationOnce((async (p: string, flags: number) => {
      const handle = await realOpen(p, flags);
      const realRead = handle.read.bind(handle) as (...args: unknown[]) => Promise<unknown>;
      // The write lands after the handle's fstat, just before its first read.
      handle.read = (async (...args: unknown[]) => {
        handle.read = realRead as typeof handle.read;
        await writeFile(file, `${kNew}# longer\n`);
        return realRead(...args);
      }) as typeof handle.read;
      return handle;
    }) as typeof fsPromises.open);
    try {
      const read = await readManifestFile(file);
      const now = await stat(file, { bigint: true });
      expect((read as { stat: string }).stat).not.toBe(`${now.ino}:${now.size}:${now.mtimeNs}:${now.ctimeNs}`);
    } finally {
      spy.mockRestore();
    }
  });

  it('answers "not a file" for a FIFO without blocking on it', async () => {
    const fifo = join(dir, 'pod.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(await readManifestFile(fifo)).toBe('not a file');
  });
});
