// Counterpart of Node's own timer lists (lib/internal/timers.js: one linked list per duration, one timer for its head), for the runtime calls' deadlines and slot holds.
/**
 * Many timeouts of one duration on one Clock with a single armed timer (issue #42 item 1): each
 * Engine call of a pod's start has a deadline (`--runtime-request-timeout`) and each admitted
 * call a slot hold (docker-admission.ts), and almost all of them settle long before it. A timer
 * per call (an unref'd Node timer behind `setLongTimeout`'s closures, its clear) was a visible
 * part of a sync worker's CPU per call; here an entry costs a push and a flag. Entries of one
 * list share one delay, so they are due in the order they were added: the list's one timer is
 * armed for its oldest unsettled entry and, when it fires, fires every entry due by then and
 * re-arms for the next. Settled entries are dropped when they reach the front; the list is
 * emptied and its timer cleared whenever no entry is left unsettled (so an idle thread holds no
 * timer and no entries). Pure: the timers are the Clock's (tests drive them with FakeClock).
 */
import type { Clock, TimerHandle } from '../../../shared/clock.js';

/**
 * TimerEntry: what a {@link TimerList} holds. `due` (the Clock's monotonicMs, milliseconds) is
 * set by `add`; `fire()` is called once when `due` passes before the entry was settled
 * ({@link TimerList.settle}); `settled` is the list's flag (true once fired or settled).
 */
export interface TimerEntry {
  due: number;
  settled: boolean;
  fire(): void;
}

/**
 * TimerList: entries that each fire `delayMs` milliseconds after they were added, unless settled
 * first, on one timer of `clock`. O(1) per add and settle; a fired timer costs O(entries it passes).
 * An entry's `fire` may add or settle entries (of this list or another).
 */
export class TimerList {
  readonly #clock: Clock;
  readonly #delayMs: number;
  #entries: Array<TimerEntry | undefined> = [];
  #head = 0;
  /** Entries added and neither fired nor settled. */
  #live = 0;
  #timer: TimerHandle | undefined;
  readonly #onTimer = (): void => this.#sweep();

  /** `delayMs`: milliseconds from an entry's add to its fire (> 0). */
  constructor(clock: Clock, delayMs: number) {
    this.#clock = clock;
    this.#delayMs = delayMs;
  }

  /** add schedules `entry` (its `settled` reset to false) to fire after this list's delay. */
  add(entry: TimerEntry): void {
    entry.settled = false;
    entry.due = this.#clock.monotonicMs() + this.#delayMs;
    this.#entries.push(entry);
    this.#live++;
    if (this.#timer === undefined) this.#timer = this.#clock.setTimeout(this.#onTimer, this.#delayMs);
  }

  /** settle marks `entry` done: it will not fire. A no-op when it has fired or was settled already. */
  settle(entry: TimerEntry): void {
    if (entry.settled) return;
    entry.settled = true;
    if (--this.#live > 0) {
      // Calls mostly settle in the order they began: drop the settled front now, so a long burst
      // (never all settled at once) does not keep its finished calls until the timer fires.
      if (this.#timer !== kSweeping) this.#dropSettledFront();
      return;
    }
    // Nothing left to fire: drop the settled entries and the timer.
    this.#entries = [];
    this.#head = 0;
    if (this.#timer === kSweeping) return;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #dropSettledFront(): void {
    const entries = this.#entries;
    while (this.#head < entries.length && entries[this.#head]!.settled) entries[this.#head++] = undefined;
    if (this.#head > 1024 && this.#head * 2 > entries.length) {
      this.#entries = entries.slice(this.#head);
      this.#head = 0;
    }
  }

  #sweep(): void {
    // While sweeping, `#timer` is this sentinel: an `add` from a `fire` does not arm a second timer.
    this.#timer = kSweeping;
    const now = this.#clock.monotonicMs();
    try {
      this.#fireDue(now);
    } finally {
      // Also when a `fire` threw (it propagates as from any timer): the list stays armed for the rest.
      this.#timer = undefined;
      if (this.#live === 0) {
        this.#entries = [];
        this.#head = 0;
      } else {
        this.#dropSettledFront();
        // The front is unsettled now or settled later; either way the next due time to look at.
        this.#timer = this.#clock.setTimeout(this.#onTimer, Math.max(0, this.#entries[this.#head]!.due - now));
      }
    }
  }

  #fireDue(now: number): void {
    const entries = this.#entries;
    while (this.#head < entries.length) {
      const e = entries[this.#head]!;
      if (!e.settled && e.due > now) break;
      entries[this.#head++] = undefined;
      if (e.settled) continue;
      e.settled = true;
      this.#live--;
      e.fire();
      // `fire` settled the last live entry: settle emptied the list (and left the timer to us).
      if (entries !== this.#entries) break;
    }
  }
}

/** kSweeping: the timer handle while a list fires its due entries. */
const kSweeping: unique symbol = Symbol('sweeping');

const lists = new WeakMap<Clock, Map<number, TimerList>>();

/** timerList: this thread's {@link TimerList} of `delayMs` milliseconds on `clock` (one per clock and delay). */
export function timerList(clock: Clock, delayMs: number): TimerList {
  let byDelay = lists.get(clock);
  if (!byDelay) lists.set(clock, (byDelay = new Map()));
  let list = byDelay.get(delayMs);
  if (!list) byDelay.set(delayMs, (list = new TimerList(clock, delayMs)));
  return list;
}
