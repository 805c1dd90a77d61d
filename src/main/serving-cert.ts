/**
 * The HTTPS server's certificate (`--tls-port`), as the kubelet's serving certificate: the files of
 * `--tls-cert-file`/`--tls-private-key-file` when given, else a self-signed certificate the agent
 * makes at first start and keeps under `<root-dir>/pki` (as the kubelet writes
 * /var/lib/kubelet/pki/kubelet.crt with CN `<hostname>@<unix time>` when given no certificate:
 * cmd/kubelet/app/server.go InitializeTLS, client-go util/cert GenerateSelfSignedCertKey). It is
 * its own CA, so `kubelet-ts kubeconfig` can hand it to kubectl as certificate-authority-data.
 * Generated with the `selfsigned` package (the only home of it). Main thread, at start-up only.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { InvalidArgumentError } from '../shared/errors.js';

/** ServingCert: the PEM files the HTTPS server loads, and the certificate's PEM (the CA a client trusts). */
export interface ServingCert {
  certFile: string;
  keyFile: string;
  certPem: string;
  /** True when this start generated it. */
  created: boolean;
}

/** kServingCertDir: `<root-dir>/pki`. */
export const kServingCertDir = 'pki';
/** kSelfSignedValidityDays: the self-signed certificate's lifetime (the kubelet's: one year). */
export const kSelfSignedValidityDays = 365;

/** servingCertNames: the SANs of the self-signed certificate: localhost, 127.0.0.1, ::1, the node name and the bind address (when specific). Pure. */
export function servingCertNames(nodeName: string, address: string): { dns: string[]; ips: string[] } {
  const dns = new Set(['localhost', nodeName]);
  const ips = new Set(['127.0.0.1', '::1']);
  if (isIP(address) && address !== '0.0.0.0' && address !== '::') ips.add(address);
  else if (!isIP(address) && address !== '') dns.add(address);
  return { dns: [...dns], ips: [...ips] };
}

async function readIfAll(certFile: string, keyFile: string): Promise<string | undefined> {
  try {
    const [cert] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile)]);
    return cert;
  } catch {
    return undefined;
  }
}

/**
 * ensureServingCert: the given files (both or neither: InvalidArgumentError otherwise), or the
 * self-signed pair under `<rootDir>/pki` (reused while valid; remade when missing or expired).
 * The key is written 0600, atomically.
 * @throws InvalidArgumentError naming `--tls-cert-file`/`--tls-private-key-file` when only one is given or a given file cannot be read.
 */
export async function ensureServingCert(opts: { rootDir: string; nodeName: string; address: string; certFile: string; keyFile: string }): Promise<ServingCert> {
  if ((opts.certFile === '') !== (opts.keyFile === '')) throw new InvalidArgumentError('--tls-cert-file and --tls-private-key-file must be given together');
  if (opts.certFile !== '') {
    const pem = await readIfAll(opts.certFile, opts.keyFile);
    if (pem === undefined) throw new InvalidArgumentError(`--tls-cert-file ${opts.certFile} / --tls-private-key-file ${opts.keyFile}: cannot read them`);
    return { certFile: opts.certFile, keyFile: opts.keyFile, certPem: pem, created: false };
  }
  const dir = join(opts.rootDir, kServingCertDir);
  const certFile = join(dir, 'kubelet-ts.crt');
  const keyFile = join(dir, 'kubelet-ts.key');
  const existing = await readIfAll(certFile, keyFile);
  if (existing !== undefined) {
    try {
      if (Date.parse(new X509Certificate(existing).validTo) > Date.now() + 86_400_000) return { certFile, keyFile, certPem: existing, created: false };
    } catch {
      // unreadable: make a new one
    }
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const names = servingCertNames(opts.nodeName, opts.address);
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: `${opts.nodeName}@${Math.floor(now / 1000)}` }], {
    keyType: 'ec', curve: 'P-256', notBeforeDate: new Date(now - 60_000), notAfterDate: new Date(now + kSelfSignedValidityDays * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [...names.dns.map((value) => ({ type: 2 as const, value })), ...names.ips.map((ip) => ({ type: 7 as const, ip }))] },
    ],
  });
  await writeFile(`${keyFile}.tmp`, pems.private, { mode: 0o600 });
  await rename(`${keyFile}.tmp`, keyFile);
  await writeFile(`${certFile}.tmp`, pems.cert, { mode: 0o644 });
  await rename(`${certFile}.tmp`, certFile);
  return { certFile, keyFile, certPem: pems.cert, created: true };
}
