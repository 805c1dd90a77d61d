// Counterpart of Go's time.AfterFunc / time.Timer as the kubelet uses them: a timer for any duration an API field allows.
/**
 * Node's setTimeout holds a delay in a signed 32-bit int: anything above 2^31-1 ms (about 24.8
 * days) is replaced by 1 ms with a TimeoutOverflowWarning, so a long wait fires at once. Pod
 * fields reach far beyond that (a probe's `timeoutSeconds` and `periodSeconds` are int32 seconds,
 * up to 68 years; grace periods are int64 seconds), and the kubelet, on Go timers, waits the whole
 * time. setLongTimeout splits such a wait into chunks of at most 2^31-1 ms and keeps waiting.
 * Pure timers, no I/O; safe in any thread.
 */

/** kMaxTimerDelayMs: the longest delay, in milliseconds, Node's setTimeout keeps (2^31-1). */
export const kMaxTimerDelayMs = 2 ** 31 - 1;

/**
 * LongTimeout: the handle of {@link setLongTimeout}. `clear()` cancels it (a no-op once fired or
 * cleared); `unref()` stops it from keeping the process alive (also for the chunks still to come)
 * and returns the handle, like NodeJS.Timeout's.
 */
export interface LongTimeout {
  clear(): void;
  unref(): LongTimeout;
}

/**
 * setLongTimeout calls `fn` once after `delayMs` milliseconds, for any delay: waits above
 * {@link kMaxTimerDelayMs} are armed as successive chunks of at most that many milliseconds.
 * A negative or NaN delay fires on the next turn (as setTimeout(fn, 0)); `Infinity` never fires.
 * Never throws; `fn`'s own exceptions propagate as from setTimeout.
 */
export function setLongTimeout(fn: () => void, delayMs: number): LongTimeout {
  let remaining = Number.isNaN(delayMs) || delayMs < 0 ? 0 : delayMs;
  let timer: NodeJS.Timeout | undefined;
  let unref = false;
  let done = false;
  const arm = () => {
    const chunk = Math.min(remaining, kMaxTimerDelayMs);
    timer = setTimeout(() => {
      remaining -= chunk;
      if (remaining > 0) return arm();
      done = true;
      timer = undefined;
      fn();
    }, chunk);
    if (unref) timer.unref();
  };
  arm();
  const handle: LongTimeout = {
    clear() {
      done = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    unref() {
      unref = true;
      if (!done) timer?.unref();
      return handle;
    },
  };
  return handle;
}

/** clearLongTimeout: `handle.clear()` when there is a handle (for `clearTimeout(undefined)`-style call sites). */
export function clearLongTimeout(handle: LongTimeout | undefined): void {
  handle?.clear();
}
