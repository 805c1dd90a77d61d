/**
 * Counterpart of pkg/kubelet/metrics/metrics.go: the kubelet's Prometheus metrics on the agent's
 * own registry (registry.ts), with the kubelet's names and labels where one exists, plus
 * kubelet-ts figures (worker pool, pod workers, event-loop delay) under `kubelet_ts_`.
 *
 * Hot-path cost: counters and histograms are fed by small hooks (a runner decorator, a pod-worker
 * timer, a status-change listener, an HTTP observer) that only `inc`/`observe` pre-created label
 * children; gauges (running pods/containers, pool, event loop) are computed when scraped.
 * Main thread only.
 */
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WorkerResultMap } from '../../shared/thread-wire.js';
import type { WorkerTask, SyncStepResult } from '../../shared/sync-tasks.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import type { PodWork } from '../lifecycle/pod-workers.js';
import type { PodSyncRunner, TaskOf } from '../pool/worker-pool.js';
import type { PodStatusChange } from '../status/status-manager.js';
import { realClock, type Clock } from '../../shared/clock.js';

/** What the metrics read when scraped. */
export interface KubeletMetricsSources {
  /** What the runtime last showed of every pod (PodCache.runtimePods()). */
  runtimePods(): Iterable<RuntimePod | null>;
  /** The worker pool's figures, or undefined before start. */
  runnerStats(): ReturnType<PodSyncRunner['stats']> | undefined;
  /** The pod workers' figures, or undefined before start. */
  podWorkerStats?(): { inFlight: number; waiting: number; timers: number; terminating?: number; terminated?: number } | undefined;
  /** The clock of the pod start latency (epoch ms) and of the durations observed (monotonic); default the real clock. */
  clock?: Clock;
}

/** KubeletMetrics: the metrics plus the hooks that feed them. */
export interface KubeletMetrics {
  readonly registry: Registry;
  /**
   * instrumentRunner wraps a runner: each task counts in kubelet_runtime_operations_total and
   * ..._duration_seconds{operation_type=<task kind in snake case>} (errors in
   * kubelet_runtime_operations_errors_total); each step of a sync/kill result counts as its own
   * operation (`create_pod_sandbox`, `start_container`, …; a failed step as an error); started
   * sandboxes and containers feed kubelet_started_pods_total / kubelet_started_containers_total.
   */
  instrumentRunner(runner: PodSyncRunner): PodSyncRunner;
  /** timePodWork wraps a pod worker body: kubelet_pod_worker_duration_seconds{operation_type=work.type}. */
  timePodWork(fn: (uid: string, work: PodWork) => Promise<void>): (uid: string, work: PodWork) => Promise<void>;
  /** observeStatusChange: status manager listener; first Running-with-all-containers-running of a pod → kubelet_pod_start_duration_seconds. */
  observeStatusChange(change: PodStatusChange): void;
  /** observeHttpRequest: kubelet_http_requests_total / kubelet_http_requests_duration_seconds (see AgentHost). */
  observeHttpRequest(method: string, path: string, code: number, seconds: number): void;
  /** text: the exposition (prom-client 15's `metrics()` is async). */
  text(): Promise<{ contentType: string; body: string }>;
  /** stop disables the event-loop delay monitor. Idempotent. */
  stop(): void;
}

// Buckets in seconds. Pod start: the kubelet's pod start SLI buckets (0.5 s … 1 h), trimmed.
const kPodStartBuckets = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 300, 600];
const kOperationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const kHttpBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/** snake: `CreatePodSandbox` / `syncPod` → `create_pod_sandbox` / `sync_pod` (kubelet's operation_type style). */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/**
 * newKubeletMetrics registers the metrics on `registry` (call once per registry: prom-client throws
 * on a duplicate name) and starts the event-loop delay monitor (20 ms resolution).
 */
export function newKubeletMetrics(registry: Registry, sources: KubeletMetricsSources): KubeletMetrics {
  const clock = sources.clock ?? realClock;
  const registers = [registry];
  new Gauge({
    name: 'kubelet_running_pods',
    help: 'Number of pods that have a running pod sandbox',
    registers,
    collect() {
      let n = 0;
      for (const p of sources.runtimePods()) if (p?.sandboxes.some((s) => s.state === 'running')) n++;
      this.set(n);
    },
  });
  new Gauge({
    name: 'kubelet_running_containers',
    help: 'Number of containers currently running',
    labelNames: ['container_state'] as const,
    registers,
    collect() {
      const counts: Record<string, number> = { created: 0, running: 0, exited: 0, unknown: 0 };
      for (const p of sources.runtimePods()) for (const c of p?.containers ?? []) counts[c.state] = (counts[c.state] ?? 0) + 1;
      for (const [state, n] of Object.entries(counts)) this.labels(state).set(n);
    },
  });
  const podStart = new Histogram({
    name: 'kubelet_pod_start_duration_seconds',
    help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run',
    buckets: kPodStartBuckets,
    registers,
  });
  const podWorker = new Histogram({
    name: 'kubelet_pod_worker_duration_seconds',
    help: 'Duration in seconds to sync a single pod. Broken down by operation type: sync or kill.',
    labelNames: ['operation_type'] as const,
    buckets: kOperationBuckets,
    registers,
  });
  const opsTotal = new Counter({
    name: 'kubelet_runtime_operations_total',
    help: 'Cumulative number of runtime operations by operation type.',
    labelNames: ['operation_type'] as const,
    registers,
  });
  const opsErrors = new Counter({
    name: 'kubelet_runtime_operations_errors_total',
    help: 'Cumulative number of runtime operation errors by operation type.',
    labelNames: ['operation_type'] as const,
    registers,
  });
  const opsDuration = new Histogram({
    name: 'kubelet_runtime_operations_duration_seconds',
    help: 'Duration in seconds of runtime operations (worker pool tasks). Broken down by operation type.',
    labelNames: ['operation_type'] as const,
    buckets: kOperationBuckets,
    registers,
  });
  const startedPods = new Counter({ name: 'kubelet_started_pods_total', help: 'Cumulative number of pods started', registers });
  const startedPodsErrors = new Counter({
    name: 'kubelet_started_pods_errors_total',
    help: 'Cumulative number of errors when starting pods',
    registers,
  });
  const startedContainers = new Counter({
    name: 'kubelet_started_containers_total',
    help: 'Cumulative number of containers started',
    labelNames: ['container_type'] as const,
    registers,
  });
  const startedContainersErrors = new Counter({
    name: 'kubelet_started_containers_errors_total',
    help: 'Cumulative number of errors when starting containers',
    labelNames: ['container_type', 'code'] as const,
    registers,
  });
  const httpTotal = new Counter({
    name: 'kubelet_http_requests_total',
    help: 'Number of the http requests received since the server started',
    labelNames: ['method', 'path', 'server_type', 'long_running'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'kubelet_http_requests_duration_seconds',
    help: 'Duration in seconds to serve http requests',
    labelNames: ['method', 'path', 'server_type', 'long_running'] as const,
    buckets: kHttpBuckets,
    registers,
  });
  const httpCodes = new Counter({
    name: 'kubelet_ts_http_responses_total',
    help: 'HTTP responses by status code',
    labelNames: ['code'] as const,
    registers,
  });

  let lastCompleted = 0;
  new Gauge({
    name: 'kubelet_ts_worker_pool_threads',
    help: 'Worker threads of the sync pool (--workers)',
    registers,
    collect() {
      this.set(sources.runnerStats()?.threads ?? 0);
    },
  });
  new Gauge({
    name: 'kubelet_ts_worker_pool_utilization',
    help: 'Worker pool utilization (0..1, piscina)',
    registers,
    collect() {
      this.set(sources.runnerStats()?.utilization ?? 0);
    },
  });
  new Gauge({
    name: 'kubelet_ts_worker_pool_queue_size',
    help: 'Tasks waiting in the worker pool queue',
    registers,
    collect() {
      this.set(sources.runnerStats()?.queueSize ?? 0);
    },
  });
  new Counter({
    name: 'kubelet_ts_worker_pool_tasks_completed_total',
    help: 'Tasks the worker pool has completed',
    registers,
    collect() {
      const completed = sources.runnerStats()?.completed ?? 0;
      if (completed > lastCompleted) this.inc(completed - lastCompleted);
      lastCompleted = Math.max(lastCompleted, completed);
    },
  });
  new Gauge({
    name: 'kubelet_ts_pod_workers',
    help: 'Pod workers by state: in_flight (a sync or kill running), waiting (coalesced work queued), timers (backoff or resync requeues), terminating and terminated (pods whose kill was asked, as kubelet_working_pods{lifecycle})',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const s = sources.podWorkerStats?.();
      this.labels('in_flight').set(s?.inFlight ?? 0);
      this.labels('waiting').set(s?.waiting ?? 0);
      this.labels('timers').set(s?.timers ?? 0);
      this.labels('terminating').set(s?.terminating ?? 0);
      this.labels('terminated').set(s?.terminated ?? 0);
    },
  });
  const loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  new Gauge({
    name: 'kubelet_ts_event_loop_delay_seconds',
    help: 'Main thread event-loop delay since the previous scrape (perf_hooks.monitorEventLoopDelay), by quantile (0.5, 0.99, max)',
    labelNames: ['quantile'] as const,
    registers,
    collect() {
      const count = loop.count;
      this.labels('0.5').set(count ? loop.percentile(50) / 1e9 : 0);
      this.labels('0.99').set(count ? loop.percentile(99) / 1e9 : 0);
      this.labels('max').set(count ? loop.max / 1e9 : 0);
      loop.reset();
    },
  });

  // Pre-created label children: the hooks below only inc/observe.
  type Op = { total: Counter.Internal; errors: Counter.Internal; duration: Histogram.Internal<'operation_type'> };
  const ops = new Map<string, Op>();
  const op = (name: string): Op => {
    let o = ops.get(name);
    if (!o) {
      const label = snakeCase(name);
      ops.set(name, (o = { total: opsTotal.labels(label), errors: opsErrors.labels(label), duration: opsDuration.labels(label) }));
    }
    return o;
  };
  const startedAppContainers = startedContainers.labels('container');
  const startedAppContainersErrors = startedContainersErrors.labels('container', 'CreateContainerError');
  const workTimers = { sync: podWorker.labels('sync'), kill: podWorker.labels('kill') };
  const http = new Map<
    string,
    { total: Counter.Internal; duration: Histogram.Internal<'method' | 'path' | 'server_type' | 'long_running'> }
  >();
  const startObserved = new Set<string>();

  const countSteps = (steps: readonly SyncStepResult[]) => {
    for (const step of steps) {
      const o = op(step.action);
      o.total.inc();
      if (!step.ok) o.errors.inc();
      if (step.action === 'CreatePodSandbox') (step.ok ? startedPods : startedPodsErrors).inc();
      else if (step.action === 'StartContainer') (step.ok ? startedAppContainers : startedAppContainersErrors).inc();
    }
  };

  return {
    registry,
    instrumentRunner(runner) {
      return {
        async run<K extends WorkerTask['kind']>(task: TaskOf<K>): Promise<WorkerResultMap[K]> {
          const o = op(task.kind);
          const started = clock.monotonicMs();
          o.total.inc();
          try {
            const result = await runner.run(task);
            const steps = (result as { steps?: SyncStepResult[] }).steps;
            if (steps) countSteps(steps);
            return result;
          } catch (err) {
            o.errors.inc();
            throw err;
          } finally {
            o.duration.observe((clock.monotonicMs() - started) / 1000);
          }
        },
        stats: () => runner.stats(),
        close: () => runner.close(),
      };
    },
    timePodWork(fn) {
      return async (uid, work) => {
        const started = clock.monotonicMs();
        try {
          await fn(uid, work);
        } finally {
          workTimers[work.type].observe((clock.monotonicMs() - started) / 1000);
        }
      };
    },
    observeStatusChange(change) {
      if (change.type === 'DELETED') {
        startObserved.delete(change.uid);
        return;
      }
      if (startObserved.has(change.uid)) return;
      const status = change.pod.status;
      const containers = status?.containerStatuses;
      if (status?.phase !== 'Running' || !containers?.length || !containers.every((c) => c.state?.running)) return;
      startObserved.add(change.uid);
      const firstSeen = status.startTime ? Date.parse(status.startTime) : NaN;
      if (Number.isFinite(firstSeen)) podStart.observe(Math.max(0, clock.now() - firstSeen) / 1000);
    },
    observeHttpRequest(method, path, code, seconds) {
      const key = `${method} ${path}`;
      let h = http.get(key);
      if (!h)
        http.set(
          key,
          (h = {
            total: httpTotal.labels(method, path, 'readwrite', 'false'),
            duration: httpDuration.labels(method, path, 'readwrite', 'false'),
          }),
        );
      h.total.inc();
      h.duration.observe(seconds);
      httpCodes.labels(String(code)).inc();
    },
    async text() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    stop() {
      loop.disable();
    },
  };
}
