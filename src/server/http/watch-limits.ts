// Counterpart of the apiserver's answer to more work than it takes (k8s.io/apiserver/pkg/server/filters/maxinflight.go tooManyRequests: 429 with Retry-After), applied to watches per user.
/**
 * The bound on concurrent watches, shared by `WS /watch/pods` (ws/watch.ts) and the Kubernetes
 * API's chunked watch (kube-api/watch-http.ts). Each open watch costs the agent a socket, a send
 * buffer and a share of every change; 600 anonymous watchers that never read took the agent from
 * 610 to 1,368 MiB RSS and /healthz to 3 s (issue #38, finding 6). A watch past the limit of its
 * user (`--max-watches-per-user`; all anonymous requests are one user, `system:anonymous`) or past
 * the node's (`--max-watches`) is answered as the apiserver answers a request it has no room for:
 * 429 `TooManyRequests` `Status` with `Retry-After` — before any state is copied for it. Main thread.
 */
import type { Status } from '../../shared/api.js';
import { statusError } from './status.js';

/** WatchLimits: concurrent watches allowed (counts, ≥ 1). */
export interface WatchLimits {
  /** Per user name (`--max-watches-per-user`). */
  maxWatchesPerUser?: number;
  /** On this node, all users together (`--max-watches`). */
  maxWatches?: number;
}

/**
 * kDefaultWatchLimits: 100 per user, 500 in all. A 2-core node with hundreds of pods sends every
 * change to every watcher; 500 is what the `bench api` fan-out (200 clients) fits in with room, and
 * 100 lets one user (a dashboard, kubectl `-w` sessions, controllers sharing a token) watch freely
 * while leaving the node's room to others.
 */
export const kDefaultWatchLimits: Readonly<Required<WatchLimits>> = Object.freeze({ maxWatchesPerUser: 100, maxWatches: 500 });

/** kWatchRetryAfterSeconds: the `Retry-After` of a refused watch (seconds; the apiserver's max-in-flight filter says 1). */
export const kWatchRetryAfterSeconds = 1;

/** WatchAdmission: a watch admitted (`release` it when it ends; idempotent) or refused with a 429 `status`. */
export type WatchAdmission = { ok: true; release: () => void } | { ok: false; status: Status; retryAfterSeconds: number };

/** WatchLimiter: counts open watches per user and in all. */
export interface WatchLimiter {
  readonly limits: Readonly<Required<WatchLimits>>;
  /** acquire admits one more watch of `user` (a user name; '' when the server runs without auth), or refuses it. */
  acquire(user: string): WatchAdmission;
  /** Open watches in all, or of `user`. */
  active(user?: string): number;
}

/**
 * newWatchLimiter: a {@link WatchLimiter} with `limits` (defaults {@link kDefaultWatchLimits}).
 * @throws TypeError when a limit is not an integer ≥ 1.
 */
export function newWatchLimiter(limits: WatchLimits = {}): WatchLimiter {
  const resolved = { ...kDefaultWatchLimits, ...limits };
  for (const [k, v] of Object.entries(resolved)) {
    if (!Number.isInteger(v) || v < 1) throw new TypeError(`watch limits: ${k} must be an integer >= 1, got ${String(v)}`);
  }
  const perUser = new Map<string, number>();
  let total = 0;
  const refuse = (message: string): WatchAdmission => ({
    ok: false,
    retryAfterSeconds: kWatchRetryAfterSeconds,
    status: statusError(429, 'TooManyRequests', message, { retryAfterSeconds: kWatchRetryAfterSeconds }),
  });
  return {
    limits: resolved,
    acquire(user) {
      const mine = perUser.get(user) ?? 0;
      if (mine >= resolved.maxWatchesPerUser) {
        return refuse(
          `too many watches: user ${JSON.stringify(user || 'system:anonymous')} has ${mine} open, the most allowed (--max-watches-per-user); close one or retry later`,
        );
      }
      if (total >= resolved.maxWatches)
        return refuse(`too many watches: ${total} open on this node, the most allowed (--max-watches); retry later`);
      perUser.set(user, mine + 1);
      total++;
      let released = false;
      return {
        ok: true,
        release() {
          if (released) return;
          released = true;
          total--;
          const n = (perUser.get(user) ?? 1) - 1;
          if (n <= 0) perUser.delete(user);
          else perUser.set(user, n);
        },
      };
    },
    active: (user) => (user === undefined ? total : (perUser.get(user) ?? 0)),
  };
}
