/**
 * One-shot TCP exchanges for the probe manager's direct httpGet and tcpSocket probes (issue #16):
 * connect, send one request (or nothing), read until the caller has what it needs or the peer
 * closes, close. Safe in any thread.
 *
 * A probe's connection carries one request, so the stream machinery of a net.Socket (a Duplex
 * with its readable and writable states, the destroy chain, half-open handling) costs more than
 * the exchange itself: measured at 200 probes/s against local servers, a probe through net.Socket
 * cost 0.36 ms of CPU and one on Node's TCP handle 0.20 ms (`bench probes` shows the agent's
 * figure). So where the target is an IP address, {@link exchange} drives the handle net.Socket is
 * built on (`tcp_wrap`'s TCP, reached through process.binding's allow-list) directly; where Node
 * does not offer that handle as expected (checked once, at load), or the host is a name that needs
 * a lookup, or the connection is TLS, it uses a net.Socket (or tls) stream — same results, same
 * errors. Both paths are tested against real servers (test/io/probe-socket.test.ts).
 *
 * As the kubelet's probe dialer (pkg/probe/dialer_others.go), a connection is used once and
 * closed by us as soon as the answer is complete; nothing is kept alive between probes.
 */
import net from 'node:net';
import { getSystemErrorMap } from 'node:util';
import { setLongTimeout } from '../shared/long-timeout.js';

/** Why an exchange failed: `connect` (dial), `read` (reset after connecting) or `timeout`. */
export type ProbeSocketPhase = 'connect' | 'read' | 'timeout';

/**
 * ProbeSocketError: an exchange failed. `detail` is the system's wording of the cause as Go
 * prints it (`connection refused`, `no route to host`, …; empty for a timeout), for the caller to
 * put into the kubelet's message (`dial tcp h:p: connect: connection refused`).
 */
export class ProbeSocketError extends Error {
  constructor(
    readonly phase: ProbeSocketPhase,
    readonly detail: string,
  ) {
    super(phase === 'timeout' ? 'i/o timeout' : `${phase}: ${detail}`);
    this.name = 'ProbeSocketError';
  }
}

/** ExchangeRequest: one exchange. */
export interface ExchangeRequest {
  host: string;
  port: number;
  /** What to send once connected (UTF-8). Omitted: connect only; the exchange resolves an empty buffer at once. */
  send?: string;
  /**
   * complete: called with everything received so far after each read; true ends the exchange
   * (we close). Without it the exchange reads until the peer closes.
   */
  complete?: (received: Buffer) => boolean;
  /** The whole exchange's deadline, milliseconds (any length: setLongTimeout). */
  timeoutMs: number;
  /** Dials a stream instead (used for TLS): must emit `connectEvent` once ready. Forces the stream path. */
  connect?: () => net.Socket;
  /** The event `connect` emits when ready (default `connect`; tls: `secureConnect`). */
  connectEvent?: string;
}

/** An exchange's implementation: resolves everything received; rejects with a ProbeSocketError. */
export type ExchangeImpl = (req: ExchangeRequest) => Promise<Buffer>;

const kErrorMap = getSystemErrorMap();

/** errnoDetail: the system's wording of libuv error `code` (negative errno), as Go's syscall errors read. */
function errnoDetail(code: number): string {
  return kErrorMap.get(code)?.[1] ?? `error ${code}`;
}

/** errorDetail: the wording of a stream error (`ECONNREFUSED` → `connection refused`). */
function errorDetail(e: NodeJS.ErrnoException): string {
  if (typeof e.errno === 'number' && kErrorMap.has(e.errno)) return errnoDetail(e.errno);
  return e.message;
}

/** collector: the received chunks, concatenated only when a second one arrives. */
function collector() {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    push(b: Buffer): Buffer {
      chunks.push(b);
      size += b.length;
      if (chunks.length === 1) return b;
      const all = Buffer.concat(chunks, size);
      chunks.length = 0;
      chunks.push(all);
      return all;
    },
    all: (): Buffer => (chunks.length === 1 ? chunks[0]! : Buffer.alloc(0)),
  };
}

/**
 * settleOnce: the one ending of an exchange, whichever comes first — an outcome, or the deadline
 * (`timeoutMs`, milliseconds; any length: setLongTimeout, where a socket's setTimeout fires at
 * once past 2^31-1 ms). Returns `finish(err)`: the first call runs `close` and settles the promise
 * (null: resolves `result()`); later calls do nothing. `isDone` tells callbacks to stand down.
 */
function settleOnce(
  timeoutMs: number,
  close: () => void,
  result: () => Buffer,
  resolve: (b: Buffer) => void,
  reject: (e: Error) => void,
): { finish: (err: ProbeSocketError | null) => void; isDone: () => boolean } {
  let done = false;
  const finish = (err: ProbeSocketError | null) => {
    if (done) return;
    done = true;
    timer.clear();
    close();
    if (err) reject(err);
    else resolve(result());
  };
  const timer = setLongTimeout(() => finish(new ProbeSocketError('timeout', '')), timeoutMs);
  return { finish, isDone: () => done };
}

/** exchangeOverStream: the exchange on a net.Socket (or the stream `req.connect` dials). */
export const exchangeOverStream: ExchangeImpl = (req) =>
  new Promise((resolve, reject) => {
    const s = req.connect ? req.connect() : net.connect({ host: req.host, port: req.port });
    const got = collector();
    let connected = false;
    const { finish } = settleOnce(req.timeoutMs, () => s.destroy(), got.all, resolve, reject);
    s.once(req.connectEvent ?? 'connect', () => {
      connected = true;
      if (req.send === undefined) return finish(null);
      s.write(req.send);
    });
    s.on('data', (b: Buffer) => {
      const all = got.push(b);
      if (req.complete?.(all)) finish(null);
    });
    s.once('end', () => finish(null));
    s.once('error', (e: NodeJS.ErrnoException) => finish(new ProbeSocketError(connected ? 'read' : 'connect', errorDetail(e))));
  });

/** The parts of Node's TCP handle and its request objects that exchangeOverHandle uses. */
interface TcpHandle {
  connect(req: ConnectReq, host: string, port: number): number;
  connect6(req: ConnectReq, host: string, port: number): number;
  readStart(): number;
  readStop(): number;
  writeUtf8String(req: WriteReq, data: string): number;
  close(): void;
  /** Must always be a function: Node's setter asserts it (a null aborts the process). */
  onread: (ab: ArrayBuffer | undefined) => void;
}
interface ConnectReq {
  oncomplete: (status: number) => void;
}
interface WriteReq {
  handle: TcpHandle | null;
  oncomplete: (status: number) => void;
  async: boolean;
}
interface HandleBindings {
  newHandle(): TcpHandle;
  newConnect(): ConnectReq;
  newWrite(): WriteReq;
  state: Int32Array;
  kReadBytes: number;
  kOffset: number;
  kEof: number;
}

/** loadHandleBindings: Node's TCP handle API if it has the shape this module drives, else null. */
function loadHandleBindings(): HandleBindings | null {
  try {
    const binding = (process as unknown as { binding?: (name: string) => Record<string, unknown> }).binding;
    if (typeof binding !== 'function') return null;
    const tcp = binding('tcp_wrap') as {
      TCP?: new (type: number) => TcpHandle;
      TCPConnectWrap?: new () => ConnectReq;
      constants?: { SOCKET?: number };
    };
    const stream = binding('stream_wrap') as {
      WriteWrap?: new () => WriteReq;
      streamBaseState?: unknown;
      kReadBytesOrError?: unknown;
      kArrayBufferOffset?: unknown;
    };
    const { TCP, TCPConnectWrap } = tcp;
    const { WriteWrap, streamBaseState } = stream;
    const socketType = tcp.constants?.SOCKET;
    const eof = [...kErrorMap].find(([, [name]]) => name === 'EOF')?.[0];
    if (
      typeof TCP !== 'function' ||
      typeof TCPConnectWrap !== 'function' ||
      typeof WriteWrap !== 'function' ||
      typeof socketType !== 'number'
    )
      return null;
    if (
      !(streamBaseState instanceof Int32Array) ||
      typeof stream.kReadBytesOrError !== 'number' ||
      typeof stream.kArrayBufferOffset !== 'number' ||
      eof === undefined
    )
      return null;
    const proto = TCP.prototype as unknown as Record<string, unknown>;
    if (!['connect', 'connect6', 'readStart', 'readStop', 'writeUtf8String', 'close'].every((m) => typeof proto[m] === 'function'))
      return null;
    return {
      newHandle: () => new TCP(socketType),
      newConnect: () => new TCPConnectWrap(),
      newWrite: () => new WriteWrap(),
      state: streamBaseState,
      kReadBytes: stream.kReadBytesOrError,
      kOffset: stream.kArrayBufferOffset,
      kEof: eof,
    };
  } catch {
    return null;
  }
}

const kHandles = loadHandleBindings();
const noop = (): void => {};

/** Whether this Node offers the TCP handle API that {@link exchangeOverHandle} drives. */
export const kHandleExchange = kHandles !== null;

/**
 * exchangeOverHandle: the exchange on Node's TCP handle, no stream around it. `req.host` must be
 * an IP address. Rejects with a ProbeSocketError, or with an Error when the handle API is absent
 * ({@link kHandleExchange} false).
 */
export const exchangeOverHandle: ExchangeImpl = (req) =>
  new Promise((resolve, reject) => {
    const b = kHandles;
    if (!b) return reject(new Error('exchangeOverHandle: this Node offers no TCP handle API'));
    const family = net.isIP(req.host);
    if (family === 0) return reject(new Error(`exchangeOverHandle: ${JSON.stringify(req.host)} is not an IP address`));
    const h = b.newHandle();
    const got = collector();
    let connected = false;
    const close = () => {
      // Node asserts that onread is a function (setting null aborts the process).
      h.onread = noop;
      h.close();
    };
    const { finish, isDone } = settleOnce(req.timeoutMs, close, got.all, resolve, reject);
    h.onread = (ab) => {
      const n = b.state[b.kReadBytes]!;
      if (n > 0 && ab) {
        const all = got.push(Buffer.from(ab, b.state[b.kOffset]!, n));
        if (req.complete?.(all)) finish(null);
      } else if (n === b.kEof) finish(null);
      else if (n < 0) finish(new ProbeSocketError('read', errnoDetail(n)));
    };
    const connectReq = b.newConnect();
    connectReq.oncomplete = (status) => {
      if (isDone()) return;
      if (status < 0) return finish(new ProbeSocketError('connect', errnoDetail(status)));
      connected = true;
      if (req.send === undefined) return finish(null);
      const w = b.newWrite();
      w.handle = h;
      w.async = false;
      // An asynchronous write reports here; a synchronous one (a probe's few hundred bytes) does not.
      w.oncomplete = (ws) => {
        if (ws < 0) finish(new ProbeSocketError('read', errnoDetail(ws)));
      };
      const we = h.writeUtf8String(w, req.send);
      if (we < 0) return finish(new ProbeSocketError('read', errnoDetail(we)));
      const re = h.readStart();
      if (re < 0) finish(new ProbeSocketError('read', errnoDetail(re)));
    };
    const ce = family === 6 ? h.connect6(connectReq, req.host, req.port) : h.connect(connectReq, req.host, req.port);
    if (ce < 0) finish(new ProbeSocketError(connected ? 'read' : 'connect', errnoDetail(ce)));
  });

/**
 * exchange: one connection to `req.host:req.port`, as described above; resolves the bytes
 * received (empty for a connect-only exchange, or when the peer closed without a word). Rejects
 * with a ProbeSocketError (`connect`, `read`, `timeout`); never throws synchronously.
 */
export function exchange(req: ExchangeRequest): Promise<Buffer> {
  return kHandles && !req.connect && net.isIP(req.host) !== 0 ? exchangeOverHandle(req) : exchangeOverStream(req);
}
