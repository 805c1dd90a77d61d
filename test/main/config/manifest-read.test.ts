// readSettled: a manifest rewritten in place is read as the writer left it, not as the truncation
// left it (issue #11 finding 7); a file really emptied or changed is taken once it stops changing.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs, { appendFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, open, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { kMaxManifestBytes } from '../../../src/main/config/manifest-files.js';
import { kSettleMs, readSettled, type FileRead, type ManifestReader } from '../../../src/main/config/manifest-read.js';
import { readManifestFileSync as readManifestFile } from '../../../src/io/manifest-file.js';

const kOld = 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n';
const kNew = 'apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('readSettled', () => {
  let dir: string;
  let file: string;
  let prev: { contentHash: string };
  /** The contents the reader decoded (the manifest thread's parses), in order. */
  let decoded: string[];
  /** A ManifestReader as the manifest thread's: it reads the file and "decodes" (records) a content unless told to skip it. */
  const reader: ManifestReader = async (f, skipParseOf) => {
    const r = readManifestFile(f);
    if (r === 'not a file') return r;
    const read: FileRead = { hash: r.hash, stat: r.stat, mtimeMs: r.mtimeMs, length: r.text.length };
    if (!skipParseOf.includes(r.hash)) {
      decoded.push(r.text);
      read.parsed = { pods: [] };
    }
    return read;
  };
  const settled = (p: { contentHash: string }) => readSettled(file, p, () => false, reader);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-manifest-read-'));
    file = join(dir, 'pod.yaml');
    await writeFile(file, kOld);
    const read = readManifestFile(file);
    if (read === 'not a file') throw new Error('expected a file');
    prev = { contentHash: read.hash };
    decoded = [];
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
    const read = await settled(prev);
    await written;
    expect(read).not.toBe('unsettled');
    expect((read as FileRead).hash).toBe(sha256(kNew));
    // Each content decoded once, whatever the number of reads (the empty one, then the new one).
    expect(decoded).toEqual(['', kNew]);
    expect((read as FileRead).parsed).toBeDefined();
  });

  it('a file emptied for good is taken as empty', async () => {
    await writeFile(file, '');
    const read = await settled(prev);
    expect((read as FileRead).hash).toBe(sha256(''));
    expect(decoded).toEqual(['']);
  });

  it('a file changed for good is taken with its new content', async () => {
    await writeFile(file, kNew);
    const read = await settled(prev);
    expect((read as FileRead).hash).toBe(sha256(kNew));
    expect((read as FileRead).parsed).toBeDefined();
    expect(decoded).toEqual([kNew]);
  });

  it('the content last accepted, read again, is taken at once', async () => {
    const read = await settled(prev);
    expect((read as FileRead).hash).toBe(sha256(kOld));
    expect(decoded).toEqual([]);
  });
});

describe('readManifestFileSync (the manifest thread reads each file)', () => {
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
    const read = readManifestFile(file);
    expect(read).not.toBe('not a file');
    const st = await stat(file, { bigint: true });
    expect(read).toMatchObject({ text: kOld, stat: `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` });
  });

  it('refuses a file that stat says is empty but holds more than the cap (a symlink to /proc/kallsyms, several MiB)', async () => {
    expect((await stat('/proc/kallsyms')).size).toBe(0);
    const file = join(dir, 'pod.yaml');
    await symlink('/proc/kallsyms', file);
    expect(() => readManifestFile(file)).toThrow(`has more than ${kMaxManifestBytes} bytes`);
  });

  it('refuses a file that grew past the cap after its stat', async () => {
    const file = join(dir, 'pod.yaml');
    await writeFile(file, kOld);
    const realStat = fs.statSync.bind(fs);
    // The stat answers first, then the file grows before it is opened.
    const spy = vi.spyOn(fs, 'statSync').mockImplementationOnce(((p: string) => {
      const st = realStat(p);
      appendFileSync(file, 'x'.repeat(kMaxManifestBytes));
      return st;
    }) as typeof fs.statSync);
    try {
      expect(() => readManifestFile(file)).toThrow(`has more than ${kMaxManifestBytes} bytes`);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps the stat taken before the read, so a write during the read is seen as a change', async () => {
    const file = join(dir, 'pod.yaml');
    await writeFile(file, kOld);
    const realRead = fs.readSync.bind(fs) as (...args: unknown[]) => number;
    // The write lands after the descriptor's fstat, just before its first read.
    const spy = vi.spyOn(fs, 'readSync').mockImplementationOnce(((...args: unknown[]) => {
      writeFileSync(file, `${kNew}# longer\n`);
      return realRead(...args);
    }) as typeof fs.readSync);
    try {
      const read = readManifestFile(file);
      const now = await stat(file, { bigint: true });
      expect((read as { stat: string }).stat).not.toBe(`${now.ino}:${now.size}:${now.mtimeNs}:${now.ctimeNs}`);
    } finally {
      spy.mockRestore();
    }
  });

  it('answers "not a file" for a FIFO without blocking on it', async () => {
    const fifo = join(dir, 'pod.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(readManifestFile(fifo)).toBe('not a file');
  });
});
