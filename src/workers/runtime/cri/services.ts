// Counterpart of kubernetes/cri-api pkg/apis/services.go (RuntimeVersioner, ContainerManager, PodSandboxManager, ContainerStatsManager, RuntimeService, ImageManagerService).
/**
 * The CRI v1 seam as the kubelet's kuberuntime uses it: the same interfaces as services.go, the
 * methods in lowerCamelCase, the messages of ./types.ts and ./types-status.ts. Go's `ctx` becomes
 * an optional {@link CriCallOptions} (an AbortSignal); the deadline is the implementation's
 * (`--runtime-request-timeout`). ./remote-runtime.ts and ./remote-image.ts implement them over
 * gRPC; the Docker implementation comes behind the same interfaces (docs/cri.md).
 *
 * Every method rejects with an AgentError naming the method (./errors.ts): `ERR_NOT_FOUND` for a
 * sandbox, container or image the runtime does not know, `ERR_RUNTIME_UNAVAILABLE` when the
 * runtime does not answer, `ERR_RUNTIME` otherwise (deadline: `context deadline exceeded`).
 * Left out for now: GetContainerEvents (containerd 1.6 has none), CheckpointContainer,
 * ListMetricDescriptors, ListPodSandboxMetrics, RuntimeConfig.
 */
import type {
  AttachRequest,
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerStatus,
  CriInput,
  ExecRequest,
  ExecSyncResponse,
  ImageSpec,
  LinuxContainerResources,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStatus,
  PortForwardRequest,
  StringMap,
} from './types.js';
import type {
  AuthConfig,
  ContainerStats,
  ContainerStatsFilter,
  Image,
  ImageFsInfoResponse,
  ImageStatusResponse,
  PodSandboxStats,
  PodSandboxStatsFilter,
  StatusResponse,
  VersionResponse,
} from './types-status.js';

/** CriCallOptions: what Go passes in `ctx` — a signal that cancels the call (it then rejects, code Canceled). */
export interface CriCallOptions {
  signal?: AbortSignal;
}

/** PodSandboxStatusResponse: a sandbox's status, and with `verbose` the runtime's `info` (JSON strings). */
export interface PodSandboxStatusResponse {
  status: PodSandboxStatus | null;
  info: StringMap;
  containers_statuses: ContainerStatus[];
  timestamp: number;
}
/** ContainerStatusResponse: a container's status, and with `verbose` the runtime's `info`. */
export interface ContainerStatusResponse {
  status: ContainerStatus | null;
  info: StringMap;
}

/** RuntimeVersioner: the runtime's name and versions. */
export interface RuntimeVersioner {
  /** version: `apiVersion` is the kubelet's own CRI client version (the kubelet sends `0.1.0`). */
  version(apiVersion: string, opts?: CriCallOptions): Promise<VersionResponse>;
}

/** ContainerManager: containers' lifecycle, status, exec/attach and log reopening. */
export interface ContainerManager {
  /** createContainer: a container in sandbox `podSandboxId`; resolves its ID. `sandboxConfig` is the config the sandbox was run with. */
  createContainer(
    podSandboxId: string,
    config: CriInput<ContainerConfig>,
    sandboxConfig: CriInput<PodSandboxConfig>,
    opts?: CriCallOptions,
  ): Promise<string>;
  /** startContainer: start a created container. */
  startContainer(containerId: string, opts?: CriCallOptions): Promise<void>;
  /** stopContainer: SIGTERM (or the image's stop signal), SIGKILL after `timeoutSeconds`; the deadline is the request timeout plus that. Stopping a stopped container succeeds. */
  stopContainer(containerId: string, timeoutSeconds: number, opts?: CriCallOptions): Promise<void>;
  /** removeContainer: remove a container (a running one is killed first); removing one already gone succeeds. */
  removeContainer(containerId: string, opts?: CriCallOptions): Promise<void>;
  /** listContainers: the containers matching `filter` (all given parts must match). */
  listContainers(filter?: CriInput<ContainerFilter>, opts?: CriCallOptions): Promise<Container[]>;
  /** containerStatus: one container's status; `ERR_NOT_FOUND` if the runtime does not know it. */
  containerStatus(containerId: string, verbose?: boolean, opts?: CriCallOptions): Promise<ContainerStatusResponse>;
  /** updateContainerResources: change a running container's cgroup settings. */
  updateContainerResources(containerId: string, resources: CriInput<LinuxContainerResources>, opts?: CriCallOptions): Promise<void>;
  /**
   * execSync: run `cmd` in the container to its end, killed after `timeoutSeconds` (0 = no limit,
   * then the call has no deadline either; else the deadline is the request timeout plus it).
   * Unlike services.go a non-zero exit is not an error: `exit_code` says it. A command that
   * outlives `timeoutSeconds` rejects with `ExecSync: command "…" timed out after Ns`
   * (errors.ts isCommandTimeout; the kubelet's exec.TimeoutError).
   */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number, opts?: CriCallOptions): Promise<ExecSyncResponse>;
  /** exec: prepare a streaming exec; resolves the URL of the runtime's streaming server to connect to. */
  exec(request: CriInput<ExecRequest>, opts?: CriCallOptions): Promise<{ url: string }>;
  /** attach: prepare a streaming attach; resolves the URL to connect to. */
  attach(request: CriInput<AttachRequest>, opts?: CriCallOptions): Promise<{ url: string }>;
  /** reopenContainerLog: make the runtime reopen the container's log file (after the agent rotated it). */
  reopenContainerLog(containerId: string, opts?: CriCallOptions): Promise<void>;
}

/** PodSandboxManager: sandboxes' lifecycle and port-forward. */
export interface PodSandboxManager {
  /** runPodSandbox: create and start a sandbox (its network set up through CNI); resolves its ID. `runtimeHandler` '' = the default. */
  runPodSandbox(config: CriInput<PodSandboxConfig>, runtimeHandler?: string, opts?: CriCallOptions): Promise<string>;
  /** stopPodSandbox: stop every container of the sandbox and tear down its network; idempotent. */
  stopPodSandbox(podSandboxId: string, opts?: CriCallOptions): Promise<void>;
  /** removePodSandbox: remove the sandbox and its containers; removing one already gone succeeds. */
  removePodSandbox(podSandboxId: string, opts?: CriCallOptions): Promise<void>;
  /** podSandboxStatus: one sandbox's status (its IP under `status.network.ip`). */
  podSandboxStatus(podSandboxId: string, verbose?: boolean, opts?: CriCallOptions): Promise<PodSandboxStatusResponse>;
  /** listPodSandbox: the sandboxes matching `filter`. */
  listPodSandbox(filter?: CriInput<PodSandboxFilter>, opts?: CriCallOptions): Promise<PodSandbox[]>;
  /** portForward: prepare a port-forward into the sandbox; resolves the URL to connect to. */
  portForward(request: CriInput<PortForwardRequest>, opts?: CriCallOptions): Promise<{ url: string }>;
}

/** ContainerStatsManager: CPU, memory and filesystem use of containers and sandboxes. */
export interface ContainerStatsManager {
  /** containerStats: one container's stats. */
  containerStats(containerId: string, opts?: CriCallOptions): Promise<ContainerStats | null>;
  /** listContainerStats: the stats of the containers matching `filter`. */
  listContainerStats(filter?: CriInput<ContainerStatsFilter>, opts?: CriCallOptions): Promise<ContainerStats[]>;
  /** podSandboxStats: one sandbox's stats (containerd 1.6 answers it on Linux). */
  podSandboxStats(podSandboxId: string, opts?: CriCallOptions): Promise<PodSandboxStats | null>;
  /** listPodSandboxStats: the stats of the sandboxes matching `filter`. */
  listPodSandboxStats(filter?: CriInput<PodSandboxStatsFilter>, opts?: CriCallOptions): Promise<PodSandboxStats[]>;
}

/** RuntimeService: the CRI runtime service (services.go RuntimeService), plus `close`. */
export interface RuntimeService extends RuntimeVersioner, ContainerManager, PodSandboxManager, ContainerStatsManager {
  /** updateRuntimeConfig: tell the runtime the node's pod CIDR (`network_config.pod_cidr`). */
  updateRuntimeConfig(podCidr: string, opts?: CriCallOptions): Promise<void>;
  /** status: the runtime's conditions (RuntimeReady, NetworkReady). */
  status(verbose?: boolean, opts?: CriCallOptions): Promise<StatusResponse>;
  /** close: drop the connection; later calls reject. Idempotent. */
  close(): void;
}

/** ImageManagerService: the CRI image service (services.go ImageManagerService), plus `close`. */
export interface ImageManagerService {
  /** listImages: the images the runtime holds (all when `filter` is absent). */
  listImages(filter?: CriInput<{ image: ImageSpec | null }>, opts?: CriCallOptions): Promise<Image[]>;
  /** imageStatus: the image, or `image: null` when the runtime does not hold it (not an error). */
  imageStatus(image: CriInput<ImageSpec>, verbose?: boolean, opts?: CriCallOptions): Promise<ImageStatusResponse>;
  /** pullImage: pull with `auth` (if any); resolves the image's ref (its ID). No deadline: a pull takes as long as it takes. */
  pullImage(
    image: CriInput<ImageSpec>,
    auth?: CriInput<AuthConfig> | null,
    sandboxConfig?: CriInput<PodSandboxConfig> | null,
    opts?: CriCallOptions,
  ): Promise<string>;
  /** removeImage: remove an image; removing one already gone succeeds. */
  removeImage(image: CriInput<ImageSpec>, opts?: CriCallOptions): Promise<void>;
  /** imageFsInfo: the filesystems images and writable layers use. */
  imageFsInfo(opts?: CriCallOptions): Promise<ImageFsInfoResponse>;
  /** close: drop the connection; later calls reject. Idempotent. */
  close(): void;
}
