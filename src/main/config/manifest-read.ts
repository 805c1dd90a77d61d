/**
 * How the file source reads one manifest file (pkg/kubelet/config/file.go reads it once; we read
 * until the writer is done): loadManifest (skip by stat, read, parse when the content changed) and
 * readSettled, which reads again until two reads agree. Each read is done by the source's
 * manifest thread (ManifestReader: it stats the file to skip an unchanged one, reads it with
 * fstat's inode, size and mtime, hashes it and decodes a new content in the same task), so the
 * main thread makes no fs call per read and the text never crosses to it. Changes no state:
 * manifest-set.ts keeps each file's state and applies the loads. Main thread; asynchronous fs
 * calls only (a stat after a failed read, for its catch-up skip).
 */
import { promises as fsp } from 'node:fs';
import type { Pod } from '../../shared/api.js';
import type { ConfigObject } from '../../shared/config-objects.js';
import { statKey } from '../../io/manifest-file.js';
import { realClock } from '../../shared/clock.js';

export { statKey };

/**
 * kStatTrustMs: a file last modified at least this long (milliseconds) before it was read is
 * skipped by a full check while its statKey is unchanged. A file read sooner after its write is
 * read again at the next check: a filesystem's mtime is as coarse as the kernel's tick, so a
 * second same-size write within that tick could leave stat unchanged.
 */
export const kStatTrustMs = 2000;

/** ManifestReadState: what the source keeps of a file's last read, which loadManifest compares against. */
export interface ManifestReadState {
  /** SHA-256 of the content last read, or undefined when the last read failed. */
  contentHash?: string;
  /**
   * statKey of the file as its last read found it (FileRead.stat), kept only when the file's
   * mtime was at least kStatTrustMs older than that read: a full check skips the file while stat
   * still says this.
   */
  stat?: string;
  /**
   * statKey of the file as its last read found it, whatever its age (after a failed read, as stat
   * said then): a catch-up check skips the file while stat still says this.
   */
  readStat?: string;
}

/**
 * CheckKind: why a file is read, which decides when it may be skipped. `event`: named by a watch
 * event, always read. `full`: the periodic check, skipped while stat says what it said after a
 * trusted read (ManifestReadState.stat, kStatTrustMs). `catch-up`: the check after a burst of
 * watch events (manifest-checks.ts kCatchUpMs), skipped while stat says what it said after the last
 * read (ManifestReadState.readStat).
 */
export type CheckKind = 'event' | 'full' | 'catch-up';

/** ParsedManifest: what a parse gives, the file's pods and objects or its error (`retry`: the thread did not answer). */
export type ParsedManifest = { pods: Pod[]; objects?: ConfigObject[] } | { error: string; retry: boolean };

/**
 * ManifestLoad: one file's read before its state is updated (loadManifest, then ManifestSet.apply
 * of manifest-set.ts), with `prev`, its state when the read began: `unchanged` (stat says so), `gone`
 * (missing, or not a regular file), `unsettled` (still being written), `failed` (unreadable), or
 * `read` — with `parsed` when the content differs from the last read's. `stat` and `readStat` are
 * the new ManifestReadState's.
 */
export type ManifestLoad<S extends ManifestReadState> = { prev: S | undefined } & (
  | { kind: 'unchanged' | 'gone' | 'unsettled' }
  | { kind: 'failed'; message: string; readStat: string | undefined }
  | { kind: 'read'; contentHash: string; stat: string | undefined; readStat: string; parsed?: ParsedManifest }
);

/**
 * loadManifest reads one file for the source through readSettled and `hooks.read`, whose task
 * stats the file first and reads nothing while its stat says what `prev` kept (CheckKind: `full`,
 * `catch-up`; never for `event`), and decodes a content that differs from `prev.contentHash`. Changes no state and reports
 * nothing, so several files can be loaded at once (the source's readManifests). Never rejects:
 * a filesystem error is a `failed` (or `gone`) load whose message names the file.
 */
export async function loadManifest<S extends ManifestReadState>(
  file: string,
  prev: S | undefined,
  kind: CheckKind,
  hooks: { stopped(): boolean; read: ManifestReader },
): Promise<ManifestLoad<S>> {
  const skipWhile = kind === 'full' ? prev?.stat : kind === 'catch-up' ? prev?.readStat : undefined;
  let read;
  try {
    read = await readSettled(file, prev, hooks.stopped, hooks.read, skipWhile);
  } catch (err) {
    if (isMissing(err)) return { kind: 'gone', prev };
    // Its stat, so that a catch-up check does not read it again (and again fail) until it changes.
    const st = await fsp.stat(file, { bigint: true }).catch(() => undefined);
    return {
      kind: 'failed',
      prev,
      message: `${file}: cannot read pod manifest: ${errorMessage(err)}`,
      readStat: st === undefined ? undefined : statKey(st),
    };
  }
  if (read === 'not a file') return { kind: 'gone', prev };
  if (read === 'unsettled' || read === 'unchanged') return { kind: read, prev };
  // The thread did not answer: nothing is known of the file (ManifestSet keeps no hash or stat of it).
  if (read.parsed !== undefined && 'error' in read.parsed && read.parsed.retry)
    return { kind: 'read', prev, contentHash: '', stat: undefined, readStat: '', parsed: read.parsed };
  // Compared with the file's mtime, a wall-clock time of the filesystem: the real clock, never a test's.
  const stat = realClock.now() - read.mtimeMs >= kStatTrustMs ? read.stat : undefined;
  const loaded = { kind: 'read', prev, contentHash: read.hash, stat, readStat: read.stat } as const;
  if (prev !== undefined && prev.contentHash === read.hash) return loaded;
  return { ...loaded, parsed: read.parsed ?? { pods: [] } };
}

/** isMissing: a filesystem error that says the path (or a directory on it) does not exist. */
export function isMissing(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** errorMessage: an error's message, or the thrown value as a string. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * kSettleMs: a known file read with new content is read again after this long (milliseconds),
 * until two reads agree (see readSettled)...
 */
export const kSettleMs = 50;
/** ...at most this many times more; a file still changing then keeps its last good pods and is read again. */
export const kMaxSettleReads = 10;
/**
 * kEmptySettleReads: an empty read of a file that held content must be seen this many times in a
 * row (kEmptySettleReads × kSettleMs = 300 ms) before it is taken: an in-place rewrite is empty from
 * its O_TRUNC to its first write, and on a loaded machine that gap can outlast one kSettleMs.
 */
export const kEmptySettleReads = 6;

/**
 * One read of a manifest file (by the manifest thread): the content's SHA-256, what fstat said just
 * before it was read, and its decoding when the reader was not told to skip that content.
 */
export interface FileRead {
  /** Hex SHA-256 of the content ('' when the thread could not answer: `parsed` then says why). */
  hash: string;
  /** statKey of the opened file just before the read: a write during the read or since changes it. */
  stat: string;
  /** The file's mtime then, epoch milliseconds. */
  mtimeMs: number;
  /** The content's length in characters (0: empty). */
  length: number;
  /** The content's pods, or its error; absent when its hash was one of the reader's `skipParseOf`. */
  parsed?: ParsedManifest;
}

/**
 * ManifestReader: one read of `file` (the source's manifest thread: manifest-decoder.ts read),
 * decoding the content unless its SHA-256 is one of `skipParseOf`; nothing is read while the
 * file's statKey is `skipIfStat` (resolves `'unchanged'`). Resolves `'not a file'` for a file that is not regular, and a read whose `parsed` is a `retry` error when the thread could
 * not answer.
 * @throws the filesystem's error (with its `code`: ENOENT for a missing file), or an Error naming
 *   the size when the file is larger than kMaxManifestBytes.
 */
export type ManifestReader = (file: string, skipParseOf: string[], skipIfStat?: string) => Promise<FileRead | 'not a file' | 'unchanged'>;

/**
 * readSettled reads `file` once and, when it is a file the source already read (`prev`, whose
 * `contentHash` is the SHA-256 of the content last accepted, undefined after a failed read) and
 * the content is new, again every kSettleMs until two reads in a row agree on the content and on
 * stat's inode, size and mtime — or until a read finds the content last accepted again. A file
 * rewritten in place (opened with O_TRUNC, then written) can be read between the truncation and
 * the write, empty or cut short; taken at its word, that read would remove or change pods that
 * nobody removed or changed. An empty read must agree kEmptySettleReads times in a row, not two. The kubelet's file source reads once (file.go); we read until the
 * writer is done. A first read of a file is taken as it is (no pods of it run yet). Each content
 * is decoded once: a read that agrees with the one before is not decoded again (`read`'s
 * skipParseOf) and keeps that one's decoding.
 * @returns the read, `'not a file'` (not a regular file), `'unchanged'` (the first read's stat
 *   was `skipIfStat`: nothing read), or `'unsettled'` when the reads still disagreed after
 *   kMaxSettleReads more (or `stopped()` turned true meanwhile).
 * @throws what `read` throws.
 */
export async function readSettled(
  file: string,
  prev: { contentHash?: string } | undefined,
  stopped: () => boolean,
  read: ManifestReader,
  skipIfStat?: string,
): Promise<FileRead | 'not a file' | 'unsettled' | 'unchanged'> {
  const known = prev?.contentHash === undefined ? [] : [prev.contentHash];
  let last = await read(file, known, skipIfStat);
  if (last === 'not a file' || last === 'unchanged' || prev === undefined || last.hash === prev.contentHash || isRetry(last)) return last;
  let agreeing = 1;
  for (let i = 0; i < kMaxSettleReads; i++) {
    await new Promise((resolve) => setTimeout(resolve, kSettleMs));
    if (stopped()) return 'unsettled';
    const next = await read(file, [...known, last.hash]);
    if (next === 'unchanged') continue; // not asked (no skipIfStat): never answered
    if (next === 'not a file' || next.hash === prev.contentHash || isRetry(next)) return next;
    if (next.hash === last.hash) next.parsed ??= last.parsed;
    agreeing = next.hash === last.hash && next.stat === last.stat ? agreeing + 1 : 1;
    if (agreeing >= (next.length === 0 ? kEmptySettleReads : 2)) return next;
    last = next;
  }
  return 'unsettled';
}

/** isRetry: the read's thread did not answer (nothing is known of the file). */
function isRetry(read: FileRead): boolean {
  return read.parsed !== undefined && 'error' in read.parsed && read.parsed.retry;
}
