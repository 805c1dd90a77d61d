// The HTTPS server's certificate (--tls-port): a self-signed one under <root-dir>/pki made once and
// reused, with the SANs kubectl checks; given files used as they are; one of the two refused.
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureServingCert, servingCertNames } from '../../../src/main/host/serving-cert.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-cert-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ensureServingCert', () => {
  it('makes a self-signed certificate for localhost, 127.0.0.1 and the node once, key mode 0600, then reuses it', async () => {
    const first = await ensureServingCert({ rootDir: dir, nodeName: 'n1', address: '127.0.0.1', certFile: '', keyFile: '' });
    expect(first.created).toBe(true);
    const x = new X509Certificate(first.certPem);
    expect(x.checkHost('localhost')).toBe('localhost');
    expect(x.checkHost('n1')).toBe('n1');
    expect(x.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x.subject).toMatch(/CN=n1@\d+/);
    expect(x.verify(x.publicKey)).toBe(true);
    expect((await stat(first.keyFile)).mode & 0o777).toBe(0o600);
    const again = await ensureServingCert({ rootDir: dir, nodeName: 'n1', address: '127.0.0.1', certFile: '', keyFile: '' });
    expect(again).toEqual({ ...first, created: false });
  });
  it('uses given files, and refuses one without the other', async () => {
    const made = await ensureServingCert({ rootDir: dir, nodeName: 'n1', address: '127.0.0.1', certFile: '', keyFile: '' });
    expect(
      await ensureServingCert({ rootDir: '/nonexistent', nodeName: 'n1', address: '', certFile: made.certFile, keyFile: made.keyFile }),
    ).toMatchObject({ certFile: made.certFile, created: false });
    await expect(ensureServingCert({ rootDir: dir, nodeName: 'n1', address: '', certFile: made.certFile, keyFile: '' })).rejects.toThrow(
      '--tls-cert-file and --tls-private-key-file must be given together',
    );
    await expect(
      ensureServingCert({ rootDir: dir, nodeName: 'n1', address: '', certFile: join(dir, 'none.crt'), keyFile: join(dir, 'none.key') }),
    ).rejects.toThrow(/cannot read them/);
  });
  it('names the bind address when it is a specific one', () => {
    expect(servingCertNames('n1', '10.1.2.3').ips).toContain('10.1.2.3');
    expect(servingCertNames('n1', '0.0.0.0').ips).toEqual(['127.0.0.1', '::1']);
  });
});
