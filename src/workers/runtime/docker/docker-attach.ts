// Counterpart of dockershim's ExecInContainer / AttachContainer streaming (pkg/kubelet/dockershim/exec.go, docker_streaming.go): exec and attach over the engine's hijacked connection.
/**
 * The exec/attach half of the Docker runtime (docker-runtime.ts calls it): `POST
 * /containers/{id}/exec` then `POST /exec/{id}/start`, or `POST /containers/{id}/attach`, each
 * hijacked (HTTP upgrade to a raw socket), with Docker's multiplexed frames split by fd unless the
 * stream has a TTY; resize through `POST /exec/{id}/resize` or `POST /containers/{id}/resize`.
 * Worker threads only; dockerode stays under src/workers/runtime/.
 */
import type { Socket } from 'node:net';
import type Docker from 'dockerode';
import { AgentError } from '../../../shared/errors.js';
import type { ContainerStream, ContainerStreamHandlers, ContainerStreamOptions } from '../container/runtime.js';

/**
 * newFdDemuxer splits Docker's multiplexed stream (8-byte headers: stream type 1 stdout / 2
 * stderr, 3 zero bytes, big-endian payload size) into `[fd, payload]` pairs; stdin echo frames
 * (type 0) count as stdout. Stateful across chunks; pure otherwise.
 */
export function newFdDemuxer(): (chunk: Buffer) => Array<[1 | 2, Buffer]> {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    const out: Array<[1 | 2, Buffer]> = [];
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      out.push([pending[0] === 2 ? 2 : 1, pending.subarray(8, 8 + size)]);
      pending = pending.subarray(8 + size);
    }
    return out;
  };
}

type Dial = (opts: Record<string, unknown>) => Promise<unknown>;

function dialer(docker: Docker): Dial {
  return (opts) =>
    new Promise((resolve, reject) =>
      docker.modem.dial(opts as unknown as Parameters<Docker['modem']['dial']>[0], (err: unknown, data: unknown) =>
        err ? reject(err) : resolve(data),
      ),
    );
}

/**
 * openDockerStream opens an exec or attach stream on the running container `id` and resolves
 * with it once Docker upgraded the connection. `mapError` turns engine errors into AgentErrors.
 * @throws ERR_INVALID_ARGUMENT when the container is not running (Docker's 409); the mapped error otherwise.
 */
export async function openDockerStream(
  docker: Docker,
  id: string,
  opts: ContainerStreamOptions,
  h: ContainerStreamHandlers,
  mapError: (err: unknown, what: string) => AgentError,
): Promise<ContainerStream> {
  const dial = dialer(docker);
  const what = `${opts.kind} in container ${id}`;
  let execId = '';
  let sock: Socket;
  try {
    if (opts.kind === 'exec') {
      const created = (await dial({
        path: `/containers/${id}/exec`,
        method: 'POST',
        statusCodes: { 201: true, 404: 'no such container', 409: 'container is not running' },
        options: { AttachStdin: opts.stdin, AttachStdout: opts.stdout, AttachStderr: opts.stderr, Tty: opts.tty, Cmd: opts.command },
      })) as { Id: string };
      execId = created.Id;
      sock = (await dial({
        path: `/exec/${execId}/start`,
        method: 'POST',
        hijack: true,
        openStdin: opts.stdin,
        isStream: true,
        statusCodes: { 200: true, 101: true, 404: 'no such exec', 409: 'container is not running' },
        options: { Detach: false, Tty: opts.tty },
      })) as Socket;
    } else {
      // As dockerode's attach: the options are the query and also the (ignored) body, whose write
      // flushes the request (the modem never ends a request that keeps stdin open).
      sock = (await dial({
        path: `/containers/${id}/attach?`,
        method: 'POST',
        hijack: true,
        openStdin: opts.stdin,
        isStream: true,
        statusCodes: { 200: true, 101: true, 404: 'no such container', 409: 'container is not running' },
        options: { stream: true, stdin: opts.stdin, stdout: opts.stdout, stderr: opts.stderr },
      })) as Socket;
    }
  } catch (err) {
    if ((err as { statusCode?: unknown })?.statusCode === 409)
      throw new AgentError('ERR_INVALID_ARGUMENT', `${what}: the container is not running`, { cause: err });
    throw mapError(err, what);
  }
  let closed = false;
  let ended = false;
  const demux = opts.tty ? (c: Buffer): Array<[1 | 2, Buffer]> => [[1, c]] : newFdDemuxer();
  const finish = (err?: Error) => {
    if (ended || closed) return;
    ended = true;
    sock.destroy();
    if (err || opts.kind === 'attach') return h.onExit(null, err);
    dial({ path: `/exec/${execId}/json`, method: 'GET', statusCodes: { 200: true, 404: 'no such exec' } }).then(
      (info) => {
        if (closed) return;
        const code = (info as { ExitCode?: unknown; Running?: unknown }).ExitCode;
        h.onExit(typeof code === 'number' && (info as { Running?: unknown }).Running !== true ? code : null);
      },
      (e) => {
        if (!closed) h.onExit(null, mapError(e, `inspect exec ${execId}`));
      },
    );
  };
  sock.on('data', (chunk: Buffer) => {
    if (closed) return;
    for (const [fd, part] of demux(chunk)) {
      if (closed) return;
      if (part.length > 0) h.onOutput(fd, part);
    }
  });
  sock.on('end', () => finish());
  sock.on('close', () => finish());
  sock.on('error', (e) => finish(new AgentError('ERR_RUNTIME', `${what}: ${e.message}`, { retriable: true })));
  return {
    writeStdin(chunk, done) {
      if (closed || ended || sock.writableEnded) return done();
      sock.write(chunk, () => done());
    },
    endStdin() {
      if (!closed && !ended && !sock.writableEnded) sock.end();
    },
    async resize(width, height) {
      if (closed || ended) return;
      const path = opts.kind === 'exec' ? `/exec/${execId}/resize?` : `/containers/${id}/resize?`;
      try {
        await dial({
          path,
          method: 'POST',
          statusCodes: { 200: true, 201: true, 404: 'not found', 409: 'not running', 500: 'cannot resize' },
          options: { h: height, w: width },
        });
      } catch (err) {
        throw mapError(err, `resize the TTY of ${what}`);
      }
    },
    pause: () => sock.pause(),
    resume: () => sock.resume(),
    close() {
      if (closed) return;
      closed = true;
      sock.destroy();
    },
  };
}
