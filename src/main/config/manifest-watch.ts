/**
 * Counterpart of pkg/kubelet/config/file_linux.go's inotify watch: change notifications for the
 * file source's `--pod-manifest-path`, through @parcel/watcher, debounced. It only says what to
 * re-read — the path as a whole, or some of its files — and never reads a manifest itself
 * (source-file.ts does). Main thread only.
 *
 * The parent directory of the path is watched, filtered to the path and (for a directory) its
 * direct children: a watch of a directory that is deleted dies silently (@parcel/watcher 2.6), so
 * a parent that is missing or was replaced (new inode) is subscribed again by the next ensure().
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import watcher from '@parcel/watcher';
import type { AsyncSubscription, Event as WatchEvent } from '@parcel/watcher';
import type { Logger } from '../../shared/logging.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/**
 * Events are collected for this long after the last one before a re-read (milliseconds)...
 * @parcel/watcher batches them itself (it delivers a first event at once, then every 50 ms), and a
 * check picks up what arrives while it runs (manifest-checks.ts), so this only joins batches that
 * come together; a longer wait would only delay every change (it was 100 ms until 2026-12-06).
 */
const kDebounceMs = 10;
/** ...but never longer than this after the first event of a burst (milliseconds). */
const kDebounceMaxMs = 1_000;

/**
 * ManifestChange: what to read again — the whole path (`full`), or these files (absolute paths).
 * Both empty: only other entries of the directory changed (a temporary file, an editor's swap
 * file), which can hide a manifest's own change: @parcel/watcher reports a rename over an existing
 * file as a create and drops a create followed by a delete within one batch, so a manifest
 * replaced through a temporary file and then deleted is not reported at all (the file source
 * answers any change with a catch-up check).
 */
export interface ManifestChange {
  full: boolean;
  files: string[];
}

/** Options of {@link newManifestWatch}. */
export interface ManifestWatchOptions {
  /** The watched path (a file or a directory). */
  path: string;
  /** Which direct children of a directory path count (the others' events are ignored). */
  isManifest(fileName: string): boolean;
  logger: Logger;
  /** Called, debounced, with what changed. */
  onChange(change: ManifestChange): void;
  /** The clock of the debounce (epoch ms); default the real clock. */
  clock?: Clock;
}

/** ManifestWatch: the subscription and its debounce. */
export interface ManifestWatch {
  /**
   * ensure subscribes when there is no subscription, or the parent directory was replaced; a
   * missing parent is not an error (the path's own read reports it).
   * @returns 'subscribed' after a new subscription, undefined when nothing changed (already
   *   watching, or the parent is missing), or the directory and the reason when subscribing failed.
   */
  ensure(): Promise<'subscribed' | { dir: string; message: string } | undefined>;
  /** close unsubscribes and cancels a pending notification; no onChange after it. Idempotent. */
  close(): Promise<void>;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

class ManifestWatchImpl implements ManifestWatch {
  readonly #root: string;
  #subscription: AsyncSubscription | undefined;
  #watchedIno: number | undefined;
  #debounceTimer: TimerHandle | undefined;
  readonly #clock: Clock;
  #debounceStartedAt = 0;
  /** What the events since the last notification ask for. */
  #full = false;
  readonly #files = new Set<string>();
  #closed = false;

  constructor(private readonly options: ManifestWatchOptions) {
    this.#root = path.dirname(options.path);
    this.#clock = options.clock ?? realClock;
  }

  async ensure(): Promise<'subscribed' | { dir: string; message: string } | undefined> {
    let ino: number | undefined;
    try {
      ino = (await fsp.stat(this.#root)).ino;
    } catch {
      ino = undefined;
    }
    if (this.#subscription !== undefined && ino === this.#watchedIno) return undefined;
    await this.#unsubscribe();
    if (ino === undefined || this.#closed) return undefined;
    // Relative to the watch root: ignore everything but the path itself and its direct children.
    const base = escapeRegExp(path.basename(this.options.path));
    const ignore = new RegExp(`^(?!${base}(?:\\/[^/]*)?$)`);
    try {
      const subscription = await watcher.subscribe(this.#root, (err, events) => this.#onEvents(err, events), { ignore: [ignore] });
      if (this.#closed) {
        await subscription.unsubscribe().catch(() => undefined);
        return undefined;
      }
      this.#subscription = subscription;
      this.#watchedIno = ino;
      this.options.logger.debug({ dir: this.#root }, 'Subscribed to pod manifest directory changes');
      return 'subscribed';
    } catch (err) {
      return { dir: this.#root, message: err instanceof Error ? err.message : String(err) };
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#clock.clearTimeout(this.#debounceTimer);
    await this.#unsubscribe();
  }

  #onEvents(err: Error | null, events: WatchEvent[]): void {
    if (this.#closed) return;
    if (err) {
      this.options.logger.warn({ err }, 'Watch of pod manifest path failed; re-reading it');
      this.#full = true;
    }
    let inDir = false;
    for (const e of events) {
      if (e.path === this.options.path) this.#full = true;
      else if (path.dirname(e.path) === this.options.path) {
        inDir = true;
        if (this.options.isManifest(path.basename(e.path))) this.#files.add(e.path);
      }
    }
    if (!this.#full && this.#files.size === 0 && !inDir) return;
    const now = this.#clock.now();
    if (this.#debounceTimer === undefined) this.#debounceStartedAt = now;
    this.#clock.clearTimeout(this.#debounceTimer);
    const delay = Math.max(0, Math.min(kDebounceMs, this.#debounceStartedAt + kDebounceMaxMs - now));
    this.#debounceTimer = this.#clock.setTimeout(() => this.#notify(), delay);
  }

  #notify(): void {
    this.#debounceTimer = undefined;
    const change = { full: this.#full, files: [...this.#files] };
    this.#full = false;
    this.#files.clear();
    if (this.#closed) return;
    this.options.logger.debug({ full: change.full, files: change.files.length }, 'Pod manifest path changed');
    this.options.onChange(change);
  }

  async #unsubscribe(): Promise<void> {
    const subscription = this.#subscription;
    this.#subscription = undefined;
    this.#watchedIno = undefined;
    if (subscription === undefined) return;
    try {
      await subscription.unsubscribe();
    } catch (err) {
      this.options.logger.debug({ err }, 'Unsubscribing from pod manifest directory failed');
    }
  }
}

/** newManifestWatch creates the watch; nothing is subscribed until ensure(). */
export function newManifestWatch(options: ManifestWatchOptions): ManifestWatch {
  return new ManifestWatchImpl(options);
}
