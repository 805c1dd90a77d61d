/**
 * Counterpart of pkg/kubelet/kubelet.go's NewMainKubelet and Kubelet.Run: the composition root, and
 * nothing else. It builds and wires, in the kubelet's shape:
 *
 *   sources → PodConfig merge → sync loop (sync-loop.ts) → sync handler (sync-handler.ts: SyncLoop
 *   ADD / UPDATE / REMOVE, asking admission: pod/pod-admission.ts) → pod workers (pod-workers.ts, with
 *   their start gate: pod-start-gate.ts, and lifecycle table: pod-sync-statuses.ts) →
 *   pod syncer (pod-syncer.ts) → worker pool; one pod-status publisher (status/pod-status-publisher.ts)
 *   for the loop, the handler, the syncer and eviction; a repeated DELETE's shorter grace period is
 *   the intake's (pod/graceful-deletion.ts); the PLEG (pleg/) feeds the sync loop and, with the pod
 *   syncer, the pod cache (pleg/pod-cache.ts); housekeeping (housekeeping.ts) ticks in the sync loop; the status manager
 *   feeds the watch cache, metrics and etcd; the server gets the AgentHost of server-host.ts.
 *
 * The pod lifecycle's components (prober to sync loop, runtime state, GC) are built by
 * agent-pod-lifecycle.ts, the sources by agent-sources.ts, the worker threads' bootstrap by
 * pool/worker-bootstrap.ts; this file builds the rest and starts and stops everything in order.
 *
 * It decides nothing about pods and does no runtime I/O: every runtime call runs off the main thread
 * (a pool task, or the dedicated events and logs threads).
 */
import type { Pod } from '../shared/api.js';
import type { Logger } from '../shared/logging.js';
import type { PodUpdate } from '../shared/pod-update.js';

import type { AgentHost, HealthReport } from '../server/host/agent-host.js';
import { createServer, type AgentServer } from '../server/server.js';

import type { AgentOptions } from './options/agent-options.js';
import { kKillsPerWorker, kTasksPerWorker, wirePodLifecycle } from './agent-pod-lifecycle.js';
import { workerBootstrap } from './pool/worker-bootstrap.js';
import { startPodSources } from './agent-sources.js';
import { newPodConfig, type PodConfig } from './config/pod-config.js';
import type { FileSource } from './config/source-file.js';
import type { HttpSource } from './config/source-http.js';
import type { EtcdCluster } from './etcd/cluster.js';
import { newEventRecorder, type EventRecorder } from './events/recorder.js';
import type { GcManager } from './gc/gc-manager.js';
import { newStatsProvider, type StatsProvider } from './stats/stats-provider.js';
import { hasLocalStorageLimit } from './eviction/local-storage.js';
import { newProbeMetrics, type ProbeMetrics } from './stats/probe-metrics.js';
import { setupDataDirs } from './host/data-dirs.js';
import { newIntakeApi, type IntakeApi } from './serving/intake-api.js';
import { newClaimController, type ClaimController } from './config/claims.js';
import { newObjectStore, type ConfigObjectUpdate, type ObjectStore } from './config/object-store.js';
import { newIntakeObjectSource, type IntakeObjectSource } from './config/source-intake-objects.js';
import { newNamespaceStore, type NamespaceStore } from './serving/namespace-store.js';
import { podObjectKeys } from '../shared/config-objects.js';
import { newKubeletMetrics, type KubeletMetrics } from './metrics/kubelet-metrics.js';
import { newNodeApi, type NodeApi } from './node/node-api.js';
import type { RuntimeState } from './node/runtime-state.js';
import { newAgentRegistry } from './metrics/registry.js';
import { newPodManager, type PodManager } from './pod/pod-manager.js';
import { newRuntimeWorkerPool } from './pool/pinned-pool.js';
import type { PodSyncRunner } from './pool/worker-pool.js';
import { listPods, newServerHost } from './serving/server-host.js';
import { newBodyDecoder, type BodyDecoder } from './serving/body-decoder.js';
import { loadServerAuth } from './serving/server-auth.js';
import { podNetworkGateway } from '../shared/kubernetes-service-env.js';
import { boundPodOf, newNodeServiceAccounts, withServiceAccountAuth } from './service-accounts/node-service-accounts.js';
import { ensureServingCert } from './host/serving-cert.js';
import { agentServerOptions } from './serving/server-options.js';
import { newStatusManager, type StatusManager } from './status/status-manager.js';
import { setUpNodeNetwork, type NodeNetwork } from './network/network-setup.js';
import { newWatchCache, type WatchCache } from './watch/watch-cache.js';
import type { EvictionManager } from './eviction/eviction-manager.js';
import type { Pleg } from './pleg/generic-pleg.js';
import { newPodCache } from './pleg/pod-cache.js';
import type { PodWorkers } from './lifecycle/pod-workers.js';
import type { ProberManager } from './prober/prober-manager.js';
import type { SyncHandler } from './lifecycle/sync-handler.js';
import type { SyncLoop } from './lifecycle/sync-loop.js';
import { hardEvictionReservation } from './options/eviction-options.js';
import { realClock, type Clock } from '../shared/clock.js';

/** Dependencies of `newAgent`; tests and benches may inject a runner (e.g. a fake). */
export interface AgentDeps {
  logger: Logger;
  runner?: PodSyncRunner;
  /** Start the HTTP server (default true). */
  serve?: boolean;
  /** Changes kept for WS /watch/pods resumes (`?resourceVersion=`); default 10000. */
  watchHistorySize?: number;
  /** The one clock of every component (epoch ms, timers); default the real clock (k8s.io/utils/clock RealClock). */
  clock?: Clock;
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
  /** The HTTPS server's port (`--tls-port`, after start), 0 if not serving TLS. */
  readonly tlsPort: number;
  /** The pods with their status, as GET /pods answers. */
  listPods(): Pod[];
  readonly statusManager: StatusManager;
  /** The ConfigMaps and Secrets of every source (config/object-store.ts). */
  readonly objects: ObjectStore;
  readonly podManager: PodManager;
  /** The pod workers' lifecycle queries (after start): which pods are terminating, terminal, being removed. */
  readonly podWorkers: Pick<PodWorkers, 'isPodTerminationRequested' | 'isPodTerminal' | 'shouldPodContentBeRemoved'>;
  readonly events: EventRecorder;
  /** The server's view of the agent (what the API answers from), also for in-process callers. */
  readonly host: AgentHost;
  /** The sync loop (after start); tests drive an iteration (e.g. housekeeping) through it. */
  readonly syncLoop: Pick<SyncLoop, 'iteration'>;
  /** The PLEG (after start): relist figures for benches, health for /healthz. */
  readonly pleg: Pleg;
  /** The stats collector (Summary API, resource metrics): `bench stats` drives it and reads its cost. */
  readonly stats: StatsProvider;
  /** The Prometheus exposition, as GET /metrics answers (benches read counters from it). */
  metrics(): Promise<{ contentType: string; body: string }>;
}

class AgentImpl implements Agent {
  readonly podManager: PodManager;
  // Versions above any an earlier run of the agent handed out (see StatusManagerOptions).
  readonly statusManager: StatusManager;
  readonly events: EventRecorder;
  readonly #podCache = newPodCache();
  readonly #config: PodConfig;
  readonly #log: Logger;
  /** The `api` source's pod writes (POST / PUT / DELETE /pods). */
  readonly #intake: IntakeApi;
  /** The ConfigMaps and Secrets of every source (config/object-store.ts); each sync task gets its pod's. */
  readonly objects: ObjectStore = newObjectStore();
  /** The intake's ConfigMaps and Secrets (POST /pods, PUT/DELETE /configmaps|secrets/…). */
  readonly #intakeObjects: IntakeObjectSource;
  readonly #claims: ClaimController;
  readonly #namespaces: NamespaceStore;
  /** GET /node and GET /containerLogs. */
  readonly #nodeApi: NodeApi;
  readonly #watchCache: WatchCache;
  readonly #metrics: KubeletMetrics;
  /** POST/PUT /pods bodies are decoded on its thread, never on this one (issue 11, finding 1). */
  readonly #bodyDecoder: BodyDecoder;
  readonly host: AgentHost;
  #runner!: PodSyncRunner;
  #podWorkers!: PodWorkers;
  #pleg!: Pleg;
  #prober!: ProberManager;
  #syncLoop!: SyncLoop;
  /** SyncLoop ADD / UPDATE / REMOVE (sync-handler.ts), built in start(); the intake asks it for free pod slots and shortened deletes. */
  #syncHandler: SyncHandler | undefined;
  /** Is the container runtime up (updateRuntimeUp): the `runtime` check and the node's Ready. */
  #runtimeState?: RuntimeState;
  #server: AgentServer | null = null;
  #fileSource: FileSource | null = null;
  #etcd: EtcdCluster | null = null;
  #httpSource: HttpSource | null = null;
  /** Container and image garbage collection (gc/gc-manager.ts). */
  #gc?: GcManager;
  /** The pod network (network/network-setup.ts): settings for the workers, readiness for the Node and the pod syncer. */
  #network?: NodeNetwork;
  /** The stats collector (stats/stats-provider.ts) and the probe results counter (stats/probe-metrics.ts). */
  #stats: StatsProvider;
  #probeMetrics: ProbeMetrics;
  /** The eviction manager (eviction/): pressure conditions, admission under pressure, evictions; built in start(). */
  #eviction?: EvictionManager;
  #stopped = false;
  readonly #clock: Clock;

  constructor(
    private readonly options: AgentOptions,
    private readonly deps: AgentDeps,
  ) {
    this.#log = deps.logger;
    const clock = (this.#clock = deps.clock ?? realClock);
    this.statusManager = newStatusManager({ initialResourceVersion: clock.now() * 1000 });
    this.podManager = newPodManager();
    this.events = newEventRecorder({ nodeName: options.nodeName }, { logger: deps.logger.child({ component: 'events' }), clock });
    const sources: PodUpdate['source'][] = [];
    if (options.podManifestPath) sources.push('file');
    if (options.etcdServers.length > 0) sources.push('etcd');
    if (options.manifestUrl) sources.push('http');
    sources.push('api');
    this.#config = newPodConfig(sources);
    const agent = this;
    this.#intake = newIntakeApi(options, {
      logger: deps.logger,
      podManager: this.podManager,
      mergedOwner: (fullName) => this.#config.owner(fullName),
      mergedPod: (uid) => this.#config.get(uid),
      onUpdate: (u) => this.#handleUpdate(u),
      freePodSlots: () => this.#syncHandler?.freePodSlots() ?? Infinity,
      // A repeated DELETE may shorten a terminating pod's grace period (pod/graceful-deletion.ts); the pod workers exist from start().
      statusManager: this.statusManager,
      get podWorkers() {
        return agent.#podWorkers;
      },
      recordEvent: (pod, e) => this.events.record(pod, e),
      clock,
    });
    this.#namespaces = newNamespaceStore(options.rootDir, deps.logger.child({ component: 'namespaces' }), clock);
    this.#intakeObjects = newIntakeObjectSource({
      rootDir: options.rootDir,
      logger: deps.logger.child({ component: 'intake-objects' }),
      onUpdate: (u) => this.handleObjectUpdate(u),
      owner: (kind, ns, name) => this.objects.owner(kind, ns, name),
      current: (kind, ns, name) => this.objects.get(kind, ns, name),
      maxStoreBytes: options.intakeStoreBytes,
      clock,
    });
    this.#claims = newClaimController({
      rootDir: options.rootDir,
      logger: deps.logger.child({ component: 'claims' }),
      objects: this.objects,
      intakeObjects: this.#intakeObjects,
      pods: () => this.listPods(),
      clock,
    });
    this.#nodeApi = newNodeApi(options, {
      logger: deps.logger,
      podManager: this.podManager,
      runtimePod: (uid) => this.#podCache.get(uid),
      healthz: () => this.healthz(),
      port: () => this.port,
      network: () => {
        const n = this.#network;
        return n && n.settings.plugin === 'cni' ? { ready: n.status().ready, message: n.nodeMessage() } : undefined;
      },
      pressure: () => {
        const c = this.#eviction?.conditions() ?? [];
        return { memory: c.includes('MemoryPressure'), disk: c.includes('DiskPressure') };
      },
      hardEviction: hardEvictionReservation(options.evictionHard),
      clock,
    });
    this.#watchCache = newWatchCache(this.statusManager, { historySize: deps.watchHistorySize, historyBytes: options.watchHistoryBytes });
    this.#metrics = newKubeletMetrics(newAgentRegistry(), {
      runtimePods: () => this.#podCache.runtimePods(),
      runnerStats: () => this.#runner?.stats(),
      podWorkerStats: () => this.#podWorkers?.stats(),
      clock,
    });
    this.statusManager.subscribe((change) => this.#metrics.observeStatusChange(change));
    this.#bodyDecoder = newBodyDecoder({ maxHeapMb: options.bodyDecoderMaxHeapMb }, deps.logger.child({ component: 'body-decoder' }));
    this.#probeMetrics = newProbeMetrics();
    this.#stats = newStatsProvider(
      { periodMs: options.housekeepingIntervalMs, nodeName: options.nodeName },
      {
        run: (t) => {
          if (!this.#runner) throw new Error('the worker pool is not started');
          return this.#runner.run<'stats'>(t);
        },
        logger: deps.logger.child({ component: 'stats' }),
        // The eviction manager checks local-storage limits every pass: those pods are read every period.
        watchedPods: () => {
          const uids: string[] = [];
          for (const r of this.podManager.all()) if (hasLocalStorageLimit(r.pod)) uids.push(r.uid);
          return uids;
        },
        clock,
      },
    );
    this.host = newServerHost({
      stats: this.#stats,
      probeMetrics: this.#probeMetrics,
      objects: this.objects,
      namespaces: this.#namespaces,
      podManager: this.podManager,
      intake: this.#intake,
      intakeObjects: this.#intakeObjects,
      claims: this.#claims,
      bodyDecoder: this.#bodyDecoder,
      nodeApi: this.#nodeApi,
      events: this.events,
      watchCache: this.#watchCache,
      metrics: this.#metrics,
      healthz: () => this.healthz(),
      clock,
    });
  }

  get port(): number {
    return this.#server?.port ?? 0;
  }
  get tlsPort(): number {
    return this.#server?.tlsPort ?? 0;
  }
  get pleg(): Pleg {
    return this.#pleg;
  }
  /** The stats collector (benches read its cost). */
  get stats(): StatsProvider {
    return this.#stats;
  }
  get podWorkers(): PodWorkers {
    return this.#podWorkers;
  }
  get syncLoop(): SyncLoop {
    return this.#syncLoop;
  }

  async start(): Promise<void> {
    // The root dir and pods/ with the kubelet's modes (0750) before anything is read or written there.
    await setupDataDirs(this.options.rootDir, this.#log);
    await this.#namespaces.load(); // before the server answers a GET of namespaces
    const o = this.options;
    const log = this.#log;
    // First: an unsafe admin token or service account key file stops the start before anything runs.
    const serviceAccounts = await newNodeServiceAccounts({
      rootDir: o.rootDir,
      logger: log.child({ component: 'service-accounts' }),
      pod: boundPodOf((n) => this.podManager.getByFullName(n)),
      clock: this.#clock,
    });
    const auth = withServiceAccountAuth(this.deps.serve !== false ? await loadServerAuth(o, log) : undefined, serviceAccounts);
    // The pod network before the workers: they get its settings; a colliding --pod-cidr stops the start here.
    const network = (this.#network = await setUpNodeNetwork(o, {
      logger: log.child({ component: 'network' }),
      // Pods that waited for the network are synced as soon as it is ready (not at the next resync).
      onChange: (s) => {
        if (s.ready && this.#syncLoop) void this.#syncLoop.iteration({ kind: 'resync' });
      },
      clock: this.#clock,
    }));
    const bootstrap = workerBootstrap(o, network.settings);
    // The fake runtime keeps one in-memory state per thread: pin each pod to one thread (pinned-pool.ts).
    // Each thread holds kTasksPerWorker syncs and kKillsPerWorker kills (the pod workers' two budgets).
    const poolOptions = { threads: o.workers, concurrentTasksPerWorker: kTasksPerWorker + kKillsPerWorker };
    const runner = (this.#runner = this.#metrics.instrumentRunner(this.deps.runner ?? newRuntimeWorkerPool(bootstrap, poolOptions)));
    const lifecycle = wirePodLifecycle({
      options: o,
      logger: log,
      clock: this.#clock,
      runner,
      injectedRunner: this.deps.runner !== undefined,
      config: this.#config,
      podManager: this.podManager,
      podCache: this.#podCache,
      statusManager: this.statusManager,
      events: this.events,
      metrics: this.#metrics,
      probeMetrics: this.#probeMetrics,
      stats: this.#stats,
      network,
      idScheme: () => this.#nodeApi.idScheme(),
      configObjects: (pod) => serviceAccounts.configObjectsFor(pod, this.#claims.configObjectsFor(pod)),
      heldUids: () => this.#intake.heldUids(),
      learnRuntime: () => void this.#nodeApi.learnRuntime(),
    });
    ({ runtimeState: this.#runtimeState, gc: this.#gc } = lifecycle);
    ({ prober: this.#prober, pleg: this.#pleg, podWorkers: this.#podWorkers, eviction: this.#eviction } = lifecycle);
    ({ handler: this.#syncHandler, syncLoop: this.#syncLoop } = lifecycle);
    const { handler } = lifecycle;
    // The serving certificate before any pod runs: a bad --tls-* file stops the start here.
    const cert =
      auth && o.tlsPort >= 0
        ? await ensureServingCert({
            rootDir: o.rootDir,
            nodeName: o.nodeName,
            address: o.address,
            certFile: o.tlsCertFile,
            keyFile: o.tlsPrivateKeyFile,
            clock: this.#clock,
          })
        : undefined;
    serviceAccounts.setApi({
      caPem: cert?.certPem ?? '',
      address: o.address,
      tlsPort: () => (cert ? this.tlsPort || o.tlsPort : 0),
      gateway: podNetworkGateway(network.podCIDR),
      onPodNetwork: network.settings.plugin === 'cni',
    });
    lifecycle.runtimeState.start();
    network.start();
    this.#pleg.start();
    // The first relist is in before any source's pods are handled: an old runtime copy of a pod
    // (edited while the agent was down) is then known before the new copy could start beside it.
    await this.#pleg.relist();
    await this.#startSources();
    // The first reads are in once they are handled too (a big SET is handled in chunks).
    await handler.settled();
    // The server answers only now (the kubelet's first relist fills its pod cache before the pods'
    // status is reported): its first /pods holds every restored pod, its status from the runtime.
    if (auth) this.#server = await createServer(this.host, agentServerOptions(o, auth, cert, log));
    this.#syncLoop.start();
    lifecycle.gc.start();
    this.#stats.start();
    this.#nodeApi.start(); // on a CRI runtime: the logs worker and its container log rotation
    this.#eviction.start();
    // One run at start, right after adoption (the first relist and the sources' pods are in): the
    // pod network's leases of sandboxes that went away while the agent was down (a kill -9 mid-ADD
    // or mid-DEL, containers removed by hand) are released now, not a GC period later (issue 13).
    lifecycle.gc.runOnce().catch((err: unknown) => log.warn({ err }, 'Garbage collection failed'));
    log.info(
      { node: o.nodeName, port: this.port, workers: o.workers, podManifestPath: o.podManifestPath || undefined },
      'Started kubelet-ts',
    );
  }

  /** #startSources starts each configured source and waits for its first read (agent-sources.ts). */
  async #startSources(): Promise<void> {
    const sources = await startPodSources(this.options, {
      logger: this.#log,
      clock: this.#clock,
      onUpdate: (u) => this.#handleUpdate(u),
      onObjects: (u) => this.handleObjectUpdate(u),
      recordEvent: (pod, e) => this.events.record(pod, e),
      statusManager: this.statusManager,
      listPods: () => this.listPods(),
      ready: () => this.#pleg.healthy(),
      buildNode: () => this.#nodeApi.getNode(),
    });
    ({ file: this.#fileSource, http: this.#httpSource, etcd: this.#etcd } = sources);
    await this.#intakeObjects.start();
    await this.#intake.start();
    this.#claims.start();
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#syncLoop?.stop();
    this.#runtimeState?.stop();
    await this.#gc?.stop();
    await this.#eviction?.stop();
    await this.#stats.stop();
    await this.#etcd?.stop();
    await this.#fileSource?.stop();
    await this.#nodeApi.stop();
    await this.#httpSource?.stop();
    await this.#pleg?.stop();
    await this.#prober?.stop();
    await this.#podWorkers?.stop();
    this.#server?.close();
    await this.#bodyDecoder.close();
    if (!this.deps.runner) await this.#runner?.close();
    await this.#network?.stop();
    this.#watchCache.stop();
    this.#claims.stop();
    this.#metrics.stop();
    this.#log.info({}, 'Stopped kubelet-ts; pods keep running');
  }

  /** #handleUpdate: a source's update enters the sync loop; resolves once its changes are handled. */
  #handleUpdate(update: PodUpdate): Promise<void> {
    return this.#syncLoop.iteration({ kind: 'config', update });
  }

  /**
   * handleObjectUpdate: a source's ConfigMaps/Secrets enter the object store; the pods that
   * reference a key whose object appeared, changed or went are synced again (the sync loop's
   * `objects` event), as the kubelet's watch-based managers trigger a pod resync. A duplicate
   * from another source is logged (kind/namespace/name only, never contents). Main thread.
   */
  handleObjectUpdate(update: ConfigObjectUpdate): void {
    const { changed, conflicts } = this.objects.apply(update);
    for (const c of conflicts)
      this.#log.warn({ source: c.source, object: c.key, heldBy: c.heldBy }, 'Ignoring an object another source already gives');
    if (changed.length === 0) return;
    this.#log.info({ source: update.source, op: update.op, objects: changed }, 'ConfigMaps, Secrets or PersistentVolumeClaims changed');
    if (!this.#syncLoop) return;
    const keys = new Set(changed);
    const uids: string[] = [];
    for (const r of this.podManager.all()) if (podObjectKeys(r.pod).some((k) => keys.has(k))) uids.push(r.uid);
    if (uids.length > 0) void this.#syncLoop.iteration({ kind: 'objects', uids });
  }

  listPods(): Pod[] {
    return listPods(this.podManager);
  }

  metrics(): Promise<{ contentType: string; body: string }> {
    return this.#metrics.text();
  }

  healthz(): HealthReport {
    const checks = [
      { name: 'runtime', ...(this.#runtimeState?.healthy() ?? { ok: true }) },
      { name: 'pleg', ...(this.#pleg?.healthy() ?? { ok: true }) },
      { name: 'syncloop', ...(this.#syncLoop?.healthy() ?? { ok: true }) },
    ];
    if (this.#etcd) checks.push({ name: 'etcd', ...this.#etcd.healthy() });
    return { ok: checks.every((c) => c.ok), checks };
  }
}

/** newAgent builds an agent from resolved options; nothing runs until start(). */
export function newAgent(options: AgentOptions, deps: AgentDeps): Agent {
  return new AgentImpl(options, deps);
}
