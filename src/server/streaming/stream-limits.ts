/**
 * The bounds of the streaming endpoints (exec, attach, run): how many streams may be open per pod
 * and per node, and the idle timeout (`--streaming-connection-idle-timeout`, the kubelet's flag,
 * 4h). The kubelet bounds only the idle time; the per-pod and per-node caps are ours, so that one
 * client cannot spend the agent's file descriptors (each stream holds the client's socket and a
 * hijacked socket to dockerd). Main thread only.
 */
import type { Status } from '../../shared/api.js';
import { statusError } from '../status.js';

/** StreamingOptions: the bounds (all optional; kDefaultStreamingOptions). */
export interface StreamingOptions {
  /** A stream with no data either way for this long is closed (ms); 0 = never. */
  idleTimeoutMs?: number;
  /** Streams open at once into the containers of one pod. */
  maxStreamsPerPod?: number;
  /** Streams open at once on this node. */
  maxStreamsPerNode?: number;
}

/** kDefaultStreamingOptions: 4 h idle (the kubelet's default), 16 streams per pod, 256 per node. */
export const kDefaultStreamingOptions: Required<StreamingOptions> = { idleTimeoutMs: 4 * 3600_000, maxStreamsPerPod: 16, maxStreamsPerNode: 256 };

/** StreamLimiter: counts open streams. */
export interface StreamLimiter {
  readonly options: Required<StreamingOptions>;
  /** check: undefined when one more stream into pod `podUid` fits, else a 429 Status saying which bound. */
  check(podUid: string): Status | undefined;
  /** acquire counts a stream (after check); the returned release is idempotent. */
  acquire(podUid: string): () => void;
  /** Streams open on the node. */
  readonly open: number;
}

/** newStreamLimiter builds the counters for `options` (defaults filled in). */
export function newStreamLimiter(options: StreamingOptions = {}): StreamLimiter {
  const o = { ...kDefaultStreamingOptions, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as Required<StreamingOptions>;
  const perPod = new Map<string, number>();
  let total = 0;
  return {
    options: o,
    get open() {
      return total;
    },
    check(podUid) {
      if (total >= o.maxStreamsPerNode) return statusError(429, 'TooManyRequests', `too many streams open on this node (at most ${o.maxStreamsPerNode}); close one and try again`);
      if ((perPod.get(podUid) ?? 0) >= o.maxStreamsPerPod) return statusError(429, 'TooManyRequests', `too many streams open into this pod (at most ${o.maxStreamsPerPod}); close one and try again`);
      return undefined;
    },
    acquire(podUid) {
      total++;
      perPod.set(podUid, (perPod.get(podUid) ?? 0) + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total--;
        const n = (perPod.get(podUid) ?? 1) - 1;
        if (n <= 0) perPod.delete(podUid);
        else perPod.set(podUid, n);
      };
    },
  };
}

/**
 * kStreamSocketLimits: the uWS WebSocket settings of every stream endpoint (exec, attach,
 * port-forward): messages up to 1 MiB, up to 16 MiB buffered for a slow client before sends are
 * dropped (the endpoints hold their own output back long before, by credits), never closed for
 * backpressure, and no uWS idle timeout (the endpoints run `--streaming-connection-idle-timeout`).
 */
export const kStreamSocketLimits = Object.freeze({ maxPayloadLength: 1 << 20, maxBackpressure: 16 << 20, closeOnBackpressureLimit: 0, idleTimeout: 0 });

/**
 * IdleTimer: fires `onIdle` once no `touch()` came for `idleMs` (one timer per stream, re-armed
 * lazily: a touch only records the time). `idleMs` 0 never fires.
 */
export interface IdleTimer {
  touch(): void;
  stop(): void;
}

/** newIdleTimer starts the timer. */
export function newIdleTimer(idleMs: number, onIdle: () => void): IdleTimer {
  let last = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const arm = (ms: number) => {
    timer = setTimeout(() => {
      if (stopped) return;
      const left = last + idleMs - Date.now();
      if (left > 0) return arm(left);
      stopped = true;
      onIdle();
    }, Math.min(ms, 2 ** 31 - 1));
    timer.unref();
  };
  if (idleMs > 0) arm(idleMs);
  return {
    touch: () => { last = Date.now(); },
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
