// A streaming server of the CRI's shape for unit tests of src/workers/streams/cri-*.ts: an HTTP server on 127.0.0.1
// that upgrades every request to SPDY/3.1 with the protocol given (as containerd 1.6's pkg/cri/streaming does), and
// hands each stream the client opens to the test. spdy-transport's server side plays the runtime.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import transport from 'spdy-transport';

/** A stream the client opened, as the server sees it: its headers, its reply (SYN_REPLY) and its reset (RST_STREAM). */
export interface SpdyServerStream extends Duplex {
  headers: Record<string, string>;
  respond(status: number, headers: Record<string, string>): void;
  abort(): void;
}

/** One upgraded connection: `socket` to end it from the server's side. */
export interface SpdyServerConnection {
  socket: Socket;
}

/**
 * startSpdyServer listens on 127.0.0.1 (a free port), answers the upgrade with `X-Stream-Protocol-Version: protocol`,
 * and calls `onStream` for each stream a client opens (no stream is answered unless `onStream` calls `respond`).
 * Resolves the base URL (`http://127.0.0.1:<port>`) and `close`, which ends every connection and the listener;
 * call it in `afterEach`/`finally`.
 */
export async function startSpdyServer(
  protocol: string,
  onStream: (stream: SpdyServerStream, conn: SpdyServerConnection) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (_req, socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`,
    );
    const conn = (
      transport as unknown as {
        connection: {
          create(s: Duplex, o: object): { on(e: 'stream', fn: (s: SpdyServerStream) => void): void; start(v: number): void };
        };
      }
    ).connection.create(socket, { protocol: 'spdy', isServer: true });
    conn.start(3.1);
    conn.on('stream', (stream) => {
      stream.on('error', () => {});
      onStream(stream, { socket });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
