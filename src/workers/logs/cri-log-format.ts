// Counterpart of pkg/kubelet/kuberuntime/logs/logs.go (parseCRILog, parseDockerJSONLog, getParseFunc, logWriter's timestamp prefix) and of k8s.io/kubelet/pkg/types RFC3339NanoFixed / RFC3339NanoLenient.
/**
 * The two container log file formats the kubelet reads, one line at a time:
 *
 * - the CRI format the runtime writes (containerd, CRI-O): `<RFC3339Nano> <stdout|stderr> <tags> <content>\n`,
 *   `tags` being `P` (partial: the runtime split a long line, no newline belongs to it) or `F`
 *   (full: the content ends a line), possibly followed by more `:`-separated tags (kept forward
 *   compatible: only the first is read);
 * - Docker's json-file lines (`{"log":"…\n","stream":"stdout","time":"…"}`), which cri-dockerd
 *   links into the pod's log directory.
 *
 * Pure functions over Buffers; parsing never allocates more than the line itself. A malformed line
 * is a thrown `Error` saying what is wrong (upstream's messages); the reader skips it and logs.
 */

/** LogStream: the stream a line was written to. */
export type LogStream = 'stdout' | 'stderr';

/** LogFormat: the file's format, chosen from its first line as getParseFunc does. */
export type LogFormat = 'cri' | 'json-file';

/** LogMessage: one parsed line. */
export interface LogMessage {
  /** The line's time as the kubelet prints it (RFC3339NanoFixed: nine fraction digits, `Z` for UTC). */
  timestamp: string;
  /** The same time in epoch milliseconds (fractional: sub-millisecond precision kept to ~0.25 µs). */
  timeMs: number;
  stream: LogStream;
  /** The content; for a complete line it ends with `\n`, for a partial (`P`) one it does not. */
  log: Buffer;
  /** True when the line is the runtime's split of a longer line (`P`, or a json-file `log` without `\n`). */
  partial: boolean;
}

// RFC3339NanoLenient: one to nine fraction digits (or none), `Z` or a numeric offset.
const kTimestamp = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/**
 * parseTimestamp reads an RFC 3339 time with up to nine fraction digits.
 * @returns `{timestamp, timeMs}`: the time re-written as RFC3339NanoFixed (what `timestamps=true`
 *   prefixes, as the kubelet's logWriter does) and epoch milliseconds.
 * @throws Error `unexpected timestamp format` when `text` is not such a time.
 */
export function parseTimestamp(text: string): { timestamp: string; timeMs: number } {
  const m = kTimestamp.exec(text);
  if (!m)
    throw new Error(`unexpected timestamp format "${text.length > 64 ? `${text.slice(0, 64)}…` : text}" (want RFC 3339 with nanoseconds)`);
  const [, y, mo, d, h, mi, s, frac = '', zone] = m;
  const fraction = frac.padEnd(9, '0');
  let offsetMin = 0;
  if (zone !== 'Z') offsetMin = (zone!.startsWith('-') ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6)));
  const base = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(base)) throw new Error(`unexpected timestamp format "${text}"`);
  const timeMs = base - offsetMin * 60_000 + Number(fraction) / 1e6;
  // Go's Z07:00 prints `Z` for a zero offset, whichever way the file spelled it.
  const outZone = offsetMin === 0 ? 'Z' : zone;
  return { timestamp: `${y}-${mo}-${d}T${h}:${mi}:${s}.${fraction}${outZone}`, timeMs };
}

const kSpace = 0x20;
const kNewline = 0x0a;

/**
 * parseCriLogLine parses one CRI log line (as read, with or without its trailing `\n`).
 * A `P` line loses its trailing `\n` (it is the file's line end, not the container's); an `F`
 * line keeps it.
 * @throws Error naming what is missing or wrong (timestamp, stream type, log tag).
 */
export function parseCriLogLine(line: Buffer): LogMessage {
  const i1 = line.indexOf(kSpace);
  if (i1 < 0) throw new Error('timestamp is not found');
  const time = parseTimestamp(line.toString('latin1', 0, i1));
  const i2 = line.indexOf(kSpace, i1 + 1);
  if (i2 < 0) throw new Error('stream type is not found');
  const stream = line.toString('latin1', i1 + 1, i2);
  if (stream !== 'stdout' && stream !== 'stderr') throw new Error(`unexpected stream type "${stream.slice(0, 32)}"`);
  let i3 = line.indexOf(kSpace, i2 + 1);
  let start = i3 + 1;
  if (i3 < 0) {
    // An empty line may be written without the space before its (empty) content.
    if (line.length > i2 + 2 && line[line.length - 1] === kNewline) start = i3 = line.length - 1;
    else throw new Error('log tag is not found');
  }
  const tag = line.toString('latin1', i2 + 1, i3).split(':')[0];
  const partial = tag === 'P';
  let end = line.length;
  if (partial && end > 0 && line[end - 1] === kNewline) end--;
  start = Math.min(start, end);
  return { ...time, stream, log: line.subarray(start, end), partial };
}

/**
 * parseDockerJsonLogLine parses one line of Docker's json-file log driver.
 * @throws Error when the line is not such JSON, or its `stream` is not stdout/stderr, or its
 *   `time` is not RFC 3339.
 */
export function parseDockerJsonLogLine(line: Buffer): LogMessage {
  let v: unknown;
  try {
    v = JSON.parse(line.toString('utf8'));
  } catch (err) {
    throw new Error(`failed to unmarshal json-file log line: ${(err as Error).message}`);
  }
  const o = v as { log?: unknown; stream?: unknown; time?: unknown } | null;
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new Error('json-file log line is not an object');
  if (o.stream !== 'stdout' && o.stream !== 'stderr') throw new Error(`unexpected stream type "${String(o.stream).slice(0, 32)}"`);
  if (typeof o.time !== 'string') throw new Error('json-file log line has no "time"');
  const text = typeof o.log === 'string' ? o.log : '';
  return { ...parseTimestamp(o.time), stream: o.stream, log: Buffer.from(text, 'utf8'), partial: !text.endsWith('\n') };
}

/** parseLogLine parses a line of `format`; see {@link parseCriLogLine} and {@link parseDockerJsonLogLine}. */
export function parseLogLine(format: LogFormat, line: Buffer): LogMessage {
  return format === 'cri' ? parseCriLogLine(line) : parseDockerJsonLogLine(line);
}

/**
 * detectLogFormat picks the format that parses `line` (the first line read), trying the CRI
 * format first, as getParseFunc does.
 * @throws Error `unsupported log format` when neither parses it.
 */
export function detectLogFormat(line: Buffer): LogFormat {
  for (const format of ['cri', 'json-file'] as const) {
    try {
      parseLogLine(format, line);
      return format;
    } catch {
      // try the next one
    }
  }
  throw new Error(`unsupported log format: ${JSON.stringify(line.toString('utf8', 0, Math.min(line.length, 128)))}`);
}

/**
 * lineHead reads what tail needs of the raw line whose first bytes are `head` (the first ~64
 * bytes: timestamp, stream, tag): its stream and whether it ends a line of the container's output
 * — a CRI line tagged other than `P`; every json-file line (stream `''`), and any line that does
 * not parse as CRI (upstream's tail counts raw lines).
 */
export function lineHead(format: LogFormat, head: Buffer): { stream: string; ends: boolean } {
  if (format !== 'cri') return { stream: '', ends: true };
  const i1 = head.indexOf(kSpace);
  const i2 = i1 < 0 ? -1 : head.indexOf(kSpace, i1 + 1);
  if (i2 < 0) return { stream: '', ends: true };
  const partial =
    head[i2 + 1] === 0x50 /* P */ &&
    (head.length === i2 + 2 || head[i2 + 2] === kSpace || head[i2 + 2] === 0x3a /* : */ || head[i2 + 2] === kNewline);
  return { stream: head.toString('latin1', i1 + 1, i2), ends: !partial };
}
