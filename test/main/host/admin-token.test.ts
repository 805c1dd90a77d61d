import { chmod, lstat, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adminTokenPath, checkTokenFileStat, ensureAdminToken } from '../../../src/main/host/admin-token.js';
import { resolveAgentOptions } from '../../../src/main/options/agent-options.js';
import { parseCli } from '../../../src/main/cli.js';

describe('ensureAdminToken', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-admin-token-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the root dir and a 0600 file of 32 random bytes as base64url, then reuses it', async () => {
    const rootDir = join(dir, 'root');
    const first = await ensureAdminToken(rootDir);
    expect(first).toMatchObject({ path: join(rootDir, 'admin.token'), created: true });
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await lstat(first.path)).mode & 0o777).toBe(0o600);
    expect((await lstat(rootDir)).mode & 0o077).toBe(0);
    expect(await readFile(first.path, 'utf8')).toBe(`${first.token}\n`);
    expect(await ensureAdminToken(rootDir)).toEqual({ ...first, created: false });
    expect((await ensureAdminToken(join(dir, 'other'))).token).not.toBe(first.token);
  });

  it('accepts a token a user wrote (mode 0400 too)', async () => {
    const path = adminTokenPath(dir);
    await writeFile(path, `  ${'t'.repeat(40)}\n`, { mode: 0o400 });
    expect(await ensureAdminToken(dir)).toEqual({ path, token: 't'.repeat(40), created: false });
  });

  it.each([
    [
      'mode 0640',
      async (p: string) => {
        await writeFile(p, 'x'.repeat(43));
        await chmod(p, 0o640);
      },
      'has mode 0640, readable or writable by group or others; run chmod 600',
    ],
    [
      'mode 0606',
      async (p: string) => {
        await writeFile(p, 'x'.repeat(43));
        await chmod(p, 0o606);
      },
      'has mode 0606',
    ],
    [
      'a directory',
      async (p: string) => {
        await import('node:fs/promises').then((fs) => fs.mkdir(p));
      },
      'must be a regular file',
    ],
    [
      'a symlink to a 0600 file',
      async (p: string) => {
        await writeFile(`${p}.real`, 'x'.repeat(43), { mode: 0o600 });
        await symlink(`${p}.real`, p);
      },
      'must be a regular file',
    ],
    [
      'a short token',
      async (p: string) => {
        await writeFile(p, 'short\n', { mode: 0o600 });
      },
      'at least 32 printable characters',
    ],
    [
      'two words',
      async (p: string) => {
        await writeFile(p, `${'a'.repeat(20)} ${'b'.repeat(20)}`, { mode: 0o600 });
      },
      'without spaces',
    ],
  ])('refuses %s, naming the file, and leaves it as it was', async (_what, prepare, message) => {
    const path = adminTokenPath(dir);
    await prepare(path);
    const before = await lstat(path);
    await expect(ensureAdminToken(dir)).rejects.toThrow(`${path}: `);
    await expect(ensureAdminToken(dir)).rejects.toThrow(message);
    expect((await lstat(path)).mtimeMs).toBe(before.mtimeMs);
  });
});

describe('checkTokenFileStat', () => {
  const st = (mode: number, uid = 0, file = true) => ({ mode, uid, isFile: () => file, isSymbolicLink: () => false });
  it('refuses another owner', () => {
    expect(() => checkTokenFileStat('/r/admin.token', st(0o100600, 1000), 0)).toThrow(
      "/r/admin.token: the admin token is owned by uid 1000, not by the agent's uid 0",
    );
    expect(() => checkTokenFileStat('/r/admin.token', st(0o100600, 0), 0)).not.toThrow();
  });
});

describe('--anonymous-auth: false on every address unless given (issue #38, the KubeletConfiguration default)', () => {
  it.each([
    [{}, false],
    [{ address: '127.0.0.2' }, false],
    [{ address: '::1' }, false],
    [{ address: '127.0.0.1', anonymousAuth: true }, true],
    [{ address: '0.0.0.0' }, false],
    [{ address: '10.1.2.3' }, false],
    [{ address: '::' }, false],
    [{ address: '0.0.0.0', anonymousAuth: true }, true],
    [{ anonymousAuth: false }, false],
  ])('%j → anonymousAuth %s', (given, anonymous) => {
    expect(resolveAgentOptions(given).anonymousAuth).toBe(anonymous);
  });
  it('names the flag for a bad value', () => {
    expect(() => resolveAgentOptions({ anonymousAuth: 'yes' as unknown as boolean })).toThrow('--anonymous-auth');
  });
});

describe('--anonymous-auth on the command line', () => {
  it.each([
    [[], false],
    [['--anonymous-auth=true'], true],
    [['--anonymous-auth=false'], false],
    [['--address', '0.0.0.0'], false],
    [['--address', '0.0.0.0', '--anonymous-auth'], true],
    [['--address', '0.0.0.0', '--anonymous-auth=true'], true],
  ])('%j → anonymousAuth %s', async (argv, anonymous) => {
    expect((await parseCli(argv)).anonymousAuth).toBe(anonymous);
  });
});
