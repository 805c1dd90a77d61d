// Issue #38 finding 1: the bundled client never hands a credential to a server it has not
// authenticated. A second local user (kts-tester) squats the agent's TCP port; the client, run as
// root the way an administrator would (an admin.token in the root dir), must send it no token —
// neither with `--server http://127.0.0.1:PORT` nor with no `--server` while the agent is down —
// and reach the real agent through its own unix socket (or https verified against its CA).
import { spawn } from 'node:child_process';
import { chmod, chown, lstat, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { freePort, kRepoRoot, runCliProcess, startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { startPortSquatter, testUserIds, type PortSquatter } from '../support/port-squatter.js';

const kTestMs = 120_000;
const kDefaultPort = 10250;
const token = 'AdminTokenBytes' + 'x'.repeat(28);

/** noTokenIn: none of the connections' bytes carries an Authorization header or the token's bytes. */
function expectNoToken(received: string[]): void {
  for (const raw of received) {
    expect(raw.toLowerCase()).not.toContain('authorization');
    expect(raw).not.toContain(token);
    expect(raw).not.toContain(token.slice(0, 12));
  }
}

describe('issue #38 finding 1: the client sends no credential to a squatted port', () => {
  let base: string;
  let rootDir: string;
  let squatter: PortSquatter | undefined;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'kts-authn-'));
    await chmod(base, 0o711); // the other user may reach its own directory below
    rootDir = join(base, 'root');
    await mkdir(rootDir, { mode: 0o700 });
    await writeFile(join(rootDir, 'admin.token'), `${token}\n`, { mode: 0o600 });
  });
  afterEach(async () => {
    await squatter?.stop();
    squatter = undefined;
  });
  afterAll(async () => {
    await unmountUnder(base).catch(() => undefined); // the API pods' tmpfs volumes (service account tokens)
    await rm(base, { recursive: true, force: true });
  });

  it(
    '--server http://127.0.0.1:PORT held by another user: the admin token is withheld, and the client says why',
    async () => {
      squatter = await startPortSquatter(await freePort());
      expect(squatter.uid).not.toBe(0);
      const res = await runCliProcess(['get', 'pods', '--server', `http://127.0.0.1:${squatter.port}`], undefined, {
        KUBELET_TS_ROOT_DIR: rootDir,
      });
      expect(squatter.received().length).toBeGreaterThan(0); // the client did connect: the check below means something
      expectNoToken(squatter.received());
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('never sent over plain http');
    },
    kTestMs,
  );

  it(
    '--token with an http:// server is refused before any connection',
    async () => {
      squatter = await startPortSquatter(await freePort());
      const res = await runCliProcess([
        'get',
        'pods',
        '--server',
        `http://127.0.0.1:${squatter.port}`,
        '--token',
        token,
        '--root-dir',
        rootDir,
      ]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('refusing to send --token over plain http');
      expect(squatter.received()).toEqual([]);
    },
    kTestMs,
  );

  it(
    `no --server while the agent is down (another user holds 127.0.0.1:${kDefaultPort}): no token reaches it`,
    async () => {
      squatter = await startPortSquatter(kDefaultPort);
      const res = await runCliProcess(['get', 'pods'], undefined, { KUBELET_TS_ROOT_DIR: rootDir, KUBELET_TS_SERVER: '' });
      expect(squatter.received().length).toBeGreaterThan(0);
      expectNoToken(squatter.received());
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(join(rootDir, 'kubelet-ts.sock'));
    },
    kTestMs,
  );

  it(
    'a socket in a directory another user owns is not trusted: no token is sent to it',
    async () => {
      const { uid, gid } = testUserIds();
      const evil = join(base, 'evil');
      await mkdir(evil, { mode: 0o755 });
      await writeFile(join(evil, 'admin.token'), `${token}\n`, { mode: 0o600 });
      await chown(evil, uid, gid);
      // The other user's listener on a socket there (it records what it gets, as the TCP squatter).
      const script =
        "const c=[];require('net').createServer((s)=>s.on('data',(d)=>process.stdout.write(d))).listen(process.argv[1],()=>process.stdout.write('listening\\n'))";
      const child = spawn(process.execPath, ['-e', script, join(evil, 'kubelet-ts.sock')], {
        uid,
        gid,
        cwd: '/',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {},
      });
      let got = '';
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (d: Buffer) => {
            got += d.toString('latin1');
            if (got.includes('listening')) resolve();
          });
          child.once('exit', (code) => reject(new Error(`socket squatter exited ${code}`)));
        });
        const res = await runCliProcess(['get', 'pods', '--server', `unix://${join(evil, 'kubelet-ts.sock')}`, '--root-dir', evil]);
        expect(res.code).toBe(1);
        expect(res.stderr).toContain('not trusted');
        expect(got.replace('listening\n', '')).toBe('');
      } finally {
        child.kill('SIGKILL');
      }
    },
    kTestMs,
  );
});

describe('issue #38 finding 1: the client reaches the real agent through its socket and over verified TLS', () => {
  let base: string;
  let rootDir: string;
  let agent: AgentProcess | undefined;
  const nodeName = `authn-${process.pid}`;
  const args = (tlsPort: number) => [
    '--hostname-override',
    nodeName,
    '--root-dir',
    rootDir,
    '--runtime',
    'fake',
    '--workers',
    '1',
    '--pod-manifest-path',
    '',
    '--tls-port',
    String(tlsPort),
  ];

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'kts-authn-agent-'));
    rootDir = join(base, 'root');
  });
  afterEach(async () => {
    await agent?.stop('SIGKILL');
    agent = undefined;
  });
  afterAll(async () => {
    await unmountUnder(base).catch(() => undefined); // the API pods' tmpfs volumes (service account tokens)
    await rm(base, { recursive: true, force: true });
  });

  it(
    'serves <root-dir>/kubelet-ts.sock mode 0600; the client uses it with the admin token; a stale socket after kill -9 is replaced',
    async () => {
      const tlsPort = await freePort();
      agent = await startAgentProcess(args(tlsPort));
      const sock = join(rootDir, 'kubelet-ts.sock');
      const st = await lstat(sock);
      expect(st.isSocket()).toBe(true);
      expect(st.mode & 0o777).toBe(0o600);
      expect(st.uid).toBe(process.getuid!());
      const applied = await runCliProcess(
        ['apply', '-f', '-', '--root-dir', rootDir],
        'apiVersion: v1\nkind: Pod\nmetadata: {name: sock-pod}\nspec: {containers: [{name: c, image: busybox}]}\n',
        { KUBELET_TS_SERVER: '' },
      );
      expect(applied).toMatchObject({ code: 0 });
      const got = await runCliProcess(['get', 'pods', '--root-dir', rootDir], undefined, { KUBELET_TS_SERVER: '' });
      expect(got.code).toBe(0);
      expect(got.stdout).toContain('sock-pod');
      // https: verified against <root-dir>/pki/kubelet-ts.crt, the token is sent.
      const https = await runCliProcess(['get', 'pods', '--root-dir', rootDir, '--server', `https://127.0.0.1:${tlsPort}`]);
      expect(https.stdout).toContain('sock-pod');
      // A CA that is not the server's: the verification fails, nothing is sent.
      const otherCa = join(base, 'other-ca.crt');
      const other = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
        keyType: 'ec',
        curve: 'P-256',
        extensions: [
          { name: 'basicConstraints', cA: true },
          { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
        ],
      });
      await writeFile(otherCa, other.cert);
      const wrong = await runCliProcess([
        'get',
        'pods',
        '--root-dir',
        rootDir,
        '--server',
        `https://127.0.0.1:${tlsPort}`,
        '--certificate-authority',
        otherCa,
      ]);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/self[- ]signed|unable to verify|certificate/i);
      await agent.stop('SIGKILL');
      expect((await lstat(sock)).isSocket()).toBe(true); // left behind by kill -9
      agent = await startAgentProcess(args(await freePort()));
      expect((await runCliProcess(['get', 'pods', '--root-dir', rootDir], undefined, { KUBELET_TS_SERVER: '' })).stdout).toContain(
        'sock-pod',
      );
    },
    kTestMs,
  );

  it(
    'refuses to start when the socket path is not a socket, naming it',
    async () => {
      const dir = join(base, 'notsock');
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(join(dir, 'kubelet-ts.sock'), 'not a socket');
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'src/main/index.ts',
          '--port',
          '0',
          '--hostname-override',
          nodeName,
          '--root-dir',
          dir,
          '--runtime',
          'fake',
          '--workers',
          '1',
        ],
        { cwd: kRepoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
      child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
      try {
        const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
        // A refused start input exits 2, as every option error (src/main/index.ts).
        expect(code).toBe(2);
        expect(out).toContain(`unix socket ${join(dir, 'kubelet-ts.sock')}: the path exists and is not a socket`);
      } finally {
        child.kill('SIGKILL');
      }
      expect((await stat(join(dir, 'kubelet-ts.sock'))).isFile()).toBe(true);
    },
    kTestMs,
  );
});
