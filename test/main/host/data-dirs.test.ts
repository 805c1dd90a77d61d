// Issue #38 finding 4, unit level: setupDataDirs makes the root dir and pods/ 0750, narrows what an
// earlier run left wider (logging it), never widens, follows a symbolic link, refuses a file.
import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import pino from 'pino';
import { setupDataDirs } from '../../../src/main/host/data-dirs.js';

let base: string;
let lines: Record<string, unknown>[];
const logger = () =>
  pino(
    { level: 'warn' },
    {
      write: (l: string) => {
        lines.push(JSON.parse(l));
      },
    },
  );
const modeOf = async (p: string) => (await stat(p)).mode & 0o7777;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'data-dirs-'));
  lines = [];
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

it('creates the root dir, pods/ and cni/ 0750', async () => {
  const root = join(base, 'root');
  await setupDataDirs(root, logger());
  expect(await modeOf(root)).toBe(0o750);
  expect(await modeOf(join(root, 'pods'))).toBe(0o750);
  // Before the network set-up makes cni/cache and cni/net.d under it, whose mkdir would make it 0755.
  expect(await modeOf(join(root, 'cni'))).toBe(0o750);
  expect(lines).toEqual([]);
});

it('narrows a root dir, pods/ and the state dirs left wider, logging each; leaves narrower ones alone', async () => {
  const root = join(base, 'root');
  for (const d of ['', 'pods', 'intake', 'pki', 'cni']) {
    await mkdir(join(root, d), { recursive: true });
    await chmod(join(root, d), 0o777);
  }
  await mkdir(join(root, 'intake-objects'));
  await chmod(join(root, 'intake-objects'), 0o700);
  await setupDataDirs(root, logger());
  expect(await modeOf(root)).toBe(0o750);
  expect(await modeOf(join(root, 'pods'))).toBe(0o750);
  expect(await modeOf(join(root, 'intake'))).toBe(0o700);
  expect(await modeOf(join(root, 'pki'))).toBe(0o700);
  expect(await modeOf(join(root, 'cni'))).toBe(0o750);
  expect(await modeOf(join(root, 'intake-objects'))).toBe(0o700);
  expect(lines.map((l) => [l.dir, l.mode, l.now])).toEqual([
    [root, '0777', '0750'],
    [join(root, 'pods'), '0777', '0750'],
    [join(root, 'intake'), '0777', '0700'],
    [join(root, 'pki'), '0777', '0700'],
    [join(root, 'cni'), '0777', '0750'],
  ]);
  // A root dir made narrower by the admin (0700) stays so.
  await chmod(root, 0o700);
  await setupDataDirs(root, logger());
  expect(await modeOf(root)).toBe(0o700);
});

it('follows a pods/ that is a symbolic link (another disk) and narrows its target; refuses a pods/ that is a file, naming --root-dir', async () => {
  const root = join(base, 'root');
  await mkdir(root);
  await mkdir(join(base, 'elsewhere'), { mode: 0o755 });
  await chmod(join(base, 'elsewhere'), 0o755);
  await symlink(join(base, 'elsewhere'), join(root, 'pods'));
  await setupDataDirs(root, logger());
  expect(await modeOf(join(base, 'elsewhere'))).toBe(0o750);
  const other = join(base, 'other');
  await mkdir(other);
  await writeFile(join(other, 'pods'), '');
  await expect(setupDataDirs(other, logger())).rejects.toThrow(/--root-dir: .*pods must be a directory/);
});
