// Break-46 (service accounts, issue #43): the service account signing key is the node's master
// credential — whoever can rewrite it mints a token for any account of any namespace. The agent
// checked only its mode: a key owned by another local user (a file that user made and an admin
// linked or moved into pki/, the user keeping a hard link of their own) or a symlink into that
// user's directory was used as the node's key. Now the start is refused as for admin.token: a
// regular file, 0600, the agent's own.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmod, chown, link, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgent } from '../../src/main/agent.js';
import { resolveAgentOptions } from '../../src/main/options/agent-options.js';
import { newLogger } from '../../src/shared/logging.js';
import { kTestUser } from '../support/port-squatter.js';

const kTestMs = 60_000;

function testUser(): { uid: number; gid: number } | undefined {
  try {
    return {
      uid: Number(execFileSync('id', ['-u', kTestUser]).toString().trim()),
      gid: Number(execFileSync('id', ['-g', kTestUser]).toString().trim()),
    };
  } catch {
    return undefined;
  }
}
const kUser = process.getuid?.() === 0 ? testUser() : undefined;

describe.skipIf(!kUser)('break-46: the service account signing key', () => {
  let dir: string;
  /** The tester's own directory, with a P-256 key of theirs in it (0600, theirs). */
  let theirs: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-break46-key-'));
    await chmod(dir, 0o755);
    const home = join(dir, 'tester');
    await mkdir(home, { mode: 0o700 });
    await chown(home, kUser!.uid, kUser!.gid);
    theirs = join(home, 'evil.key');
    await writeFile(theirs, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o600,
    });
    await chown(theirs, kUser!.uid, kUser!.gid);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['a hard link to a file the tester owns', (key: string) => link(theirs, key), `owned by uid ${kUser?.uid}`],
    ["a symlink into the tester's directory", (key: string) => symlink(theirs, key), 'must be a regular file'],
  ])(
    'refuses to start when pki/service-account.key is %s, naming the file',
    async (_what, place, message) => {
      const rootDir = await mkdtemp(join(dir, 'root-'));
      await mkdir(join(rootDir, 'pki'), { mode: 0o700 });
      const key = join(rootDir, 'pki', 'service-account.key');
      await place(key);
      const agent = newAgent(
        resolveAgentOptions({ nodeName: 'break46-key', rootDir, port: 0, runtime: 'fake', workers: 1, logLevel: 'silent' }),
        { logger: newLogger('silent') },
      );
      try {
        const err = await agent.start().then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(err?.message).toContain(`${key}: the service account signing key`);
        expect(err?.message).toContain(message);
      } finally {
        await agent.stop();
      }
    },
    kTestMs,
  );
});
