// The pod's small files (workers/kubetypes/pod-files.ts): created in place with their modes when new,
// replaced whole (a new inode through a rename) when their content changes, untouched when it does not.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmptyPodFile, writePodFileSync } from '../../../src/workers/kubetypes/pod-files.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function rootDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kts-pod-files-'));
  dirs.push(d);
  return d;
}

describe('writePodFileSync', () => {
  it('creates the file 0644, and the pod directory and pods/ above it 0750', () => {
    const root = rootDir();
    const file = join(root, 'pods', 'u1', 'etc-hosts');
    writePodFileSync(file, 'a\n');
    expect(readFileSync(file, 'utf8')).toBe('a\n');
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(statSync(join(root, 'pods', 'u1')).mode & 0o777).toBe(0o750);
    expect(statSync(join(root, 'pods')).mode & 0o777).toBe(0o750);
  });

  it('leaves a file that holds the content alone: same inode, same modification time', () => {
    const file = join(rootDir(), 'resolv.conf');
    writePodFileSync(file, 'nameserver 10.0.0.2\n');
    const before = statSync(file);
    writePodFileSync(file, 'nameserver 10.0.0.2\n');
    const after = statSync(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('replaces a file whose content changed by a rename (a reader holds the old file or the new, never half of one), leaving no temporary file', () => {
    const root = rootDir();
    const file = join(root, 'etc-hosts');
    writeFileSync(file, 'old content that is longer than the new\n', { mode: 0o600 });
    const before = statSync(file);
    writePodFileSync(file, 'new\n');
    const after = statSync(file);
    expect(after.ino).not.toBe(before.ino);
    expect(readFileSync(file, 'utf8')).toBe('new\n');
    expect(after.mode & 0o777).toBe(0o644);
    expect(readdirSync(root)).toEqual(['etc-hosts']);
  });
});

describe('createEmptyPodFile', () => {
  it('creates the file empty with its mode whatever the umask, its directory when missing, and truncates one already there', () => {
    const root = rootDir();
    const file = join(root, 'containers', 'app', '0');
    createEmptyPodFile(file, 0o666);
    expect(statSync(file).mode & 0o777).toBe(0o666);
    expect(statSync(file).size).toBe(0);
    writeFileSync(file, 'a message');
    createEmptyPodFile(file, 0o666);
    expect(readFileSync(file, 'utf8')).toBe('');
  });
});
