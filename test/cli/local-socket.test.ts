// The client's trust in the agent's unix socket (issue #38 finding 1): by owner and mode, as
// Docker's client trusts /var/run/docker.sock.
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLocalSocket } from '../../src/cli/local-socket.js';
import { testUserIds } from '../support/port-squatter.js';

describe('checkLocalSocket', () => {
  let base: string;
  const servers: Server[] = [];
  const listen = async (dir: string, mode = 0o600): Promise<string> => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, 'kubelet-ts.sock');
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(path, () => resolve()));
    await chmod(path, mode);
    return path;
  };
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'kts-localsock-'));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    await rm(base, { recursive: true, force: true });
  });

  it('trusts a 0600 socket of this user in a 0700 directory of this user', async () => {
    expect(checkLocalSocket(await listen(join(base, 'ok')))).toEqual({ kind: 'trusted' });
  });

  it('reports a missing socket as missing (the agent is down), not as trusted', () => {
    expect(checkLocalSocket(join(base, 'none', 'kubelet-ts.sock'))).toEqual({ kind: 'missing' });
  });

  it('refuses a regular file at the path', async () => {
    await mkdir(join(base, 'file'), { mode: 0o700 });
    await writeFile(join(base, 'file', 'kubelet-ts.sock'), '');
    expect(checkLocalSocket(join(base, 'file', 'kubelet-ts.sock'))).toMatchObject({
      kind: 'untrusted',
      reason: expect.stringContaining('not a unix socket'),
    });
  });

  it('refuses a socket others may write, or one in a directory others may write', async () => {
    expect(checkLocalSocket(await listen(join(base, 'wide'), 0o666))).toMatchObject({
      kind: 'untrusted',
      reason: expect.stringContaining('writable by other users'),
    });
    const path = await listen(join(base, 'opendir'));
    await chmod(join(base, 'opendir'), 0o777);
    expect(checkLocalSocket(path)).toMatchObject({ kind: 'untrusted', reason: expect.stringContaining('its directory') });
  });

  it('refuses a socket owned by another user, even beside an admin token that user wrote', async () => {
    const { uid, gid } = testUserIds();
    const dir = join(base, 'theirs');
    const path = await listen(dir);
    await writeFile(join(dir, 'admin.token'), 'x'.repeat(43), { mode: 0o600 });
    await chown(path, uid, gid);
    await chown(join(dir, 'admin.token'), uid, gid);
    // In our directory, a socket of the admin token's owner is the agent's (an agent run as that user).
    expect(checkLocalSocket(path, join(dir, 'admin.token'))).toEqual({ kind: 'trusted' });
    expect(checkLocalSocket(path)).toMatchObject({ kind: 'untrusted', reason: expect.stringContaining(`uid ${uid}`) });
    // Their directory: nothing in it is trusted.
    await chown(dir, uid, gid);
    expect(checkLocalSocket(path, join(dir, 'admin.token'))).toMatchObject({
      kind: 'untrusted',
      reason: expect.stringContaining('its directory'),
    });
  });
});
