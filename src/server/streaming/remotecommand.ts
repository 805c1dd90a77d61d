/**
 * Counterpart of the remotecommand channel protocols as the kubelet serves them over WebSocket
 * (k8s.io/apimachinery/pkg/util/remotecommand constants, httpstream/wsstream conn.go, and
 * pkg/kubelet/cri/streaming/remotecommand: NewOptions, websocket.go, exec.go, attach.go): the
 * query of an exec/attach, sub-protocol negotiation, channel frames, and the status written on
 * channel 3. Pure functions only; exec-ws.ts drives them on uWebSockets.js.
 *
 * Channels: 0 stdin, 1 stdout, 2 stderr, 3 error/status, 4 resize (`{"Width":…,"Height":…}`), and
 * in v5 255 the CLOSE signal (`[255, channel]`: the client will send nothing more on `channel`;
 * for stdin the process's stdin is closed). The base64 protocols carry `'0'+channel` then base64.
 */
import type { Status } from '../../shared/api.js';
import type { TerminalSize } from '../../shared/streams-protocol.js';
import { statusError } from '../http/status.js';

export const kStdinChannel = 0;
export const kStdoutChannel = 1;
export const kStderrChannel = 2;
export const kErrorChannel = 3;
export const kResizeChannel = 4;
/** kCloseChannel: the v5 CLOSE signal (remotecommand.StreamClose). */
export const kCloseChannel = 255;

/** The sub-protocols served, most preferred first (the client's order decides, as wsstream's handshake). */
export const kStreamProtocols: readonly string[] = Object.freeze([
  'v5.channel.k8s.io',
  'v4.channel.k8s.io',
  'v4.base64.channel.k8s.io',
  'channel.k8s.io',
  'base64.channel.k8s.io',
]);

/** NegotiatedProtocol: the protocol chosen, its status format (1: text on failure only; 4: Status JSON) and whether it has the CLOSE signal and base64 framing. */
export interface NegotiatedProtocol {
  /** '' when the client offered none (served as `channel.k8s.io`, as the kubelet's "" protocol). */
  name: string;
  statusVersion: 1 | 4;
  closeSignal: boolean;
  base64: boolean;
}

/**
 * negotiateProtocol picks the first of `offered` (the client's Sec-WebSocket-Protocol values, bearer
 * token protocols already removed) that is served; none offered → the binary v1 protocol named ''.
 * @returns undefined when protocols were offered and none is served (the caller answers 400).
 */
export function negotiateProtocol(offered: readonly string[]): NegotiatedProtocol | undefined {
  const list = offered.map((p) => p.trim()).filter((p) => p !== '');
  const name = list.length === 0 ? '' : list.find((p) => kStreamProtocols.includes(p));
  if (name === undefined) return undefined;
  return {
    name,
    statusVersion: name.startsWith('v4.') || name.startsWith('v5.') ? 4 : 1,
    closeSignal: name.startsWith('v5.'),
    base64: name.includes('base64'),
  };
}

/** StreamRequest: an exec or attach as its query asks it (remotecommand.Options plus the command). */
export interface StreamRequest {
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

function flag(query: URLSearchParams, name: string): boolean | Status {
  const all = query.getAll(name);
  if (all.length === 0) return false;
  const v = all[all.length - 1].toLowerCase();
  if (v === '1' || v === 'true') return true;
  if (v === '0' || v === 'false' || v === '') return false;
  return statusError(400, 'BadRequest', `${name} must be 1 or 0 (true or false), got ${JSON.stringify(all[all.length - 1])}`, {
    causes: [{ field: name, reason: 'FieldValueInvalid', message: 'must be 1 or 0' }],
  });
}

/**
 * parseStreamQuery reads `command` (repeated, exec only: required), `stdin`, `stdout`, `stderr`
 * and `tty` (`1`/`true` or `0`/`false`, as kubectl sends `1`). As NewOptions: with `tty`, stderr is
 * dropped (a TTY has one output); at least one of stdin, stdout, stderr is required. Pure.
 * @returns the request, or a 400 Status naming the parameter.
 */
export function parseStreamQuery(kind: 'exec' | 'attach', query: URLSearchParams): StreamRequest | Status {
  const vals = { stdin: flag(query, 'stdin'), stdout: flag(query, 'stdout'), stderr: flag(query, 'stderr'), tty: flag(query, 'tty') };
  for (const v of Object.values(vals)) if (typeof v === 'object') return v;
  const command = query.getAll('command');
  if (kind === 'exec' && command.length === 0) {
    return statusError(400, 'BadRequest', 'command: required (one command= parameter per argument)', {
      causes: [{ field: 'command', reason: 'FieldValueRequired', message: 'Required value' }],
    });
  }
  const { stdin, stdout, tty } = vals as Record<string, boolean>;
  const stderr = (vals.stderr as boolean) && !tty;
  if (!stdin && !stdout && !stderr) return statusError(400, 'BadRequest', 'you must specify at least 1 of stdin, stdout, stderr');
  return { command: kind === 'exec' ? command : [], stdin, stdout, stderr, tty };
}

/** encodeFrame: one message on `channel` (binary: the channel byte then the bytes; base64: `'0'+channel` then base64 text). */
export function encodeFrame(p: NegotiatedProtocol, channel: number, data: Uint8Array): Uint8Array | string {
  if (p.base64) return String.fromCharCode(48 + channel) + Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  const out = new Uint8Array(data.byteLength + 1);
  out[0] = channel;
  out.set(data, 1);
  return out;
}

/** decodeFrame: the channel and bytes of a client message, or null for an empty or undecodable one (wsstream skips those). */
export function decodeFrame(p: NegotiatedProtocol, message: ArrayBuffer): { channel: number; data: Uint8Array } | null {
  const bytes = new Uint8Array(message);
  if (bytes.length === 0) return null;
  if (!p.base64) return { channel: bytes[0], data: bytes.slice(1) };
  const channel = bytes[0] - 48;
  const text = Buffer.from(bytes.subarray(1)).toString('latin1');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  return { channel, data: new Uint8Array(Buffer.from(text, 'base64')) };
}

/**
 * parseResize reads a resize message (`{"Width":80,"Height":24}`, remotecommand.TerminalSize; the
 * lower-case names too), or null when it is not one: sizes are integers in 1..65535 (Docker's uint16).
 */
export function parseResize(data: Uint8Array): TerminalSize | null {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return null;
  }
  const o = (v ?? {}) as Record<string, unknown>;
  const width = o.Width ?? o.width;
  const height = o.Height ?? o.height;
  const ok = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535;
  return ok(width) && ok(height) ? { width: width as number, height: height as number } : null;
}

/** kSuccessStatus: what v4 writes when the command succeeded (`{"metadata":{},"status":"Success"}`). */
export const kSuccessStatus: Status = { metadata: {}, status: 'Success' };

/**
 * streamResultStatus: the Status of a finished exec or attach, as ServeExec/ServeAttach write it:
 * Success; for a non-zero exit code, Failure with reason NonZeroExitCode and the cause
 * `{reason: ExitCode, message: "<code>"}` (message `command terminated with non-zero exit code:
 * command '<cmd>' exited with <code>`); for an error, an InternalError (`Internal error occurred:
 * error executing command in container: …`, or `error attaching to container: …`). Pure.
 */
export function streamResultStatus(
  kind: 'exec' | 'attach',
  command: readonly string[],
  exitCode: number | null,
  error?: { message: string },
): Status {
  if (error) {
    const inner = `${kind === 'exec' ? 'error executing command in container' : 'error attaching to container'}: ${error.message}`;
    return {
      metadata: {},
      status: 'Failure',
      message: `Internal error occurred: ${inner}`,
      reason: 'InternalError',
      code: 500,
      details: { causes: [{ message: inner }] },
    };
  }
  if (exitCode === null || exitCode === 0) return kSuccessStatus;
  return {
    metadata: {},
    status: 'Failure',
    reason: 'NonZeroExitCode',
    message: `command terminated with non-zero exit code: command '${command.join(' ')}' exited with ${exitCode}`,
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

/**
 * statusPayload: the bytes written on channel 3 for `status`: v4/v5 the Status as JSON; v1 the
 * message of a failure only (nothing for a success, as v1WriteStatusFunc). Pure.
 */
export function statusPayload(p: NegotiatedProtocol, status: Status): Uint8Array | undefined {
  if (p.statusVersion === 4) return new TextEncoder().encode(JSON.stringify(status));
  if (status.status === 'Success') return undefined;
  return new TextEncoder().encode(status.message ?? 'stream failed');
}
