// The streams worker (src/workers/container-streams.worker.ts) over the fake runtime's echo: ordering, credits, teardown.
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { StreamInbound, StreamOutbound } from '../../src/shared/streams-protocol.js';
import { kStreamOutputWindowBytes } from '../../src/shared/streams-protocol.js';
import { StreamsWorker, type StreamPort } from '../../src/workers/container-streams.worker.js';
import { newFakeRuntime } from '../../src/workers/runtime/fake/fake-runtime.js';

const id = 'a'.repeat(64);

function channel() {
  const { port1, port2 } = new MessageChannel();
  const got: StreamOutbound[] = [];
  port1.on('message', (m: StreamOutbound) => got.push(m));
  const closed = new Promise<void>((resolve) => port1.on('close', () => resolve()));
  return { main: port1, worker: port2 as unknown as StreamPort, got, closed, send: (m: StreamInbound) => port1.postMessage(m) };
}

describe('StreamsWorker', () => {
  it('relays stdin to the echo in order, resizes first, and ends with the exit when stdin ends', async () => {
    const rt = newFakeRuntime();
    const w = new StreamsWorker({ kind: 'container-streams', dockerSocketPath: '', nodeName: 'n' }, rt);
    const c = channel();
    w.open(1, c.worker, {
      kind: 'exec',
      containerId: id,
      command: ['cat'],
      stdin: true,
      stdout: true,
      stderr: false,
      tty: true,
      size: { width: 90, height: 30 },
    });
    c.send({ t: 'stdin', data: new TextEncoder().encode('one ') });
    c.send({ t: 'stdin', data: new TextEncoder().encode('two') });
    c.send({ t: 'stdinEnd' });
    await c.closed;
    const out = c.got
      .filter((m) => m.t === 'out')
      .map((m) => Buffer.from((m as { data: Uint8Array }).data).toString())
      .join('');
    expect(out).toBe('one two');
    expect(c.got[0]).toEqual({ t: 'started' });
    expect(c.got.at(-1)).toEqual({ t: 'exit', exitCode: 0, error: undefined });
    expect(c.got.filter((m) => m.t === 'stdinAck').reduce((n, m) => n + (m as { bytes: number }).bytes, 0)).toBe(7);
    expect(rt.calls).toContain('resize:90x30');
    expect(w.size).toBe(0);
  });

  it('holds output past the credit window until acked', async () => {
    const w = new StreamsWorker({ kind: 'container-streams', dockerSocketPath: '', nodeName: 'n' }, newFakeRuntime());
    const c = channel();
    w.open(2, c.worker, { kind: 'exec', containerId: id, command: ['cat'], stdin: true, stdout: true, stderr: false, tty: false });
    const big = new Uint8Array(kStreamOutputWindowBytes);
    c.send({ t: 'stdin', data: big });
    c.send({ t: 'stdin', data: new TextEncoder().encode('tail') });
    const outBytes = () => c.got.filter((m) => m.t === 'out').reduce((n, m) => n + (m as { data: Uint8Array }).data.byteLength, 0);
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (c.got.filter((m) => m.t === 'stdinAck').length === 2) {
          clearInterval(t);
          resolve();
        }
      }, 5);
    });
    expect(outBytes()).toBe(kStreamOutputWindowBytes);
    c.send({ t: 'ack', bytes: kStreamOutputWindowBytes });
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (outBytes() === kStreamOutputWindowBytes + 4) {
          clearInterval(t);
          resolve();
        }
      }, 5);
    });
    c.send({ t: 'close' });
    await c.closed;
    expect(w.size).toBe(0);
  });

  it('refuses an ID that is no Docker ID with an exit carrying the error', async () => {
    const w = new StreamsWorker({ kind: 'container-streams', dockerSocketPath: '', nodeName: 'n' }, newFakeRuntime());
    const c = channel();
    w.open(3, c.worker, { kind: 'attach', containerId: '../x', command: [], stdin: false, stdout: true, stderr: false, tty: false });
    await c.closed;
    expect(c.got).toMatchObject([{ t: 'exit', exitCode: null, error: { code: 'ERR_INVALID_ARGUMENT' } }]);
  });
});
