/**
 * Exec and attach on a CRI runtime (`NodeRuntime.streams` of a CRI node): the ContainerStream of
 * runtime/container/runtime.ts over the runtime's streaming server, as the kubelet proxies `kubectl exec/attach` to
 * the URL that the CRI's Exec / Attach answer (pkg/kubelet/server/server.go getExec/getAttach →
 * proxyStream). The agent terminates the client's stream itself, so it is a client of the
 * streaming server here, and picks its transport as kubectl's client-go does
 * (tools/remotecommand/fallback.go: WebSocket first, SPDY on an upgrade failure):
 *
 * - without stdin: the remotecommand WebSocket, `v5.channel.k8s.io` or `v4.channel.k8s.io`
 *   (cri-exec-transport.ts): channel 1 stdout, 2 stderr, 3 the Status, 4 resize;
 * - with stdin, which must be closable alone (`echo x | kubectl exec -i … cat`): WebSocket
 *   `v5.channel.k8s.io` only (255 closes stdin); a server without v5 refuses the upgrade — containerd
 *   1.6's (its streaming package predates v5, Kubernetes 1.30) answers 403 — and the stream goes
 *   over SPDY `v4.channel.k8s.io` with a fresh URL (the refused one is spent), where stdin closes
 *   with its stream's FIN. v4 over WebSocket has no way to close stdin alone, which is why v5 was
 *   made (KEP-4006). A server seen to refuse v5 gets SPDY at once afterwards (per thread);
 * - a TTY without stdin: SPDY `v4.channel.k8s.io` always. Over a WebSocket the streaming server
 *   hands the runtime a stdin even when none was asked (the kubelet's streaming package, which
 *   containerd 1.6 copies: remotecommand/websocket.go passes `streams[stdinChannel]`, a wsstream
 *   IgnoreChannel whose Read is io.EOF at once), and with a TTY containerd takes that EOF for the
 *   end of the session: it closes the exec's output (pkg/cri/io/exec_io.go Attach) or drops the
 *   attach's stdout (container_io.go Attach), so a command that ends at once lost its output (15
 *   runs in 20 on this machine). Over SPDY an unasked stdin is no stream at all (httpstream.go).
 *
 * The exit code is read from the Status as client-go's errorDecoderV4 does ({@link decodeExitStatus}).
 *
 * Errors: the CRI call's (ERR_NOT_FOUND for a container that does not exist,
 * ERR_RUNTIME_UNAVAILABLE), ERR_INVALID_ARGUMENT when the container is not running (containerd:
 * `container is in CONTAINER_EXITED state`), ERR_PROTOCOL / ERR_RUNTIME_UNAVAILABLE when the
 * streaming server refuses or cannot be reached, ERR_RUNTIME otherwise.
 */
import { AgentError, isNotFound, isUnavailable } from '../../shared/errors.js';
import type { RuntimeService } from '../runtime/cri/services.js';
import type { ContainerStream, ContainerStreamHandlers, ContainerStreamOptions } from '../runtime/container/runtime.js';
import { kRemoteCommandProtocols, openSpdyExec, openWebSocketExec, type ExecEvents, type ExecTransport } from './cri-exec-transport.js';

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
  /** The transport and sub-protocol in use: `websocket v5.channel.k8s.io`, `websocket v4.channel.k8s.io` or `spdy v4.channel.k8s.io`. */
  readonly protocol: string;
  /** True when endStdin reaches the process (always, but for a stream without stdin on a v4 WebSocket). */
  readonly stdinClosable: boolean;
}

/**
 * Streaming servers (host:port) seen to refuse `v5.channel.k8s.io` (400 or 403 on the upgrade): a stream
 * with stdin goes there over SPDY at once, without spending a URL on the WebSocket first. Per thread.
 */
const noV5 = new Set<string>();

/** streamUrl asks the runtime for the URL of an exec or attach, mapping a non-running container to ERR_INVALID_ARGUMENT. */
async function streamUrl(runtime: RuntimeService, containerId: string, opts: ContainerStreamOptions, stderr: boolean): Promise<string> {
  try {
    const r =
      opts.kind === 'exec'
        ? await runtime.exec({
            container_id: containerId,
            cmd: opts.command,
            tty: opts.tty,
            stdin: opts.stdin,
            stdout: opts.stdout,
            stderr,
          })
        : await runtime.attach({ container_id: containerId, tty: opts.tty, stdin: opts.stdin, stdout: opts.stdout, stderr });
    return r.url;
  } catch (err) {
    if (isNotFound(err) || isUnavailable(err)) throw err;
    // containerd: `container is in CONTAINER_EXITED state` (pkg/cri/server/container_exec.go, container_attach.go).
    if (/is in CONTAINER_\w+ state|not running/i.test((err as Error).message)) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `${opts.kind} ${containerId.slice(0, 12)}: the container is not running`, {
        cause: err,
      });
    }
    throw err instanceof AgentError
      ? err
      : new AgentError('ERR_RUNTIME', `${opts.kind} ${containerId.slice(0, 12)}: ${(err as Error).message}`, { cause: err });
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
  runtime: RuntimeService,
  containerId: string,
  opts: ContainerStreamOptions,
  handlers: ContainerStreamHandlers,
  handshakeTimeoutMs = 30_000,
): Promise<CriContainerStream> {
  const stderr = opts.stderr && !opts.tty;
  let status = '';
  let done = false;
  const events: ExecEvents = {
    output: (fd, chunk) => {
      if (!done) handlers.onOutput(fd, chunk);
    },
    status: (text) => {
      if (status.length < 64 * 1024) status += text;
    },
    end: (err) => {
      if (done) return;
      done = true;
      if (err && status === '') return handlers.onExit(null, err);
      const decoded = decodeExitStatus(status);
      if (opts.kind === 'attach') return handlers.onExit(null, decoded.err);
      // A stream that ended without any Status: the server could not say how the command ended.
      handlers.onExit(status === '' ? null : decoded.exitCode, decoded.err);
    },
  };
  const wrap = (err: unknown): never => {
    const e = err as Error;
    throw e instanceof AgentError
      ? e
      : new AgentError('ERR_RUNTIME', `${opts.kind} ${containerId.slice(0, 12)}: ${e.message}`, { cause: e });
  };
  const channels = { stdin: opts.stdin, stdout: opts.stdout, stderr, tty: opts.tty };
  let url = await streamUrl(runtime, containerId, opts, stderr);
  const host = new URL(url).host;
  let transport: ExecTransport;
  let kind = 'websocket';
  if (!opts.stdin && !opts.tty) {
    // Nothing to close: v4 does all that is asked.
    transport = await openWebSocketExec(url, kRemoteCommandProtocols, events, handshakeTimeoutMs).catch(wrap);
  } else if (!opts.stdin) {
    // A TTY without stdin: over a WebSocket the runtime would end the output at once (module comment).
    kind = 'spdy';
    transport = await openSpdyExec(url, channels, events, handshakeTimeoutMs).catch(wrap);
  } else {
    // Stdin must be closable: v5, else SPDY — client-go's FallbackExecutor (WebSocket, then SPDY on an upgrade failure).
    let ws: ExecTransport | undefined;
    if (!noV5.has(host)) {
      ws = await openWebSocketExec(url, [kRemoteCommandProtocols[0]], events, handshakeTimeoutMs).catch((err: unknown) => {
        // Any refused upgrade falls back (client-go's httpstream.IsUpgradeFailure); 400/403 is
        // wsstream's (x/net/websocket's) answer to a protocol it does not speak: remember it.
        const code = (err as { statusCode?: unknown }).statusCode;
        if (typeof code !== 'number') return wrap(err);
        if (code === 400 || code === 403) noV5.add(host);
        return undefined;
      });
      // The refused handshake spent the URL: ask for another.
      if (!ws) url = await streamUrl(runtime, containerId, opts, stderr);
    }
    if (ws) transport = ws;
    else {
      kind = 'spdy';
      transport = await openSpdyExec(url, channels, events, handshakeTimeoutMs).catch(wrap);
    }
  }
  const t = transport;
  let stdinEnded = false;
  return {
    protocol: `${kind} ${t.protocol}`,
    stdinClosable: t.stdinClosable,
    writeStdin(chunk, written) {
      if (done || stdinEnded || !opts.stdin) return written();
      t.writeStdin(chunk, written);
    },
    endStdin() {
      if (stdinEnded) return;
      stdinEnded = true;
      if (!done && opts.stdin) t.closeStdin();
    },
    resize(width, height) {
      if (done || !opts.tty) return Promise.resolve();
      return t.resize(width, height);
    },
    pause: () => t.pause(),
    resume: () => t.resume(),
    close() {
      done = true;
      t.close();
    },
  };
}

/**
 * criContainerStreams: the `streams` of a CRI node's NodeRuntime (node-runtime.ts) over `runtime`
 * — exec and attach through the runtime's streaming server ({@link openCriContainerStream}).
 */
export function criContainerStreams(runtime: RuntimeService): {
  openContainerStream(containerId: string, opts: ContainerStreamOptions, h: ContainerStreamHandlers): Promise<ContainerStream>;
} {
  return { openContainerStream: (containerId, opts, h) => openCriContainerStream(runtime, containerId, opts, h) };
}
