// Counterpart of pkg/kubelet/status/status_manager.go syncBatch/syncPod (writing PodStatus to the API server) with client-go's token-bucket rate limiter (--kube-api-qps/--kube-api-burst), writing to etcd.
/**
 * Writes each pod's PodStatus to `{prefix}/podstatus/{nodeName}/{namespace}/{name}` (docs/contracts.md "etcd keys").
 *
 * - Coalesced per pod: the queue holds at most one pending write per key; a newer status replaces
 *   the pending one (latest wins), as the status manager's podStatusChannel drains to the latest.
 * - Rate-limited overall by a token bucket (`qps` writes per second, bursts of `burst`), as
 *   client-go's flowcontrol.NewTokenBucketRateLimiter.
 * - Bounded: at most `maxQueue` keys wait; beyond that the oldest pending write is dropped (and
 *   counted) — the pod's next status change queues it again.
 * - A failed write (etcd unreachable) goes back to the queue unless a newer one arrived, and the
 *   writer waits (250 ms doubling to 2 s) before trying again: nothing is lost during an outage,
 *   everything catches up when etcd returns.
 * - The status key of a deleted pod is removed.
 */
import type { Pod, PodStatus } from '../../shared/api.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import { etcdKeys, type Etcd3 } from '../../etcd/client.js';
import type { PodStatusChange, StatusManager } from './status-manager.js';
import { realClock, type Clock } from '../../shared/clock.js';

/** EtcdStatusWriterOptions (units: writes per second, writes, keys). */
export interface EtcdStatusWriterOptions {
  nodeName: string;
  /** Key prefix (`--etcd-prefix`), without a trailing slash. */
  prefix: string;
  /** Sustained writes per second (`--etcd-qps`, default 50). */
  qps?: number;
  /** Writes allowed at once above the rate (`--etcd-burst`, default 100). */
  burst?: number;
  /** Most pods with a pending write (default 10000). */
  maxQueue?: number;
  /** Writes in flight at once (default 4). */
  concurrency?: number;
}

/** EtcdStatusWriterStats: counters since start (for the bench and /metrics). */
export interface EtcdStatusWriterStats {
  /** Successful puts. */
  puts: number;
  /** Successful deletes. */
  deletes: number;
  /** Writes that failed (and were retried). */
  failures: number;
  /** Pending writes dropped because the queue was full. */
  dropped: number;
  /** Pods with a pending write now. */
  queued: number;
}

/** EtcdStatusWriter: the running writer. */
export interface EtcdStatusWriter {
  /** start subscribes to the status manager (existing statuses are queued too). Idempotent. */
  start(): void;
  /**
   * writeProblem queues a status for a pod whose value in etcd is bad: phase `Pending`, reason
   * `InvalidPod`, `message` (null removes that status key instead).
   */
  writeProblem(namespace: string, name: string, message: string | null): void;
  /** stop unsubscribes and waits up to `flushMs` (default 2000 ms) for pending writes. */
  stop(flushMs?: number): Promise<void>;
  stats(): EtcdStatusWriterStats;
  /** ok unless the last write failed; message says why and how many writes wait. */
  healthy(): { ok: boolean; message?: string };
  /** Resolves once nothing is pending or in flight (tests and the bench). */
  idle(): Promise<void>;
  /**
   * reconcile removes this node's status keys of pods that are gone — e.g. deleted while the agent
   * was down (the status manager's orphaned-status cleanup). `live(namespace, name)` says which
   * pods still exist; keys with a pending write are left alone. Resolves with the keys queued for
   * deletion. @throws the etcd error when the keys cannot be listed.
   */
  reconcile(live: (namespace: string, name: string) => boolean): Promise<number>;
}

type Pending = { op: 'put'; value: string } | { op: 'delete' };

/**
 * newEtcdStatusWriter builds the writer; nothing is written until start().
 * @throws InvalidArgumentError when qps, burst, maxQueue or concurrency is not positive.
 */
export function newEtcdStatusWriter(
  options: EtcdStatusWriterOptions,
  deps: { client: Etcd3; logger: Logger; statusManager: StatusManager; listPods?: () => Pod[]; clock?: Clock },
): EtcdStatusWriter {
  const qps = options.qps ?? 50;
  const burst = options.burst ?? 100;
  const maxQueue = options.maxQueue ?? 10_000;
  const concurrency = options.concurrency ?? 4;
  for (const [k, v] of Object.entries({ '--etcd-qps': qps, '--etcd-burst': burst, maxQueue, concurrency })) {
    if (!(typeof v === 'number' && v > 0 && Number.isFinite(v)))
      throw new InvalidArgumentError(`${k} must be a positive number, got ${String(v)}`);
  }
  const keys = etcdKeys(options.prefix);
  const log = deps.logger;
  const queue = new Map<string, Pending>();
  const inFlight = new Set<string>();
  const stats = { puts: 0, deletes: 0, failures: 0, dropped: 0 };
  let tokens = burst;
  const clock = deps.clock ?? realClock;
  let lastRefill = clock.now();
  let timer: NodeJS.Timeout | undefined;
  let failing: string | undefined;
  let retryDelayMs = 0;
  let unsubscribe: (() => void) | undefined;
  let stopped = false;
  let idleWaiters: (() => void)[] = [];

  const keyOf = (pod: Pod) => keys.podStatus(options.nodeName, pod.metadata?.namespace ?? 'default', pod.metadata?.name ?? '');

  function enqueue(key: string, p: Pending): void {
    if (!queue.has(key) && queue.size >= maxQueue) {
      const oldest = queue.keys().next().value as string;
      queue.delete(oldest);
      stats.dropped++;
      if (stats.dropped === 1 || stats.dropped % 1000 === 0)
        log.warn({ maxQueue, dropped: stats.dropped }, 'etcd status queue is full; dropping the oldest pending status');
    }
    queue.set(key, p);
    pump();
  }

  function onChange(change: PodStatusChange): void {
    const key = keyOf(change.pod);
    if (change.type === 'DELETED') enqueue(key, { op: 'delete' });
    else enqueue(key, { op: 'put', value: JSON.stringify(change.pod.status ?? {}) });
  }

  function refill(): void {
    const now = clock.now();
    tokens = Math.min(burst, tokens + ((now - lastRefill) / 1000) * qps);
    lastRefill = now;
  }

  function schedule(ms: number): void {
    if (timer || stopped) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        pump();
      },
      Math.max(1, Math.ceil(ms)),
    );
  }

  function settleIdle(): void {
    if (queue.size === 0 && inFlight.size === 0) {
      const w = idleWaiters;
      idleWaiters = [];
      for (const fn of w) fn();
    }
  }

  function pump(): void {
    if (timer) return; // waiting for tokens or for a retry
    while (queue.size > 0 && inFlight.size < concurrency) {
      if (failing && inFlight.size > 0) return; // while etcd fails, one probe at a time
      refill();
      if (tokens < 1) return schedule(((1 - tokens) / qps) * 1000);
      let key: string | undefined;
      for (const k of queue.keys())
        if (!inFlight.has(k)) {
          key = k;
          break;
        }
      if (key === undefined) return;
      const p = queue.get(key)!;
      queue.delete(key);
      tokens -= 1;
      inFlight.add(key);
      void write(key, p);
    }
    settleIdle();
  }

  async function write(key: string, p: Pending): Promise<void> {
    try {
      if (p.op === 'put') await deps.client.put(key).value(p.value).exec();
      else await deps.client.delete().key(key).exec();
      if (p.op === 'put') stats.puts++;
      else stats.deletes++;
      if (failing) log.info({ queued: queue.size }, 'etcd status writes succeed again; catching up');
      failing = undefined;
      retryDelayMs = 0;
    } catch (err) {
      stats.failures++;
      if (!queue.has(key)) queue.set(key, p); // a newer status, if any, wins
      if (!failing)
        log.warn(
          { err: (err as Error).message, queued: queue.size },
          'Could not write pod status to etcd; will retry (statuses queue up, latest per pod)',
        );
      failing = (err as Error).message;
      retryDelayMs = Math.min(2_000, retryDelayMs === 0 ? 250 : retryDelayMs * 2);
      inFlight.delete(key);
      schedule(retryDelayMs);
      return;
    }
    inFlight.delete(key);
    pump();
  }

  return {
    start() {
      if (unsubscribe || stopped) return;
      unsubscribe = deps.statusManager.subscribe(onChange);
      for (const pod of deps.listPods?.() ?? []) if (pod.status) enqueue(keyOf(pod), { op: 'put', value: JSON.stringify(pod.status) });
    },
    writeProblem(namespace, name, message) {
      const key = keys.podStatus(options.nodeName, namespace, name);
      if (message === null) return enqueue(key, { op: 'delete' });
      const status: PodStatus = { phase: 'Pending', reason: 'InvalidPod', message, conditions: [] };
      enqueue(key, { op: 'put', value: JSON.stringify(status) });
    },
    async stop(flushMs = 2_000) {
      unsubscribe?.();
      unsubscribe = undefined;
      if (stopped) return;
      await Promise.race([this.idle(), new Promise((r) => setTimeout(r, flushMs).unref())]);
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
    stats: () => ({ ...stats, queued: queue.size }),
    healthy: () => (failing ? { ok: false, message: `etcd status writes failing (${queue.size} queued): ${failing}` } : { ok: true }),
    async reconcile(live) {
      const existing = await deps.client.getAll().prefix(keys.podStatusPrefix(options.nodeName)).keys();
      let n = 0;
      for (const key of existing) {
        const where = keys.parsePodKey(key, 'podstatus');
        if (!where || queue.has(key) || inFlight.has(key) || live(where.namespace, where.name)) continue;
        enqueue(key, { op: 'delete' });
        n++;
      }
      if (n > 0) log.info({ removed: n }, 'Removing status keys of pods that no longer exist');
      return n;
    },
    idle() {
      if (queue.size === 0 && inFlight.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
