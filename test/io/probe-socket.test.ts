// The probes' one-shot TCP exchanges (src/io/probe-socket.ts): the handle path and the stream
// path must give the same results and the same errors, against real local servers.
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exchange,
  exchangeOverHandle,
  exchangeOverStream,
  kHandleExchange,
  ProbeSocketError,
  type ExchangeImpl,
} from '../../src/io/probe-socket.js';

/** A server whose behaviour is chosen by the first line the client sends. */
function behaviourServer(): net.Server {
  return net.createServer((s) => {
    s.on('error', () => {});
    s.once('data', (b) => {
      const cmd = b.toString('latin1').split('\n')[0];
      if (cmd === 'echo') s.end('echo:ok');
      else if (cmd === 'silent')
        s.resume(); // reads, never answers, never closes
      else if (cmd === 'close') s.end();
      else if (cmd === 'reset') s.resetAndDestroy();
      else if (cmd === 'stream') {
        const timer = setInterval(() => s.write('x'.repeat(1024)), 2);
        s.on('close', () => clearInterval(timer));
      }
    });
  });
}

async function listen(server: net.Server, host = '127.0.0.1'): Promise<number> {
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

async function closedPort(): Promise<number> {
  const s = net.createServer();
  const port = await listen(s);
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const impls: Array<[string, ExchangeImpl]> = [
  ['a net.Socket stream', exchangeOverStream],
  ["Node's TCP handle", exchangeOverHandle],
];

it('this Node offers the TCP handle API (else every probe takes the slower stream path)', () => {
  expect(kHandleExchange).toBe(true);
});

describe.each(impls)('one-shot exchange over %s', (_name, impl) => {
  const server = behaviourServer();
  let port = 0;
  beforeAll(async () => {
    port = await listen(server);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const req = (send: string | undefined, extra: Partial<Parameters<ExchangeImpl>[0]> = {}) => ({
    host: '127.0.0.1',
    port,
    send,
    timeoutMs: 5000,
    ...extra,
  });

  it('connects only (nothing sent): resolves empty at once', async () => {
    expect((await impl(req(undefined))).length).toBe(0);
  });

  it('sends, then reads until the peer closes', async () => {
    expect((await impl(req('echo\n'))).toString()).toBe('echo:ok');
    expect((await impl(req('close\n'))).length).toBe(0);
  });

  it('stops as soon as `complete` says so, on a peer that never stops sending', async () => {
    const got = await impl(req('stream\n', { complete: (b) => b.length >= 8192 }));
    expect(got.length).toBeGreaterThanOrEqual(8192);
  });

  it('rejects a refused port, a silent peer past the deadline and a reset, each by phase', async () => {
    const closed = await closedPort();
    await expect(impl(req(undefined, { port: closed }))).rejects.toMatchObject({ phase: 'connect', detail: 'connection refused' });
    await expect(impl(req('silent\n', { timeoutMs: 50 }))).rejects.toMatchObject({ phase: 'timeout' });
    await expect(impl(req('reset\n'))).rejects.toMatchObject({ phase: 'read', detail: 'connection reset by peer' });
    await expect(impl(req(undefined, { port: closed }))).rejects.toBeInstanceOf(ProbeSocketError);
  });

  it('reaches an IPv6 address', async (ctx) => {
    const v6 = behaviourServer();
    let p6: number;
    try {
      p6 = await listen(v6, '::1');
    } catch {
      return ctx.skip(); // no IPv6 loopback on this machine
    }
    try {
      expect((await impl({ host: '::1', port: p6, send: 'echo\n', timeoutMs: 5000 })).toString()).toBe('echo:ok');
    } finally {
      await new Promise<void>((resolve) => v6.close(() => resolve()));
    }
  });
});

describe('exchange', () => {
  it('takes the stream path for a host name (the handle needs an address) and gives the same answer', async () => {
    const server = behaviourServer();
    const port = await listen(server);
    try {
      expect((await exchange({ host: 'localhost', port, send: 'echo\n', timeoutMs: 5000 })).toString()).toBe('echo:ok');
      await expect(exchangeOverHandle({ host: 'localhost', port, timeoutMs: 5000 })).rejects.toThrow(/not an IP address/);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
