/**
 * The envelope every pool thread shares (piscina tasks and their results): the protocol version,
 * the bootstrap a thread gets as its workerData, the answer's shape by task kind and an error as
 * data. Counterpart of the CRI request/response framing the kubelet has with its runtime
 * (k8s.io/cri-api), flattened. The tasks themselves: sync-tasks.ts, probe-tasks.ts, manifest-tasks.ts.
 *
 * Everything here crosses a worker_threads boundary by structured clone: plain JSON-safe data
 * only (no classes, Maps or Dates); times are epoch milliseconds; errors travel as
 * `SerializedError` because Node 20 drops an Error subclass's name and code on the way back.
 */
import type { FieldError } from './errors.js';
import type { DecodedProtobufBody, LoadStaticPodsResult } from './manifest-tasks.js';
import type { NodeNetworkSettings, NodeSandboxSettings } from './node-settings.js';
import type { DecodedPodsBody } from './pods-body.js';
import type { ProbeOutcome } from './probe-tasks.js';
import type { RuntimeEndpoint, RuntimeName } from './runtime-endpoint.js';
import type { StatsSample } from './stats.js';
import type { GcResult, PodSyncResult, RelistResult, RuntimeStatusResult } from './sync-tasks.js';

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
