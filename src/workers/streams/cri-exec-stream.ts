/**
 * Exec and attach on a CRI runtime (`NodeRuntime.streams` of a CRI node): the ContainerStream of
 * runtime.ts over the runtime's streaming server, as the kubelet proxies `kubectl exec/attach` to
 * the URL that the CRI's Exec / Attach answer (pkg/kubelet/server/server.go getExec/getAttach →
 * proxyStream). The agent terminates the client's stream itself, so it is a client of the
 * streaming server here, speaking what client-go speaks (tools/remotecommand/websocket.go, the
 * server side staging/src/k8s.io/kubelet/pkg/cri/streaming/remotecommand/websocket.go):
 *
 * - channel 0 stdin, 1 stdout, 2 stderr, 3 the error channel (a metav1.Status at the end:
 *   `Success`, or `Failure` with reason `NonZeroExitCode` and the code in the `ExitCode` cause —
 *   client-go's errorDecoderV4), 4 resize (`{"Width":w,"Height":h}`), 255 close (v5 only);
 * - `v5.channel.k8s.io` is offered first (it can close stdin), then `v4.channel.k8s.io`.
 *   containerd 1.6's server (Kubernetes 1.2x's streaming package) has no v5 and answers v4: there
 *   the protocol has no way to close stdin alone, so `endStdin` cannot reach the process; the
 *   process's stdin closes with the stream (see {@link CriContainerStream.stdinClosable}).
 *
 * Errors: the CRI call's (ERR_NOT_FOUND for a container that does not exist,
 * ERR_RUNTIME_UNAVAILABLE), ERR_INVALID_ARGUMENT when the container is not running (containerd:
 * `container is in CONTAINER_EXITED state`), ERR_PROTOCOL / ERR_RUNTIME_UNAVAILABLE when the
 * streaming server refuses or cannot be reached, ERR_RUNTIME otherwise.
 */
import { AgentError, isNotFound, isUnavailable } from '../../shared/errors.js';
import type { RuntimeService } from '../runtime/cri/services.js';
import type { ContainerStream, ContainerStreamHandlers, ContainerStreamOptions } from '../runtime/runtime.js';
import { kCloseChannel, openChannelSocket, type ChannelSocket } from './cri-channel-socket.js';

/** The remotecommand WebSocket sub-protocols, best first (wsstream's names). */
export const kRemoteCommandProtocols = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;
const kStdin = 0;
const kStdout = 1;
const kStderr = 2;
const kError = 3;
const kResize = 4;

/** The part of a metav1.Status the error channel carries. */
interface RemoteCommandStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: { causes?: { type?: string; reason?: string; message?: string }[] } | null;
}

/**
 * decodeExitStatus reads the error channel's text as client-go's errorDecoderV4 does: '' (nothing
 * sent) or `Success` → exit code 0; `Failure` + `NonZeroExitCode` → the `ExitCode` cause's code;
 * another Failure → `err` with the Status message (the code unknown: null). Pure; never throws.
 */
export function decodeExitStatus(text: string): { exitCode: number | null; err?: Error } {
  if (text.trim() === '') return { exitCode: 0 };
  let s: RemoteCommandStatus;
  try {
    s = JSON.parse(text) as RemoteCommandStatus;
  } catch {
    // v1–v3 servers send the error as plain text.
    return { exitCode: null, err: new AgentError('ERR_RUNTIME', text.trim()) };
  }
  if (s.status === 'Success') return { exitCode: 0 };
  if (s.status === 'Failure' && s.reason === 'NonZeroExitCode') {
    const cause = (s.details?.causes ?? []).find((c) => (c.type ?? c.reason) === 'ExitCode');
    const code = cause?.message !== undefined ? Number.parseInt(cause.message, 10) : NaN;
    if (Number.isInteger(code) && code >= 0 && code <= 255) return { exitCode: code };
    return { exitCode: null, err: new AgentError('ERR_PROTOCOL', `while decoding status: no exit code in ${text.trim()}`) };
  }
  if (s.status === 'Failure') return { exitCode: null, err: new AgentError('ERR_RUNTIME', s.message || s.reason || 'the command failed') };
  return { exitCode: null, err: new AgentError('ERR_PROTOCOL', `error stream protocol error: unknown status ${JSON.stringify(s.status)}`) };
}

/** A ContainerStream over the streaming server; `protocol` and `stdinClosable` say what was negotiated. */
export interface CriContainerStream extends ContainerStream {
  /** The sub-protocol in use (`v5.channel.k8s.io` or `v4.channel.k8s.io`). */
  readonly protocol: string;
  /** True when endStdin reaches the process (v5); false on v4, where stdin closes only with the stream. */
  readonly stdinClosable: boolean;
}

/** streamUrl asks the runtime for the URL of an exec or attach, mapping a non-running container to ERR_INVALID_ARGUMENT. */
async function streamUrl(runtime: RuntimeService, containerId: string, opts: ContainerStreamOptions, stderr: boolean): Promise<string> {
  try {
    const r = opts.kind === 'exec'
      ? await runtime.exec({ container_id: containerId, cmd: opts.command, tty: opts.tty, stdin: opts.stdin, stdout: opts.stdout, stderr })
      : await runtime.attach({ container_id: containerId, tty: opts.tty, stdin: opts.stdin, stdout: opts.stdout, stderr });
    return r.url;
  } catch (err) {
    if (isNotFound(err) || isUnavailable(err)) throw err;
    // containerd: `container is in CONTAINER_EXITED state` (pkg/cri/server/container_exec.go, container_attach.go).
    if (/is in CONTAINER_\w+ state|not running/i.test((err as Error).message)) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `${opts.kind} ${containerId.slice(0, 12)}: the container is not running`, { cause: err });
    }
    throw err instanceof AgentError ? err : new AgentError('ERR_RUNTIME', `${opts.kind} ${containerId.slice(0, 12)}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * openCriContainerStream starts an exec in, or attaches to, the running container `containerId`
 * through the CRI (Exec / Attach for the URL, then the streaming server) and resolves once the
 * streaming server accepted the stream; output then flows to `handlers` (a TTY's all on fd 1:
 * stderr is never asked for with a TTY, as client-go and the CRI require). `onExit` runs once:
 * the exec's exit code from the Status (null for attach), or the error. `handshakeTimeoutMs`:
 * milliseconds for the streaming server's upgrade.
 * @throws see the module comment.
 */
export async function openCriContainerStream(
  runtime: RuntimeService, containerId: string, opts: ContainerStreamOptions, handlers: ContainerStreamHandlers, handshakeTimeoutMs = 30_000,
): Promise<CriContainerStream> {
  const stderr = opts.stderr && !opts.tty;
  const url = await streamUrl(runtime, containerId, opts, stderr);
  let status = '';
  let done = false;
  let socket: ChannelSocket | undefined;
  const finish = (exitCode: number | null, err?: Error) => {
    if (done) return;
    done = true;
    handlers.onExit(exitCode, err);
  };
  socket = await openChannelSocket(url, [...kRemoteCommandProtocols], {
    onMessage(channel, payload) {
      if (done || payload.length === 0) return;
      if (channel === kStdout) handlers.onOutput(1, Buffer.from(payload));
      else if (channel === kStderr) handlers.onOutput(2, Buffer.from(payload));
      else if (channel === kError && status.length < 64 * 1024) status += payload.toString('utf8');
    },
    onClose(err) {
      if (done) return;
      if (err && status === '') return finish(null, err);
      const decoded = decodeExitStatus(status);
      if (opts.kind === 'attach') return finish(null, decoded.err);
      // A stream that ended without any Status: the server could not say how the command ended.
      finish(status === '' ? null : decoded.exitCode, decoded.err);
    },
  }, handshakeTimeoutMs).catch((err: unknown) => {
    const e = err as Error;
    throw e instanceof AgentError ? e : new AgentError('ERR_RUNTIME', `${opts.kind} ${containerId.slice(0, 12)}: ${e.message}`, { cause: e });
  });
  const s = socket;
  const v5 = s.protocol === kRemoteCommandProtocols[0];
  let stdinEnded = false;
  return {
    protocol: s.protocol,
    stdinClosable: v5,
    writeStdin(chunk, written) {
      if (done || stdinEnded || !opts.stdin) {
        written();
        return;
      }
      s.send(kStdin, chunk, written);
    },
    endStdin() {
      if (stdinEnded) return;
      stdinEnded = true;
      // v4 has no close signal: writing nothing more is all a v4 client can do (client-go's
      // v4 WebSocket executor is the same; kubectl falls back to SPDY for it).
      if (v5 && !done && opts.stdin) s.send(kCloseChannel, Buffer.from([kStdin]));
    },
    resize(width, height) {
      if (done || !opts.tty) return Promise.resolve();
      return new Promise<void>((resolve) => s.send(kResize, Buffer.from(JSON.stringify({ Width: width, Height: height })), resolve));
    },
    pause: () => s.pause(),
    resume: () => s.resume(),
    close() {
      done = true;
      s.close();
    },
  };
}
