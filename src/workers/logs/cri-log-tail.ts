// Counterpart of pkg/util/tail/tail.go (FindTailLineStartIndex) as pkg/kubelet/kuberuntime/logs/logs.go ReadLogs uses it for `tailLines`.
/**
 * Finding where the last N lines of a container log file start, reading the file backwards in
 * blocks (bounded memory whatever the file's size). Unlike upstream, which counts the file's raw
 * lines, a CRI log's partial (`P`) lines are joined: N counts lines of the container's output, so
 * `tailLines: 1` of a line the runtime split in three gives the whole line.
 */
import type { FileHandle } from 'node:fs/promises';
import { endsLogicalLine, parseCriLogLine, type LogFormat } from './cri-log-format.js';

const kBlockBytes = 64 * 1024;
/** The head of a raw line that holds its timestamp, stream and tag (RFC3339Nano is ≤ 35 bytes). */
const kHeadBytes = 64;

/**
 * guessLogFormat reads the file's first bytes and says whether its first line has the CRI
 * format's head (timestamp, stream, tag), else `json-file`. Used only to count lines for tail;
 * the reader re-detects from the first whole line it parses.
 */
export async function guessLogFormat(fh: FileHandle): Promise<LogFormat> {
  const buf = Buffer.alloc(256);
  const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
  const first = buf.subarray(0, bytesRead);
  const nl = first.indexOf(0x0a);
  try {
    parseCriLogLine(nl >= 0 ? first.subarray(0, nl + 1) : first);
    return 'cri';
  } catch {
    return 'json-file';
  }
}

/**
 * findTailStart answers the byte offset of the first raw line of the last `lines` lines of the
 * file (0 when it has fewer): the raw lines after the `lines + 1`-th line end from the end. An
 * unfinished line at the end (partial lines, no `F` yet) comes on top. `lines <= 0` answers `size`.
 * @param size the file's size in bytes, as read by the caller (later growth is not looked at).
 */
export async function findTailStart(fh: FileHandle, size: number, lines: number, format: LogFormat): Promise<number> {
  if (lines <= 0) return size;
  let complete = 0;
  let next = size; // the start of the raw line visited just before (the one after it in the file)
  let block = Buffer.alloc(0);
  let blockStart = size;
  const head = async (start: number): Promise<Buffer> => {
    const off = start - blockStart;
    if (off >= 0 && off + kHeadBytes <= block.length) return block.subarray(off, off + kHeadBytes);
    const buf = Buffer.alloc(kHeadBytes);
    const { bytesRead } = await fh.read(buf, 0, kHeadBytes, start);
    return buf.subarray(0, bytesRead);
  };
  /** Visits the raw line starting at `start`; true when the tail starts at `next`. */
  const visit = async (start: number): Promise<boolean> => {
    if (endsLogicalLine(format, await head(start))) {
      complete++;
      if (complete > lines) return true;
    }
    next = start;
    return false;
  };
  for (let pos = size; pos > 0; ) {
    const from = Math.max(0, pos - kBlockBytes);
    // Keep the previous block's first bytes after this one, so heads that cross the boundary are in memory.
    const fresh = Buffer.alloc(pos - from);
    const { bytesRead } = await fh.read(fresh, 0, fresh.length, from);
    if (bytesRead < fresh.length) return 0; // truncated under us: read it all
    block = Buffer.concat([fresh, block.subarray(0, kHeadBytes)]);
    blockStart = from;
    for (let i = fresh.length - 1; i >= 0; i--) {
      if (fresh[i] !== 0x0a) continue;
      const start = from + i + 1;
      if (start >= size) continue; // the file's final newline starts no line
      if (await visit(start)) return next;
    }
    pos = from;
  }
  if (size > 0 && (await visit(0))) return next;
  return 0;
}
