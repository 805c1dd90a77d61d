// Counterpart of pkg/kubelet/config/file.go and file_linux.go: static pods from --pod-manifest-path.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Pod } from '../../shared/api.js';
import type { ConfigObjectUpdate } from './object-store.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import { podFullName } from '../../shared/annotations.js';
import type { Logger } from '../../shared/logging.js';
import type { PodUpdate, SourceError } from '../../shared/pod-update.js';
import type { ManifestLoader } from '../pool/worker-pool.js';
import { newManifestDecoder, type ManifestDecoder } from './manifest-decoder.js';
import { isManifestFileName, kMaxManifestBytes } from './manifest-files.js';
import { errorMessage, isMissing, kStatTrustMs, loadManifest, type CheckKind, type FileRead, type ManifestLoad } from './manifest-read.js';
import { newManifestWatch, type ManifestWatch, type ManifestWatchOptions } from './manifest-watch.js';
import { CheckScheduler, kCatchUpMaxMs, kCatchUpMs } from './manifest-checks.js';
import { ManifestSet, type FileState } from './manifest-set.js';
import { realClock, type Clock } from '../../shared/clock.js';

export { isManifestFileName, kCatchUpMaxMs, kCatchUpMs, kMaxManifestBytes, kStatTrustMs };

/**
 * FileSourceOptions configures the file source (the kubelet's `--pod-manifest-path` and
 * `--file-check-frequency`).
 */
export interface FileSourceOptions {
  /** A manifest file, or a directory of manifest files (read non-recursively). Relative paths are resolved against the cwd. */
  path: string;
  /** This node's name: static pods are named `<name>-<nodeName>`. */
  nodeName: string;
  /** Milliseconds between full re-reads of the path, on top of the filesystem watch (kubelet default 20 s). */
  checkFrequencyMs?: number;
}

/** kDefaultFileSourceOptions: the defaults of the optional FileSourceOptions (as the kubelet's flags). */
export const kDefaultFileSourceOptions = { checkFrequencyMs: 20_000 } as const;

/** FileSourceDeps: what the file source calls out to. Callbacks run on the main thread. */
export interface FileSourceDeps {
  logger: Logger;
  /** Receives a `SET` of the complete current set of static pods (source `file`) whenever it changes, and once after the first read. */
  onUpdate(update: PodUpdate): void;
  /**
   * Receives a `SET` of every ConfigMap and Secret in the manifests (source `file`) whenever it
   * changes, and once before the first pods' SET; the first file in name order gives a name that
   * two files give. Absent = such documents are kept out of the pods and dropped.
   */
  onObjects?(update: ConfigObjectUpdate): void;
  /** Receives each distinct read/parse/validation problem once per change; the affected pods keep their last good version. */
  onError(error: SourceError): void;
  /**
   * Receives each static pod left out because another pod of the source holds its full name
   * (manifest-files.ts assembleFileSet), once per change, with the message also logged: the agent
   * records the kubelet's Warning event for it (FailedValidation, as PodConfig filterInvalidPods).
   */
  onDuplicate?(pod: Pod, message: string): void;
  /**
   * Starts the thread that reads and decodes manifest files (default newManifestLoader); called
   * once, at the first file read, and closed by stop(). Tests substitute a fake.
   */
  newManifestLoader?: () => ManifestLoader;
  /** Creates the filesystem watch (default newManifestWatch). Tests substitute one that misses events. */
  newManifestWatch?: (options: ManifestWatchOptions) => ManifestWatch;
  /** The clock (epoch ms) of the checks' timers, the watch's debounce and the pods' config.seen; default the real clock. */
  clock?: Clock;
}

/** FileSource: the running file source. */
export interface FileSource {
  /**
   * start subscribes to the filesystem watch, reads the path once and resolves after that first
   * `SET` has been delivered (even an empty one, so the agent knows the source has been seen, as
   * kubelet's seenAllSources). A missing path is not fatal: it is reported once and re-checked.
   * Idempotent: a second call returns the same promise.
   */
  start(): Promise<void>;
  /** stop unsubscribes and clears the timers; no callback runs once it has been called. Idempotent. */
  stop(): Promise<void>;
}

/** kReadAhead: how many files readManifests reads and decodes ahead of the one whose state it updates. */
const kReadAhead = 16;

/**
 * kProgressMs: an event check of many files sends what it has so far (a SET) at most this often
 * (milliseconds), so the first pods of a burst of new manifests start while the rest are still
 * decoded: 100 files take the manifest thread about 110 ms here. As the kubelet's file source,
 * whose watch updates its pod store, and so sends a SET, once per file event (file_linux.go). Not
 * in a full check: the first SET must hold every static pod (the agent removes the pods it lacks).
 */
const kProgressMs = 50;

/**
 * newFileSource builds the static pod file source, as pkg/kubelet/config NewSourceFile: the path
 * is watched (its parent directory, with @parcel/watcher, so the path itself may be created,
 * deleted or replaced) and fully checked every `checkFrequencyMs` (the kubelet re-reads every file
 * then; here a file whose stat has not changed since a trusted read is not read again:
 * readManifest, kStatTrustMs), and checked again kCatchUpMs after the watch's last change, for the
 * changes the watch lost (manifest-checks.ts: one check at a time). It always sends op `SET` with its complete set of pods. A file that
 * fails to read, parse or validate keeps its last good pods; a deleted or emptied file removes its
 * pods — a file changed in place only once two reads agree (readSettled), so a read between a
 * truncation and the write removes nothing. Two pods with the same full name: the one the source
 * already sent keeps the name, else the first in file name order wins; the other is reported (log,
 * onError, onDuplicate).
 *
 * Each file is read by the source's own worker thread (newManifestLoader, task `loadStaticPods`
 * with `read`: io/manifest-file.ts readManifestFileSync), which enforces the size cap, hashes
 * the content (SHA-256) and decodes it unless it is the content the source already has — YAML
 * parsing, static pod identity, defaults and validation (loadStaticPods), several hundred
 * milliseconds for a file of 2,000 pods — and hands back the hash, fstat's key and the pods, or
 * the manifest's error message, by structured clone: the text never crosses to the main thread,
 * and a read costs the main thread a share of one task instead of a stat, an open, an fstat,
 * reads and a close (issue #42): the reads a check asks for at once go as one task of up to
 * kMaxReadBatch files (manifest-decoder.ts), and a full or catch-up check's stat of an unchanged
 * file runs in that task too (LoadStaticPodsTask `skipIfStat`). A check reads and decodes up to kReadAhead files ahead of the one whose state it updates
 * (readManifests); states and reports still follow file name order. Its own thread rather than a
 * task on the agent's sync pool: a parse never waits behind queued syncs nor holds a sync thread,
 * and the agent needs no wiring for it. The thread is started at the first file read and
 * stopped by stop(). A thread that fails to answer (it died) is reported like a bad file, keeps
 * the file's last good pods, and the file is read again at the next check.
 * @throws InvalidArgumentError naming the option when `path`, `nodeName` or `checkFrequencyMs` is invalid.
 */
export function newFileSource(options: FileSourceOptions, deps: FileSourceDeps): FileSource {
  if (typeof options.path !== 'string' || options.path === '') {
    throw new InvalidArgumentError('options.path (--pod-manifest-path) must be a non-empty string');
  }
  if (typeof options.nodeName !== 'string' || options.nodeName === '') {
    throw new InvalidArgumentError('options.nodeName must be a non-empty string');
  }
  const checkFrequencyMs = options.checkFrequencyMs ?? kDefaultFileSourceOptions.checkFrequencyMs;
  if (!Number.isInteger(checkFrequencyMs) || checkFrequencyMs <= 0) {
    throw new InvalidArgumentError(
      `options.checkFrequencyMs (--file-check-frequency) must be a positive integer, got ${String(checkFrequencyMs)}`,
    );
  }
  return new FileSourceImpl({ path: path.resolve(options.path), nodeName: options.nodeName, checkFrequencyMs }, deps);
}

class FileSourceImpl implements FileSource {
  private readonly path: string;
  private readonly nodeName: string;
  private readonly checkFrequencyMs: number;
  private readonly logger: Logger;

  /** The manifest reading and decoding thread, started at the first file read. */
  private readonly decoder: ManifestDecoder;
  /** The manifests as last read, and what is sent from them (manifest-set.ts). */
  private readonly set: ManifestSet;

  /** Change notifications of the path (manifest-watch.ts): they add to the pending work. */
  private readonly watch: ManifestWatch;
  /** Which check runs next, and when (manifest-checks.ts). */
  private readonly checks: CheckScheduler;
  private readonly clock: Clock;
  private started: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private stopped = false;

  constructor(
    options: { path: string; nodeName: string; checkFrequencyMs: number },
    private readonly deps: FileSourceDeps,
  ) {
    this.path = options.path;
    this.nodeName = options.nodeName;
    this.checkFrequencyMs = options.checkFrequencyMs;
    this.logger = deps.logger.child({ component: 'file-source', source: 'file', path: this.path });
    this.decoder = newManifestDecoder(deps.newManifestLoader);
    this.clock = deps.clock ?? realClock;
    this.set = new ManifestSet(deps, {
      logger: this.logger,
      stopped: () => this.stopped,
      readAgain: (file) => (file === this.path ? this.checks.full() : this.checks.files([file])),
    });
    this.checks = new CheckScheduler(
      (kind, files) => this.check(kind, files),
      (err) => this.logger.error({ err }, 'Pod manifest check failed'),
      this.clock,
    );
    this.watch = (deps.newManifestWatch ?? newManifestWatch)({
      path: this.path,
      isManifest: isManifestFileName,
      logger: this.logger,
      clock: this.clock,
      onChange: ({ full, files }) => {
        this.checks.changed();
        if (full) this.checks.full();
        else this.checks.files(files);
      },
    });
  }

  start(): Promise<void> {
    this.started ??= this.doStart();
    return this.started;
  }

  private async doStart(): Promise<void> {
    this.logger.info({ checkFrequencyMs: this.checkFrequencyMs }, 'Watching pod manifest path');
    this.checks.full();
    await this.checks.idle();
    this.checks.every(this.checkFrequencyMs);
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    this.stopped = true;
    this.checks.stop();
    // The thread is closed before the check under way is waited for: the decodes it queued ahead
    // (readManifests) then come back at once instead of being parsed for nothing.
    const decoderClosed = this.decoder
      .close()
      .catch((err: unknown) => this.logger.debug({ err }, 'Stopping the pod manifest thread failed'));
    await this.checks.idle();
    await this.watch.close();
    await decoderClosed;
    this.logger.info('Stopped watching pod manifest path');
  }

  // --- checking -------------------------------------------------------------------------

  /** check runs one check (CheckScheduler) and sends the set if it changed. */
  private async check(kind: CheckKind, files: string[]): Promise<void> {
    if (kind === 'event') {
      await this.recheckFiles(files);
      await this.recheckHolders(files);
    } else {
      await this.fullCheck(kind);
    }
    this.set.sendIfChanged();
  }

  // --- reading ----------------------------------------------------------------------------

  /**
   * fullCheck re-reads the whole path, as file.go listConfig: every file whose stat says it may
   * have changed (CheckKind `full` or `catch-up`). A catch-up check logs the files it found
   * changed: changes the watch lost, or made within the last moments before it ran.
   */
  private async fullCheck(kind: 'full' | 'catch-up'): Promise<void> {
    const watched = await this.watch.ensure();
    if (watched === 'subscribed') this.set.clearReported('watch');
    else if (watched)
      this.set.report(
        'watch',
        this.path,
        `${this.path}: cannot watch ${watched.dir} for changes (will retry every ${this.checkFrequencyMs} ms): ${watched.message}`,
      );
    const before = kind === 'catch-up' ? new Map(this.set.files) : undefined;
    await this.readPath(kind);
    if (before !== undefined) {
      const changed = [...new Set([...before.keys(), ...this.set.files.keys()])]
        .filter((f) => before.get(f) !== this.set.files.get(f))
        .sort();
      if (changed.length > 0)
        this.logger.info(
          { files: changed.slice(0, 10), changed: changed.length },
          'Catch-up check found pod manifest changes the watch had not reported',
        );
    }
    this.logger.debug({ kind, files: this.set.files.size }, 'Checked pod manifest path');
  }

  private async readPath(kind: 'full' | 'catch-up'): Promise<void> {
    let stat;
    try {
      stat = await fsp.stat(this.path);
    } catch (err) {
      if (isMissing(err)) {
        // Everything that was there has been deleted: its pods go, like deleted files'.
        this.set.files.clear();
        this.set.report(
          'path',
          this.path,
          `${this.path}: pod manifest path does not exist; checking again every ${this.checkFrequencyMs} ms`,
        );
      } else {
        this.set.report('path', this.path, `${this.path}: cannot read pod manifest path: ${errorMessage(err)}`);
      }
      return;
    }
    if (stat.isDirectory()) {
      await this.readDir(kind);
    } else if (stat.isFile()) {
      this.set.clearReported('path');
      for (const file of [...this.set.files.keys()]) if (file !== this.path) this.set.files.delete(file);
      await this.readManifest(this.path, kind);
    } else {
      this.set.files.clear();
      this.set.report('path', this.path, `${this.path}: pod manifest path is not a directory or a regular file`);
    }
  }

  /** readDir reads a directory's regular files, non-recursively, in name order (file.go extractFromDir). */
  private async readDir(kind: 'full' | 'catch-up'): Promise<void> {
    let names: string[];
    try {
      names = await fsp.readdir(this.path);
    } catch (err) {
      // Keep the last good pods: an unreadable directory is not an empty one.
      this.set.report('path', this.path, `${this.path}: cannot list pod manifest directory: ${errorMessage(err)}`);
      return;
    }
    this.set.clearReported('path');
    const files = names
      .filter(isManifestFileName)
      .sort()
      .map((name) => path.join(this.path, name));
    const kept = await this.readManifests(files, kind);
    if (this.stopped) return;
    const present = new Set(files.filter((_, i) => kept[i]));
    for (const file of [...this.set.files.keys()]) if (!present.has(file)) this.set.files.delete(file);
  }

  /** recheckFiles re-reads the files named by watch events (directory mode). */
  private async recheckFiles(files: string[]): Promise<void> {
    let isDir = false;
    try {
      isDir = (await fsp.stat(this.path)).isDirectory();
    } catch {
      isDir = false;
    }
    if (!isDir) {
      await this.fullCheck('full');
      return;
    }
    await this.readManifests(files, 'event');
  }

  /**
   * recheckHolders looks again (CheckKind `catch-up`: a stat, and a read only if it changed) at the
   * files that hold the names of pods the files just read (`read`) would be duplicates of, when
   * this batch did not read them: a rename of a.yaml to b.yaml whose two events came in separate
   * batches (or whose a.yaml event was lost) would otherwise report b.yaml's pods as duplicates
   * of a.yaml's, which no longer exists, and record a Warning event for each.
   */
  private async recheckHolders(read: string[]): Promise<void> {
    if (this.stopped) return;
    // Who holds a name is who held it in the last set sent (ManifestSet.holderOf): only the
    // pods just read are looked up, not the whole set assembled (sendIfChanged does that next).
    const justRead = new Set(read);
    const holders = new Set<string>();
    for (const file of read) {
      for (const pod of this.set.files.get(file)?.pods ?? []) {
        const holder = this.set.holderOf(podFullName(pod));
        if (holder !== undefined && !justRead.has(holder)) holders.add(holder);
      }
    }
    if (holders.size > 0) await this.readManifests([...holders].sort(), 'catch-up');
  }

  /** What loadManifest calls back: whether the source stopped, and its read. */
  private readonly readHooks = {
    stopped: (): boolean => this.stopped,
    read: (file: string, skipParseOf: string[], skipIfStat?: string) => this.read(file, skipParseOf, skipIfStat),
  };

  /**
   * readManifests reads `files` as readManifest does, each file's state updated (and its problems
   * reported) in the order given, while the next kReadAhead files are already being read and
   * decoded: the main thread's reads and the manifest thread's decodes of a burst overlap instead
   * of taking turns (100 new files renamed in at once: 277–297 ms from the first write to the SET,
   * against 334–388 ms one file after the other). Returns, per file, readManifest's answer; once
   * stopped, it applies no more files and returns the answers so far.
   */
  private async readManifests(files: readonly string[], kind: CheckKind): Promise<boolean[]> {
    // Each load is dropped once applied: it holds the file's previous state (its old pods).
    const loads = new Map<number, Promise<ManifestLoad<FileState>>>();
    const kept: boolean[] = [];
    let next = 0;
    let sentAt = this.clock.monotonicMs();
    for (let i = 0; i < files.length && !this.stopped; i++) {
      for (; next < Math.min(files.length, i + 1 + kReadAhead); next++) {
        const file = files[next]!;
        loads.set(next, loadManifest(file, this.set.files.get(file), kind, this.readHooks));
      }
      const load = await loads.get(i)!;
      loads.delete(i);
      // Stopped meanwhile: the loads still under way end by themselves (they never reject), and
      // the decodes queued for them come back at once from the closed thread (doStop).
      if (this.stopped) break;
      kept.push(this.set.apply(files[i]!, load));
      if (kind === 'event' && i < files.length - 1 && this.clock.monotonicMs() - sentAt >= kProgressMs) {
        this.set.sendIfChanged(true);
        sentAt = this.clock.monotonicMs();
      }
    }
    return kept;
  }

  /**
   * readManifest (re)reads one file and updates its state. Returns false when the file is not
   * (or no longer) a regular file, in which case its pods are dropped. In a `full` or `catch-up`
   * check a file whose statKey is the one kept after its last read (CheckKind) is not read again:
   * the kubelet's file source re-reads every file every --file-check-frequency, which at 1,000
   * manifests cost 0.27 s of CPU per check here against 0.03 s for a stat of each. A file named by
   * a watch event (`event`) is always read.
   */
  private async readManifest(file: string, kind: CheckKind): Promise<boolean> {
    return this.set.apply(file, await loadManifest(file, this.set.files.get(file), kind, this.readHooks));
  }

  /**
   * read has the manifest thread read `file` and, unless its content's SHA-256 is one of
   * `skipParseOf`, turn it into static pods (ManifestReader): decode, then the static pod identity
   * from the RAW pod (makeStaticPod: UID from the content, file path and node), then defaults and
   * validation of the result (loadStaticPods), as file.go extractFromFile + applyDefaults. An
   * empty file holds no pods, as the kubelet. A parse `error` is the InvalidManifestError's
   * message (the file and every invalid field); with `retry` it is the reason the thread could
   * not answer (nothing is known of the file then).
   * @throws the read's filesystem error (with its `code`) or the size cap's, as ManifestReader.
   */
  private async read(file: string, skipParseOf: string[], skipIfStat?: string): Promise<FileRead | 'not a file' | 'unchanged'> {
    const retry = (error: string): FileRead => ({ hash: '', stat: '', mtimeMs: 0, length: 0, parsed: { error, retry: true } });
    // Stopping: start no thread that stop() would not close (nothing is reported any more).
    if (this.stopped) return retry('the file source is stopping');
    const answer = await this.decoder.read({
      origin: file,
      format: path.extname(file).toLowerCase() === '.json' ? 'json' : 'yaml',
      nodeName: this.nodeName,
      source: 'file',
      seenAtMs: this.clock.now(),
      skipParseOf,
      ...(skipIfStat === undefined ? {} : { skipIfStat }),
    });
    if ('error' in answer)
      return retry(`cannot parse pod manifest: the manifest thread failed (parsing again at the next check): ${answer.error}`);
    const { file: found } = answer;
    if (found.kind === 'not a file' || found.kind === 'unchanged') return found.kind;
    if (found.kind === 'failed') throw Object.assign(new Error(found.message), found.code === undefined ? {} : { code: found.code });
    const read: FileRead = { hash: found.hash, stat: found.stat, mtimeMs: found.mtimeMs, length: found.length };
    if (found.error !== undefined) read.parsed = { error: found.error, retry: false };
    else if (found.parsed) {
      answer.pods.forEach((pod, i) => {
        if (typeof answer.contentHashes[i] === 'string') this.set.contentHashes.set(pod, answer.contentHashes[i]);
      });
      read.parsed = { pods: answer.pods, objects: answer.objects };
    }
    return read;
  }
}
