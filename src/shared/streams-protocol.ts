/**
 * The wire protocol between the main thread and the container-streams worker
 * (src/workers/container-streams.worker.ts): the CRI's Exec/Attach streaming calls as the kubelet
 * server relays them (pkg/kubelet/cri/streaming). Plain structured-cloneable data only. Each stream
 * gets its own MessagePort (transferred in the `open` request), so a stream's bytes never queue
 * behind another's, and closing the port ends the stream.
 *
 * Flow control, both ways, by byte credits:
 * - output: the worker pauses the engine's socket while more than {@link kStreamOutputWindowBytes}
 *   of output it posted are not yet `ack`ed; the main thread acks a chunk once the WebSocket took
 *   it without backpressure (or when it drains);
 * - stdin: the worker answers `stdinAck` once the engine's socket flushed a chunk; the main thread
 *   counts what is not yet acked and refuses a client that runs past
 *   {@link kStreamMaxStdinBufferedBytes} (uWebSockets.js cannot pause reading a WebSocket).
 */
import type { MessagePort } from 'node:worker_threads';
import type { SerializedError } from './thread-wire.js';
import type { PortForwardSpec } from './port-forward-protocol.js';
import type { RuntimeEndpoint } from './runtime-endpoint.js';

/** kStreamOutputWindowBytes: output bytes (stdout + stderr) in flight to the main thread before the worker pauses the engine's socket. */
export const kStreamOutputWindowBytes = 256 * 1024;
/** kStreamMaxStdinBufferedBytes: stdin bytes the container has not taken yet past which a stream is closed with an error. */
export const kStreamMaxStdinBufferedBytes = 8 * 1024 * 1024;

/** workerData of the container-streams worker: its runtime ('fake' is an echo: exec `cat` copies stdin to stdout; see fake-runtime.ts). */
export interface StreamsWorkerBootstrap extends RuntimeEndpoint {
  kind: 'container-streams';
  /** Only containers labelled `kubelet-ts.node-name=<nodeName>` (and a pod UID) may be entered. */
  nodeName: string;
}

/** TerminalSize: a TTY's size in character cells (remotecommand.TerminalSize: `Width`, `Height`). */
export interface TerminalSize {
  width: number;
  height: number;
}

/**
 * ContainerStreamSpec: what to open. `exec` runs `command` (CRI ExecRequest); `attach` joins the
 * container's main process (CRI AttachRequest; `command` unused). At least one of stdin, stdout,
 * stderr is true; with `tty`, stderr is merged into stdout by the engine (as the kubelet drops it).
 */
export interface ContainerStreamSpec {
  kind: 'exec' | 'attach';
  containerId: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
  /** The first terminal size (tty only), applied as soon as the engine has the stream. */
  size?: TerminalSize;
}

/**
 * Requests on the worker's own port: `open` a stream on the transferred `port`; `portForward` one
 * forwarded connection on it (port-forward-protocol.ts); `stop` ends every stream and the worker.
 */
export type StreamsWorkerRequest =
  | { type: 'open'; id: number; port: MessagePort; spec: ContainerStreamSpec }
  | { type: 'portForward'; id: number; port: MessagePort; spec: PortForwardSpec }
  | { type: 'stop' };

/**
 * StreamInbound: main → worker on a stream's port. `stdin` bytes; `stdinEnd` closes the process's
 * stdin (the v5 CLOSE signal on channel 0); `resize` the TTY; `ack` returns output credit; `close`
 * tears the stream down (the client went away, or a bound was hit).
 */
export type StreamInbound =
  | { t: 'stdin'; data: Uint8Array }
  | { t: 'stdinEnd' }
  | { t: 'resize'; width: number; height: number }
  | { t: 'ack'; bytes: number }
  | { t: 'close' };

/**
 * StreamOutbound: worker → main on a stream's port. `started` once the engine accepted the stream;
 * `out` output on fd 1 (stdout) or 2 (stderr); `stdinAck` stdin bytes the engine took; `exit` is
 * the last message: the exec's exit code (null for attach, or when unknown), or the error that
 * ended or prevented the stream.
 */
export type StreamOutbound =
  | { t: 'started' }
  | { t: 'out'; fd: 1 | 2; data: Uint8Array }
  | { t: 'stdinAck'; bytes: number }
  | { t: 'exit'; exitCode: number | null; error?: SerializedError };
