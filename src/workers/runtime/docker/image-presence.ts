/**
 * The Docker runtime's memory of image inspects (docker-runtime.ts imageExists), one per worker
 * thread: which references were found present, reused for a while instead of an inspect per
 * container start (the kubelet's image manager asks the runtime's ImageStatus on every start; a
 * dense node starts hundreds of pods of one image). Knows nothing of Docker: it is handed the
 * inspect to call. Its owner forgets a reference around anything that changes the image (a pull,
 * a removal, a create refused for a missing image).
 */
import { realClock, type Clock } from '../../../shared/clock.js';

/**
 * kImagePresenceTtlMs: how long (milliseconds) a positive inspect is reused for the same
 * reference: a burst of pods of one image costs one inspect per image per worker thread per this
 * period. A forgotten reference (ImagePresenceCache.forget) is inspected again at the next ask,
 * and an inspect under way when it was forgotten is not kept.
 */
export const kImagePresenceTtlMs = 2000;

/**
 * kImagePresenceStaleMs: after kImagePresenceTtlMs and up to this long (milliseconds) since its
 * last positive inspect, a reference is still answered present at once while one inspect refreshes
 * it behind the answer (stale-while-revalidate): paced pods (a few a second per thread) then never
 * wait for the pause image's inspect before their sandbox's create. Older, the caller waits for a
 * fresh inspect. An image removed behind the agent's back within this window makes one create
 * fail (CreateContainerError; the runtime then forgets the reference) and the next sync pulls it
 * as its policy says.
 */
export const kImagePresenceStaleMs = 10_000;

/** One reference's presence: the inspect (in flight, or answered positively) and when it was asked (Clock.monotonicMs, ms). */
interface ImagePresence<T> {
  at: number;
  image: Promise<T | null>;
  /** Its inspect has answered positively (only such an entry is refreshed: one in flight is waited for). */
  settled?: boolean;
  /** A refresh of it is under way. */
  refreshing?: boolean;
}

/**
 * ImagePresenceCache: `get(ref)` answers what `inspect(ref)` answers (T when present, null when
 * absent; its rejections are passed on), sharing one inspect among the callers that ask at once,
 * reusing a positive answer for kImagePresenceTtlMs and refreshing it behind the answer up to
 * kImagePresenceStaleMs, by `clock`'s monotonicMs (default realClock). Negative answers and failures are never kept.
 */
export class ImagePresenceCache<T> {
  /** ref → its last inspect. */
  readonly #entries = new Map<string, ImagePresence<T>>();

  constructor(
    private readonly inspect: (ref: string) => Promise<T | null>,
    private readonly clock: Clock = realClock,
  ) {}

  async get(ref: string): Promise<T | null> {
    const now = this.clock.monotonicMs();
    const known = this.#entries.get(ref);
    if (known && now - known.at < kImagePresenceStaleMs) {
      if (known.settled && now - known.at >= kImagePresenceTtlMs) this.#refresh(ref, known);
      return known.image;
    }
    const image = this.inspect(ref);
    for (const [r, e] of this.#entries) if (now - e.at >= kImagePresenceStaleMs) this.#entries.delete(r);
    const entry: ImagePresence<T> = { at: now, image };
    this.#entries.set(ref, entry);
    try {
      const found = await image;
      if (this.#entries.get(ref) === entry) {
        if (found) entry.settled = true;
        else this.#entries.delete(ref);
      }
      return found;
    } catch (err) {
      if (this.#entries.get(ref) === entry) this.#entries.delete(ref);
      throw err;
    }
  }

  /** forget drops `ref` (every reference without one); an inspect under way for it is then not kept. */
  forget(ref?: string): void {
    if (ref === undefined) this.#entries.clear();
    else this.#entries.delete(ref);
  }

  /**
   * #refresh inspects `ref` again behind a stale answer (one refresh at a time): a positive answer
   * replaces `known` unless it was forgotten meanwhile; an absent image or a failed inspect forgets
   * the reference, so the next caller waits for an inspect of its own.
   */
  #refresh(ref: string, known: ImagePresence<T>): void {
    if (known.refreshing) return;
    known.refreshing = true;
    const at = this.clock.monotonicMs();
    this.inspect(ref).then(
      (found) => {
        if (this.#entries.get(ref) !== known) return;
        if (found) this.#entries.set(ref, { at, image: Promise.resolve(found), settled: true });
        else this.#entries.delete(ref);
      },
      () => {
        if (this.#entries.get(ref) === known) this.#entries.delete(ref);
      },
    );
  }
}
