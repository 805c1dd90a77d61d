// Counterpart of client-go's tools/remotecommand WebSocket executor (websocket.go: the v5/v4 channel protocols) as kubectl exec and attach use it.
/**
 * The client half of the streaming API (docs/contracts.md "HTTP API": WS /exec, /attach): opens
 * the WebSocket with the sub-protocols `v5.channel.k8s.io` and `v4.channel.k8s.io` (the server
 * picks), relays stdin on channel 0 (with backpressure: stdin is paused while the socket holds more
 * than 1 MiB), stdout (1) and stderr (2) to the caller, resizes on channel 4, the CLOSE signal
 * `[255, 0]` when stdin ends (v5), and reads the Status of channel 3: Success → exit code 0,
 * NonZeroExitCode → the ExitCode cause, any other failure → an error.
 */
import WebSocket from 'ws';
import { wsTarget } from './transport.js';
import type { Status } from '../shared/api.js';
import { ClientError, type ClientFlags } from './client.js';

/** Stdin is paused while more than this many bytes wait in the socket. */
const kStdinHighWaterBytes = 1 << 20;

/** RemoteCommandOptions: one exec or attach. */
export interface RemoteCommandOptions {
  /** Path with query, e.g. `/exec/default/web/app?command=ls&stdout=1`. */
  path: string;
  stdin?: NodeJS.ReadableStream;
  tty: boolean;
  onStdout(chunk: Uint8Array): void;
  onStderr(chunk: Uint8Array): void;
  /** The terminal size now (tty), sent first and on every onResize. */
  size?: () => { width: number; height: number } | undefined;
  onResize?: (fn: () => void) => () => void;
}

/** exitCodeOf: the exit code a finished stream's Status stands for (kubectl's CodeExitError), or throws its message. */
export function exitCodeOf(status: Status | undefined): number {
  if (!status || status.status === 'Success') return 0;
  if (status.reason === 'NonZeroExitCode') {
    const cause = (status.details?.causes ?? []).find((c) => c.reason === 'ExitCode');
    const code = Number(cause?.message);
    if (Number.isInteger(code)) return code;
  }
  throw new ClientError(status.message ?? 'the stream failed');
}

/**
 * runRemoteCommand runs the stream to its end and resolves with the exit code.
 * @throws ClientError with the server's Status message when the upgrade is refused (404, 400,
 *   401, 403, 429), or the stream ends with a failure that is not an exit code.
 */
export function runRemoteCommand(flags: ClientFlags, opts: RemoteCommandOptions): Promise<number> {
  const headers: Record<string, string> = {};
  if (flags.token) headers.Authorization = `Bearer ${flags.token}`;
  const target = wsTarget(flags, opts.path, headers);
  return new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(target.url, ['v5.channel.k8s.io', 'v4.channel.k8s.io'], { ...target.options, perMessageDeflate: false });
    let statusText = '';
    let stopResize: (() => void) | undefined;
    const stdin = opts.stdin;
    const onData = (chunk: Buffer | string) => {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(Buffer.concat([Buffer.from([0]), b]), () => {
        if (ws.bufferedAmount < kStdinHighWaterBytes) stdin?.resume();
      });
      if (ws.bufferedAmount >= kStdinHighWaterBytes) stdin?.pause();
    };
    const onEnd = () => {
      if (ws.readyState === WebSocket.OPEN && ws.protocol.startsWith('v5.')) ws.send(Buffer.from([255, 0]));
    };
    const sendSize = () => {
      const s = opts.size?.();
      if (s && ws.readyState === WebSocket.OPEN)
        ws.send(Buffer.concat([Buffer.from([4]), Buffer.from(JSON.stringify({ Width: s.width, Height: s.height }))]));
    };
    const cleanup = () => {
      stopResize?.();
      if (stdin) {
        stdin.off('data', onData);
        stdin.off('end', onEnd);
        stdin.pause();
      }
    };
    ws.on('unexpected-response', (_req, res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let message = text.trim() || `${res.statusCode} ${res.statusMessage}`;
        try {
          const s = JSON.parse(text) as Status;
          if (s.message) message = s.message;
        } catch {
          // not a Status
        }
        cleanup();
        reject(new ClientError(message, res.statusCode));
        ws.terminate();
      });
    });
    ws.on('open', () => {
      if (opts.tty) {
        sendSize();
        stopResize = opts.onResize?.(sendSize);
      }
      if (stdin) {
        stdin.on('data', onData);
        stdin.on('end', onEnd);
        stdin.resume();
      }
    });
    ws.on('message', (data: Buffer) => {
      if (data.length === 0) return;
      const payload = data.subarray(1);
      if (data[0] === 1) opts.onStdout(payload);
      else if (data[0] === 2) opts.onStderr(payload);
      else if (data[0] === 3) statusText += payload.toString('utf8');
    });
    ws.on('error', (err) => {
      cleanup();
      reject(new ClientError(`cannot open the stream at ${flags.server}: ${err.message}`, undefined, 'ERR_UNAVAILABLE'));
    });
    ws.on('close', () => {
      cleanup();
      let status: Status | undefined;
      if (statusText !== '') {
        try {
          status = JSON.parse(statusText) as Status;
        } catch {
          status = { status: 'Failure', message: statusText };
        }
      }
      try {
        resolve(exitCodeOf(status));
      } catch (err) {
        reject(err);
      }
    });
  });
}
