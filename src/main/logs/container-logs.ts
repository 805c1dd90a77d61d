/**
 * Counterpart of the kubelet's GetContainerLogs (pkg/kubelet/kubelet_pods.go: validateContainerLogStatus
 * picks the current or the previous attempt) and of its CRI Version call, on the main thread. The
 * The runtime's reads happen in the container-logs worker (src/workers/container-logs.worker.ts), started
 * on first use; this side chooses the container and turns the worker's messages into LogStreams.
 */
import { isPodContainerName } from '../../shared/ephemeral-containers.js';
import type { Worker } from 'node:worker_threads';
import type { Pod } from '../../shared/api.js';
import { AgentError, deserializeError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { LogsOptions, LogsWorkerBootstrap, LogsWorkerMessage, LogsWorkerRequest } from '../../shared/logs-protocol.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import type { RuntimeEndpoint } from '../../shared/runtime-endpoint.js';
import type { LogStream } from '../../server/host/agent-host.js';
import { startWorker } from '../pool/worker-entry.js';

/** LogsClient: reads container logs and the runtime version through the logs worker. Main thread. */
export interface LogsClient {
  /** logs starts reading container `containerId`'s log; data flows once the stream's onData is set. */
  logs(containerId: string, opts: LogsOptions): LogStream;
  /** version: the container runtime's name and version (CRI Version), e.g. `{runtimeName: 'containerd', version: 'v1.6.20', apiVersion: 'v1'}`. */
  version(): Promise<{ runtimeName: string; version: string; apiVersion: string }>;
  /**
   * start starts the worker now instead of at the first read: with `containerLogRotation` its
   * container log manager rotates the runtime's log files from the agent's start (upstream's
   * containerLogManager.Start in Kubelet.Run). Idempotent; never throws (a worker that fails is logged).
   */
  start(): void;
  /** close stops the worker (and every read). Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link newLogsClient}. */
export interface LogsClientOptions {
  /** The runtime the worker reads (runtime-endpoint-options.ts runtimeEndpointOf). */
  endpoint: RuntimeEndpoint;
  nodeName: string;
  /** The worker's log level (--v / logLevel); absent = info. */
  logLevel?: string;
  /**
   * On a CRI runtime, `--container-log-max-size` (bytes) and `--container-log-max-files`: the
   * worker's container log manager rotates the runtime's log files (LogsWorkerBootstrap). Ignored
   * for Docker and the fake (Docker's json-file driver rotates its own logs).
   */
  containerLogRotation?: LogsWorkerBootstrap['containerLogRotation'];
}

/**
 * selectLogContainer picks the container whose log `GET /containerLogs` serves, as the
 * kubelet's validateContainerLogStatus: the newest attempt of `container`, or with `previous` the
 * one before it (app containers in a RuntimePod are newest first).
 * @throws AgentError ERR_NOT_FOUND when `container` is not in the pod's spec;
 *   ERR_INVALID_ARGUMENT (400) when the container has not started yet
 *   (`container "x" in pod "y" is waiting to start: ContainerCreating`) or has no previous attempt
 *   (`previous terminated container "x" in pod "y" not found`).
 */
export function selectLogContainer(pod: Pod, runtimePod: RuntimePod | null, container: string, previous: boolean): string {
  const podName = pod.metadata?.name ?? '';
  const inSpec = isPodContainerName(pod, container);
  if (!inSpec) throw new AgentError('ERR_NOT_FOUND', `container ${container} is not valid for pod ${podName}`);
  const attempts = (runtimePod?.containers ?? []).filter((c) => c.name === container);
  if (previous) {
    if (attempts.length < 2)
      throw new AgentError('ERR_INVALID_ARGUMENT', `previous terminated container "${container}" in pod "${podName}" not found`);
    return attempts[1].id;
  }
  if (attempts.length === 0)
    throw new AgentError('ERR_INVALID_ARGUMENT', `container "${container}" in pod "${podName}" is waiting to start: ContainerCreating`);
  return attempts[0].id;
}

interface Pending {
  onData?: (chunk: Uint8Array) => void;
  onEnd?: (err?: Error) => void;
  /** Messages that came before the server set its callbacks. */
  early: LogsWorkerMessage[];
  version?: { resolve: (v: { runtimeName: string; version: string; apiVersion: string }) => void; reject: (e: Error) => void };
}

/**
 * newLogsClient creates the client; the worker starts on the first call and is kept (unref'd, so
 * it never holds the process open). The worker reads through the runtime `options.runtime` names:
 * with the fake one, logs are empty and the version is `0.0.0`.
 */
export function newLogsClient(options: LogsClientOptions, deps: { logger: Logger }): LogsClient {
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  const failAll = (err: Error) => {
    for (const [id, p] of pending) {
      pending.delete(id);
      p.version?.reject(err);
      if (p.onEnd) p.onEnd(err);
      else p.early.push({ type: 'error', id, error: { name: 'Error', code: 'ERR_RUNTIME', message: err.message, retriable: true } });
    }
  };
  const deliver = (p: Pending, m: LogsWorkerMessage) => {
    if (m.type === 'data') p.onData?.(m.chunk);
    else if (m.type === 'end') p.onEnd?.();
    else if (m.type === 'error') p.onEnd?.(deserializeError(m.error));
  };
  const ensure = (): Worker => {
    if (worker) return worker;
    const rotation = options.endpoint.runtime === 'remote' ? options.containerLogRotation : undefined;
    const bootstrap: LogsWorkerBootstrap = {
      kind: 'container-logs',
      ...options.endpoint,
      nodeName: options.nodeName,
      ...(options.logLevel ? { logLevel: options.logLevel } : {}),
      ...(rotation ? { containerLogRotation: rotation } : {}),
    };
    const w = startWorker('container-logs', bootstrap);
    w.unref();
    w.on('message', (m: LogsWorkerMessage) => {
      const p = pending.get(m.id);
      if (!p) return;
      if (m.type === 'version') {
        pending.delete(m.id);
        p.version?.resolve({ runtimeName: m.runtimeName, version: m.version, apiVersion: m.apiVersion });
        return;
      }
      if (m.type !== 'data') pending.delete(m.id);
      if (m.type === 'error' && p.version) {
        p.version.reject(deserializeError(m.error));
        return;
      }
      if (!p.onData || !p.onEnd) p.early.push(m);
      else deliver(p, m);
    });
    w.on('error', (err) => {
      deps.logger.error({ err }, 'Container logs worker failed');
      failAll(err);
      worker = undefined;
    });
    w.on('exit', () => {
      failAll(new Error('the container logs worker exited'));
      worker = undefined;
    });
    worker = w;
    return w;
  };
  const send = (msg: LogsWorkerRequest) => worker?.postMessage(msg);

  return {
    logs(containerId, opts) {
      const id = nextId++;
      const p: Pending = { early: [] };
      pending.set(id, p);
      ensure().postMessage({ type: 'logs', id, containerId, ...opts } satisfies LogsWorkerRequest);
      const flush = () => {
        if (!p.onData || !p.onEnd) return;
        for (const m of p.early.splice(0)) deliver(p, m);
      };
      return {
        onData(fn) {
          p.onData = fn;
          flush();
        },
        onEnd(fn) {
          let called = false;
          p.onEnd = (err) => {
            if (called) return;
            called = true;
            fn(err);
          };
          flush();
        },
        pause: () => send({ type: 'pause', id }),
        resume: () => send({ type: 'resume', id }),
        cancel: () => {
          if (pending.delete(id)) send({ type: 'cancel', id });
        },
      };
    },
    version() {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { early: [], version: { resolve, reject } });
        ensure().postMessage({ type: 'version', id } satisfies LogsWorkerRequest);
      });
    },
    start() {
      try {
        ensure();
      } catch (err) {
        deps.logger.error({ err }, 'Could not start the container logs worker');
      }
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (!w) return;
      w.postMessage({ type: 'stop' } satisfies LogsWorkerRequest);
      await w.terminate();
    },
  };
}
