/**
 * The HTTPS server's certificate (`--tls-port`), as the kubelet's serving certificate: the files of
 * `--tls-cert-file`/`--tls-private-key-file` when given, else a self-signed certificate the agent
 * makes at first start and keeps under `<root-dir>/pki` (as the kubelet writes
 * /var/lib/kubelet/pki/kubelet.crt with CN `<hostname>@<unix time>` when given no certificate:
 * cmd/kubelet/app/server.go InitializeTLS, client-go util/cert GenerateSelfSignedCertKey). It is
 * its own CA, so `kubelet-ts kubeconfig` can hand it to kubectl as certificate-authority-data.
 * Generated with the `selfsigned` package (the only home of it). Main thread, at start-up only.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { InvalidArgumentError } from '../../shared/errors.js';
import { realClock, type Clock } from '../../shared/clock.js';

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

async function readIfAll(certFile: string, keyFile: string): Promise<{ cert: string; key: Buffer } | undefined> {
  try {
    const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile)]);
    return { cert, key };
  } catch {
    return undefined;
  }
}

/** The first line of a node:crypto error, without OpenSSL's `error:1E08010C:DECODER routines::` prefix. */
function cryptoReason(err: unknown): string {
  return String((err as Error)?.message ?? err)
    .split('\n')[0]
    .replace(/^error:[0-9A-F]+:[^:]*::/, '');
}

/**
 * checkKeyPair: the certificate and key parse (PEM) and belong together, as Go's
 * tls.LoadX509KeyPair checks them when the kubelet starts serving (cmd/kubelet/app/server.go);
 * uWebSockets.js would only say `App construction failed`. `certName`/`keyName` name the files
 * in the error (e.g. `--tls-private-key-file /etc/k/key.pem`). Pure apart from node:crypto.
 * @throws InvalidArgumentError `<keyName>: not a PEM private key: <reason>`, `<certName>: not a PEM
 *   certificate: <reason>`, or `<keyName>: does not match the certificate in <certName>`.
 */
export function checkKeyPair(certPem: string | Buffer, keyPem: string | Buffer, certName: string, keyName: string): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new InvalidArgumentError(`${certName}: not a PEM certificate: ${cryptoReason(err)}`);
  }
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new InvalidArgumentError(`${keyName}: not a PEM private key: ${cryptoReason(err)}`);
  }
  if (!cert.checkPrivateKey(key)) throw new InvalidArgumentError(`${keyName}: does not match the certificate in ${certName}`);
}

/**
 * ensureServingCert: the given files (both or neither: InvalidArgumentError otherwise), or the
 * self-signed pair under `<rootDir>/pki` (reused while valid; remade when missing or expired).
 * The key is written 0600, atomically. The pair used is checked (checkKeyPair) before the server
 * is built, so a corrupt or mismatched file stops the start with one line naming it. `clock`
 * (epoch ms; default the real clock) says whether the pair under pki is still valid for a day.
 * @throws InvalidArgumentError naming `--tls-cert-file`/`--tls-private-key-file` when only one is given, a given file cannot be read,
 *   or a pair does not parse or match (naming the file: the flag's, or `<rootDir>/pki/kubelet-ts.key`, which is never silently replaced).
 */
export async function ensureServingCert(opts: {
  rootDir: string;
  nodeName: string;
  address: string;
  certFile: string;
  keyFile: string;
  clock?: Clock;
}): Promise<ServingCert> {
  const clock = opts.clock ?? realClock;
  if ((opts.certFile === '') !== (opts.keyFile === ''))
    throw new InvalidArgumentError('--tls-cert-file and --tls-private-key-file must be given together');
  if (opts.certFile !== '') {
    const pem = await readIfAll(opts.certFile, opts.keyFile);
    if (pem === undefined)
      throw new InvalidArgumentError(`--tls-cert-file ${opts.certFile} / --tls-private-key-file ${opts.keyFile}: cannot read them`);
    checkKeyPair(pem.cert, pem.key, `--tls-cert-file ${opts.certFile}`, `--tls-private-key-file ${opts.keyFile}`);
    return { certFile: opts.certFile, keyFile: opts.keyFile, certPem: pem.cert, created: false };
  }
  const dir = join(opts.rootDir, kServingCertDir);
  const certFile = join(dir, 'kubelet-ts.crt');
  const keyFile = join(dir, 'kubelet-ts.key');
  const existing = await readIfAll(certFile, keyFile);
  if (existing !== undefined) {
    let validToMs = 0;
    try {
      validToMs = Date.parse(new X509Certificate(existing.cert).validTo);
    } catch {
      // unreadable: make a new one
    }
    if (validToMs > clock.now() + 86_400_000) {
      checkKeyPair(existing.cert, existing.key, certFile, keyFile);
      return { certFile, keyFile, certPem: existing.cert, created: false };
    }
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const names = servingCertNames(opts.nodeName, opts.address);
  const now = clock.now();
  const pems = await generate([{ name: 'commonName', value: `${opts.nodeName}@${Math.floor(now / 1000)}` }], {
    keyType: 'ec',
    curve: 'P-256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + kSelfSignedValidityDays * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [...names.dns.map((value) => ({ type: 2 as const, value })), ...names.ips.map((ip) => ({ type: 7 as const, ip }))],
      },
    ],
  });
  await writeFile(`${keyFile}.tmp`, pems.private, { mode: 0o600 });
  await rename(`${keyFile}.tmp`, keyFile);
  await writeFile(`${certFile}.tmp`, pems.cert, { mode: 0o644 });
  await rename(`${certFile}.tmp`, certFile);
  return { certFile, keyFile, certPem: pems.cert, created: true };
}
