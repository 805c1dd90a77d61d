// Counterpart of pkg/kubelet/kuberuntime/logs/logs.go (ReadLogs' line loop: ReadBytes('\n'), getParseFunc, parse, logWriter.write with `since` and `timestamps`).
/**
 * LogLineWriter: the synchronous half of reading a container log file. It takes the file's bytes
 * in any chunking, cuts them into raw lines, parses each (the format is detected from the first
 * line that parses), applies `sinceMs` and `timestamps`, and appends the output bytes — stdout and
 * stderr merged in file order, as the kubelet serves them — for the caller to take with `take()`.
 *
 * Partial lines (`P`) are joined: a stream's line is held until its `F` fragment (up to
 * `maxLineBytes`, then written as it comes), so a line the runtime split is whole in the output
 * even when the other stream wrote in between; the `since` decision and the timestamp prefix
 * belong to its first fragment. (Upstream writes, filters and prefixes every fragment alone.)
 * `endOfFile` writes what is held.
 *
 * Bounded memory: a raw line longer than `maxLineBytes` is not buffered whole. A CRI line's head
 * (time, stream, tag) is parsed from its first bytes and the rest is streamed through as it comes;
 * a json-file line that long is skipped. A line that does not parse is skipped and reported to
 * `onMalformed` (upstream logs it and goes on); nothing here throws.
 */
import type { TailStart } from './cri-log-tail.js';
import { detectLogFormat, parseLogLine, type LogFormat, type LogMessage, type LogStream } from './cri-log-format.js';

/** kDefaultMaxLineBytes: the longest raw line buffered whole (containerd splits lines at 16 KiB). */
export const kDefaultMaxLineBytes = 256 * 1024;

/** LogLineWriterOptions: what to write. */
export interface LogLineWriterOptions {
  /** Prefix each line with its RFC3339NanoFixed time and a space. */
  timestamps: boolean;
  /** Skip lines older than this (epoch milliseconds); undefined = every line. */
  sinceMs?: number;
  /** Drop the first this many completed lines (tail's {@link TailStart.skipLines}); default 0. */
  skipLines?: number;
  /** Longest raw line buffered whole, bytes; default {@link kDefaultMaxLineBytes}. */
  maxLineBytes?: number;
  /** Told about each skipped line (why, and its first bytes). */
  onMalformed?(reason: string, head: string): void;
}

/** The line being written on one stream: whether it is shown, and its output held until it ends. */
interface OpenLine {
  state: 'none' | 'writing' | 'skipping';
  held: Buffer[];
  heldBytes: number;
  /** Past maxLineBytes: written as it comes. */
  direct: boolean;
}

function newLine(): OpenLine {
  return { state: 'none', held: [], heldBytes: 0, direct: false };
}

/** A raw line too long to buffer: how its remaining bytes are handled. */
interface Oversize {
  stream: LogStream;
  /** The raw line is a `P` line: its final `\n` is not the container's. */
  partial: boolean;
  skip: boolean;
}

/** LogLineWriter: see the file comment. */
export class LogLineWriter {
  #format: LogFormat | null = null;
  readonly #lines: Record<LogStream, OpenLine> = { stdout: newLine(), stderr: newLine() };
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #oversize: Oversize | null = null;
  #out: Buffer[] = [];
  #outBytes = 0;
  readonly #maxLineBytes: number;
  #skipLines: number;

  constructor(private readonly opts: LogLineWriterOptions) {
    this.#maxLineBytes = opts.maxLineBytes ?? kDefaultMaxLineBytes;
    this.#skipLines = opts.skipLines ?? 0;
  }

  /** The format detected so far (null before the first line that parses). */
  get format(): LogFormat | null {
    return this.#format;
  }

  /** Bytes of output waiting for take(). */
  get outputBytes(): number {
    return this.#outBytes;
  }

  /** True while a raw line has begun but its `\n` has not come. */
  get midLine(): boolean {
    return this.#pendingBytes > 0 || this.#oversize !== null;
  }

  /** write feeds file bytes (any chunking; the Buffer may be kept until its line ends). */
  write(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      const nl = chunk.indexOf(0x0a, i);
      if (nl < 0) {
        this.#add(chunk.subarray(i));
        return;
      }
      this.#add(chunk.subarray(i, nl + 1));
      this.#lineEnd();
      i = nl + 1;
    }
  }

  /**
   * endOfFile treats bytes after the last `\n` as a line (upstream writes an incomplete last line
   * when a read ends). Call it only when no more bytes of this line can come.
   */
  endOfFile(): void {
    if (this.midLine) this.#lineEnd();
    this.#endLine('stdout');
    this.#endLine('stderr');
  }

  /** take hands over the output written so far (empty Buffer when none). */
  take(): Buffer {
    const out = this.#out.length === 1 ? this.#out[0]! : Buffer.concat(this.#out, this.#outBytes);
    this.#out = [];
    this.#outBytes = 0;
    return out;
  }

  #emit(b: Buffer): void {
    if (b.length === 0) return;
    this.#out.push(b);
    this.#outBytes += b.length;
  }

  #add(part: Buffer): void {
    const o = this.#oversize;
    if (o) {
      if (o.skip) return;
      const endsLine = part[part.length - 1] === 0x0a;
      this.#lineOut(o.stream, o.partial && endsLine ? part.subarray(0, part.length - 1) : part);
      return;
    }
    this.#pending.push(part);
    this.#pendingBytes += part.length;
    if (this.#pendingBytes > this.#maxLineBytes && part[part.length - 1] !== 0x0a) this.#startOversize();
  }

  /** The buffered start of a too-long raw line: parse its head, write what is here, stream the rest. */
  #startOversize(): void {
    const head = Buffer.concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    let msg: LogMessage | null = null;
    if (this.#format !== 'json-file') {
      try {
        msg = parseLogLine('cri', head);
        this.#format = 'cri';
      } catch (err) {
        this.#malformed(`a line longer than ${this.#maxLineBytes} bytes that is not a CRI log line: ${(err as Error).message}`, head);
      }
    } else {
      this.#malformed(`json-file line longer than ${this.#maxLineBytes} bytes`, head);
    }
    if (!msg) {
      this.#oversize = { stream: 'stdout', partial: true, skip: true };
      return;
    }
    // Its bytes so far are one fragment; the tag decides whether the line's `\n` is the container's.
    const partial = msg.partial;
    this.#writeMessage({ ...msg, partial: true });
    this.#oversize = { stream: msg.stream, partial, skip: this.#lines[msg.stream].state === 'skipping' };
  }

  #lineEnd(): void {
    const o = this.#oversize;
    if (o) {
      this.#oversize = null;
      if (!o.partial) this.#endLine(o.stream);
      return;
    }
    const line = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    if (line.length === 0) return;
    let msg: LogMessage;
    try {
      this.#format ??= detectLogFormat(line);
      msg = parseLogLine(this.#format, line);
    } catch (err) {
      // Tail counted it as a line.
      if (this.#skipLines > 0) this.#skipLines--;
      this.#malformed((err as Error).message, line);
      return;
    }
    this.#writeMessage(msg);
  }

  #writeMessage(msg: LogMessage): void {
    const line = this.#lines[msg.stream];
    if (line.state === 'none') {
      line.state = this.opts.sinceMs !== undefined && msg.timeMs < this.opts.sinceMs ? 'skipping' : 'writing';
      if (line.state === 'writing' && this.opts.timestamps) this.#lineOut(msg.stream, Buffer.from(`${msg.timestamp} `, 'latin1'));
    }
    if (line.state === 'writing') this.#lineOut(msg.stream, msg.log);
    if (!msg.partial) this.#endLine(msg.stream);
  }

  /** Output of the line open on `stream`: held until the line ends, or written at once past maxLineBytes. */
  #lineOut(stream: LogStream, b: Buffer): void {
    const line = this.#lines[stream];
    if (line.direct) return this.#emit(b);
    line.held.push(b);
    line.heldBytes += b.length;
    if (line.heldBytes > this.#maxLineBytes) {
      for (const h of line.held) this.#emit(h);
      line.held = [];
      line.heldBytes = 0;
      line.direct = true;
    }
  }

  #endLine(stream: LogStream): void {
    const line = this.#lines[stream];
    if (line.state === 'none') return;
    if (this.#skipLines > 0) this.#skipLines--;
    else for (const h of line.held) this.#emit(h);
    this.#lines[stream] = newLine();
  }

  #malformed(reason: string, line: Buffer): void {
    this.opts.onMalformed?.(reason, line.toString('utf8', 0, Math.min(line.length, 200)));
  }
}
