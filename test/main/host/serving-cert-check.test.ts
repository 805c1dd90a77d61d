// Issue 38 finding 10: a corrupt or mismatched TLS key stops the start with one line naming the
// file (uWebSockets.js said only `App construction failed`): ensureServingCert checks the pair
// with node:crypto, and the agent process exits 2 with that line.
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureServingCert, type ServingCert } from '../../../src/main/host/serving-cert.js';
import { spawn } from 'node:child_process';
import { freePort, kRepoRoot } from '../../support/agent-process.js';

let dir: string;
let made: ServingCert;
let other: ServingCert;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-cert-check-'));
  made = await ensureServingCert({ rootDir: join(dir, 'a'), nodeName: 'n1', address: '127.0.0.1', certFile: '', keyFile: '' });
  other = await ensureServingCert({ rootDir: join(dir, 'b'), nodeName: 'n1', address: '127.0.0.1', certFile: '', keyFile: '' });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const given = (certFile: string, keyFile: string) =>
  ensureServingCert({ rootDir: join(dir, 'unused'), nodeName: 'n1', address: '', certFile, keyFile });

describe('ensureServingCert checks the key pair', () => {
  it('refuses a corrupt --tls-private-key-file, naming it', async () => {
    const bad = join(dir, 'corrupt.key');
    await writeFile(bad, '-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n');
    await expect(given(made.certFile, bad)).rejects.toThrow(new RegExp(`^--tls-private-key-file ${bad}: not a PEM private key: `));
  });

  it('refuses a key of another certificate, and a corrupt --tls-cert-file, naming them', async () => {
    await expect(given(made.certFile, other.keyFile)).rejects.toThrow(
      `--tls-private-key-file ${other.keyFile}: does not match the certificate in --tls-cert-file ${made.certFile}`,
    );
    const bad = join(dir, 'corrupt.crt');
    await writeFile(bad, 'garbage\n');
    await expect(given(bad, made.keyFile)).rejects.toThrow(new RegExp(`^--tls-cert-file ${bad}: not a PEM certificate: `));
  });

  it('refuses a corrupt key under <root-dir>/pki, naming the file, rather than replacing it', async () => {
    const root = join(dir, 'c');
    const first = await ensureServingCert({ rootDir: root, nodeName: 'n1', address: '', certFile: '', keyFile: '' });
    await writeFile(first.keyFile, 'garbage\n');
    await expect(ensureServingCert({ rootDir: root, nodeName: 'n1', address: '', certFile: '', keyFile: '' })).rejects.toThrow(
      new RegExp(`^${first.keyFile}: not a PEM private key: `),
    );
  });

  it('the agent process exits 2 with one line naming the corrupt key file', async () => {
    const keyFile = join(dir, 'process.key');
    await copyFile(made.certFile, join(dir, 'process.crt'));
    await writeFile(keyFile, 'garbage\n');
    const root = join(dir, 'process-root');
    const args = [
      '--root-dir',
      root,
      '--runtime',
      'fake',
      '--hostname-override',
      'tls-check',
      '--port',
      String(await freePort()),
      '--tls-port',
      String(await freePort()),
      '--tls-cert-file',
      join(dir, 'process.crt'),
      '--tls-private-key-file',
      keyFile,
      '--cni-conf-dir',
      join(dir, 'no-cni'),
    ];
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/index.ts', ...args], {
      cwd: kRepoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const r = { code: -1, stdout: '', stderr: '' };
    child.stdout.on('data', (d) => (r.stdout += d));
    child.stderr.on('data', (d) => (r.stderr += d));
    try {
      // An agent that started after all is stopped below (it should not): the test never leaves it running.
      r.code = await new Promise<number>((resolve) => {
        child.once('exit', (code) => resolve(code ?? -1));
        setTimeout(() => resolve(-2), 90_000).unref();
      });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    expect(r.code).toBe(2);
    // One plain line says it (the JSON log lines around it are the agent's info records).
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('kubelet-ts: '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^kubelet-ts: --tls-private-key-file ${keyFile}: not a PEM private key: \\S`));
    expect(r.stdout + r.stderr).not.toContain('App construction failed');
  }, 120_000);
});
