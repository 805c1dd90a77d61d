import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkSubPath, resolveSubPath } from '../../../src/workers/volumes/subpath.js';
import { expandSubPathExpr } from '../../../src/workers/kuberuntime/run-container-options.js';

describe('subPath resolution (PrepareSafeSubpath)', () => {
  let base: string;
  let vol: string;
  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'kubelet-ts-subpath-'));
    vol = path.join(base, 'vol');
    await mkdir(path.join(vol, 'inner/deep'), { recursive: true });
    await writeFile(path.join(vol, 'inner/f'), 'x');
    await mkdir(path.join(base, 'outside'));
    await symlink('/etc', path.join(vol, 'esc'));
    await symlink('../outside', path.join(vol, 'rel-esc'));
    await symlink('inner/deep', path.join(vol, 'in-link'));
    await symlink('/nonexistent-kubelet-ts', path.join(vol, 'dangling'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('resolves a directory, a file, and a link that stays inside the volume', async () => {
    for (const [sub, isDir] of [
      ['inner', true],
      ['inner/f', false],
      ['in-link', true],
    ] as const) {
      const r = await resolveSubPath(vol, sub);
      expect(r.isDir).toBe(isDir);
      await r.handle.close();
    }
  });

  it.each(['esc', 'esc/passwd', 'rel-esc', 'rel-esc/new'])('refuses %j: a link out of the volume, nothing created outside', async (sub) => {
    await expect(resolveSubPath(vol, sub)).rejects.toMatchObject({
      reason: 'CreateContainerConfigError',
      message: expect.stringMatching(/not within volume path/),
    });
  });

  it('creates a missing subPath as directories, and refuses to create through a dangling link', async () => {
    const r = await resolveSubPath(vol, 'a/b/c');
    expect(r.isDir).toBe(true);
    await r.handle.close();
    await expect(resolveSubPath(vol, 'dangling')).rejects.toMatchObject({ reason: 'CreateContainerConfigError' });
  });

  it('checkSubPath refuses an absolute path and .. as the kubelet words it', () => {
    expect(() => checkSubPath('/etc')).toThrow('error SubPath `/etc` must not be an absolute path');
    expect(() => checkSubPath('a/../../b')).toThrow("unable to provision SubPath `a/../../b`: must not contain '..'");
  });

  it('expandSubPathExpr expands $(VAR) from the env; a variable without a value is an error', () => {
    expect(expandSubPathExpr('logs/$(POD)', [['POD', 'web']], 'f')).toBe('logs/web');
    expect(() => expandSubPathExpr('$(NOPE)/x', [], 'f')).toThrow('f: missing value for NOPE');
    expect(() => checkSubPath(expandSubPathExpr('$(P)', [['P', '/etc']], 'f'))).toThrow(/absolute/);
    expect(() => checkSubPath(expandSubPathExpr('$(P)', [['P', '..']], 'f'))).toThrow(/'\.\.'/);
  });
});
