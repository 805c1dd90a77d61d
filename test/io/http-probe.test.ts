// The raw-socket probe client (src/io/http-probe.ts) that the probe manager runs on the main
// thread for targets the node reaches: what it reads of a reply and when it stops reading, against
// real local HTTP and HTTPS servers.
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kMaxProbeBodyBytes, parseHttpReply, runDirectNetProbe } from '../../src/io/http-probe.js';
import { PROTOCOL_VERSION } from '../../src/shared/thread-wire.js';
import type { NetProbeTask } from '../../src/shared/probe-tasks.js';
import { ensureServingCert } from '../../src/main/host/serving-cert.js';

const task = (port: number, path: string, extra: Partial<NetProbeTask> = {}): NetProbeTask => ({
  kind: 'netProbe',
  protocol: PROTOCOL_VERSION,
  mode: 'http',
  host: '127.0.0.1',
  port,
  scheme: 'HTTP',
  path,
  timeoutMs: 2000,
  ...extra,
});

describe('runDirectNetProbe over a raw socket', () => {
  let server: http.Server;
  let port: number;
  const open = new Set<net.Socket>();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/chunked') {
        res.writeHead(200);
        res.write('first ');
        setTimeout(() => res.end('second'), 20);
      } else if (req.url === '/endless') {
        // Never ends: the probe must stop once it has 10 KiB of body (the kubelet reads no more).
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('x'.repeat(4096)), 5);
        res.on('close', () => clearInterval(timer));
      } else if (req.url === '/keepalive') {
        // Ignores Connection: close and keeps the socket open: Content-Length tells the probe it is done.
        res.shouldKeepAlive = true;
        res.writeHead(503, { 'content-length': '4' });
        res.end('busy');
      } else {
        res.writeHead(204);
        res.end();
      }
    });
    server.on('connection', (s) => {
      open.add(s);
      s.on('close', () => open.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  );

  it('decodes a chunked body, reads a 204 without one, and stops at Content-Length on a kept-alive socket', async () => {
    expect(await runDirectNetProbe(task(port, '/chunked'))).toEqual({ result: 'success', output: 'first second' });
    expect(await runDirectNetProbe(task(port, '/none'))).toEqual({ result: 'success', output: '' });
    expect(await runDirectNetProbe(task(port, '/keepalive', { timeoutMs: 60_000 }))).toEqual({
      result: 'failure',
      output: 'HTTP probe failed with statuscode: 503',
    });
  });

  it('reads at most 10 KiB of an endless body and closes the connection', async () => {
    const r = await runDirectNetProbe(task(port, '/endless', { timeoutMs: 60_000 }));
    expect(r.result).toBe('success');
    expect(r.output.length).toBe(kMaxProbeBodyBytes);
    // The probe closed its end: the server's socket goes away (it would stream forever otherwise).
    for (let i = 0; i < 50 && open.size > 0; i++) await new Promise((r2) => setTimeout(r2, 20));
    expect(open.size).toBe(0);
  });

  it("names a refused port and a reply that is not HTTP in Go's words", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await runDirectNetProbe(task(closedPort, '/x'))).toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${closedPort}/x": dial tcp 127.0.0.1:${closedPort}: connect: connection refused`,
    });
    const junk = net.createServer((s) => s.resume().end('SSH-2.0-OpenSSH\r\n'));
    await new Promise<void>((resolve) => junk.listen(0, '127.0.0.1', resolve));
    const junkPort = (junk.address() as AddressInfo).port;
    expect(await runDirectNetProbe(task(junkPort, '/'))).toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${junkPort}/": malformed HTTP response`,
    });
    await new Promise<void>((resolve) => junk.close(() => resolve()));
  });

  it("probes HTTPS without verifying the certificate (the kubelet's prober)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kts-probe-tls-'));
    try {
      const cert = await ensureServingCert({ rootDir: dir, nodeName: 'n', address: '127.0.0.1', certFile: '', keyFile: '' });
      const tlsServer = https.createServer({ cert: await readFile(cert.certFile), key: await readFile(cert.keyFile) }, (_req, res) =>
        res.end('secure'),
      );
      await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
      const tlsPort = (tlsServer.address() as AddressInfo).port;
      expect(await runDirectNetProbe(task(tlsPort, '/', { scheme: 'HTTPS' }))).toEqual({ result: 'success', output: 'secure' });
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('parseHttpReply', () => {
  it('decodes a chunked body and keeps at most 10 KiB', () => {
    expect(
      parseHttpReply(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n')),
    ).toEqual({ status: 200, location: undefined, body: 'abcde' });
    const big = parseHttpReply(Buffer.from(`HTTP/1.0 500 X\r\n\r\n${'y'.repeat(20_000)}`));
    expect(big).toMatchObject({ status: 500 });
    expect(big!.body.length).toBe(kMaxProbeBodyBytes);
  });
});
