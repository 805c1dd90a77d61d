/**
 * The bounds of the streaming endpoints (exec, attach, run; port-forward has its own limiter of the
 * same kind): how many streams may be open per user, per pod and per node, and the idle timeout
 * (`--streaming-connection-idle-timeout`, the kubelet's flag, 4h). The kubelet bounds only the idle
 * time; the caps are ours, so that one client cannot spend the agent's file descriptors (each
 * stream holds the client's socket and a hijacked socket to dockerd). The per-user bound
 * (`--max-streams-per-user`, keyed by the authenticated user name as the watch bound of
 * watch-limits.ts) and the room kept for `system:masters` (issue #38, F6: one `edit` user's 256 idle
 * execs had locked the admin out for the 4 h idle timeout) follow the apiserver's answer to more
 * work than it takes (k8s.io/apiserver/pkg/server/filters/maxinflight.go: 429 with Retry-After,
 * and the priority-and-fairness exempt level that keeps `system:masters` served). Main thread only.
 */
import type { Status } from '../../shared/api.js';
import { statusError } from '../http/status.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/** StreamingOptions: the bounds (all optional; kDefaultStreamingOptions). */
export interface StreamingOptions {
  /** A stream with no data either way for this long is closed (ms); 0 = never. */
  idleTimeoutMs?: number;
  /** Streams open at once into the containers of one pod. */
  maxStreamsPerPod?: number;
  /** Streams open at once on this node. */
  maxStreamsPerNode?: number;
  /** Streams one user (by name) may hold at once, over all pods; members of `system:masters` are not bounded per user. */
  maxStreamsPerUser?: number;
}

/**
 * kDefaultStreamingOptions: 4 h idle (the kubelet's default), 16 streams per pod, 256 per node,
 * 64 per user (a quarter of the node: four users at their bound fill it).
 */
export const kDefaultStreamingOptions: Required<StreamingOptions> = {
  idleTimeoutMs: 4 * 3600_000,
  maxStreamsPerPod: 16,
  maxStreamsPerNode: 256,
  maxStreamsPerUser: 64,
};

/** kStreamRetryAfterSeconds: the `Retry-After` of a refused stream (seconds; the apiserver's max-in-flight filter says 1). */
export const kStreamRetryAfterSeconds = 1;

/** kAdminReservedStreams: streams on the node only `system:masters` may take (at most a quarter of the node bound, for small bounds). */
export const kAdminReservedStreams = 16;

/** kStreamAdminGroup: the group not bounded per user and served from the reserved room (the apiserver's superuser group). */
export const kStreamAdminGroup = 'system:masters';

/**
 * StreamRequester: who opens the stream (auth.ts TokenUser's name and groups). Undefined when the
 * server runs without auth (in-process tests): then only the pod and node bounds apply.
 */
export type StreamRequester = { name: string; groups?: readonly string[] } | undefined;

/** StreamLimiter: counts open streams. */
export interface StreamLimiter {
  readonly options: Required<StreamingOptions>;
  /**
   * check: undefined when one more stream of `requester` into pod `podUid` fits, else a 429
   * `TooManyRequests` Status (details.retryAfterSeconds {@link kStreamRetryAfterSeconds}) naming the
   * bound: the user's first, then the node's (less the admin's reserve for others), then the pod's
   * (which a member of `system:masters` is not held by).
   */
  check(podUid: string, requester?: StreamRequester): Status | undefined;
  /** acquire counts a stream (after check); the returned release is idempotent. */
  acquire(podUid: string, requester?: StreamRequester): () => void;
  /** Streams open on the node. */
  readonly open: number;
  /** openOf: streams counted against the user named `user` (0 for an admin, who is not counted per user). */
  openOf(user: string): number;
}

/** StreamLimiterNames: how refusals name what is counted and the per-user flag (defaults: exec/attach/run's). */
export interface StreamLimiterNames {
  /** What is counted, plural ('streams'). */
  what: string;
  /** The flag of the per-user bound ('--max-streams-per-user'). */
  userFlag: string;
}

/** newStreamLimiter builds the counters for `options` (defaults filled in); `names` words its refusals. */
export function newStreamLimiter(
  options: StreamingOptions = {},
  names: StreamLimiterNames = { what: 'streams', userFlag: '--max-streams-per-user' },
): StreamLimiter {
  const o = {
    ...kDefaultStreamingOptions,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  } as Required<StreamingOptions>;
  const perPod = new Map<string, number>();
  const perUser = new Map<string, number>();
  const reserve = Math.min(kAdminReservedStreams, Math.floor(o.maxStreamsPerNode / 4));
  let total = 0;
  const refuse = (message: string) => statusError(429, 'TooManyRequests', message, { retryAfterSeconds: kStreamRetryAfterSeconds });
  /** bounded: the requester counts against a user's bound and the reserve (authenticated, not an admin). */
  const bounded = (r: StreamRequester): r is NonNullable<StreamRequester> =>
    r !== undefined && !(r.groups ?? []).includes(kStreamAdminGroup);
  return {
    options: o,
    get open() {
      return total;
    },
    openOf: (user) => perUser.get(user) ?? 0,
    check(podUid, requester) {
      if (bounded(requester)) {
        const mine = perUser.get(requester.name) ?? 0;
        if (mine >= o.maxStreamsPerUser)
          return refuse(
            `too many ${names.what}: user ${JSON.stringify(requester.name)} has ${mine} open, the most allowed (${names.userFlag}=${o.maxStreamsPerUser}); close one and try again`,
          );
        if (total >= o.maxStreamsPerNode - reserve)
          return refuse(
            `too many ${names.what} open on this node (at most ${o.maxStreamsPerNode}, the last ${reserve} kept for ${kStreamAdminGroup}); close one and try again`,
          );
      }
      if (total >= o.maxStreamsPerNode)
        return refuse(`too many ${names.what} open on this node (at most ${o.maxStreamsPerNode}); close one and try again`);
      // An admin is not held by the pod's bound either: one tenant's idle streams must not lock it out of that pod (a break test's finding).
      const admin = requester !== undefined && !bounded(requester);
      if (!admin && (perPod.get(podUid) ?? 0) >= o.maxStreamsPerPod)
        return refuse(`too many ${names.what} open into this pod (at most ${o.maxStreamsPerPod}); close one and try again`);
      return undefined;
    },
    acquire(podUid, requester) {
      const user = bounded(requester) ? requester.name : undefined;
      total++;
      perPod.set(podUid, (perPod.get(podUid) ?? 0) + 1);
      if (user !== undefined) perUser.set(user, (perUser.get(user) ?? 0) + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total--;
        decrement(perPod, podUid);
        if (user !== undefined) decrement(perUser, user);
      };
    },
  };
}

/** decrement: one less under `key`, the entry dropped at 0. */
function decrement(counts: Map<string, number>, key: string): void {
  const n = (counts.get(key) ?? 1) - 1;
  if (n <= 0) counts.delete(key);
  else counts.set(key, n);
}

/**
 * kStreamSocketLimits: the uWS WebSocket settings of every stream endpoint (exec, attach,
 * port-forward): messages up to 1 MiB, up to 16 MiB buffered for a slow client before sends are
 * dropped (the endpoints hold their own output back long before, by credits), never closed for
 * backpressure, and no uWS idle timeout (the endpoints run `--streaming-connection-idle-timeout`).
 */
export const kStreamSocketLimits = Object.freeze({
  maxPayloadLength: 1 << 20,
  maxBackpressure: 16 << 20,
  closeOnBackpressureLimit: 0,
  idleTimeout: 0,
});

/**
 * IdleTimer: fires `onIdle` once no `touch()` came for `idleMs` (one timer per stream, re-armed
 * lazily: a touch only records the time). `idleMs` 0 never fires.
 */
export interface IdleTimer {
  touch(): void;
  stop(): void;
}

/** newIdleTimer starts the timer on `clock` (default the real clock; `idleMs` in milliseconds). */
export function newIdleTimer(idleMs: number, onIdle: () => void, clock: Clock = realClock): IdleTimer {
  let last = clock.now();
  let timer: TimerHandle | undefined;
  let stopped = false;
  const arm = (ms: number) => {
    timer = clock.setTimeout(() => {
      if (stopped) return;
      const left = last + idleMs - clock.now();
      if (left > 0) return arm(left);
      stopped = true;
      onIdle();
    }, ms);
  };
  if (idleMs > 0) arm(idleMs);
  return {
    touch: () => {
      last = clock.now();
    },
    stop: () => {
      stopped = true;
      clock.clearTimeout(timer);
    },
  };
}
