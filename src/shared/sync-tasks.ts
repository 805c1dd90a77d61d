/**
 * The sync pool's tasks and their results (src/workers/sync.worker.ts): syncPod, killPod, relist,
 * gc, stats and runtimeStatus — the CRI calls one kubelet sync makes (k8s.io/cri-api), flattened to
 * what one task needs. Plain structured-cloneable data only (see thread-wire.ts); times are epoch ms.
 */
import type { ConfigMap, Pod, Secret } from './api.js';
import type { KubernetesServiceEndpoint } from './kubernetes-service-env.js';
import type { ExecProbeTask, GrpcProbeTask, NetProbeTask, ProbeKill } from './probe-tasks.js';
import type { PersistentVolumeClaim } from './pvc.js';
import type { RuntimeContainerState, RuntimePod } from './runtime-pod.js';

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
  /**
   * The pod as the main thread knows the runtime holds it, when it knows for certain: the pod
   * cache's entry with no PLEG event since its read and no task of the pod failed or in flight since
   * (the entry is what the last task returned), or, for the removal that follows a stop, the stop's
   * own result. The kill works from it without reading the runtime first, as the kubelet's
   * SyncTerminatingPod kills the running pod its pod cache holds (pkg/kubelet/kubelet.go,
   * kubecontainer.ConvertPodStatusToRunningPod). Optional; absent = read the runtime.
   */
  cachedRuntimePod?: RuntimePod;
  /**
   * True when the main thread knows the runtime holds nothing of the pod (SyncPodTask.knownAbsent's
   * rule, or the stop before this removal found nothing): no read. Optional; absent = read the runtime.
   */
  knownAbsent?: boolean;
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
 * (src/main/stats). See src/workers/runtime/docker/collect-stats.ts; the answer is a StatsSample (shared/stats.ts).
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
  /**
   * syncPod only: true when a sync planned from `runtimePod` with this result's `backoff` (and the
   * task's other inputs) would make no runtime call, record no event, hold nothing back and return
   * these `waiting` and `backoff` again: what a sync asked by a PLEG event that `runtimePod` already
   * shows would do, so the main thread may leave that sync out (pod-cache.ts `settled`). Absent =
   * false (not known).
   */
  settled?: boolean;
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
