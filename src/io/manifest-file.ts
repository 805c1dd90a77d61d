// Counterpart of the read in pkg/kubelet/config/file.go extractFromFile (os.ReadFile of one manifest), bounded.
/**
 * One read of a static pod manifest file, on the thread that decodes it (src/workers/manifest.worker.ts):
 * the file source's main thread asks the manifest thread to read and decode a file in one task, so
 * the text crosses no thread boundary and the read costs the main thread no fs round trips (issue
 * #42). Synchronous: the manifest thread has nothing else to do meanwhile. Any thread.
 */
import { createHash } from 'node:crypto';
import fs, { type BigIntStats } from 'node:fs';

/**
 * kMaxManifestBytes: larger manifest files are refused (their last good pods stay). The cap bounds
 * what a read holds in memory and how long a pathological file can hold the manifest thread.
 */
export const kMaxManifestBytes = 1024 * 1024;

/** One read of a manifest file: its text, the text's SHA-256, and what fstat said just before it was read. */
export interface ManifestFileContent {
  text: string;
  /** Hex SHA-256 of `text`. */
  hash: string;
  /** statKey of the opened file just before the read: a write during the read or since changes it. */
  stat: string;
  /** The file's mtime then, epoch milliseconds. */
  mtimeMs: number;
}

/** statKey: a file's inode, size, mtime and ctime (ns) as one string; a write or a rename over it changes it. */
export function statKey(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** kFirstReadBytes: the smallest first buffer of a read (bytes), for files whose stat says 0. */
const kFirstReadBytes = 16 * 1024;

/**
 * readManifestFileSync: one read of a manifest file, with fstat's inode, size and mtime taken on
 * the opened file just before the read. A stat first (a file that is not regular is not opened:
 * opening a device can have effects); the read is bounded: at most kMaxManifestBytes + 1 bytes
 * are read whatever stat says, so a file whose stat size is 0 (a symlink to /proc/kallsyms) or one
 * that grows after the stat is refused, not read whole. The file is opened with O_NONBLOCK (a FIFO
 * swapped in after the stat cannot block the thread) and its type checked again on the open
 * descriptor. A file whose stat is right costs stat, open, fstat, two reads and close.
 * @returns the read, or `'not a file'` when `file` is not a regular file.
 * @throws the filesystem's error (with its `code`, ENOENT for a missing file), or an Error naming
 *   the size when it exceeds kMaxManifestBytes.
 */
export function readManifestFileSync(file: string): ManifestFileContent | 'not a file' {
  const before = fs.statSync(file);
  if (!before.isFile()) return 'not a file';
  if (before.size > kMaxManifestBytes) throw tooBig(`is ${before.size} bytes`);
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    // Taken before the read: a write during the read then changes the stat from this one, so the
    // next check that compares stats reads the file again (taken after, it would hide that write).
    const opened = fs.fstatSync(fd, { bigint: true });
    if (!opened.isFile()) return 'not a file';
    const limit = kMaxManifestBytes + 1;
    let bytes = Buffer.allocUnsafe(Math.min(limit, Math.max(before.size + 1, kFirstReadBytes)));
    let length = 0;
    for (;;) {
      if (length === bytes.length) {
        if (length >= limit) break;
        const bigger = Buffer.allocUnsafe(Math.min(limit, bytes.length * 2));
        bytes.copy(bigger, 0, 0, length);
        bytes = bigger;
      }
      const n = fs.readSync(fd, bytes, length, bytes.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > kMaxManifestBytes) throw tooBig(`has more than ${kMaxManifestBytes} bytes`);
    const text = bytes.toString('utf8', 0, length);
    return {
      text,
      hash: createHash('sha256').update(text).digest('hex'),
      stat: statKey(opened),
      mtimeMs: Number(opened.mtimeNs / 1_000_000n),
    };
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // nothing to do: the descriptor is gone either way
    }
  }
}

function tooBig(what: string): Error {
  return new Error(`file ${what}; a pod manifest may have at most ${kMaxManifestBytes} bytes (1 MiB, as the intake API's body limit)`);
}
