/**
 * pino factory and the fixed field names of our logs (STYLE.md C10): messages are constant
 * capitalised sentences; context goes in fields. A pod is named by `pod`, `namespace` and `uid`
 * (podFields), a container by `container` and `containerID` — the names users grep for (issue #2
 * asked for exactly these; STYLE.md's `podUID`/`containerName` were not used so that one name
 * means one thing everywhere). Others: `source`, `op`, `workType`, `taskKind`, `durationMs`, `err`.
 *
 * Bounded fields (issue #11 finding 4: a 900 KB image name wrote 54 MB of log in a minute): text
 * a pod or a manifest controls (image names, messages, error messages that quote them) is logged
 * through {@link boundedField} / {@link boundedErr}, and newLogger bounds every string field and
 * `err` again as a safety net. klog has no per-field limit; the bound follows the Kubernetes API's
 * own limits for such text (an event message: 1 KiB, NoteLengthLimit; a termination message: 4 KiB).
 */
import { pino, stdSerializers, type Logger } from 'pino';
import type { Pod } from './api.js';

export type { Logger };

/**
 * verbosityToLevel maps the kubelet's `--v` to a pino level: 0–1 info, 2–3 debug, 4+ trace.
 */
export function verbosityToLevel(v: number): string {
  if (v >= 4) return 'trace';
  if (v >= 2) return 'debug';
  return 'info';
}

/** kMaxLogFieldBytes: the UTF-8 bytes a pod-controlled string field keeps in a log record (4 KiB). */
export const kMaxLogFieldBytes = 4 * 1024;

/**
 * boundedField returns `value` when its UTF-8 form is at most `maxBytes` bytes, else its first
 * `maxBytes` bytes (cut at a character boundary) followed by `…(N more bytes)`, N being the UTF-8
 * bytes left out. Pure; any thread.
 * @param maxBytes bytes kept (default kMaxLogFieldBytes); an integer >= 0.
 */
export function boundedField(value: string, maxBytes = kMaxLogFieldBytes): string {
  // UTF-8 needs at most 3 bytes per UTF-16 unit: a short string is within the bound without counting.
  if (value.length * 3 <= maxBytes) return value;
  const buf = Buffer.from(value, 'utf8');
  if (buf.length <= maxBytes) return value;
  let end = maxBytes;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--; // not inside a multi-byte character
  return `${buf.subarray(0, end).toString('utf8')}…(${buf.length - end} more bytes)`;
}

/**
 * boundedErr: the `err` log field for `err` with its message and stack bounded by
 * {@link boundedField} (pino's err serializer shape: `type`, `message`, `stack`, plus `code` and
 * `reason` when set). A non-Error is logged as a bounded string message. Pure; any thread.
 */
export function boundedErr(err: unknown, maxBytes = kMaxLogFieldBytes): Record<string, unknown> {
  if (!(err instanceof Error)) return { type: typeof err, message: boundedField(String(err), maxBytes) };
  const out: Record<string, unknown> = { type: err.name, message: boundedField(err.message, maxBytes) };
  const { code, reason } = err as { code?: unknown; reason?: unknown };
  if (code !== undefined) out.code = code;
  if (typeof reason === 'string') out.reason = boundedField(reason, maxBytes);
  if (err.stack) out.stack = boundedField(err.stack, maxBytes);
  return out;
}

/**
 * boundLogRecord: the safety net newLogger installs as pino's `formatters.log`: every top-level
 * string field of a record bounded by {@link boundedField} (the serializers then bound `err`).
 */
function boundLogRecord(record: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(record)) {
    const v = record[key];
    if (typeof v === 'string' && v.length * 3 > kMaxLogFieldBytes) record[key] = boundedField(v);
  }
  return record;
}

/** newLogger: JSON logs to stderr (fd 2) at `level`, string fields and `err` bounded (kMaxLogFieldBytes each). */
export function newLogger(level = 'info', destinationFd = 2): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      formatters: { log: boundLogRecord },
      serializers: {
        err: (e: unknown) => {
          if (!(e instanceof Error)) return e;
          const out = stdSerializers.err(e) as unknown as Record<string, unknown>;
          if (typeof out.message === 'string') out.message = boundedField(out.message);
          if (typeof out.stack === 'string') out.stack = boundedField(out.stack);
          return out;
        },
      },
    },
    pino.destination({ fd: destinationFd, sync: false }),
  );
}

/** podFields: the log fields that name a pod (`pod`, `namespace`, `uid`). */
export function podFields(pod: Pod): { pod: string; namespace: string; uid: string } {
  return { pod: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? 'default', uid: pod.metadata?.uid ?? '' };
}
