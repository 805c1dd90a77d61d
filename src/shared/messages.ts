/**
 * The main↔worker wire protocol (piscina tasks and their results). Counterpart of the CRI
 * request/response shapes the kubelet sends to its runtime (k8s.io/cri-api), flattened to what
 * one sync needs.
 *
 * Everything here crosses a worker_threads boundary by structured clone: plain JSON-safe data
 * only (no classes, Maps or Dates); times are epoch milliseconds; errors travel as
 * `SerializedError` because Node 20 drops an Error subclass's name and code on the way back.
 */
import type { ConfigMap, Pod, Secret } from './api.js';
import type { ConfigObject } from './config-objects.js';
import type { FieldError } from './errors.js';
import type { DecodedPodsBody, DecodePodsBodyRequest } from './pods-body.js';
import type { PersistentVolumeClaim } from './pvc.js';
import type { KubernetesServiceEndpoint } from './kubernetes-service-env.js';
import type { RuntimeEndpoint, RuntimeName } from './runtime-endpoint.js';
import type { StatsSample } from './stats.js';

/** Bumped whenever a task or result shape changes; the worker refuses a task of another version. */
export const PROTOCOL_VERSION = 1;

/** workerData of every pool thread: its runtime (always named here) and the node's settings. */
export interface WorkerBootstrap extends RuntimeEndpoint {
  protocol: number;
  runtime: RuntimeName;
  /** This agent's node name: written to `kubelet-ts.node-name` on every container. */
  nodeName: string;
  /** --root-dir: emptyDir volumes live under `{rootDir}/pods/{uid}/volumes/`. */
  rootDir: string;
  /** --pod-infra-container-image. */
  podInfraContainerImage: string;
  /** --image-pull-credentials: a Docker config.json with registry credentials; '' or absent = none. */
  imagePullCredentials?: string;
  /** pino level for the worker's own logger. */
  logLevel: string;
  /** The node's pod sandbox settings (DNS, cgroups, pids, log rotation); absent = kDefaultNodeSandboxSettings. */
  sandbox?: Partial<NodeSandboxSettings>;
  /** The pod network (issue 13); absent = kNoPodNetwork (sandboxes keep network `none`, no pod IP). */
  network?: NodeNetworkSettings;
  /** --runtime-request-timeout in milliseconds: the deadline of each runtime call; absent = kDefaultRuntimeRequestTimeoutMs, 0 = none. */
  runtimeRequestTimeoutMs?: number;
}

/**
 * kDefaultRuntimeRequestTimeoutMs: `--runtime-request-timeout`'s default, 2 minutes in
 * milliseconds, as the kubelet's (KubeletConfiguration runtimeRequestTimeout).
 */
export const kDefaultRuntimeRequestTimeoutMs = 120_000;

/**
 * NodeNetworkSettings: how sandboxes get their network, as the kubelet's network plugin flags
 * (`--network-plugin`, `--cni-bin-dir`, `--cni-conf-dir`, `--cni-cache-dir`) resolved by the main
 * thread at start. With `plugin: 'cni'` every sandbox that is not hostNetwork is created with
 * network `none` and then joined to the network of `confFile` by CNI ADD (dockershim's
 * SetUpPod), before any container of the pod starts.
 */
export interface NodeNetworkSettings {
  /** 'cni': the CNI plugin chain of `confFile`; 'none': no pod network (sandbox `none`, podIP ''). */
  plugin: 'cni' | 'none';
  /** --cni-bin-dir split on `:` (CNI_PATH), absolute directories searched in order. */
  binDirs: string[];
  /** The network configuration in use, absolute: a `.conflist`, `.conf` or `.json` (the first by name in --cni-conf-dir, or the agent's own default under `<root-dir>/cni/net.d`). */
  confFile: string;
  /** Where the CNI results of set-up sandboxes are kept (libcni's cache dir): `<root-dir>/cni/cache`. */
  cacheDir: string;
  /** The address hostPorts are published on (portmap's hostIP): --node-ip, e.g. `127.0.0.1`. */
  hostPortIp: string;
}

/** kNoPodNetwork: no pod network (the fake runtime; `--network-plugin none`). */
export const kNoPodNetwork: Readonly<NodeNetworkSettings> = { plugin: 'none', binDirs: [], confFile: '', cacheDir: '', hostPortIp: '' };

/**
 * NodeSandboxSettings: the node flags a sync needs to build a pod's sandbox and containers
 * (issue 12 items 6 and 7), as the kubelet's KubeletConfiguration fields of the same names.
 */
export interface NodeSandboxSettings {
  /** --cluster-dns: cluster DNS server IPs; [] = none (ClusterFirst falls back to Default). */
  clusterDNS: string[];
  /** --cluster-domain: e.g. `cluster.local`; '' = none. */
  clusterDomain: string;
  /** --resolv-conf: the node's resolver file, the base of Default and ClusterFirst; '' = none. */
  resolvConf: string;
  /** --cgroups-per-qos: give each pod its own cgroup (kubepods/…/pod<uid>) as the containers' CgroupParent. */
  cgroupsPerQOS: boolean;
  /** --cgroup-root: the absolute cgroup path the kubepods tree goes under. */
  cgroupRoot: string;
  /** --pod-max-pids: pids.max of each pod; -1 = unlimited. */
  podPidsLimit: number;
  /** --container-log-max-size, bytes: Docker json-file `max-size` of every container. */
  containerLogMaxSizeBytes: number;
  /** --container-log-max-files: Docker json-file `max-file` of every container. */
  containerLogMaxFiles: number;
}

/** kDefaultNodeSandboxSettings: the kubelet's defaults (cgroup root ours: `/kubelet-ts`). */
export const kDefaultNodeSandboxSettings: Readonly<NodeSandboxSettings> = {
  clusterDNS: [],
  clusterDomain: '',
  resolvConf: '/etc/resolv.conf',
  cgroupsPerQOS: true,
  cgroupRoot: '/kubelet-ts',
  podPidsLimit: -1,
  containerLogMaxSizeBytes: 10 * 1024 * 1024,
  containerLogMaxFiles: 5,
};

/** Observed state of a container as the runtime reports it (the CRI's ContainerStatus state, flattened: CONTAINER_CREATED/RUNNING/EXITED/UNKNOWN). */
export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** RuntimeContainer is one sandbox or app container of the runtime that carries our labels (kubecontainer.Container + its status). */
export interface RuntimeContainer {
  /** The runtime's container or sandbox ID (64 hex for Docker and containerd). */
  id: string;
  /** Container name in the pod spec; `POD` for the sandbox. */
  name: string;
  /** True for the pod sandbox (Docker: the pause container, `io.kubernetes.docker.type=podsandbox`). */
  sandbox: boolean;
  /** The attempt (CRI metadata.attempt; Docker: the `_<attempt>` of the name); equals restartCount for app containers. */
  attempt: number;
  state: RuntimeContainerState;
  /** The `io.kubernetes.container.hash` annotation (Docker: label `annotation.io.kubernetes.container.hash`): hash of the spec it was created from. */
  hash: string;
  /** The `io.kubernetes.container.restartCount` annotation (Docker: label `annotation.…`). */
  restartCount: number;
  /** Image as named in the spec, e.g. `busybox:latest`. */
  image: string;
  /** The image's ID as the runtime reports it (CRI image_ref), e.g. `sha256:…`. */
  imageId: string;
  /** Epoch ms. */
  createdAtMs: number;
  /** Epoch ms; 0 if never started. */
  startedAtMs: number;
  /** Epoch ms; 0 while running or never started. */
  finishedAtMs: number;
  /** Exit code once exited. */
  exitCode: number;
  /** The runtime's reason once exited: `Completed`, `Error`, `OOMKilled`, `StartError`, … */
  reason: string;
  /** The runtime's message, if any (then the termination message). */
  message: string;
  /** The sandbox this container belongs to (`io.kubernetes.sandbox.id`); '' for a sandbox. */
  sandboxId: string;
}

/** RuntimePod is everything of one pod UID found in the runtime (the kubecontainer.PodStatus). */
export interface RuntimePod {
  uid: string;
  name: string;
  namespace: string;
  /** Sandboxes, newest first. */
  sandboxes: RuntimeContainer[];
  /** App containers, newest first (several per name: current and dead attempts). */
  containers: RuntimeContainer[];
  /** Pod IP: '' with network `none`; the host's address for hostNetwork (filled by main). */
  podIp: string;
  /** The grace period recorded on the containers' label, used to stop a pod whose spec is gone. */
  terminationGracePeriodSeconds: number;
}

/** Restart backoff state for one container key (flowcontrol.Backoff's entry). */
export interface BackoffEntry {
  /** The current backoff duration, milliseconds. */
  backoffMs: number;
  /** When the entry was last bumped, epoch ms. */
  lastUpdateMs: number;
}

/** Why a container is not running, for ContainerStatus.state.waiting. */
export interface WaitingReason {
  reason: string;
  message: string;
}

/** Result of one action taken by a sync (the kubelet's SyncResult: action, target, error). */
export interface SyncStepResult {
  action: 'CreatePodSandbox' | 'KillPodSandbox' | 'StartContainer' | 'KillContainer' | 'RemoveContainer' | 'PullImage' | 'Backoff';
  /** Container name, or `POD` for the sandbox. */
  target: string;
  ok: boolean;
  /** Kubernetes reason on failure (`ErrImageNeverPull`, `CrashLoopBackOff`, `CreateContainerError`, …). */
  reason?: string;
  message?: string;
}

/** A core/v1 Event the worker wants recorded (Created, Started, Killing, BackOff, Failed, …). */
export interface PodEventRecord {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** `spec.containers{name}` style field path, if about one container. */
  fieldPath?: string;
}

/**
 * syncPod: make Docker match the desired pod (the kubelet's kubeGenericRuntimeManager.SyncPod
 * driven by computePodActions). The worker reads the pod's containers from Docker itself at the
 * start, so a stale cache on the main thread can never make it create a container twice.
 */
export interface SyncPodTask {
  kind: 'syncPod';
  protocol: number;
  /** The desired pod: defaulted, validated, with metadata.uid set. */
  pod: Pod;
  /** Restart backoff entries of this pod's containers, keyed by `backoffKey()`. */
  backoff: Record<string, BackoffEntry>;
  /** The node's address, for hostNetwork pods' podIP and the status.hostIP. */
  hostIp: string;
  /** The task should finish its Docker calls by this time (epoch ms) and report what is left. */
  deadlineMs: number;
  /**
   * Running containers the probe manager found failing their liveness or startup probe: killed
   * (after their preStop hook) and restarted per restartPolicy, as computePodActions does with
   * the liveness/startup results managers. Optional; absent = none.
   */
  livenessFailed?: ProbeKill[];
  /**
   * Docker IDs of the running sidecars (init containers with `restartPolicy: Always`) whose startup
   * probe has succeeded. A sidecar with a startup probe counts as started — so the next init
   * container or the app containers may start — only when listed here, as kuberuntime's
   * computeInitContainerActions asks the startup results manager. Optional; absent = none.
   */
  startedSidecars?: string[];
  /**
   * The pod as the main thread last knew it from the runtime, when no PLEG event has arrived
   * since: the sync plans from it and, if there is nothing to do, answers without a Docker call.
   * Any action makes the sync read the runtime as usual. Optional.
   */
  cachedRuntimePod?: RuntimePod;
  /**
   * True when the main thread knows the runtime has no container of the pod: a relist that began
   * after the pod's last sync or kill task ended showed none, and no event since added one (the
   * kubelet's pod cache answers GetNewerThan the same way for a pod it has no entry of, from the
   * global timestamp of its last relist). The sync then starts from nothing without a list call.
   * Optional; absent = read the runtime.
   */
  knownAbsent?: boolean;
  /**
   * The ConfigMaps and Secrets the pod references (volumes, projected sources, env, envFrom,
   * imagePullSecrets), as the main thread's object store holds them when the task is made. Optional;
   * absent = the pod references none.
   */
  configObjects?: PodConfigObjects;
}

/**
 * PodConfigObjects: the objects one pod references, by name within the pod's namespace; `null` =
 * referenced but not found (the sync decides: `CreateContainerConfigError`, or nothing when the
 * reference is `optional`). The role of the kubelet's configmap and secret managers' Get.
 * Structured-cloneable; Secret `data` stays base64 as on the wire.
 */
export interface PodConfigObjects {
  configMaps: Record<string, ConfigMap | null>;
  secrets: Record<string, Secret | null>;
  /** The claims of `persistentVolumeClaim` volumes (shared/pvc.ts); absent when the pod names none. */
  claims?: Record<string, PersistentVolumeClaim | null>;
  /** Claims this pod may not mount now, by name, with the FailedMount message (a ReadWriteOncePod claim another pod holds). */
  claimsRefused?: Record<string, string>;
  /**
   * The bound tokens of the pod's projected `serviceAccountToken` sources, by `<volume name>/<source index>`
   * (main/service-accounts: the kubelet's token manager); absent when the pod has none.
   */
  serviceAccountTokens?: Record<string, string>;
  /** Where the pod reaches the node's API (shared/kubernetes-service-env.ts): the `KUBERNETES_SERVICE_*` env; absent = it cannot. */
  kubernetesService?: KubernetesServiceEndpoint;
}

/** One container the probe manager wants killed (failed liveness or startup probe). */
export interface ProbeKill {
  /** Container name in the spec. */
  name: string;
  /** The Docker container ID that failed; a newer attempt is left alone. */
  containerId: string;
  /** Kill message, e.g. `Container web failed liveness probe`. */
  message: string;
  /** The probe-level terminationGracePeriodSeconds, seconds, if the probe sets it (overrides the pod's). */
  gracePeriodSeconds?: number;
}

/**
 * killPod: stop every container of a pod within the grace period, then (if `remove`) remove the
 * containers and the pod's volume directory (syncTerminatingPod followed by syncTerminatedPod).
 */
export interface KillPodTask {
  kind: 'killPod';
  protocol: number;
  podUid: string;
  /**
   * Seconds; SIGTERM, then SIGKILL after this long (0 = SIGKILL at once). Negative: use the grace
   * period recorded on the containers' `annotation.io.kubernetes.pod.terminationGracePeriod` label
   * (for pods whose spec is gone, e.g. removed while the agent was down).
   */
  gracePeriodSeconds: number;
  /** Also remove the containers and the pod directory under --root-dir. */
  remove: boolean;
  /** The pod's spec when known, so that preStop hooks can run before the containers stop. */
  pod?: Pod;
  /** The node's address, for httpGet preStop hooks of hostNetwork pods. */
  hostIp?: string;
}

/**
 * execProbe: run a probe's (or hook's) command in a running container with `docker exec`
 * (kubelet prober.runProbe for Exec); exit code 0 is success.
 */
export interface ExecProbeTask {
  kind: 'execProbe';
  protocol: number;
  containerId: string;
  command: string[];
  /** timeoutSeconds in milliseconds: a command still running then is a failure. */
  timeoutMs: number;
}

/**
 * netProbe: an httpGet or tcpSocket probe (kubelet pkg/probe/http and pkg/probe/tcp). With
 * `sandboxId`, it runs inside that sandbox's network namespace (pods with network `none`, which
 * have no address reachable from the host); otherwise it connects from the node to `host`.
 */
export interface NetProbeTask {
  kind: 'netProbe';
  protocol: number;
  mode: 'http' | 'tcp';
  /** Address to connect to (an IP, or a name for httpGet.host). */
  host: string;
  port: number;
  /** http only: `HTTP` or `HTTPS` (HTTPS certificates are not verified, as the kubelet). */
  scheme?: 'HTTP' | 'HTTPS';
  /** http only: path with query, e.g. `/healthz`. */
  path?: string;
  /** http only: extra request headers (httpHeaders). */
  headers?: Array<{ name: string; value: string }>;
  /** Enter the network namespace of this sandbox container first. */
  sandboxId?: string;
  timeoutMs: number;
}

/**
 * grpcProbe: a gRPC probe (kubelet pkg/probe/grpc): one `grpc.health.v1.Health/Check` of
 * `service` at `host:port`, plaintext. With `sandboxId`, it dials inside that sandbox's network
 * namespace (pods with network `none`); otherwise from the node. Runs on a worker thread.
 */
export interface GrpcProbeTask {
  kind: 'grpcProbe';
  protocol: number;
  /** The pod's IP (the node's for hostNetwork pods; 127.0.0.1 inside the sandbox's netns). */
  host: string;
  port: number;
  /** `grpc.service` as given ('' when unset: the server's overall health). */
  service: string;
  /** Enter the network namespace of this sandbox container first. */
  sandboxId?: string;
  /** timeoutSeconds in milliseconds: bounds the connection and the Check together. */
  timeoutMs: number;
}

/** What a probe returned: `unknown` when it could not be run (an error, not a verdict). */
export interface ProbeOutcome {
  result: 'success' | 'failure' | 'unknown';
  /** Probe output or the reason of a failure, e.g. `HTTP probe failed with statuscode: 500`. */
  output: string;
}

/** relist: list every container this node owns, for the PLEG (one Docker list call). */
export interface RelistTask {
  kind: 'relist';
  protocol: number;
  /**
   * Also return each container's pod namespace and name (RelistContainer.podNamespace/podName).
   * The PLEG asks for them in its first relist only: they let a new pod wait for an old runtime
   * copy of its name found at start, and cost clone time and memory on every later relist.
   */
  withPodNames?: boolean;
  /**
   * Also return the full RuntimePod of every pod listed (RelistResult.runtimePods): the PLEG asks
   * in its first relist only, so that the pod cache holds each restored pod's runtime state before
   * the sources' pods are added and their first status is published (as the kubelet's first relist
   * fills its pod cache with every pod's status). Costs one inspect per container.
   */
  withRuntimePods?: boolean;
}

/**
 * runtimeStatus: is the container runtime up (ContainerRuntime.status: Docker `GET /_ping`)? The
 * main thread's runtime state (src/main/node/runtime-state.ts) sends it every 5 s, as the
 * kubelet's updateRuntimeUp asks the CRI Status. A failure comes back as `{ok:false}`.
 */
export interface RuntimeStatusTask {
  kind: 'runtimeStatus';
  protocol: number;
}

/** What a runtimeStatus task returns when the runtime answered. */
export interface RuntimeStatusResult {
  /** Epoch ms when the runtime answered. */
  observedAtMs: number;
}

/**
 * gc: container and image garbage collection (kuberuntime_gc.go, image_gc_manager.go), run
 * periodically by the main thread's GC manager. See src/workers/kuberuntime/gc.ts.
 */
export interface GcTask {
  kind: 'gc';
  protocol: number;
  /** --maximum-dead-containers-per-container: dead containers kept per (pod, container name). */
  maximumDeadContainersPerContainer: number;
  /** UIDs of the pods the agent knows; dead containers of other pods (of this node) are all removed. Absent = all known. */
  activePodUids?: string[];
  /** Image GC thresholds, percent of the disk holding Docker's root; absent = no image GC. */
  imageGc?: { highThresholdPercent: number; lowThresholdPercent: number };
}

/** What a gc task removed. */
export interface GcResult {
  removedContainers: string[];
  removedSandboxes: string[];
  /** Image IDs. */
  removedImages: string[];
  /** One line per removal that failed. */
  errors: string[];
  /** Usage of the disk holding Docker's root, percent, when image GC looked at it. */
  diskUsagePercent?: number;
}

/**
 * stats: one collection of the node's resource figures (the kubelet's cAdvisor housekeeping, read
 * from the cgroups directly), sent every --housekeeping-interval by the main thread's stats provider
 * (src/main/stats). See src/workers/stats/collect-stats.ts; the answer is a StatsSample (shared/stats.ts).
 */
export interface StatsTask {
  kind: 'stats';
  protocol: number;
  /** Also measure emptyDir volumes (a walk of each); default true. */
  withVolumes?: boolean;
  /**
   * Which pods to measure: 'all' (the default) lists the node's containers and reads every pod;
   * a list of pod UIDs reads only those (an empty list: the node's figures alone, without a Docker
   * call). The stats provider asks for all only while someone reads per-pod figures.
   */
  pods?: 'all' | string[];
}

/**
 * loadStaticPods: decode one manifest file's text into static pods (shared/static-pod.ts
 * loadStaticPods: parse, static pod identity, defaults, validation), so that the file source's
 * YAML parsing runs off the main thread. Pure: it needs no runtime and no bootstrap; the manifest
 * thread answers it (src/workers/manifest.worker.ts), for the file and the URL source alike, and
 * it is not a WorkerTask of the sync pool. An invalid manifest comes back as
 * `{ok:false}` with the InvalidManifestError's message (the file and every bad field).
 */
export interface LoadStaticPodsTask {
  kind: 'loadStaticPods';
  protocol: number;
  /** The manifest's text; the caller enforces the size cap and skips an empty text. */
  text: string;
  /** `json` for `.json` files (JSON.parse), else `yaml`. */
  format: 'yaml' | 'json';
  /** The manifest's path (or URL): named in errors and part of each pod's UID. */
  origin: string;
  /** This node's name (static pods are named `<name>-<nodeName>`). */
  nodeName: string;
  source: 'file' | 'http';
  /** When the source read this version (`kubernetes.io/config.seen`), epoch ms. */
  seenAtMs: number;
}

/**
 * decodePodsBody: decode one POST/PUT /pods request body (shared/pods-body.ts decodePodsBody:
 * parse, defaults, validation) on the agent's body decoder thread (src/workers/manifest.worker.ts,
 * started by src/main/body-decoder.ts), so that a hostile body can exhaust only that thread.
 * Not a WorkerTask of the sync pool. The answer is always `{ok:true}` with a DecodedPodsBody: a
 * bad body is an answer (`value.ok` false), not an error.
 */
export interface DecodePodsBodyTask extends DecodePodsBodyRequest {
  kind: 'decodePodsBody';
  protocol: number;
}

/**
 * decodeProtobufBody: decode one `application/vnd.kubernetes.protobuf` request body of the
 * Kubernetes API (src/shared/kube-protobuf.ts decodeObjectBody) on the body decoder thread,
 * as decodePodsBody, so that a body costly to decode holds that thread and never the main one.
 * The main thread read the envelope's kind first (a wrong kind is refused before any decoding).
 */
export interface DecodeProtobufBodyTask {
  kind: 'decodeProtobufBody';
  protocol: number;
  /** The whole body, `k8s\0` envelope included (at most the server's body limit, 1 MiB by default). */
  body: Uint8Array;
  /** The kind the envelope holds (checked on the main thread against what the route takes). */
  objectKind: string;
}

/**
 * DecodedProtobufBody: the object as its JSON form (`{apiVersion, kind, metadata, …}`), or why
 * not, with the refusals of DecodedPodsBody: `unparsable` (400), `tooLarge` (413), `busy` (429).
 */
export type DecodedProtobufBody =
  { ok: true; object: Record<string, unknown> } | Extract<DecodedPodsBody, { kind: 'unparsable' | 'tooLarge' | 'busy' }>;

/** What a loadStaticPods task returns. */
export interface LoadStaticPodsResult {
  /** The static pods, defaulted and valid, in document order. */
  pods: Pod[];
  /**
   * staticPodContentHash of each pod, in the same order: the file source compares versions of a
   * pod by these without hashing on the main thread.
   */
  contentHashes: string[];
  /** The ConfigMaps and Secrets beside the pods (checked and normalised; not static pods: names as given). */
  objects?: ConfigObject[];
}

/**
 * WorkerTask: every task of the sync pool (sync.worker.ts), discriminated by `kind`. LoadStaticPodsTask
 * is not one of them: it goes to a source's own manifest thread (manifest.worker.ts).
 */
export type WorkerTask =
  SyncPodTask | KillPodTask | RelistTask | ExecProbeTask | NetProbeTask | GrpcProbeTask | GcTask | RuntimeStatusTask | StatsTask;

/** What a syncPod or killPod returns. */
export interface PodSyncResult {
  podUid: string;
  steps: SyncStepResult[];
  events: PodEventRecord[];
  /** The pod as found in Docker after the sync (null if nothing of it is left). */
  runtimePod: RuntimePod | null;
  /** Waiting reasons of containers that are not running, by container name. */
  waiting: Record<string, WaitingReason>;
  /** Updated backoff entries (whole map for the pod; keys not present are dropped). */
  backoff: Record<string, BackoffEntry>;
  /** Ask the pod worker to sync again after this many milliseconds (backoff expiry); 0 = no. */
  requeueAfterMs: number;
}

/** A container as seen by a relist: just enough to notice changes. */
export interface RelistContainer {
  id: string;
  podUid: string;
  name: string;
  state: RuntimeContainerState;
  /** `io.kubernetes.pod.namespace` / `io.kubernetes.pod.name` labels, with RelistTask.withPodNames only. */
  podNamespace?: string;
  podName?: string;
}

/** RelistResult: what one relist listed (RelistContainer each). */
export interface RelistResult {
  containers: RelistContainer[];
  /** Epoch ms when the list was taken. */
  observedAtMs: number;
  /** With RelistTask.withRuntimePods: each listed pod as a sync reads it (a pod whose read failed is left out). */
  runtimePods?: RuntimePod[];
}

/**
 * SerializedError: an error as data (STYLE.md C5), made by `serializeError` in a worker and turned
 * back into an AgentError by `deserializeError` on the main thread.
 */
export interface SerializedError {
  /** The error's `name`, e.g. `InvalidManifestError` (kept across the boundary). */
  name: string;
  /** An AgentErrorCode such as `ERR_NOT_FOUND`, or a Node code (`ECONNREFUSED`) of a foreign error. */
  code: string;
  message: string;
  retriable: boolean;
  /** Container waiting reason (`ErrImagePull`, `CreateContainerConfigError`, …). */
  reason?: string;
  /** HTTP Status reason (`Forbidden`, `Conflict`, …) when it is not the code's own. */
  statusReason?: string;
  /** The file, URL or request of an InvalidManifestError. */
  source?: string;
  /** Every invalid field of an InvalidManifestError (`{field, type, value?, detail?}`). */
  errors?: FieldError[];
}

/** WorkerResultMap: the answer's payload by task kind (loadStaticPods: the manifest thread's). */
export interface WorkerResultMap {
  syncPod: PodSyncResult;
  killPod: PodSyncResult;
  relist: RelistResult;
  execProbe: ProbeOutcome;
  netProbe: ProbeOutcome;
  grpcProbe: ProbeOutcome;
  gc: GcResult;
  runtimeStatus: RuntimeStatusResult;
  stats: StatsSample;
  loadStaticPods: LoadStaticPodsResult;
  decodePodsBody: DecodedPodsBody;
  decodeProtobufBody: DecodedProtobufBody;
}

/** Every task resolves to one of these; the worker entry never throws. */
export type WorkerResult<K extends keyof WorkerResultMap = keyof WorkerResultMap> =
  { ok: true; kind: K; value: WorkerResultMap[K] } | { ok: false; kind: K; error: SerializedError };
