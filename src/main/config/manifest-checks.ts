/**
 * When the file source checks its path, and which check runs next (pkg/kubelet/config/file.go
 * runs listConfig every --file-check-frequency and handles each watch event as it comes): one
 * check at a time, whatever asks for it — the first and the periodic full checks, the files named
 * by watch events, and the catch-up check after changes (kCatchUpMs). Work asked for while a check
 * runs is picked up when it ends. Timers and queue only: what a check does is the source's
 * (source-file.ts). Main thread only.
 */
import type { CheckKind } from './manifest-read.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/**
 * kCatchUpMs: a catch-up check runs this long (milliseconds) after the last change the watch
 * reported in the directory, of a manifest or not... @parcel/watcher 2.6 can lose an event: on
 * Linux the inotify thread adds events while the debounce thread copies and then clears the batch
 * (two separate locks; upstream parcel-bundler/watcher#183); it drops an inotify queue overflow
 * silently; and it folds a create and a delete of one path within a batch into nothing, where the
 * create may have been a rename over a manifest (manifest-watch.ts ManifestChange). In benches a
 * pod of a burst of 100 renames was seen about once in 14 bursts only at the next full check (60
 * s there, 20 s by default); in random bursts of hundreds of renames, rewrites and deletes most
 * rounds lost one. The catch-up check lists the directory and stats every file, reading only
 * those that are new, gone, or whose stat changed since their last read, so a lost event costs
 * about a second, not a check period. The kubelet's fsnotify watch loses no event short of an
 * overflow and has no such check. A change that leaves no event at all (a manifest replaced from
 * outside the directory and deleted within 50 ms, with nothing else in it changing) waits for the
 * full check.
 */
export const kCatchUpMs = 1000;
/** ...but at most this long (milliseconds) after the first change it follows, however often the directory keeps changing. */
export const kCatchUpMaxMs = 5000;

/** CheckRun: the source's check of one kind; `files` (absolute paths, sorted) for an `event` check. */
export type CheckRun = (kind: CheckKind, files: string[]) => Promise<void>;

/**
 * CheckScheduler runs the source's checks one at a time. What is pending decides the next one: a
 * full check (which also does what the others would, and clears them), else the files named by
 * watch events, else the catch-up check.
 */
export class CheckScheduler {
  #full = false;
  readonly #files = new Set<string>();
  #catchUp = false;
  #catchUpTimer: TimerHandle | undefined;
  /** When the first change the pending catch-up follows came (epoch ms, the clock's). */
  #catchUpSinceMs = 0;
  #interval: TimerHandle | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  /**
   * @param run the source's check; a rejection is given to `onError` and the next check still runs.
   * @param clock the clock of the catch-up and period timers (epoch ms); default the real clock.
   */
  constructor(
    private readonly run: CheckRun,
    private readonly onError: (err: unknown) => void,
    private readonly clock: Clock = realClock,
  ) {}

  /** full asks for a full check of the path. */
  full(): void {
    this.#full = true;
    this.#kick();
  }

  /** files asks for these files (absolute paths) to be read again. */
  files(files: Iterable<string>): void {
    for (const f of files) this.#files.add(f);
    this.#kick();
  }

  /** changed notes a change the watch reported: a catch-up check follows kCatchUpMs after the last one (at most kCatchUpMaxMs after the first). */
  changed(): void {
    if (this.#stopped) return;
    const now = this.clock.now();
    if (this.#catchUpTimer === undefined) this.#catchUpSinceMs = now;
    this.clock.clearTimeout(this.#catchUpTimer);
    this.#catchUpTimer = this.clock.setTimeout(
      () => {
        this.#catchUpTimer = undefined;
        this.#catchUp = true;
        this.#kick();
      },
      Math.max(0, Math.min(kCatchUpMs, this.#catchUpSinceMs + kCatchUpMaxMs - now)),
    );
  }

  /** every asks for a full check every `periodMs` milliseconds: a plain interval (no jitter), as the kubelet's wait.Until(listConfig, period). */
  every(periodMs: number): void {
    if (this.#stopped) return;
    this.clock.clearInterval(this.#interval);
    this.#interval = this.clock.setInterval(() => this.full(), periodMs);
  }

  /** idle resolves once no check runs (at once when none does); never rejects. */
  async idle(): Promise<void> {
    await this.#running?.catch(() => undefined);
  }

  /** stop clears the timers and starts no further check; the one under way (idle()) ends by itself. Idempotent. */
  stop(): void {
    this.#stopped = true;
    this.clock.clearInterval(this.#interval);
    this.clock.clearTimeout(this.#catchUpTimer);
  }

  #kick(): void {
    if (this.#running !== undefined || this.#stopped) return;
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
    });
  }

  async #drain(): Promise<void> {
    while (!this.#stopped && (this.#full || this.#files.size > 0 || this.#catchUp)) {
      const kind: CheckKind = this.#full ? 'full' : this.#files.size > 0 ? 'event' : 'catch-up';
      const files = kind === 'event' ? [...this.#files].sort() : [];
      if (kind !== 'catch-up') this.#files.clear();
      if (kind !== 'event') this.#catchUp = false;
      this.#full = false;
      try {
        await this.run(kind, files);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
