/**
 * The wire protocol between the main thread and the container-logs worker
 * (src/workers/container-logs.worker.ts): the part of the CRI's ReattachContainerLog/log-reading
 * and Version calls the kubelet server needs. Plain structured-cloneable data only; many requests
 * are multiplexed over the worker's port by `id`.
 */
import type { SerializedError } from './thread-wire.js';
import type { RuntimeEndpoint } from './runtime-endpoint.js';

/** workerData of the container-logs worker: the runtime it reads (node-runtime.ts getRuntime; 'fake' gives empty logs, version 0.0.0). */
export interface LogsWorkerBootstrap extends RuntimeEndpoint {
  kind: 'container-logs';
  /** Only containers labelled `kubelet-ts.node-name=<nodeName>` (and a pod UID) may be read. */
  nodeName: string;
  /**
   * On a CRI runtime: rotate the runtime's container log files (`--container-log-max-size` in
   * bytes, `--container-log-max-files`; the monitor period in ms, default 10 s) with the worker's
   * container log manager from its start. Absent (Docker: its json-file driver rotates) = none.
   */
  containerLogRotation?: { maxSizeBytes: number; maxFiles: number; monitorPeriodMs?: number };
  /** The worker's log level (pino's: `info`, `debug`, `silent`, …); absent = info. */
  logLevel?: string;
}

/** LogsOptions: what part of a log to read (PodLogOptions, after `previous` chose the container). */
export interface LogsOptions {
  follow: boolean;
  timestamps: boolean;
  /** Only the last N lines. */
  tailLines?: number;
  /** Only lines newer than this many seconds. */
  sinceSeconds?: number;
  /** Stop after this many bytes. */
  limitBytes?: number;
}

/**
 * Requests to the worker: `logs` starts a log read (chunks come back as `data`, then one `end` or
 * `error`); `pause`/`resume` carry the HTTP socket's backpressure; `cancel` stops a read (no `end`
 * follows); `version` asks the runtime's name and version (CRI Version); `stop` ends the worker.
 */
export type LogsWorkerRequest =
  | ({ type: 'logs'; id: number; containerId: string } & LogsOptions)
  | { type: 'pause' | 'resume' | 'cancel'; id: number }
  | { type: 'version'; id: number }
  | { type: 'stop' };

/** Messages from the worker, by request `id`. */
export type LogsWorkerMessage =
  | { type: 'data'; id: number; chunk: Uint8Array }
  | { type: 'end'; id: number }
  | { type: 'error'; id: number; error: SerializedError }
  | { type: 'version'; id: number; runtimeName: string; version: string; apiVersion: string };
