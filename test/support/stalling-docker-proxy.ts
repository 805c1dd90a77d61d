// An HTTP proxy to dockerd on a unix socket that holds chosen requests for ever (never forwarded, never
// answered): a wedged engine call (`runc create` stuck) for one agent only, never for the shared dockerd.
import { createConnection, type Socket } from 'node:net';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { DOCKER_SOCKET } from './docker.js';

/** StallingDockerProxy: `held` lists the requests held so far (`METHOD /path?query`); `close()` drops every connection. */
export interface StallingDockerProxy {
  held: string[];
  close(): Promise<void>;
}

/**
 * stallingDockerProxy listens on the unix socket `path` and forwards each request to
 * {@link DOCKER_SOCKET}, except those for which `stall(method, url)` is true (the version prefix
 * `/v1.41` removed from `url`): those are read and then held unanswered until `close()`.
 * Upgraded connections (exec/attach hijacks) are piped through.
 */
export async function stallingDockerProxy(path: string, stall: (method: string, url: string) => boolean): Promise<StallingDockerProxy> {
  const sockets = new Set<Socket>();
  const held: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = (req.url ?? '').replace(/^\/v[\d.]+/, '');
    if (stall(req.method ?? 'GET', url)) {
      held.push(`${req.method} ${url}`);
      req.resume();
      return;
    }
    const up = request({ socketPath: DOCKER_SOCKET, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const upstream = createConnection(DOCKER_SOCKET);
    sockets.add(upstream);
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    held,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
