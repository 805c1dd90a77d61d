// Counterpart of pkg/kubelet/kuberuntime/logs/logs.go (ReadLogs, waitLogs, isContainerRunning) and of kuberuntime_container.go GetContainerLogs / readLastStringFromContainerLogs.
/**
 * Container logs on a CRI runtime: the kubelet reads the file the runtime writes
 * (`ContainerStatus.log_path`, i.e. `PodSandboxConfig.log_directory` + `ContainerConfig.log_path`)
 * itself. {@link newCriContainerLogs} makes the `logs` part of a NodeRuntime for a CRI runtime:
 *
 * - `readContainerLogs(id, opts, handlers)`: the lines (./cri-log-writer.ts: CRI or json-file
 *   format, partial lines joined, `sinceSeconds`, `timestamps`) from the start of the last
 *   `tailLines` lines (./cri-log-tail.ts). With `follow`, it keeps reading while the container
 *   runs: at the end of the file it waits for a change (fs.watch, and at least every
 *   {@link kLogForceCheckPeriodMs}, upstream's logForceCheckPeriod), notices a rotation (another
 *   file at the path: the old one is drained, then the new one read from its start; a reader more
 *   than one rotation behind — a paused or slow client — first reads the rotated files in between,
 *   `<path>.<time>` or, once compressed, `<path>.<time>.gz`), and ends
 *   once ContainerStatus says the container is not running and the file is drained. A container
 *   the runtime no longer knows ends the read too (its log cannot grow). pause/resume/cancel as
 *   runtime/container/runtime.ts's ContainerLogReader; no callback after cancel().
 * - `tailLogs(id, lines, bytes)`: the last `lines` lines, at most the last `bytes` bytes, as a
 *   string (terminationMessagePolicy FallbackToLogsOnError).
 *
 * Memory per read is bounded (64 KiB reads, one raw line up to 256 KiB, see the writer). Errors:
 * ContainerStatus's (ERR_NOT_FOUND for an unknown container); ERR_NOT_FOUND when the container has
 * no log path or its file does not exist; ERR_RUNTIME for another I/O failure, then or mid-read
 * (as `onEnd(err)`).
 */
import { createReadStream, watch, type FSWatcher } from 'node:fs';
import { open, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { realClock, type Clock } from '../../shared/clock.js';
import { AgentError, isNotFound } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { RuntimeService } from '../runtime/cri/services.js';
import type { ContainerLogHandlers, ContainerLogOptions, ContainerLogReader } from '../runtime/container/runtime.js';
import { findTailStart, guessLogFormat, type TailStart } from './cri-log-tail.js';
import { LogLineWriter } from './cri-log-writer.js';

/** kLogForceCheckPeriodMs: the longest a follow waits for a file event before looking again (ms). */
export const kLogForceCheckPeriodMs = 1000;
/** kRunningCheckMinMs: a follow asks ContainerStatus at most this often while data keeps coming (ms). */
const kRunningCheckMinMs = 500;
const kReadBytes = 64 * 1024;
/** Malformed lines logged per read; the rest are counted. */
const kMalformedLogged = 5;

/** CriContainerLogs: the `logs` part of a NodeRuntime on a CRI runtime. */
export interface CriContainerLogs {
  /**
   * readContainerLogs starts reading container `containerId`'s log file and resolves once it is
   * open (positioned for `tailLines`); data then flows to `handlers` (see the file comment).
   * @throws AgentError ERR_NOT_FOUND (unknown container, no log path, no file), ContainerStatus's errors, ERR_RUNTIME.
   */
  readContainerLogs(containerId: string, opts: ContainerLogOptions, handlers: ContainerLogHandlers): Promise<ContainerLogReader>;
  /**
   * tailLogs answers the last `lines` lines of the container's stdout and stderr (merged), cut to
   * their last `bytes` bytes, decoded as UTF-8.
   * @throws as readContainerLogs; a read failure after opening rejects too.
   */
  tailLogs(containerId: string, lines: number, bytes: number): Promise<string>;
}

/** CriContainerLogsDeps: the runtime whose ContainerStatus names the files, a clock (`sinceSeconds`), a logger (skipped lines). */
export interface CriContainerLogsDeps {
  runtime: Pick<RuntimeService, 'containerStatus'>;
  clock?: Clock;
  logger?: Logger;
}

/** newCriContainerLogs makes the {@link CriContainerLogs} of `deps.runtime`. */
export function newCriContainerLogs(deps: CriContainerLogsDeps): CriContainerLogs {
  const clock = deps.clock ?? realClock;
  const readContainerLogs = async (
    containerId: string,
    opts: ContainerLogOptions,
    handlers: ContainerLogHandlers,
  ): Promise<ContainerLogReader> => {
    const status = (await deps.runtime.containerStatus(containerId)).status;
    if (!status?.log_path)
      throw new AgentError('ERR_NOT_FOUND', `container ${containerId} has no log file (ContainerStatus log_path is empty)`);
    const path = await openErr(status.log_path, () => realpath(status.log_path));
    const fh = await openErr(path, () => open(path, 'r'));
    try {
      let tail: TailStart = { start: 0, skipLines: 0 };
      if (opts.tailLines !== undefined) tail = await findTailStart(fh, (await fh.stat()).size, opts.tailLines, await guessLogFormat(fh));
      const rotatedBefore = opts.follow ? ((await rotatedNames(path)).all.at(-1) ?? '') : '';
      const reader = new FileLogReader(deps, containerId, path, fh, tail, rotatedBefore, opts, handlers, clock);
      setImmediate(() => reader.resume());
      return reader;
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw ioError(`failed to tail ${opts.tailLines} lines of log file "${path}"`, err);
    }
  };
  return {
    readContainerLogs,
    tailLogs: (containerId, lines, bytes) =>
      new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let held = 0;
        readContainerLogs(
          containerId,
          { follow: false, timestamps: false, tailLines: lines },
          {
            onData: (chunk) => {
              chunks.push(chunk);
              held += chunk.length;
              // Keep about the last `bytes` (upstream's circular buffer), never the whole log.
              while (chunks.length > 1 && held - chunks[0]!.length >= bytes) held -= chunks.shift()!.length;
            },
            onEnd: (err) => {
              if (err) return reject(err);
              const all = Buffer.concat(chunks);
              resolve(all.subarray(Math.max(0, all.length - bytes)).toString('utf8'));
            },
          },
        ).catch(reject);
      }),
  };
}

async function openErr<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw ioError(`failed to open log file "${path}"`, err);
  }
}

/** The rotated files next to `path` (`<path>.<time>`; `.gz` and `.tmp` suffixes taken off in `all`), sorted: time order. */
async function rotatedNames(path: string): Promise<{ plain: Set<string>; all: string[] }> {
  const prefix = `${basename(path)}.`;
  const names = (await readdir(dirname(path))).filter((n) => n.startsWith(prefix) && !n.endsWith('.tmp'));
  return { plain: new Set(names.filter((n) => !n.endsWith('.gz'))), all: [...new Set(names.map((n) => n.replace(/\.gz$/, '')))].sort() };
}

function ioError(what: string, err: unknown): AgentError {
  if (err instanceof AgentError) return err;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return new AgentError(code === 'ENOENT' ? 'ERR_NOT_FOUND' : 'ERR_RUNTIME', `${what}: ${(err as Error)?.message ?? String(err)}`, {
    cause: err,
  });
}

/** One read of one log file (see the file comment). */
class FileLogReader implements ContainerLogReader {
  #fh: FileHandle;
  #position: number;
  readonly #writer: LogLineWriter;
  #paused = false;
  #done = false;
  #pumping = false;
  #watcher: FSWatcher | null = null;
  #wake: (() => void) | null = null;
  #idle = false;
  #lastRunningCheckMs = -Infinity;
  #exited = false;
  #malformed = 0;
  /** The rotated file open (its name next to the path), or null for the live file at the path. */
  #name: string | null = null;
  /** The newest rotated name when the live file was opened: any rotated later is newer than it. */
  #rotatedBefore = '';
  /** Resolves a gzipped file's read waiting in pause. */
  #unpaused: (() => void) | null = null;

  constructor(
    private readonly deps: CriContainerLogsDeps,
    private readonly containerId: string,
    private readonly path: string,
    fh: FileHandle,
    tail: TailStart,
    rotatedBefore: string,
    private readonly opts: ContainerLogOptions,
    private readonly handlers: ContainerLogHandlers,
    private readonly clock: Clock,
  ) {
    this.#fh = fh;
    this.#position = tail.start;
    this.#rotatedBefore = rotatedBefore;
    this.#writer = new LogLineWriter({
      timestamps: opts.timestamps,
      skipLines: tail.skipLines,
      sinceMs: opts.sinceSeconds === undefined ? undefined : clock.now() - opts.sinceSeconds * 1000,
      onMalformed: (reason, head) => {
        this.#malformed++;
        if (this.#malformed <= kMalformedLogged)
          deps.logger?.warn({ containerId, path, reason, line: head }, 'Failed when parsing line in log file; skipped');
      },
    });
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    this.#unpaused?.();
    this.#unpaused = null;
    if (!this.#pumping && !this.#done) void this.#pump();
  }

  cancel(): void {
    if (this.#done) return;
    this.#done = true;
    this.#release();
  }

  async #pump(): Promise<void> {
    this.#pumping = true;
    try {
      while (!this.#done && !this.#paused) {
        const n = await this.#readChunk();
        if (this.#done) return;
        if (n > 0) continue;
        // At the end of the file.
        if (!this.opts.follow || this.#exited) return this.#finish();
        if (await this.#rotated()) {
          // The runtime reopened: what it wrote to the old file before that is read first.
          while (!this.#done && (await this.#readChunk()) > 0);
          await this.#reopen();
          continue;
        }
        if (!(await this.#running())) {
          // Not running: read what it wrote last, up to the next end of the file, then end.
          this.#exited = true;
          continue;
        }
        await this.#waitForChange();
      }
    } catch (err) {
      this.#finish(ioError(`failed to read log file "${this.path}"`, err));
    } finally {
      this.#pumping = false;
    }
  }

  /** Reads one chunk at the position into the writer and hands its output over; answers the bytes read. */
  async #readChunk(): Promise<number> {
    const buf = Buffer.allocUnsafe(kReadBytes);
    const { bytesRead } = await this.#fh.read(buf, 0, kReadBytes, this.#position);
    if (this.#done || bytesRead === 0) return bytesRead;
    this.#position += bytesRead;
    this.#writer.write(buf.subarray(0, bytesRead));
    this.#flush();
    return bytesRead;
  }

  #flush(): void {
    if (this.#writer.outputBytes > 0 && !this.#done) this.handlers.onData(this.#writer.take());
  }

  /** True when the path now names another file than the one open (the agent rotated it; the runtime reopened). */
  async #rotated(): Promise<boolean> {
    let now;
    try {
      now = await stat(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false; // renamed, not yet reopened
      throw err;
    }
    const open = await this.#fh.stat();
    return now.ino !== open.ino || now.dev !== open.dev;
  }

  async #reopen(): Promise<void> {
    // The old file ended: a line it left unfinished is written as it is.
    this.#writer.endOfFile();
    this.#flush();
    for (;;) {
      const next = await this.#openNext();
      if (this.#done) {
        if ('fh' in next) await next.fh.close();
        return;
      }
      if (!('fh' in next)) {
        await this.#readGzipped(next.gz);
        this.#name = next.name;
        continue;
      }
      this.#name = next.name;
      if (next.name === null) this.#rotatedBefore = (await rotatedNames(this.path)).all.at(-1) ?? '';
      const old = this.#fh;
      this.#fh = next.fh;
      this.#position = 0;
      this.#watcher?.close();
      this.#watcher = null;
      await old.close().catch(() => undefined);
      return;
    }
  }

  /**
   * The file that follows the open one: when more than one rotation happened since it was opened
   * (a slow or paused reader), the oldest rotated file newer than it (`<path>.<time>`, or its
   * `.gz` once the log manager compressed it); else the live file at the path.
   */
  async #openNext(): Promise<{ fh: FileHandle; name: string | null } | { gz: string; name: string }> {
    const ours = await this.#fh.stat();
    const dir = dirname(this.path);
    const { plain, all } = await rotatedNames(this.path);
    let after = this.#name ?? this.#rotatedBefore;
    if (this.#name === null) {
      // The live file we had is one of the rotated ones now: found by inode while plain; once
      // gzipped, it is the first rotation after the newest name seen when it was opened.
      let found = false;
      for (const n of all.filter((x) => x > after && plain.has(x))) {
        const s = await stat(join(dir, n)).catch(() => null);
        if (s && s.ino === ours.ino && s.dev === ours.dev) {
          after = n;
          found = true;
          break;
        }
      }
      if (!found) after = all.find((x) => x > after) ?? after;
    }
    for (const n of all.filter((x) => x > after)) {
      if (!plain.has(n)) return { gz: join(dir, `${n}.gz`), name: n };
      const fh = await open(join(dir, n), 'r').catch(() => null);
      if (fh) return { fh, name: n };
    }
    return { fh: await open(this.path, 'r'), name: null };
  }

  /** Reads a rotated file the log manager already gzipped, whole, honouring pause; one that cannot be read is logged and passed over. */
  async #readGzipped(gz: string): Promise<void> {
    const src = createReadStream(gz);
    const gunzip = createGunzip();
    src.on('error', (err) => gunzip.destroy(err));
    src.pipe(gunzip);
    try {
      for await (const chunk of gunzip as AsyncIterable<Buffer>) {
        if (this.#done) return;
        this.#writer.write(chunk);
        this.#flush();
        while (this.#paused && !this.#done) await new Promise<void>((resolve) => (this.#unpaused = resolve));
      }
      this.#writer.endOfFile();
      this.#flush();
    } catch (err) {
      this.deps.logger?.warn({ containerId: this.containerId, path: gz, err }, 'Failed to read rotated log file; skipped');
    } finally {
      src.destroy();
      gunzip.destroy();
    }
  }

  /** isContainerRunning: ContainerStatus says CONTAINER_RUNNING. Unknown to the runtime = not running. */
  async #running(): Promise<boolean> {
    const now = this.clock.now();
    if (!this.#idle && now - this.#lastRunningCheckMs < kRunningCheckMinMs) return true;
    this.#lastRunningCheckMs = now;
    this.#idle = false;
    try {
      return (await this.deps.runtime.containerStatus(this.containerId)).status?.state === 'CONTAINER_RUNNING';
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** waitLogs: until the file changes, {@link kLogForceCheckPeriodMs} passes, or the read is cancelled. */
  async #waitForChange(): Promise<void> {
    if (!this.#watcher) {
      try {
        this.#watcher = watch(this.path, { persistent: false }, () => this.#wake?.());
        this.#watcher.on('error', () => {
          this.#watcher?.close();
          this.#watcher = null;
        });
      } catch {
        this.#watcher = null; // the periodic check still runs
      }
      return; // read again first: a write may have come before the watch
    }
    await new Promise<void>((resolve) => {
      const timer = this.clock.setTimeout(() => {
        this.#idle = true;
        done();
      }, kLogForceCheckPeriodMs);
      const done = () => {
        this.clock.clearTimeout(timer);
        this.#wake = null;
        resolve();
      };
      this.#wake = done;
    });
  }

  #finish(err?: Error): void {
    if (this.#done) return;
    if (!err) {
      this.#writer.endOfFile();
      this.#flush();
    }
    this.#done = true;
    this.#release();
    if (this.#malformed > kMalformedLogged)
      this.deps.logger?.warn({ containerId: this.containerId, path: this.path, skipped: this.#malformed }, 'Lines skipped in log file');
    this.handlers.onEnd(err);
  }

  #release(): void {
    this.#watcher?.close();
    this.#watcher = null;
    this.#wake?.();
    this.#unpaused?.();
    void this.#fh.close().catch(() => undefined);
  }
}
