// Counterpart of pkg/util/tail/tail.go (FindTailLineStartIndex) as pkg/kubelet/kuberuntime/logs/logs.go ReadLogs uses it for `tailLines`.
/**
 * Finding where the last N lines of a container log file start, reading the file backwards in
 * blocks (bounded memory whatever the file's size). Unlike upstream, which counts the file's raw
 * lines, a CRI log's partial (`P`) lines are joined: N counts lines of the container's output, so
 * `tailLines: 1` of a line the runtime split in three gives the whole line, even when the other
 * stream wrote lines between its fragments.
 */
import type { FileHandle } from 'node:fs/promises';
import { lineHead, parseCriLogLine, type LogFormat } from './cri-log-format.js';

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

/** TailStart: where to start reading for the last N lines, and how many completed lines to drop first. */
export interface TailStart {
  /** Byte offset of the first raw line to read. */
  start: number;
  /**
   * Lines that complete in the file after `start` but are not among the last N (another stream's
   * lines written between the fragments of a split line): the writer drops the first this many.
   */
  skipLines: number;
}

/**
 * findTailStart finds where the last `lines` lines of the file begin. Lines are counted as the
 * container's output is: a CRI line split into `P` fragments is one line, complete at its `F`
 * fragment; the reader writes lines in the order they complete. Walking back from the end, the
 * last `lines` completed lines are taken with every fragment of theirs, and an unfinished line at
 * the end (fragments, no `F` yet) on top. `lines <= 0` starts at `size`; fewer lines than asked
 * start at 0.
 * @param size the file's size in bytes, as read by the caller (later growth is not looked at).
 */
export async function findTailStart(fh: FileHandle, size: number, lines: number, format: LogFormat): Promise<TailStart> {
  if (lines <= 0) return { start: size, skipLines: 0 };
  let complete = 0;
  let excluded = 0;
  const tail: TailStart = { start: size, skipLines: 0 };
  // Per stream, walking back: is the line whose fragments come now among the last N?
  const open = new Map<string, boolean>();
  let block = Buffer.alloc(0);
  let blockStart = size;
  const head = async (start: number): Promise<Buffer> => {
    const off = start - blockStart;
    if (off >= 0 && off + kHeadBytes <= block.length) return block.subarray(off, off + kHeadBytes);
    const buf = Buffer.alloc(kHeadBytes);
    const { bytesRead } = await fh.read(buf, 0, kHeadBytes, start);
    return buf.subarray(0, bytesRead);
  };
  /** Visits the raw line starting at `start`; true once nothing before it can belong to the tail. */
  const visit = async (start: number): Promise<boolean> => {
    const { stream, ends } = lineHead(format, await head(start));
    let taken: boolean;
    if (ends) {
      complete++;
      taken = complete <= lines;
      open.set(stream, taken);
      if (!taken) excluded++;
    } else {
      // A fragment: of the unfinished last line, or of the line its stream completes later.
      if (!open.has(stream)) open.set(stream, true);
      taken = open.get(stream)!;
    }
    if (taken) tail.start = start;
    if (taken) tail.skipLines = excluded;
    return complete > lines && ![...open.values()].includes(true);
  };
  for (let pos = size; pos > 0;) {
    const from = Math.max(0, pos - kBlockBytes);
    // Keep the previous block's first bytes after this one, so heads that cross the boundary are in memory.
    const fresh = Buffer.alloc(pos - from);
    const { bytesRead } = await fh.read(fresh, 0, fresh.length, from);
    if (bytesRead < fresh.length) return { start: 0, skipLines: 0 }; // truncated under us: read it all
    block = Buffer.concat([fresh, block.subarray(0, kHeadBytes)]);
    blockStart = from;
    for (let i = fresh.length - 1; i >= 0; i--) {
      if (fresh[i] !== 0x0a) continue;
      const start = from + i + 1;
      if (start >= size) continue; // the file's final newline starts no line
      if (await visit(start)) return tail;
    }
    pos = from;
  }
  if (size > 0) await visit(0);
  return tail;
}
