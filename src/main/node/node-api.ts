/**
 * Counterpart of the kubelet server's HostInterface reads that need the runtime
 * (pkg/kubelet/server: GetNode, GetContainerLogs): this node as a `Node` object (GET /node, the
 * etcd node key) and a container's log (GET /containerLogs). Both go through the logs worker
 * (logs/container-logs.ts), which also answers the runtime's version. What it may touch: the logs
 * worker; it reads the pod manager, the pod cache and the health checks. Main thread only.
 */
import type { Node } from '../../shared/api.js';
import { AgentError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import { idSchemeOf, presumedIdScheme, type RuntimeName } from '../../shared/runtime-endpoint.js';
import { runtimeEndpointOf } from '../options/runtime-endpoint-options.js';
import type { ContainerStreamSpec } from '../../shared/streams-protocol.js';
import type {
  ContainerLogsRequest,
  ContainerStreamSession,
  HealthCheck,
  HealthReport,
  LogStream,
  StreamTarget,
} from '../../server/host/agent-host.js';
import { newStreamsClient, streamTargetOf, type StreamsClient } from '../streams/container-streams.js';
import { portForwardTargetOf } from '../streams/port-forward.js';
import type { PortForwardSpec } from '../../shared/port-forward-protocol.js';
import type { PortForwardSession, PortForwardTarget } from '../../server/host/port-forward-host.js';
import { newLogsClient, selectLogContainer, type LogsClient, type LogsClientOptions } from '../logs/container-logs.js';
import { parseQuantity } from '../../shared/quantity.js';
import type { PodManager } from '../pod/pod-manager.js';
import { buildNode, gatherNodeFacts, kubeletVersion, type NodeInputs } from './node-status.js';
import { kRuntimeDownMessage } from './runtime-state.js';
import { newNodeSpecStore, type NodeSpecStore } from './node-spec.js';
import { realClock, type Clock } from '../../shared/clock.js';

/** Options of {@link newNodeApi} (a subset of AgentOptions). */
export interface NodeApiOptions {
  rootDir: string;
  nodeName: string;
  /** `--node-labels` (over the well-known labels); absent = none. */
  nodeLabels?: Readonly<Record<string, string>>;
  nodeIp: string;
  maxPods: number;
  /** The runtime (AgentOptions' runtime, dockerSocketPath and the CRI endpoints; runtime-endpoint-options.ts). */
  runtime: RuntimeName;
  dockerSocketPath: string;
  containerRuntimeEndpoint?: string;
  imageServiceEndpoint?: string;
  /** `--container-log-max-size` (a quantity) and `--container-log-max-files`: on a CRI runtime, the logs worker rotates the runtime's log files; absent = no rotation. */
  containerLogMaxSize?: string;
  containerLogMaxFiles?: number;
  /** The logs worker's log level; absent = info. */
  logLevel?: string;
}

/** Dependencies of {@link newNodeApi}. */
export interface NodeApiDeps {
  logger: Logger;
  podManager: PodManager;
  /** What the runtime last showed of pod `uid` (PodCache.get), to pick a container's log. */
  runtimePod: (uid: string) => RuntimePod | null;
  healthz: () => HealthReport;
  /** The pod network's readiness (NodeNetwork.status with its nodeMessage); undefined = no pod network (none plugin, not started). */
  network?: () => { ready: boolean; message: string } | undefined;
  /** The HTTP server's port (0 when not serving). */
  port: () => number;
  /** The eviction manager's MemoryPressure / DiskPressure (NodeInputs.pressure); absent = the fixed defaults on the machine's facts. */
  pressure?: () => { memory: boolean; disk: boolean };
  /** The hard eviction thresholds reserved from allocatable (NodeInputs.hardEviction); absent = the defaults. */
  hardEviction?: NodeInputs['hardEviction'];
  /** The clock (epoch ms) of the Node's heartbeat and transition times; default the real clock. */
  clock?: Clock;
}

/** NodeApi: GET /node and GET /containerLogs. */
export interface NodeApi {
  /**
   * getNode builds this node's Node object: conditions from the health checks, capacity and
   * allocatable, nodeInfo with the runtime's version (asked once; '' while the runtime does not
   * answer), addresses. Never rejects for a runtime that is down.
   */
  getNode(): Promise<Node>;
  /**
   * setUnschedulable cordons (true) or uncordons the node (node-spec.ts) and resolves with the
   * Node as it now is. @throws Error when the node spec cannot be written.
   */
  setUnschedulable(value: boolean): Promise<Node>;
  /**
   * containerLogs opens the log of `request`'s container (its previous attempt with `previous`).
   * @throws AgentError ERR_NOT_FOUND when the pod or container is unknown; the logs worker's errors.
   */
  containerLogs(request: ContainerLogsRequest): Promise<LogStream>;
  /** streamTarget: the running container of an exec/attach/run (streams/container-streams.ts selectStreamContainer). */
  streamTarget(namespace: string, pod: string, container: string): StreamTarget;
  /** openContainerStream: an exec or attach through the streams worker (started on first use). */
  openContainerStream(spec: ContainerStreamSpec): ContainerStreamSession;
  /** portForwardTarget: the running sandbox of a port-forward (streams/port-forward.ts selectPortForwardTarget). */
  portForwardTarget(namespace: string, pod: string): PortForwardTarget;
  /** openPortForward: one forwarded connection through the streams worker (started on first use). */
  openPortForward(spec: PortForwardSpec): PortForwardSession;
  /**
   * start starts the logs worker at once on a CRI runtime, so that its container log manager
   * rotates the runtime's log files from the agent's start (the kubelet starts its
   * containerLogManager in Kubelet.Run); on Docker and the fake the worker still starts at first use.
   */
  start(): void;
  /** stop ends the logs and streams workers (and every stream). */
  stop(): Promise<void>;
  /**
   * idScheme: the scheme of container IDs in PodStatus (`<scheme>://<id>`): the runtime's Version
   * runtime_name lower-cased once it answered (`docker`, `containerd`), as kuberuntime's
   * ContainerID.Type; before that presumedIdScheme(--runtime) ('' for a CRI runtime).
   */
  idScheme(): string;
  /** learnRuntime asks the runtime's Version (through the logs worker) until it answered once; getNode does too. Never rejects. */
  learnRuntime(): Promise<void>;
}

/**
 * readyMessage: a failing health check as a part of the Ready condition's message, in the kubelet's
 * words (runtime.go runtimeErrors): `container runtime is down`, `PLEG is not healthy: …`; other
 * checks as `name: message`. The parts are joined with `, `, as nodestatus.ReadyCondition does.
 */
export function readyMessage(check: HealthCheck): string {
  if (check.name === 'runtime') return kRuntimeDownMessage;
  if (check.name === 'pleg') return `PLEG is not healthy: ${check.message ?? 'failed'}`;
  return `${check.name}: ${check.message ?? 'failed'}`;
}

/**
 * containerLogRotation: the logs worker's rotation policy from `--container-log-max-size` (a
 * quantity, in bytes) and `--container-log-max-files`, or undefined when either is absent. The
 * options were checked when parsed (at least 1Ki; at least 2 files).
 */
function containerLogRotationOf(o: NodeApiOptions): LogsClientOptions['containerLogRotation'] {
  if (o.containerLogMaxSize === undefined || o.containerLogMaxFiles === undefined) return undefined;
  return { maxSizeBytes: Math.floor(parseQuantity(o.containerLogMaxSize, '--container-log-max-size')), maxFiles: o.containerLogMaxFiles };
}

class NodeApiImpl implements NodeApi {
  readonly #logs: LogsClient;
  readonly #streams: StreamsClient;
  readonly streamTarget: NodeApi['streamTarget'];
  readonly portForwardTarget: NodeApi['portForwardTarget'];
  #runtimeVersion: string | undefined;
  #idScheme: string;
  #learning: Promise<void> | undefined;
  #lastNode: Node | undefined;
  readonly #spec: NodeSpecStore;

  constructor(
    private readonly options: NodeApiOptions,
    private readonly deps: NodeApiDeps,
  ) {
    const endpoint = runtimeEndpointOf(options);
    this.#idScheme = presumedIdScheme(endpoint.runtime);
    this.#logs = newLogsClient(
      { endpoint, nodeName: options.nodeName, logLevel: options.logLevel, containerLogRotation: containerLogRotationOf(options) },
      { logger: deps.logger },
    );
    this.#streams = newStreamsClient({ endpoint, nodeName: options.nodeName }, { logger: deps.logger });
    this.streamTarget = streamTargetOf((fullName) => deps.podManager.getByFullName(fullName), deps.runtimePod);
    this.portForwardTarget = portForwardTargetOf((fullName) => deps.podManager.getByFullName(fullName), deps.runtimePod);
    this.#spec = newNodeSpecStore(options.rootDir, deps.logger);
  }

  async setUnschedulable(value: boolean): Promise<Node> {
    await this.#spec.setUnschedulable(value);
    return this.getNode();
  }

  openPortForward(spec: PortForwardSpec): PortForwardSession {
    return this.#streams.openPortForward(spec);
  }

  start(): void {
    if (this.options.runtime === 'remote') this.#logs.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.#logs.close(), this.#streams.close()]);
  }

  openContainerStream(spec: ContainerStreamSpec): ContainerStreamSession {
    return this.#streams.open(spec);
  }

  idScheme(): string {
    return this.#idScheme;
  }

  learnRuntime(): Promise<void> {
    if (this.#runtimeVersion !== undefined) return Promise.resolve();
    this.#learning ??= this.#logs
      .version()
      .then(
        (v) => {
          this.#idScheme = idSchemeOf(v.runtimeName) || this.#idScheme;
          // As the kubelet's nodestatus.VersionInfo: `<runtime_name>://<runtime_version>` (docker://24.0.5, containerd://1.6.20).
          this.#runtimeVersion = `${this.#idScheme}://${v.version.replace(/^v(?=\d)/, '')}`;
        },
        (err: Error) => {
          this.deps.logger.warn({ err: err.message }, 'Could not read the container runtime version');
        },
      )
      .finally(() => {
        this.#learning = undefined;
      });
    return this.#learning;
  }

  async getNode(): Promise<Node> {
    await this.learnRuntime();
    const health = this.deps.healthz();
    const failing = health.checks.filter((c) => !c.ok).map(readyMessage);
    this.#lastNode = buildNode({
      nodeName: this.options.nodeName,
      nodeLabels: this.options.nodeLabels,
      unschedulable: await this.#spec.unschedulable(),
      nodeIp: this.options.nodeIp,
      maxPods: this.options.maxPods,
      kubeletVersion: kubeletVersion(),
      containerRuntimeVersion: this.#runtimeVersion ?? '',
      health: { ok: health.ok, message: failing.join(', ') || undefined },
      network: this.deps.network?.(),
      port: this.deps.port(),
      pressure: this.deps.pressure?.(),
      hardEviction: this.deps.hardEviction,
      facts: await gatherNodeFacts(this.options.rootDir),
      nowMs: (this.deps.clock ?? realClock).now(),
      previous: this.#lastNode,
    });
    return this.#lastNode;
  }

  async containerLogs(req: ContainerLogsRequest): Promise<LogStream> {
    const record = this.deps.podManager.getByFullName(`${req.namespace}/${req.pod}`);
    if (!record) throw new AgentError('ERR_NOT_FOUND', `pods "${req.pod}" not found`);
    const containerId = selectLogContainer(record.pod, this.deps.runtimePod(record.uid), req.container, req.previous);
    // A previous (dead) attempt has nothing more to follow.
    return this.#logs.logs(containerId, {
      follow: req.follow && !req.previous,
      timestamps: req.timestamps,
      tailLines: req.tailLines,
      sinceSeconds: req.sinceSeconds,
      limitBytes: req.limitBytes,
    });
  }
}

/** newNodeApi builds GET /node and GET /containerLogs; the logs worker starts on first use. */
export function newNodeApi(options: NodeApiOptions, deps: NodeApiDeps): NodeApi {
  return new NodeApiImpl(options, deps);
}
