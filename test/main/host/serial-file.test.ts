// serial-file.ts: writes in order, mode 0600 (only the agent's user reads the node's state; issue #38 finding 4).
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newSerialFile } from '../../../src/main/host/serial-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'serial-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('writes in the order asked, the last text wins, and the file is 0600 even over a wider leftover .tmp', async () => {
  const file = join(dir, 'state.json');
  await writeFile(`${file}.tmp`, 'old', { mode: 0o666 });
  const f = newSerialFile(file);
  await Promise.all(['1', '2', '3'].map((t) => f.write(t)));
  expect(await readFile(file, 'utf8')).toBe('3');
  expect((await stat(file)).mode & 0o777).toBe(0o600);
});
