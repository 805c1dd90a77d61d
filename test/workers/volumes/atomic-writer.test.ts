import { lstat, mkdtemp, readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hasPayload, validatePayloadPath, writePayload, type Payload } from '../../../src/workers/volumes/atomic-writer.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const file = (s: string, mode = 0o644) => ({ data: Buffer.from(s), mode });

describe('AtomicWriter (writePayload)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = path.join(await mkdtemp(path.join(tmpdir(), 'kubelet-ts-aw-')), 'vol');
  });
  afterEach(async () => {
    await rm(path.dirname(dir), { recursive: true, force: true });
  });

  it('writes a timestamped dir, the ..data link and one user-visible link per top-level name', async () => {
    expect(await hasPayload(dir)).toBe(false);
    expect(await writePayload(dir, { a: file('A'), 'sub/b': file('B', 0o400) }, {}, new FakeClock(Date.UTC(2026, 11, 2, 1, 30, 5)))).toBe(
      true,
    );
    expect(await hasPayload(dir)).toBe(true);
    const target = await readlink(path.join(dir, '..data'));
    expect(target).toMatch(/^\.\.2026_12_02_01_30_05\./);
    expect(await readlink(path.join(dir, 'a'))).toBe('..data/a');
    expect(await readlink(path.join(dir, 'sub'))).toBe('..data/sub');
    expect(await readFile(path.join(dir, 'sub/b'), 'utf8')).toBe('B');
    expect((await stat(path.join(dir, 'sub/b'))).mode & 0o777).toBe(0o400);
    expect((await stat(path.join(dir, 'a'))).mode & 0o777).toBe(0o644);
  });

  it('an unchanged payload writes nothing; a change swaps ..data, removes the old dir and the links of removed keys', async () => {
    await writePayload(dir, { a: file('1'), b: file('x') });
    const first = await readlink(path.join(dir, '..data'));
    expect(await writePayload(dir, { a: file('1'), b: file('x') })).toBe(false);
    expect(await readlink(path.join(dir, '..data'))).toBe(first);
    expect(await writePayload(dir, { a: file('2'), c: file('y') })).toBe(true);
    const second = await readlink(path.join(dir, '..data'));
    expect(second).not.toBe(first);
    expect(await readFile(path.join(dir, 'a'), 'utf8')).toBe('2');
    expect(await readFile(path.join(dir, 'c'), 'utf8')).toBe('y');
    await expect(lstat(path.join(dir, 'b'))).rejects.toMatchObject({ code: 'ENOENT' });
    const names = (await readdir(dir)).sort();
    expect(names).toEqual(['..data', second, 'a', 'c'].sort());
    // A mode change alone is a change.
    expect(await writePayload(dir, { a: file('2', 0o600), c: file('y') })).toBe(true);
    expect((await stat(path.join(dir, 'a'))).mode & 0o777).toBe(0o600);
  });

  it('no partial state is visible: a reader during many rewrites always sees a whole payload', async () => {
    await writePayload(dir, { a: file('0'), b: file('0') });
    let stop = false;
    const seen: string[] = [];
    const reader = (async () => {
      while (!stop) {
        // Read both through one resolution of ..data, as a process that opens ..data/… does.
        const target = await readlink(path.join(dir, '..data')).catch(() => '');
        const a = await readFile(path.join(dir, target, 'a'), 'utf8').catch(() => null);
        const b = await readFile(path.join(dir, target, 'b'), 'utf8').catch(() => null);
        if (a !== null && b !== null) seen.push(`${a}${b}`);
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let i = 1; i <= 30; i++) await writePayload(dir, { a: file(String(i)), b: file(String(i)) });
    stop = true;
    await reader;
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) expect(s.slice(0, s.length / 2)).toBe(s.slice(s.length / 2));
    expect(await readFile(path.join(dir, 'a'), 'utf8')).toBe('30');
  });

  it.each([
    ['/abs', /must be relative/],
    ['a/../b', /must not contain '\.\.'/],
    ['..data', /must not start with '\.\.'/],
    ['', /must not be empty/],
  ])('refuses the path %j', async (p, msg) => {
    expect(() => validatePayloadPath(p)).toThrow(msg);
    await expect(writePayload(dir, { [p]: file('x') } as Payload)).rejects.toThrow(msg);
  });

  it('gives files the fsGroup and group read (SetVolumeOwnership)', async () => {
    await writePayload(dir, { a: file('x', 0o600) }, { fsGroup: 1234 });
    const st = await stat(path.join(dir, 'a'));
    expect(st.gid).toBe(1234);
    expect(st.mode & 0o777).toBe(0o640);
  });
});
