// A unix-socket proxy to dockerd for outage tests: the agent under test talks to Docker through it,
// and the test cuts it (every connection dropped, the socket closed) and opens it again — Docker
// "goes away" for that agent only, never for the shared dockerd.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { DOCKER_SOCKET } from './docker.js';

/** DockerProxy: `cut()` drops every connection and stops listening; `open()` listens again. */
export interface DockerProxy {
  open(): Promise<void>;
  cut(): Promise<void>;
}

/** dockerProxy listens on the unix socket `path` (then open) and forwards to {@link DOCKER_SOCKET}. */
export async function dockerProxy(path: string): Promise<DockerProxy> {
  let server: Server | null = null;
  const sockets = new Set<Socket>();
  const open = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = createConnection(DOCKER_SOCKET);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
      });
      server.listen(path, resolve);
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (server) server.close(() => resolve());
      else resolve();
      server = null;
    });
  await open();
  return { open, cut };
}
