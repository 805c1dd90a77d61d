// The SPDY side of src/workers/streams/cri-port-forward.ts (startCriPortForward) against a spdy-transport server
// playing the CRI streaming server's port-forward (portforward.k8s.io over SPDY/3.1, as containerd 1.6's
// pkg/cri/streaming): as client-go's port-forward (tools/portforward/portforward.go handleConnection), no byte goes
// on the data stream before the server answered the error and data streams; a stream reset unanswered (a refused
// port) ends the connection with the error stream's text.
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeService } from '../../../src/workers/runtime/cri/services.js';
import { startCriPortForward } from '../../../src/workers/streams/cri-port-forward.js';
import { waitFor } from '../../support/docker.js';
import { openPortForwardChannel } from '../../support/port-forward-channel.js';
import { startSpdyServer, type SpdyServerStream } from '../../support/spdy-server.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** forward: one connection through a port-forward server of `onStream`'s making (its PortForward URL given by a stub runtime). */
async function forward(onStream: Parameters<typeof startSpdyServer>[1]) {
  const { url, close } = await startSpdyServer('portforward.k8s.io', onStream);
  closers.push(close);
  const runtime = { portForward: async () => ({ url: `${url}/portforward/tok` }) } as unknown as RuntimeService;
  const c = openPortForwardChannel((port, onDone) => startCriPortForward(runtime, port, { sandboxId: 'b'.repeat(64), port: 8080 }, onDone));
  closers.push(async () => {
    c.stop();
    c.port.close();
  });
  return c;
}

describe('startCriPortForward (client-go port-forward over SPDY)', () => {
  it('writes nothing on the data stream before the server answered both streams, then relays both ways', async () => {
    const seen = { dataBeforeReplies: false, received: '' };
    const streams = new Map<string, SpdyServerStream>();
    let replied = false;
    const c = await forward((stream) => {
      streams.set(stream.headers.streamtype!, stream);
      if (stream.headers.streamtype === 'data') {
        stream.on('data', (chunk: Buffer) => {
          if (!replied) seen.dataBeforeReplies = true;
          seen.received += chunk.toString();
        });
        stream.on('end', () => {
          stream.end(`echo:${seen.received}`);
          streams.get('error')!.end();
        });
      }
      if (streams.size === 2)
        setTimeout(() => {
          for (const s of streams.values()) s.respond(200, {});
          replied = true;
        }, 200);
    });
    c.port.postMessage({ t: 'data', data: new Uint8Array(Buffer.from('GET / HTTP/1.0\r\n\r\n')) });
    c.port.postMessage({ t: 'closeWrite' });
    await waitFor(() => c.got.done, { timeoutMs: 10_000, description: 'the connection ended' });
    expect(seen.dataBeforeReplies).toBe(false);
    expect(c.got.data.toString()).toBe('echo:GET / HTTP/1.0\r\n\r\n');
    expect(c.got.end).toEqual({ error: undefined });
  });

  it("ends with the runtime's words when the server resets the data stream unanswered (a refused port)", async () => {
    const streams = new Map<string, SpdyServerStream>();
    const c = await forward((stream) => {
      streams.set(stream.headers.streamtype!, stream);
      if (streams.size < 2) return;
      const error = streams.get('error')!;
      error.respond(200, {});
      error.end('error forwarding port 8080 to pod bbbb, uid : dial tcp4 127.0.0.1:8080: connect: connection refused');
      streams.get('data')!.abort();
    });
    c.port.postMessage({ t: 'data', data: new Uint8Array(Buffer.from('hello')) });
    await waitFor(() => c.got.done, { timeoutMs: 10_000, description: 'the connection ended' });
    expect(c.got.end?.error).toBe('dial tcp4 127.0.0.1:8080: connect: connection refused');
    expect(c.got.written).toBe(0);
  });
});
