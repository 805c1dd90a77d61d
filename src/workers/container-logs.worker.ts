/**
 * Counterpart of the kubelet's container log reading (pkg/kubelet/kuberuntime/logs ReadLogs, and
 * dockershim's GetContainerLogs) and of the CRI Version call: a worker_threads entry that reads
 * container logs for the HTTP server, through the node-scoped NodeRuntime (logs.readContainerLogs,
 * runtime.version) that getRuntime (runtime/node-runtime.ts) picks from its bootstrap.
 *
 * Why a dedicated Worker and not a piscina task: a `follow` read lasts as long as the container
 * runs, so it would pin a pool slot that syncs need; one small long-lived Worker per agent
 * multiplexes every log read (by request id) and keeps the runtime's I/O off the main thread. The
 * runtime's reader gives the log's bytes; this side applies limitBytes.
 *
 * Backpressure: the main thread posts `pause` when the client's socket is backpressured and
 * `resume` when it drains; the worker pauses the runtime's log stream in between, so a slow
 * client never makes either thread buffer a whole log.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AgentError, serializeError } from '../shared/errors.js';
import type { LogsWorkerBootstrap, LogsWorkerMessage, LogsWorkerRequest } from '../shared/logs-protocol.js';
import { newLogger, type Logger } from '../shared/logging.js';
import { newContainerLogManager, type ContainerLogManager } from './logs/container-log-manager.js';
import { getRuntime } from './runtime/node-runtime.js';
import type { ContainerLogReader, NodeRuntime } from './runtime/container/runtime.js';
import { announceThreadRole } from './thread-roles.js';

announceThreadRole('container-logs');

interface Read {
  reader?: ContainerLogReader;
  paused: boolean;
  cancelled: boolean;
}

/**
 * LogsWorker: the request handler, separated from the port for tests. `post` receives the
 * messages for the main thread.
 */
export class LogsWorker {
  readonly #reads = new Map<number, Read>();
  readonly #runtime: Pick<NodeRuntime, 'runtime' | 'logs'>;

  /**
   * `runtime` defaults to this thread's NodeRuntime for `bootstrap` (getRuntime), scoped to its node.
   * `logManager`: on a CRI runtime, the container log manager (logs/container-log-manager.ts) that
   * rotates the runtime's log files; started here, stopped by `stop`.
   */
  constructor(
    bootstrap: LogsWorkerBootstrap,
    private readonly post: (m: LogsWorkerMessage) => void,
    runtime?: Pick<NodeRuntime, 'runtime' | 'logs'>,
    private readonly logManager?: Pick<ContainerLogManager, 'start' | 'stop'>,
  ) {
    this.#runtime = runtime ?? getRuntime(bootstrap);
    logManager?.start();
  }

  handle(msg: LogsWorkerRequest): void {
    switch (msg.type) {
      case 'logs':
        void this.#logs(msg);
        break;
      case 'version':
        // The kubelet's own CRI client version, as kuberuntime sends it.
        this.#runtime.runtime.version('0.1.0').then(
          (v) =>
            this.post({
              type: 'version',
              id: msg.id,
              runtimeName: v.runtime_name,
              version: v.runtime_version,
              apiVersion: v.runtime_api_version,
            }),
          (err) => this.post({ type: 'error', id: msg.id, error: serializeError(err) }),
        );
        break;
      case 'pause':
      case 'resume': {
        const r = this.#reads.get(msg.id);
        if (!r) break;
        r.paused = msg.type === 'pause';
        if (r.paused) r.reader?.pause();
        else r.reader?.resume();
        break;
      }
      case 'cancel': {
        const r = this.#reads.get(msg.id);
        if (!r) break;
        r.cancelled = true;
        r.reader?.cancel();
        this.#reads.delete(msg.id);
        break;
      }
      case 'stop':
        this.logManager?.stop();
        for (const r of this.#reads.values()) {
          r.cancelled = true;
          r.reader?.cancel();
        }
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
      if (!/^[0-9a-f]{12,64}$/.test(msg.containerId))
        throw new AgentError(
          'ERR_INVALID_ARGUMENT',
          `container ID ${JSON.stringify(msg.containerId)} is not a container ID (12 to 64 hex digits)`,
        );
      let left = msg.limitBytes ?? Infinity;
      // The node-scoped runtime refuses a container not owned by this node (ERR_INVALID_ARGUMENT).
      const reader = await this.#runtime.logs.readContainerLogs(
        msg.containerId,
        { follow: msg.follow, timestamps: msg.timestamps, tailLines: msg.tailLines, sinceSeconds: msg.sinceSeconds },
        {
          onData: (chunk) => {
            if (read.cancelled || left <= 0) return;
            const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
            left -= part.length;
            if (part.length > 0) this.post({ type: 'data', id: msg.id, chunk: new Uint8Array(part) });
            if (left <= 0) {
              // limitBytes reached: end here, as the kubelet's LimitWriter does.
              this.#reads.delete(msg.id);
              read.cancelled = true;
              read.reader?.cancel();
              this.post({ type: 'end', id: msg.id });
            }
          },
          onEnd: (err) => {
            if (read.cancelled || !this.#reads.has(msg.id)) return;
            if (err) return fail(err);
            this.#reads.delete(msg.id);
            this.post({ type: 'end', id: msg.id });
          },
        },
      );
      read.reader = reader;
      if (read.cancelled) {
        reader.cancel();
        return;
      }
      if (read.paused) reader.pause();
    } catch (err) {
      fail(err);
    }
  }
}

/**
 * logManagerFor: the container log manager of a CRI runtime when `b` asks for rotation
 * (`containerLogRotation`), over the node-scoped runtime `nr` (only this node's containers are
 * rotated); undefined for Docker and the fake, whose logs the engine rotates.
 * @throws InvalidArgumentError for a bad policy (newContainerLogManager).
 */
export function logManagerFor(b: LogsWorkerBootstrap, nr: Pick<NodeRuntime, 'runtime'>, logger: Logger): ContainerLogManager | undefined {
  if (b.runtime !== 'remote' || !b.containerLogRotation) return undefined;
  return newContainerLogManager({ runtime: nr.runtime, logger }, b.containerLogRotation);
}

if (parentPort && (workerData as LogsWorkerBootstrap | undefined)?.kind === 'container-logs') {
  const port = parentPort;
  const b = workerData as LogsWorkerBootstrap;
  const nr = getRuntime(b);
  const logger = newLogger(b.logLevel || 'info').child({ component: 'container-logs', node: b.nodeName });
  const worker = new LogsWorker(b, (m) => port.postMessage(m), nr, logManagerFor(b, nr, logger));
  port.on('message', (msg: LogsWorkerRequest) => {
    worker.handle(msg);
    if (msg.type === 'stop') port.close();
  });
}
