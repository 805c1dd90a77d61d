// Counterpart of pkg/kubelet/server's HostInterface: what the HTTP server may ask of the agent.
import type { Event, Node, Pod } from '../../shared/api.js';
import { realClock, type Clock } from '../../shared/clock.js';
import type { DecodedPodsBody, DecodePodsBodyRequest } from '../../shared/pods-body.js';
import type { DecodedProtobufBody } from '../../shared/manifest-tasks.js';
import type { ConfigObject, ConfigObjectKind } from '../../shared/config-objects.js';
import type { Summary } from '../../shared/stats.js';
import type { ContainerStreamSpec, TerminalSize } from '../../shared/streams-protocol.js';
import type { PortForwardSpec } from '../../shared/port-forward-protocol.js';
import type { PortForwardSession, PortForwardTarget } from './port-forward-host.js';
import type { WatchCancel, WatchEvent } from './watch-event.js';

/** HealthCheck: one named check of `AgentHost.healthz()`, as a healthz.HealthChecker's result. */
export interface HealthCheck {
  /** Check name, e.g. `syncloop` or `pleg`. */
  name: string;
  /** True when the check passes. */
  ok: boolean;
  /** Why it fails (or a note when it passes). */
  message?: string;
}

/** HealthReport: the answer of `AgentHost.healthz()`. `ok` is false when any check fails. */
export interface HealthReport {
  ok: boolean;
  checks: HealthCheck[];
}

/** ResourceChangeKind: the kinds, other than pods, whose changes the server's watches follow (their plural resource names). */
export type ResourceChangeKind =
  'nodes' | 'namespaces' | 'events' | 'configmaps' | 'secrets' | 'persistentvolumeclaims' | 'serviceaccounts';

/** CreatedNamespace: a namespace made through the Kubernetes API (src/main/serving/namespace-store.ts keeps them). */
export interface CreatedNamespace {
  name: string;
  uid: string;
  /** RFC 3339, seconds. */
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * AgentHost is the only way the server reaches the agent: src/main implements it and passes it to
 * `createServer`; the server never imports src/main. Every method runs on the main thread. The
 * reads (`listPods`, `getPod`, `resourceVersion`, `healthz`, `listEvents`, `watch`) are
 * synchronous and cheap (they read the agent's in-memory caches); the writes and `getNode`,
 * `containerLogs` and `metrics` return promises. None throws for a normal "not found" of a read
 * (it returns undefined); the promise-returning ones reject with an AgentError whose code the
 * server maps to a Status.
 */
export interface AgentHost {
  /**
   * clock: the agent's one clock (epoch ms): the ages of Table rows, deletionTimestamps of dry runs,
   * logs' sinceTime, the kind feeds' polls. Optional: without it the real clock (see {@link hostClock}).
   */
  readonly clock?: Clock;
  /** listPods: every pod the agent manages, each with its latest PodStatus from the status manager. */
  listPods(): Pod[];
  /**
   * resourceVersion: the current resourceVersion of the pods' watch (the status manager's
   * counter, 0 before any change): it grows by one on every change of a listed pod's status,
   * including a pod's first status (ADDED) and its removal (DELETED), and is what a watch resumes
   * from. GET /pods reports it as the PodList's `metadata.resourceVersion`, and reuses the
   * serialized unfiltered list while it and the listed pod objects are unchanged — so a host that
   * offers it must replace a pod's `metadata`/`spec` objects rather than mutate them in place, and
   * must bump it whenever a status changes. Optional: without it the list has no resourceVersion
   * and is serialized on every request.
   */
  resourceVersion?(): number;
  /**
   * podResourceVersion: pod `uid`'s `metadata.resourceVersion`, the version of its last change on
   * the pods' watch (the agent's watch cache keeps it); undefined for a pod not listed. Optional:
   * without it the server follows `watch` to learn each pod's version (kube-api/pod-versions.ts).
   */
  podResourceVersion?(uid: string): number | undefined;
  /** getPod: one pod with its status, or undefined if the agent has no pod `namespace/name`. */
  getPod(namespace: string, name: string): Pod | undefined;
  /** healthz: the agent's health checks (e.g. sync loop and PLEG freshness), as /healthz reports them. */
  healthz(): HealthReport;
  /**
   * watch: the pods' watch (WS /watch/pods). Delivers the initial part synchronously during the
   * call — one ADDED per pod then a BOOKMARK when `fromResourceVersion` is undefined or 0; the
   * changes after N then a BOOKMARK for a resume from N; or a single ERROR event with a 410 Status
   * when N is no longer in the bounded history (nothing follows an ERROR) — then every change as it
   * happens, in resourceVersion order, until the returned function is called. Optional: without
   * it the server does not offer /watch/pods.
   */
  watch?(fromResourceVersion: number | undefined, onEvent: (event: WatchEvent) => void): WatchCancel;
  /** metrics: the Prometheus text exposition of the agent's registry (GET /metrics). Optional: 404 without it. */
  metrics?(): Promise<{ contentType: string; body: string }>;
  /**
   * statsSummary: the Summary API (stats/v1alpha1) with every pod (GET /stats/summary,
   * metrics.k8s.io), from a collection at most two periods old; after a quiet spell it waits for a
   * fresh one (StatsProvider.podSummary). Undefined when none succeeded (503). Never rejects.
   * Optional: 404 without it.
   */
  statsSummary?(): Promise<Summary | undefined>;
  /** resourceMetrics: the text of GET /metrics/resource (kubelet resource metrics). Optional: 404 without it. */
  resourceMetrics?(): Promise<{ contentType: string; body: string }>;
  /** cadvisorMetrics: the text of GET /metrics/cadvisor (cAdvisor's names and labels). Optional: 404 without it. */
  cadvisorMetrics?(): Promise<{ contentType: string; body: string }>;
  /** probeMetrics: the text of GET /metrics/probes (prober_probe_total). Optional: 404 without it. */
  probeMetrics?(): Promise<{ contentType: string; body: string }>;
  /**
   * observeHttpRequest: called once per answered HTTP request with its method (upper case), the
   * route's first path segment (e.g. `pods`), the status code and the duration in seconds; feeds
   * kubelet_http_requests_total / kubelet_http_requests_duration_seconds. Must be cheap.
   */
  observeHttpRequest?(method: string, path: string, code: number, seconds: number): void;

  // ---- Intake and read API. Optional so that read-only hosts (tests, benches) need not
  // implement them; the server answers 405 MethodNotAllowed when a host lacks one. These may be
  // async and reject with an AgentError: ERR_ALREADY_EXISTS → 409, ERR_NOT_FOUND → 404,
  // ERR_INVALID_MANIFEST → 422, ERR_INVALID_ARGUMENT → 400, ERR_FORBIDDEN → 403, ERR_CONFLICT →
  // 409 (an error's `statusReason`, when set, names the Status reason instead).
  /**
   * submitPods: admit pods pushed through `POST /pods` (source `api`): all or nothing. The pods
   * are parsed, defaulted and validated already; the host assigns UIDs, persists them durably and
   * resolves with the pods as stored (annotations, uid) once they are on disk. With
   * `write.dryRun` (the Kubernetes API's `?dryRun=All`) every check runs and the answer is the pods
   * as they would be stored, but nothing is stored or started.
   */
  submitPods?(pods: Pod[], write?: { dryRun?: boolean }): Promise<Pod[]>;
  /**
   * decodePodsBody: parse, default and validate a POST/PUT /pods body off the main thread (the
   * agent's body decoder thread, src/main/serving/body-decoder.ts) and resolve with the pods or the
   * refusal (shared/pods-body.ts DecodedPodsBody: 400, 422, 413 when the thread ran out of memory
   * or time and was replaced, 429 when its queue is full). Never rejects. Optional: without it the
   * server decodes in its own thread (tests and benches only).
   */
  decodePodsBody?(request: DecodePodsBodyRequest): Promise<DecodedPodsBody>;
  /**
   * decodeProtobufBody: a protobuf body of the Kubernetes API (its envelope holding `objectKind`,
   * checked by the caller) as its JSON form, decoded off the main thread on the same threads as
   * decodePodsBody, with the same refusals (400, 413, 429). Never rejects. Optional: without it
   * the server decodes in its own thread (tests and benches only; kube-api/protobuf.ts).
   */
  decodeProtobufBody?(request: { body: Uint8Array; objectKind: string }): Promise<DecodedProtobufBody>;
  /**
   * submitObjects: store new ConfigMaps and Secrets given to the intake (`POST /pods` beside or
   * without pods) or the Kubernetes API (`POST /api/v1/namespaces/{ns}/configmaps|secrets`;
   * checked and normalised already), all or nothing; resolves once stored and handed to the object
   * store, with the objects as read back (server-set `uid` and `creationTimestamp`, and the
   * `resourceVersion` of this write). ERR_ALREADY_EXISTS when any of them exists (any source).
   * `write.dryRun`: checked and answered as they would be stored; nothing changes.
   */
  submitObjects?(objects: ConfigObject[], write?: ConfigObjectWrite): Promise<ConfigObject[]>;
  /**
   * replaceObject: replace an API (intake) ConfigMap or Secret (`PUT /configmaps|secrets/{namespace}/{name}`,
   * PUT and PATCH on the Kubernetes API); resolves with it as read back (the write's resourceVersion).
   * A `metadata.resourceVersion` or `uid` in `object` that is not the current one: ERR_CONFLICT (409).
   */
  replaceObject?(object: ConfigObject, write?: ConfigObjectWrite): Promise<ConfigObject>;
  /** deleteObject: delete an API (intake) ConfigMap or Secret (`DELETE /configmaps|secrets/{namespace}/{name}`, and on the Kubernetes API), `write.preconditions` checked (ERR_CONFLICT). */
  deleteObject?(kind: ConfigObjectKind, namespace: string, name: string, write?: ConfigObjectWrite): Promise<ConfigObject>;
  /**
   * objectsResourceVersion: the object store's counter (the version of the last change of any
   * ConfigMap or Secret; its own, never compared with the pods'), a ConfigMapList's or
   * SecretList's `metadata.resourceVersion`. Optional.
   */
  objectsResourceVersion?(): number;
  /**
   * replacePod: replace the spec of the intake pod `namespace/name` (`PUT`); same UID.
   * `write.dryRun`: checked and answered as it would be stored; nothing changes. Resolves once the
   * change is on the pods' watch (`watch`), so the reply can carry its resourceVersion.
   */
  replacePod?(namespace: string, name: string, pod: Pod, write?: { dryRun?: boolean }): Promise<Pod>;
  /**
   * deletePod: gracefully delete the intake pod `namespace/name` (`DELETE`); `gracePeriodSeconds`
   * overrides the pod's terminationGracePeriodSeconds. Resolves with the pod (deletionTimestamp set)
   * once that change is on the pods' watch (a MODIFIED; DELETED follows once its containers are gone).
   */
  deletePod?(namespace: string, name: string, gracePeriodSeconds?: number): Promise<Pod>;
  /**
   * listObjects: the ConfigMaps and Secrets the agent holds (every source's winners), with their
   * data (the server redacts Secrets); `kind` keeps one kind. Synchronous; for the Kubernetes
   * API's GET of configmaps and secrets (kube-api/resources.ts). Optional: 405 without it.
   */
  listObjects?(kind?: ConfigObjectKind): ConfigObject[];
  /** listEvents: the recent core/v1 Events, oldest first (`GET /events`). */
  listEvents?(): Event[];
  /**
   * onResourceChange: calls `fn` (on the main thread, after the change) when an object of that
   * kind may have changed — an event recorded or counted again, the node's spec or status — so the
   * server's watch of the kind (kube-api/kind-feeds.ts) lists it again at once instead of at its
   * next poll. Returns the unsubscribe function. Optional: without it changes show at the poll.
   */
  onResourceChange?(fn: (resource: ResourceChangeKind) => void): () => void;
  /**
   * createdNamespaces: the namespaces made through the API (namespace-store.ts), beside those in use.
   * Optional, with createNamespace and deleteNamespace: without them namespace writes answer 405.
   */
  createdNamespaces?(): CreatedNamespace[];
  /** createNamespace stores a new empty namespace; resolves with it once it is on disk. @throws Error if it cannot be written. */
  createNamespace?(ns: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }): Promise<CreatedNamespace>;
  /** updateNamespace replaces the labels and annotations of a namespace (storing one that was only in use); resolves with it once it is on disk. @throws Error if it cannot be written. */
  updateNamespace?(ns: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }): Promise<CreatedNamespace>;
  /** deleteNamespace drops a created namespace; false if none of that name was created. @throws Error if the file cannot be written. */
  deleteNamespace?(name: string): Promise<boolean>;
  /** getNode: this node as a core/v1 Node (`GET /node`). */
  getNode?(): Promise<Node>;
  /**
   * setNodeUnschedulable cordons (true) or uncordons this node (`kubectl cordon`, a PATCH of
   * spec.unschedulable) and resolves with the Node as it now is. Optional: without it, PATCH of
   * the node answers 405. @throws Error when the change cannot be stored.
   */
  setNodeUnschedulable?(value: boolean): Promise<Node>;
  /** containerLogs: a container's log as a stream of bytes (`GET /containerLogs/...`). */
  containerLogs?(request: ContainerLogsRequest): Promise<LogStream>;
  /**
   * streamTarget: the running container an exec, attach or run of `namespace/pod/container`
   * enters (the kubelet's findContainer), from the pod manager and the pod cache; synchronous.
   * @throws AgentError ERR_NOT_FOUND for an unknown pod or a container not in its spec;
   *   ERR_INVALID_ARGUMENT when the container is not running.
   */
  streamTarget?(namespace: string, pod: string, container: string): StreamTarget;
  /**
   * openContainerStream: starts an exec or attach (the streams worker); returns at once, the
   * session reports `started`, output and one `exit`. Optional: without it (or streamTarget) the
   * server answers 405 on /exec, /attach and /run.
   */
  openContainerStream?(spec: ContainerStreamSpec): ContainerStreamSession;
  /**
   * portForwardTarget: the running sandbox of pod `namespace/pod` and how to reach its ports
   * (the kubelet's GetPortForward); synchronous.
   * @throws AgentError ERR_NOT_FOUND for an unknown pod; ERR_INVALID_ARGUMENT when its sandbox is not running.
   */
  portForwardTarget?(namespace: string, pod: string): PortForwardTarget;
  /**
   * openPortForward: one connection to a pod's port (the streams worker); returns at once.
   * Optional: without it (or portForwardTarget) the server answers 405 on /portForward.
   */
  openPortForward?(spec: PortForwardSpec): PortForwardSession;
}

/**
 * ConfigObjectWrite: how a ConfigMap or Secret write is made: `dryRun` (`?dryRun=All`: checked,
 * answered, nothing stored); `preconditions` of a delete (DeleteOptions: the current object's
 * `uid` / `resourceVersion`).
 */
export interface ConfigObjectWrite {
  dryRun?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** StreamTarget: the container a stream enters. */
export interface StreamTarget {
  /** The runtime's container ID. */
  containerId: string;
  /** The pod's UID (streams are counted per pod). */
  podUid: string;
}

/** ContainerStreamExit: how a stream ended: the exec's exit code (null: attach, or unknown), or the error that ended it. */
export interface ContainerStreamExit {
  exitCode: number | null;
  error?: Error;
}

/**
 * ContainerStreamSession: one exec or attach, on the main thread. The server sets the callbacks
 * once, right after opening; `onExit` runs exactly once (also after close(), with no error).
 * Output is credit-based: the server acks each chunk's length once the client's socket took it.
 */
export interface ContainerStreamSession {
  onStarted(fn: () => void): void;
  onOutput(fn: (fd: 1 | 2, chunk: Uint8Array) => void): void;
  onExit(fn: (exit: ContainerStreamExit) => void): void;
  /** writeStdin forwards stdin; false once more than kStreamMaxStdinBufferedBytes wait for the container (the caller closes). */
  writeStdin(chunk: Uint8Array): boolean;
  /** endStdin closes the process's stdin. */
  endStdin(): void;
  resize(size: TerminalSize): void;
  /** ack returns `bytes` of output credit (shared/streams-protocol.ts). */
  ack(bytes: number): void;
  /** close tears the stream down. Idempotent. */
  close(): void;
}

/** ContainerLogsRequest: `GET /containerLogs/{namespace}/{pod}/{container}` with its query (PodLogOptions). */
export interface ContainerLogsRequest {
  namespace: string;
  pod: string;
  container: string;
  /** Keep streaming until the container stops or the client goes. */
  follow: boolean;
  /** The previous (dead) attempt of the container instead of the current one. */
  previous: boolean;
  /** Prefix each line with its RFC 3339 time. */
  timestamps: boolean;
  /** Only the last N lines. */
  tailLines?: number;
  /** Only lines newer than this many seconds. */
  sinceSeconds?: number;
  /** Stop after this many bytes. */
  limitBytes?: number;
}

/**
 * LogStream: the bytes of a container log, pushed to the server (main thread). `onData` and
 * `onEnd` are set once by the server before data flows; `pause`/`resume` carry the socket's
 * backpressure to the producer; `cancel` stops it (the client went away). `onEnd` runs exactly once.
 */
export interface LogStream {
  onData(fn: (chunk: Uint8Array) => void): void;
  onEnd(fn: (err?: Error) => void): void;
  pause(): void;
  resume(): void;
  cancel(): void;
}

/** hostClock: the host's clock, or the real clock when the host has none (tests and benches). */
export function hostClock(host: Pick<AgentHost, 'clock'>): Clock {
  return host.clock ?? realClock;
}
