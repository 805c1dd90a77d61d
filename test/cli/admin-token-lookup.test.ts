import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFlags, findAdminToken, unauthorizedMessage } from '../../src/cli/client.js';
import { isLoopbackHost } from '../../src/shared/loopback.js';

describe('findAdminToken and clientFlags (the client finds <root-dir>/admin.token itself)', () => {
  let dir: string;
  const token = 'k'.repeat(43);
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-client-token-'));
    await writeFile(join(dir, 'admin.token'), `${token}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['http://127.0.0.1:10250', 'http://localhost:1', 'http://[::1]:10250'])(
    'reads the token for the loopback server %s',
    (server) => {
      expect(findAdminToken(server, dir)).toEqual({ token, file: join(dir, 'admin.token') });
    },
  );

  it.each(['http://10.0.0.5:10250', 'http://example.com', 'not a url'])('never sends it to %s', (server) => {
    expect(findAdminToken(server, dir)).toBeUndefined();
  });

  it('finds nothing in a root dir without the file', () => {
    expect(findAdminToken('http://127.0.0.1:1', join(dir, 'missing'))).toBeUndefined();
  });

  it('sends --token or the admin token only over https; over http it withholds the admin token and refuses --token', () => {
    expect(clientFlags({ server: 'https://127.0.0.1:1', token: 'given', 'root-dir': dir })).toEqual({
      server: 'https://127.0.0.1:1',
      token: 'given',
      rootDir: dir,
    });
    expect(clientFlags({ server: 'https://127.0.0.1:1/', token: '', 'root-dir': dir })).toEqual({
      server: 'https://127.0.0.1:1',
      token,
      tokenFile: join(dir, 'admin.token'),
      rootDir: dir,
    });
    const http = clientFlags({ server: 'http://127.0.0.1:1/', token: '', 'root-dir': dir });
    expect(http).toMatchObject({ server: 'http://127.0.0.1:1', token: '' });
    expect(http.withheld).toContain('never sent over plain http');
    expect(() => clientFlags({ server: 'http://127.0.0.1:1', token: 'given', 'root-dir': dir })).toThrow(
      /refusing to send --token over plain http/,
    );
  });

  it('with no --server and no socket in the root dir: the default server, without a token', () => {
    const flags = clientFlags({ server: '', token: '', 'root-dir': dir });
    expect(flags).toMatchObject({ server: 'http://127.0.0.1:10250', token: '' });
    expect(flags.withheld).toContain(join(dir, 'kubelet-ts.sock'));
  });

  it('says in a 401 which token was refused, or where one is', () => {
    expect(unauthorizedMessage({ server: 's', token, tokenFile: '/r/admin.token', rootDir: '/r' })).toContain(
      'the admin token of /r/admin.token was refused',
    );
    expect(unauthorizedMessage({ server: 's', token: '', rootDir: '/r' })).toContain('/r/admin.token');
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.9.9.9', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['localhost', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.1', false],
    ['128.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['example.com', false],
  ])('%s → %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});
