/**
 * Counterpart of the kubelet's container log reading (pkg/kubelet/kuberuntime/logs ReadLogs, and
 * dockershim's GetContainerLogs) and of the CRI Version call: a worker_threads entry that reads
 * Docker logs for the HTTP server.
 *
 * Why a dedicated Worker and not a piscina task: a `follow` read lasts as long as the container
 * runs, so it would pin a pool slot that syncs need; one small long-lived Worker per agent
 * multiplexes every log read (by request id) and keeps all Docker I/O off the main thread. It
 * talks HTTP over the unix socket with node:http, so dockerode keeps its one home.
 *
 * Backpressure: the main thread posts `pause` when the client's socket is backpressured and
 * `resume` when it drains; the worker pauses the Docker response stream in between, so a slow
 * client never makes either thread buffer a whole log.
 */
import { request, type IncomingMessage, type ClientRequest } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { AgentError, serializeError } from '../shared/errors.js';
import type { LogsOptions, LogsWorkerBootstrap, LogsWorkerMessage, LogsWorkerRequest } from '../shared/logs-protocol.js';
import { isOwnedBy } from './labels.js';

/**
 * newDemuxer splits Docker's multiplexed log stream (8-byte frame headers: stream type, 3 zero
 * bytes, big-endian payload size) into payload bytes; stdout and stderr are merged in order, as
 * the kubelet serves them. Stateful across chunks. Pure otherwise.
 */
export function newDemuxer(): (chunk: Buffer) => Buffer[] {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    const out: Buffer[] = [];
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      out.push(pending.subarray(8, 8 + size));
      pending = pending.subarray(8 + size);
    }
    return out;
  };
}

/** logsQuery: the Docker Engine `GET /containers/{id}/logs` query for `opts` (`since` is epoch seconds from `nowMs`). */
export function logsQuery(opts: LogsOptions, nowMs: number): string {
  const q = new URLSearchParams({ stdout: '1', stderr: '1', follow: opts.follow ? '1' : '0', timestamps: opts.timestamps ? '1' : '0' });
  q.set('tail', opts.tailLines === undefined ? 'all' : String(opts.tailLines));
  if (opts.sinceSeconds !== undefined) q.set('since', String(Math.floor(nowMs / 1000) - opts.sinceSeconds));
  return q.toString();
}

interface Read {
  req?: ClientRequest;
  res?: IncomingMessage;
  paused: boolean;
  cancelled: boolean;
}

function dockerGet(socketPath: string, path: string): Promise<IncomingMessage & { req: ClientRequest }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'GET', headers: { Host: 'docker' } }, (res) => {
      resolve(Object.assign(res, { req }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      reject(new AgentError('ERR_RUNTIME_UNAVAILABLE', `GET ${path}: container runtime is unavailable: ${err.message}`, { retriable: true }));
    });
    req.end();
  });
}

async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function dockerJson<T>(socketPath: string, path: string, what: string): Promise<T> {
  const res = await dockerGet(socketPath, path);
  const body = await readAll(res);
  if (res.statusCode === 404) throw new AgentError('ERR_NOT_FOUND', `${what}: not found`);
  if ((res.statusCode ?? 500) >= 400) throw new AgentError('ERR_RUNTIME', `${what}: HTTP ${res.statusCode}: ${body.toString('utf8').trim()}`);
  return JSON.parse(body.toString('utf8')) as T;
}

/**
 * LogsWorker: the request handler, separated from the port for tests. `post` receives the
 * messages for the main thread.
 */
export class LogsWorker {
  readonly #reads = new Map<number, Read>();
  constructor(private readonly bootstrap: LogsWorkerBootstrap, private readonly post: (m: LogsWorkerMessage) => void) {}

  handle(msg: LogsWorkerRequest): void {
    switch (msg.type) {
      case 'logs':
        void this.#logs(msg);
        break;
      case 'version':
        dockerJson<{ Version: string; ApiVersion: string }>(this.bootstrap.dockerSocketPath, '/version', 'docker version').then(
          (v) => this.post({ type: 'version', id: msg.id, version: v.Version, apiVersion: v.ApiVersion }),
          (err) => this.post({ type: 'error', id: msg.id, error: serializeError(err) }),
        );
        break;
      case 'pause':
      case 'resume': {
        const r = this.#reads.get(msg.id);
        if (!r) break;
        r.paused = msg.type === 'pause';
        if (r.paused) r.res?.pause();
        else r.res?.resume();
        break;
      }
      case 'cancel': {
        const r = this.#reads.get(msg.id);
        if (!r) break;
        r.cancelled = true;
        r.req?.destroy();
        this.#reads.delete(msg.id);
        break;
      }
      case 'stop':
        for (const r of this.#reads.values()) r.req?.destroy();
        this.#reads.clear();
        break;
    }
  }

  async #logs(msg: Extract<LogsWorkerRequest, { type: 'logs' }>): Promise<void> {
    const read: Read = { paused: false, cancelled: false };
    this.#reads.set(msg.id, read);
    const fail = (err: unknown) => {
      if (read.cancelled) return;
      this.#reads.delete(msg.id);
      this.post({ type: 'error', id: msg.id, error: serializeError(err) });
    };
    try {
      if (!/^[0-9a-f]{12,64}$/.test(msg.containerId)) throw new AgentError('ERR_INVALID_ARGUMENT', `container ID ${JSON.stringify(msg.containerId)} is not a Docker ID`);
      const info = await dockerJson<{ Config?: { Labels?: Record<string, string>; Tty?: boolean } }>(
        this.bootstrap.dockerSocketPath, `/containers/${msg.containerId}/json`, `inspect container ${msg.containerId}`,
      );
      if (!isOwnedBy(info.Config?.Labels ?? {}, this.bootstrap.nodeName)) {
        throw new AgentError('ERR_INVALID_ARGUMENT', `refusing to read the logs of container ${msg.containerId}: it is not owned by node ${this.bootstrap.nodeName}`);
      }
      if (read.cancelled) return;
      const res = await dockerGet(this.bootstrap.dockerSocketPath, `/containers/${msg.containerId}/logs?${logsQuery(msg, Date.now())}`);
      read.req = res.req;
      read.res = res;
      if (read.cancelled) {
        res.req.destroy();
        return;
      }
      if ((res.statusCode ?? 500) >= 400) {
        const body = (await readAll(res)).toString('utf8').trim();
        throw new AgentError(res.statusCode === 404 ? 'ERR_NOT_FOUND' : 'ERR_RUNTIME', `logs of container ${msg.containerId}: HTTP ${res.statusCode}: ${body}`);
      }
      if (read.paused) res.pause();
      const demux = info.Config?.Tty ? (c: Buffer) => [c] : newDemuxer();
      let left = msg.limitBytes ?? Infinity;
      res.on('data', (chunk: Buffer) => {
        if (read.cancelled || left <= 0) return;
        for (let part of demux(chunk)) {
          if (part.length > left) part = part.subarray(0, left);
          left -= part.length;
          if (part.length > 0) this.post({ type: 'data', id: msg.id, chunk: new Uint8Array(part) });
          if (left <= 0) {
            // limitBytes reached: end here, as the kubelet's LimitWriter does.
            this.#reads.delete(msg.id);
            res.req.destroy();
            this.post({ type: 'end', id: msg.id });
            return;
          }
        }
      });
      res.on('end', () => {
        if (read.cancelled || !this.#reads.has(msg.id)) return;
        this.#reads.delete(msg.id);
        this.post({ type: 'end', id: msg.id });
      });
      res.on('error', (err) => {
        if (!this.#reads.has(msg.id)) return;
        fail(new AgentError('ERR_RUNTIME', `logs of container ${msg.containerId}: ${err.message}`, { retriable: true }));
      });
    } catch (err) {
      fail(err);
    }
  }
}

if (parentPort && (workerData as LogsWorkerBootstrap | undefined)?.kind === 'container-logs') {
  const port = parentPort;
  const worker = new LogsWorker(workerData as LogsWorkerBootstrap, (m) => port.postMessage(m));
  port.on('message', (msg: LogsWorkerRequest) => {
    worker.handle(msg);
    if (msg.type === 'stop') port.close();
  });
}
