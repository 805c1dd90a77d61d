// The remotecommand v5 WebSocket path of src/workers/streams/cri-exec-stream.ts against a `ws` server playing a streaming
// server that speaks v5 (containerd 1.6 does not, so the .cri suite cannot reach it): stdin closed with the 255 frame.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RuntimeService } from '../../../src/workers/runtime/cri/services.js';
import { AgentError } from '../../../src/shared/errors.js';
import { openCriContainerStream } from '../../../src/workers/streams/cri-exec-stream.js';

const servers: WebSocketServer[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          for (const c of s.clients) c.terminate();
          s.close(() => resolve());
        }),
    ),
  );
});

/** A v5 streaming server on 127.0.0.1: `onConn` gets each accepted WebSocket; resolves a RuntimeService whose exec answers its URL. */
async function v5Server(onConn: (ws: WebSocket) => void): Promise<RuntimeService> {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (p) => (p.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false),
  });
  servers.push(wss);
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', onConn);
  const url = `http://127.0.0.1:${(wss.address() as AddressInfo).port}/exec/tok`;
  return { exec: async () => ({ url }), attach: async () => ({ url }) } as unknown as RuntimeService;
}

describe('openCriContainerStream on a v5 streaming server', () => {
  it('sends stdin on channel 0, closes it with [255, 0], and reads the exit code from the Status', async () => {
    const frames: Buffer[] = [];
    const runtime = await v5Server((ws) => {
      ws.on('message', (m: Buffer) => {
        frames.push(Buffer.from(m));
        if (m[0] === 255 && m[1] === 0) {
          // cat saw EOF: echo what came, then the Status of exit 4.
          const data = Buffer.concat(frames.filter((f) => f[0] === 0).map((f) => f.subarray(1)));
          ws.send(Buffer.concat([Buffer.from([1]), data]));
          ws.send(
            Buffer.concat([
              Buffer.from([3]),
              Buffer.from(
                JSON.stringify({
                  status: 'Failure',
                  reason: 'NonZeroExitCode',
                  details: { causes: [{ reason: 'ExitCode', message: '4' }] },
                }),
              ),
            ]),
          );
          ws.close(1000);
        }
      });
    });
    let out = '';
    const exit = new Promise<number | null>((resolve) => {
      void openCriContainerStream(
        runtime,
        'a'.repeat(64),
        { kind: 'exec', command: ['cat'], stdin: true, stdout: true, stderr: true, tty: false },
        {
          onOutput: (_fd, c) => (out += c.toString()),
          onExit: (code) => resolve(code),
        },
      ).then((s) => {
        expect(s.protocol).toBe('websocket v5.channel.k8s.io');
        expect(s.stdinClosable).toBe(true);
        s.writeStdin(Buffer.from('hello'), () => s.endStdin());
      });
    });
    expect(await exit).toBe(4);
    expect(out).toBe('hello');
    expect(frames.map((f) => [...f])).toEqual([
      [0, ...Buffer.from('hello')],
      [255, 0],
    ]);
  });
});

describe('openCriContainerStream errors', () => {
  const opts = { kind: 'exec' as const, command: ['true'], stdin: false, stdout: true, stderr: false, tty: false };
  const handlers = { onOutput: () => {}, onExit: () => {} };
  const runtimeAt = (url: string) => ({ exec: async () => ({ url }) }) as unknown as RuntimeService;

  it('rejects with ERR_RUNTIME_UNAVAILABLE when the streaming server cannot be reached', async () => {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as AddressInfo).port;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    const err = await openCriContainerStream(runtimeAt(`http://127.0.0.1:${port}/exec/x`), 'a'.repeat(64), opts, handlers).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe('ERR_RUNTIME_UNAVAILABLE');
    expect((err as Error).message).toMatch(new RegExp(`cannot reach the streaming server 127\\.0\\.0\\.1:${port}`));
  });

  it('rejects with ERR_PROTOCOL naming the status and body when the server refuses the upgrade', async () => {
    const s = http.createServer((_req, res) => res.writeHead(404).end('token not found'));
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    try {
      const port = (s.address() as AddressInfo).port;
      const err = await openCriContainerStream(runtimeAt(`http://127.0.0.1:${port}/exec/x`), 'a'.repeat(64), opts, handlers).then(
        () => null,
        (e: unknown) => e,
      );
      expect((err as AgentError).code).toBe('ERR_PROTOCOL');
      expect((err as Error).message).toMatch(/HTTP 404: token not found$/);
    } finally {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });
});
