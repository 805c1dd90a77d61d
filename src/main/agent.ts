/**
 * Counterpart of pkg/kubelet/kubelet.go (Kubelet, syncLoop, HandlePodCleanups): the composition
 * root. It wires sources → PodConfig merge → desired-state table → pod workers → worker pool, the
 * PLEG, the status manager and the server; it holds the pod worker bodies (sync, kill, fail) and
 * the server's view of the agent (AgentHost). SyncLoop ADD / UPDATE / REMOVE and admission live in
 * pod/pod-lifecycle.ts. It does no Docker I/O itself: every runtime call is a pool task.
 */
import { availableParallelism, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';

import type { Event, Node, Pod } from '../shared/api.js';
import { parseFakeFailureRates, parseFakeLatencies, type FakeWorkerBootstrap } from '../shared/fake-runtime-tuning.js';
import { podFields, type Logger } from '../shared/logging.js';
import { PROTOCOL_VERSION, type PodEventRecord, type PodSyncResult } from '../shared/messages.js';
import type { PodUpdate, SourceError } from '../shared/pod-update.js';

import type { AgentHost, ContainerLogsRequest, LogStream } from '../server/agent-host.js';
import { loadTokenFile } from '../server/auth.js';
import { createServer, type AgentServer } from '../server/server.js';
import type { WatchCancel, WatchEvent } from '../server/ws/watch-event.js';

import type { AgentOptions } from './agent-options.js';
import { newPodConfig, type PodConfig } from './config/pod-config.js';
import { newFileSource, type FileSource } from './config/source-file.js';
import { newHttpSource, type HttpSource } from './config/source-http.js';
import { newEtcdCluster, type EtcdCluster } from './etcd/cluster.js';
import { newEventRecorder, type EventRecorder } from './events/recorder.js';
import { newGcManager, type GcManager } from './gc/gc-manager.js';
import { newIntakeHost, type IntakeHost } from './intake-host.js';
import { newKubeletMetrics, type KubeletMetrics } from './metrics/kubelet-metrics.js';
import { newAgentRegistry } from './metrics/registry.js';
import { applyContainerExit, newEventedPleg } from './pleg/event-pleg.js';
import { newGenericPleg, type ContainerExit, type Pleg, type PodLifecycleEvent } from './pleg/generic-pleg.js';
import { newPlegMetrics } from './pleg/pleg-metrics.js';
import { newPodWorkers, type PodWork, type PodWorkers } from './pod-workers.js';
import { activeDeadlineRemainingMs, kDeadlineExceededMessage, kDeadlineExceededReason } from './pod/active-deadline.js';
import type { NodeCapacity } from './pod/admission.js';
import { newPodLifecycle, type PodLifecycle } from './pod/pod-lifecycle.js';
import { newPodManager, type PodManager, type PodRecord } from './pod/pod-manager.js';
import { newRuntimeWorkerPool } from './pool/pinned-pool.js';
import type { PodSyncRunner } from './pool/worker-pool.js';
import { newProberManager, type ProberManager } from './prober/prober-manager.js';
import { generatePodStatus } from './status/generate.js';
import { newStatusManager, type StatusManager } from './status/status-manager.js';
import { newWatchCache, type WatchCache } from './watch/watch-cache.js';

/** Dependencies of `newAgent`; tests and benches may inject a runner (e.g. a fake). */
export interface AgentDeps {
  logger: Logger;
  runner?: PodSyncRunner;
  /** Start the HTTP server (default true). */
  serve?: boolean;
  /** Changes kept for WS /watch/pods resumes (`?resourceVersion=`); default 10000. */
  watchHistorySize?: number;
}

/** Agent: one running node agent. */
export interface Agent {
  /** Starts the pool, the server, the PLEG and the sources; resolves when the first read of every source is in. */
  start(): Promise<void>;
  /**
   * Stops everything this agent started and leaves the pods' containers running (an agent restart
   * adopts them). Resolves when in-flight syncs have finished.
   */
  stop(): Promise<void>;
  /** The server's port (after start), 0 if not serving. */
  readonly port: number;
  /** The pods with their status, as GET /pods answers. */
  listPods(): Pod[];
  readonly statusManager: StatusManager;
  readonly podManager: PodManager;
  readonly events: EventRecorder;
  /** The PLEG (after start): relist figures for benches, health for /healthz. */
  readonly pleg: Pleg;
  /** The Prometheus exposition, as GET /metrics answers (benches read counters from it). */
  metrics(): Promise<{ contentType: string; body: string }>;
}

/** kSyncDeadlineMs: how long one sync task may spend on Docker calls before it yields. */
const kSyncDeadlineMs = 120_000;
/** Tasks each worker thread runs at once: they wait on dockerd, not on the CPU. */
const kTasksPerWorker = 16;

class AgentImpl implements Agent, AgentHost {
  readonly podManager: PodManager;
  // Versions above any an earlier run of the agent handed out (see StatusManagerOptions).
  readonly statusManager = newStatusManager({ initialResourceVersion: Date.now() * 1000 });
  readonly events: EventRecorder;
  readonly #config: PodConfig;
  readonly #log: Logger;
  #runner!: PodSyncRunner;
  #podWorkers!: PodWorkers;
  #pleg!: Pleg;
  #prober!: ProberManager;
  #server: AgentServer | null = null;
  #fileSource: FileSource | null = null;
  /** Intake (`api` source), logs and node status: the AgentHost methods of issue 4. */
  readonly #api: IntakeHost;
  #etcd: EtcdCluster | null = null;
  #httpSource: HttpSource | null = null;
  readonly #watchCache: WatchCache;
  readonly #metrics: KubeletMetrics;
  #resyncTimer?: NodeJS.Timeout;
  /** Container and image garbage collection (gc/gc-manager.ts). */
  #gc?: GcManager;
  #lastSyncLoopMs = Date.now();
  /** Allocatable for admission: --max-pods, this machine's cores and memory (no reservations). */
  readonly #capacity: NodeCapacity;
  /** SyncLoop ADD / UPDATE / REMOVE and admission (pod/pod-lifecycle.ts); built in start(). */
  #lifecycle!: PodLifecycle;
  #stopped = false;
  /** Pods the agent failed itself (DeadlineExceeded), with the status reason and message. */
  readonly #failures = new WeakMap<PodRecord, { reason: string; message: string }>();
  /** Deaths learned from Docker events while the pod's sync ran, re-applied to that sync's (older) result. */
  readonly #exitsDuringSync = new Map<string, { containerId: string; exit: ContainerExit }[]>();

  constructor(private readonly options: AgentOptions, private readonly deps: AgentDeps) {
    this.#log = deps.logger;
    this.podManager = newPodManager(options.podShards);
    this.#capacity = { pods: options.maxPods, cpuMilli: availableParallelism() * 1000, memoryBytes: totalmem() };
    this.events = newEventRecorder({ nodeName: options.nodeName }, { logger: deps.logger.child({ component: 'events' }) });
    const sources: PodUpdate['source'][] = [];
    if (options.podManifestPath) sources.push('file');
    if (options.etcdServers.length > 0) sources.push('etcd');
    if (options.manifestUrl) sources.push('http');
    sources.push('api');
    this.#api = newIntakeHost(options, {
      logger: deps.logger, podManager: this.podManager, mergedOwner: (fullName) => this.#config.owner(fullName), onUpdate: (u) => this.#handleUpdate(u),
      listEvents: () => this.events.list(), healthz: () => this.healthz(), port: () => this.port,
    });
    this.#watchCache = newWatchCache(this.statusManager, { historySize: deps.watchHistorySize });
    this.#metrics = newKubeletMetrics(newAgentRegistry(), {
      pods: () => this.podManager.all(), runnerStats: () => this.#runner?.stats(), podWorkerStats: () => this.#podWorkers?.stats(),
    });
    this.statusManager.subscribe((change) => this.#metrics.observeStatusChange(change));
    this.#config = newPodConfig(sources);
  }

  get port(): number {
    return this.#server?.port ?? 0;
  }

  get pleg(): Pleg {
    return this.#pleg;
  }

  async start(): Promise<void> {
    const o = this.options;
    const bootstrap: FakeWorkerBootstrap = {
      protocol: PROTOCOL_VERSION, runtime: o.runtime, dockerSocketPath: o.dockerSocketPath, nodeName: o.nodeName,
      rootDir: o.rootDir, podInfraContainerImage: o.podInfraContainerImage, logLevel: o.logLevel, imagePullCredentials: o.imagePullCredentials,
      fakeRuntime: o.runtime === 'fake' ? { latencyMs: parseFakeLatencies(o.fakeRuntimeLatency), failureRate: parseFakeFailureRates(o.fakeRuntimeFailureRate) } : undefined,
    };
    // The fake runtime keeps one in-memory state per thread: pin each pod to one thread (pinned-pool.ts).
    const poolOptions = { threads: o.workers, concurrentTasksPerWorker: kTasksPerWorker };
    this.#runner = this.#metrics.instrumentRunner(this.deps.runner ?? newRuntimeWorkerPool(bootstrap, poolOptions));
    this.#prober = newProberManager({ hostIp: o.nodeIp, maxInFlight: Math.max(4, o.workers * 8) }, {
      runner: { run: (t) => (t.kind === 'execProbe' ? this.#runner.run<'execProbe'>(t) : this.#runner.run<'netProbe'>(t)) },
      recordEvent: (pod, e) => this.events.record(pod, e), logger: this.#log.child({ component: 'prober' }),
      onStatusChange: (uid) => { const r = this.podManager.get(uid); if (r && !r.terminal) this.#publishStatus(r); },
      onKill: (uid) => { const r = this.podManager.get(uid); if (r && !r.terminal && !r.terminating) this.#podWorkers.update(uid, { type: 'sync' }); },
    });
    this.#podWorkers = newPodWorkers({ maxInFlight: o.workers * kTasksPerWorker }, { logger: this.#log, execute: this.#metrics.timePodWork((uid, work) => this.#execute(uid, work)) });
    this.#lifecycle = newPodLifecycle({
      logger: this.#log, config: this.#config, podManager: this.podManager, statusManager: this.statusManager, events: this.events,
      podWorkers: this.#podWorkers, prober: this.#prober, capacity: this.#capacity,
      publishStatus: (r) => this.#publishStatus(r), takeGraceOverride: (uid) => this.#api.takeGraceOverride(uid),
    });
    const plegDeps = { runner: this.#runner, logger: this.#log, observer: newPlegMetrics(this.#metrics.registry), onEvents: (byPod: Map<string, PodLifecycleEvent[]>) => this.#handlePlegEvents(byPod), onRelist: (uids: Set<string>) => this.#handleOrphans(uids) };
    // Docker: event-driven PLEG with the relist as safety net; the fake runtime has no event stream.
    this.#pleg = o.runtime === 'docker' && !this.deps.runner
      ? newEventedPleg({ relistPeriodMs: o.relistPeriodMs, dockerSocketPath: o.dockerSocketPath, nodeName: o.nodeName }, plegDeps)
      : newGenericPleg({ relistPeriodMs: o.relistPeriodMs }, plegDeps);
    if (this.deps.serve !== false) {
      const auth = o.tokenAuthFile ? await loadTokenFile(o.tokenAuthFile, (m) => this.#log.warn({ file: o.tokenAuthFile }, m)) : undefined;
      this.#server = await createServer(this, { address: o.address, port: o.port, logger: this.#log, auth, limits: { maxRequestBodyBytes: o.maxRequestBodyBytes } });
    }
    this.#pleg.start();
    if (o.podManifestPath) {
      this.#fileSource = newFileSource(
        { path: o.podManifestPath, nodeName: o.nodeName, checkFrequencyMs: o.fileCheckFrequencyMs },
        { logger: this.#log, onUpdate: (u) => this.#handleUpdate(u), onError: (e) => this.#handleSourceError(e) },
      );
      await this.#fileSource.start();
    }
    if (o.manifestUrl) {
      this.#httpSource = newHttpSource(
        { url: o.manifestUrl, nodeName: o.nodeName, headers: o.manifestUrlHeaders, checkFrequencyMs: o.httpCheckFrequencyMs },
        { logger: this.#log, onUpdate: (u) => this.#handleUpdate(u), onError: (e) => this.#handleSourceError(e) },
      );
      await this.#httpSource.start();
    }
    if (o.etcdServers.length > 0) {
      this.#etcd = newEtcdCluster(o, {
        logger: this.#log, statusManager: this.statusManager, listPods: () => this.listPods(), onUpdate: (u) => this.#handleUpdate(u),
        recordEvent: (pod, e) => this.events.record(pod, e), ready: () => this.#pleg.healthy(), buildNode: () => this.getNode(),
      });
      await this.#etcd.start();
    }
    await this.#api.start();
    // The first reads are in once they are handled too (a big SET is handled in chunks).
    await this.#lifecycle.settled();
    this.#resyncTimer = setInterval(() => this.#resyncAll(), o.syncFrequencyMs);
    this.#resyncTimer.unref();
    this.#gc = newGcManager(
      { maximumDeadContainersPerContainer: o.maximumDeadContainersPerContainer, imageGcHighThresholdPercent: o.imageGcHighThresholdPercent, imageGcLowThresholdPercent: o.imageGcLowThresholdPercent },
      { run: (t) => this.#runner.run<'gc'>(t), activePodUids: () => this.#activePodUids(), logger: this.#log.child({ component: 'gc' }) },
    );
    this.#gc.start();
    this.#log.info({ node: o.nodeName, port: this.port, workers: o.workers, podManifestPath: o.podManifestPath || undefined }, 'Started kubelet-ts');
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#lifecycle?.stop();
    clearInterval(this.#resyncTimer);
    await this.#gc?.stop();
    await this.#etcd?.stop();
    await this.#fileSource?.stop();
    await this.#api.stop();
    await this.#httpSource?.stop();
    await this.#pleg?.stop();
    await this.#prober?.stop();
    await this.#podWorkers?.stop();
    this.#server?.close();
    if (!this.deps.runner) await this.#runner?.close();
    this.#watchCache.stop();
    this.#metrics.stop();
    this.#log.info({}, 'Stopped kubelet-ts; pods keep running');
  }

  // ---- sources → merge → table (kubelet: syncLoopIteration on configCh) ----

  /** #handleUpdate resolves once the update's changes are handled (pod-lifecycle.ts chunks big ones). */
  #handleUpdate(update: PodUpdate): Promise<void> {
    this.#lastSyncLoopMs = Date.now();
    return this.#lifecycle.handleUpdate(update);
  }

  #handleSourceError(e: SourceError): void {
    // The source has already logged it (at warn, once per change); what it does with the pods
    // (keep the last good ones, or drop a vanished path's) is the source's rule, not ours.
    this.#log.debug({ source: e.source, origin: e.origin, detail: e.message }, 'Source reported an error');
  }

  // ---- runtime events (kubelet: syncLoopIteration on plegCh, housekeeping) ----

  #handlePlegEvents(byPod: Map<string, PodLifecycleEvent[]>): void {
    this.#lastSyncLoopMs = Date.now();
    for (const [uid, events] of byPod) {
      const record = this.podManager.get(uid);
      if (!record || record.terminating || record.terminal) continue;
      // Any event makes the cached runtime state stale until a sync reads Docker again.
      record.plegGeneration = (record.plegGeneration ?? 0) + 1;
      // The death of a container that will restart is published now, from the event itself, before
      // the sync (evented.go updates the pod cache from the event); the sync that follows publishes
      // the authoritative status. A death that ends the pod waits for the sync's termination message.
      let patched = false;
      for (const e of events) {
        if (e.exit) this.#exitsDuringSync.get(uid)?.push({ containerId: e.containerId, exit: e.exit });
        const next = e.exit && record.runtimePod ? applyContainerExit(record.runtimePod, record.pod, e.containerId, e.exit) : null;
        if (next) { record.runtimePod = next; patched = true; }
      }
      if (patched) this.#publishStatus(record);
      this.#podWorkers.update(uid, { type: 'sync' });
    }
  }

  /** HandlePodCleanups: kill containers of pods no source wants, once every source has reported. */
  #handleOrphans(uids: Set<string>): void {
    // Pods whose ADD is still queued are not in the pod manager yet: wait until it is all handled.
    if (!this.#config.seenAllSources() || this.#lifecycle.pending) return;
    for (const uid of uids) {
      if (this.podManager.get(uid) || this.#podWorkers.busy(uid)) continue;
      this.#log.info({ uid }, 'Cleaning up containers of a pod that is no longer desired');
      // -1: use the grace period recorded on the containers' label (the spec is gone).
      this.#podWorkers.update(uid, { type: 'kill', gracePeriodSeconds: -1, remove: true });
    }
  }

  /** UIDs the garbage collector must keep: the pod manager's, plus the merge's while changes are queued. */
  #activePodUids(): string[] {
    const uids = [...this.podManager.all()].map((r) => r.uid);
    if (this.#lifecycle.pending) for (const pod of this.#config.pods()) uids.push(pod.metadata?.uid ?? '');
    return uids;
  }

  #resyncAll(): void {
    this.#lastSyncLoopMs = Date.now();
    for (const r of this.podManager.all()) if (!r.terminal && !r.terminating) this.#podWorkers.update(r.uid, { type: 'sync' });
  }

  // ---- pod worker bodies ----

  async #execute(uid: string, work: PodWork): Promise<void> {
    if (work.type === 'kill') return this.#kill(uid, work.gracePeriodSeconds, work.remove);
    const record = this.podManager.get(uid);
    if (!record || record.terminating || record.terminal) return;
    const deadlineLeftMs = activeDeadlineRemainingMs(record.pod, record.startTimeMs, Date.now());
    if (deadlineLeftMs === 0) return this.#failPod(record, kDeadlineExceededReason, kDeadlineExceededMessage);
    const started = performance.now();
    const generation = record.plegGeneration ?? 0;
    const cacheIsCurrent = record.runtimePod !== null && record.runtimePodGeneration === generation;
    const exitsDuringSync: { containerId: string; exit: ContainerExit }[] = [];
    this.#exitsDuringSync.set(uid, exitsDuringSync);
    const result = await this.#runner.run({
      kind: 'syncPod', protocol: PROTOCOL_VERSION, pod: record.pod, backoff: record.backoff, hostIp: this.options.nodeIp, deadlineMs: Date.now() + kSyncDeadlineMs,
      livenessFailed: this.#prober.probeKills(uid),
      ...(cacheIsCurrent ? { cachedRuntimePod: record.runtimePod! } : {}),
    }).catch((err: unknown) => {
      // kubelet: a failed sync is a FailedSync event on the pod; the pod worker retries it.
      this.events.record(record.pod, { type: 'Warning', reason: 'FailedSync', message: `error syncing pod: ${(err as Error)?.message ?? String(err)}` });
      throw err;
    }).finally(() => this.#exitsDuringSync.delete(uid));
    // A death published from its event while this sync ran must not be undone by the sync's
    // older view of the container.
    for (const { containerId, exit } of exitsDuringSync) {
      if (result.runtimePod) result.runtimePod = applyContainerExit(result.runtimePod, record.pod, containerId, exit) ?? result.runtimePod;
    }
    // The result is the pod's current runtime state as of `generation`: current while no PLEG
    // event came (one that came while the sync ran has already moved plegGeneration on).
    record.runtimePodGeneration = generation;
    if (deadlineLeftMs !== null) result.requeueAfterMs = result.requeueAfterMs > 0 ? Math.min(result.requeueAfterMs, deadlineLeftMs) : deadlineLeftMs;
    this.#applyResult(record, result);
    this.#log.debug({ ...podFields(record.pod), durationMs: Math.round(performance.now() - started), steps: result.steps.length }, 'Synced pod');
    if (this.podManager.get(uid) !== record || record.terminating) return;
    const phase = record.status?.phase;
    if ((phase === 'Succeeded' || phase === 'Failed') && record.pod.spec?.restartPolicy !== 'Always') {
      // The pod is done: stop its sandbox, keep the dead containers for their status and logs.
      record.terminal = true;
      this.#lifecycle.release(record);
      this.#podWorkers.update(uid, { type: 'kill', gracePeriodSeconds: record.pod.spec?.terminationGracePeriodSeconds ?? 30, remove: false });
    } else if (result.requeueAfterMs > 0) {
      this.#podWorkers.requeue(uid, result.requeueAfterMs);
    }
  }

  /**
   * #failPod: the kubelet fails the pod itself (activeDeadlineHandler): phase Failed with
   * `reason`/`message`, an event, and its containers killed within the grace period (kept for logs).
   */
  #failPod(record: PodRecord, reason: string, message: string): void {
    record.terminal = true;
    this.#lifecycle.release(record);
    this.#failures.set(record, { reason, message });
    this.events.record(record.pod, { type: 'Normal', reason, message });
    this.#log.info({ ...podFields(record.pod), reason }, 'Failing pod');
    this.#publishStatus(record);
    this.#podWorkers.update(record.uid, { type: 'kill', gracePeriodSeconds: record.pod.spec?.terminationGracePeriodSeconds ?? 30, remove: false });
  }

  async #kill(uid: string, gracePeriodSeconds: number, remove: boolean): Promise<void> {
    const known = this.podManager.get(uid)?.pod;
    this.#prober?.removePod(uid);
    const result = await this.#runner.run({ kind: 'killPod', protocol: PROTOCOL_VERSION, podUid: uid, gracePeriodSeconds, remove, hostIp: this.options.nodeIp, ...(known ? { pod: known } : {}) });
    const record = this.podManager.get(uid);
    if (!remove) {
      if (record) this.#applyResult(record, result);
      return;
    }
    // Forget first: a pod that was waiting for this one may have the same UID and needs its sync.
    this.#podWorkers.forget(uid);
    if (record) {
      this.#logEvents(record.pod, result.events);
      this.#lifecycle.release(record);
      this.podManager.delete(uid);
      this.statusManager.deletePodStatus(uid);
      this.#log.info(podFields(record.pod), 'Pod removed');
      this.#lifecycle.podRemoved(record.pod);
    }
  }

  #applyResult(record: PodRecord, result: PodSyncResult): void {
    record.runtimePod = result.runtimePod;
    record.waiting = result.waiting;
    record.backoff = result.backoff;
    this.#logEvents(record.pod, result.events);
    if (record.terminal || record.terminating) this.#prober?.removePod(record.uid);
    else this.#prober?.updatePod(record.pod, record.runtimePod, record.runtimePod?.podIp ?? '');
    this.#publishStatus(record);
  }

  #publishStatus(record: PodRecord): void {
    record.status = generatePodStatus({
      pod: record.pod, runtimePod: record.runtimePod, waiting: record.waiting, hostIp: this.options.nodeIp,
      startTimeMs: record.startTimeMs, previous: record.status, terminal: record.terminal, nowMs: Date.now(), failure: this.#failures.get(record),
      probeStatus: (name, id) => this.#prober?.probeStatus(record.uid, name, id),
    });
    this.statusManager.setPodStatus(record.pod, record.status);
  }

  #logEvents(pod: Pod, events: PodEventRecord[]): void {
    for (const e of events) this.events.record(pod, e);
  }

  // ---- AgentHost (the server's view of us) ----

  listPods(): Pod[] {
    const pods: Pod[] = [];
    for (const r of this.podManager.all()) pods.push({ ...r.pod, status: r.status });
    return pods;
  }

  resourceVersion(): number {
    return this.#watchCache.resourceVersion();
  }

  getPod(namespace: string, name: string): Pod | undefined {
    const r = this.podManager.getByFullName(`${namespace}/${name}`);
    return r ? { ...r.pod, status: r.status } : undefined;
  }

  submitPods(pods: Pod[]): Promise<Pod[]> {
    return this.#api.submitPods(pods);
  }

  replacePod(namespace: string, name: string, pod: Pod): Promise<Pod> {
    return this.#api.replacePod(namespace, name, pod);
  }

  deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<Pod> {
    return this.#api.deletePod(namespace, name, gracePeriodSeconds);
  }

  listEvents(): Event[] {
    return this.#api.listEvents();
  }

  getNode(): Promise<Node> {
    return this.#api.getNode();
  }

  containerLogs(request: ContainerLogsRequest): Promise<LogStream> {
    return this.#api.containerLogs(request);
  }

  watch(fromResourceVersion: number | undefined, onEvent: (event: WatchEvent) => void): WatchCancel {
    return this.#watchCache.watch(fromResourceVersion, onEvent);
  }

  metrics(): Promise<{ contentType: string; body: string }> {
    return this.#metrics.text();
  }

  observeHttpRequest(method: string, path: string, code: number, seconds: number): void {
    this.#metrics.observeHttpRequest(method, path, code, seconds);
  }

  healthz(): { ok: boolean; checks: { name: string; ok: boolean; message?: string }[] } {
    const pleg = this.#pleg?.healthy() ?? { ok: true };
    const sinceLoop = Date.now() - this.#lastSyncLoopMs;
    // kubelet: syncLoop health fails when the loop has not run for 2 × sync-frequency (min 5 min)
    const loopThreshold = Math.max(2 * this.options.syncFrequencyMs, 300_000);
    const loop = sinceLoop <= loopThreshold ? { ok: true } : { ok: false, message: `sync loop last active ${Math.round(sinceLoop / 1000)}s ago` };
    const checks = [{ name: 'pleg', ...pleg }, { name: 'syncloop', ...loop }];
    if (this.#etcd) checks.push({ name: 'etcd', ...this.#etcd.healthy() });
    return { ok: checks.every((c) => c.ok), checks };
  }
}

/** newAgent builds an agent from resolved options; nothing runs until start(). */
export function newAgent(options: AgentOptions, deps: AgentDeps): Agent {
  return new AgentImpl(options, deps);
}
