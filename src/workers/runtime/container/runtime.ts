/**
 * runtime/container/ holds the runtime seam's own shapes, as pkg/kubelet/container (kubecontainer)
 * does the kubelet's: a leaf over ./cri/services.ts, imported by the implementations (../docker/,
 * ../fake/), by the choosers of the runtime/ root above them and by every consumer. Here:
 * {@link NodeRuntime}, the per-thread bundle, and today's Docker-shaped ContainerRuntime with the
 * log, stream and event shapes the CRI does not carry (override.ts wraps a ContainerRuntime).
 *
 * Counterpart of the CRI RuntimeService/ImageService (k8s.io/cri-api) as the kubelet's
 * kuberuntime manager uses it: the worker-side port to a container engine, and the ONE way any
 * worker reaches it (syncs, relist, probes, GC, the events worker and the logs worker), as
 * virtual-kubelet's single provider interface. `../docker/docker-runtime.ts` implements it over dockerode,
 * `../fake/fake-runtime.ts` in memory, and `../node-scope.ts` wraps either so that only this node's
 * containers can be listed or touched; `../runtime-service.ts` picks one from a worker's bootstrap.
 *
 * Errors: implementations throw AgentError — `ERR_RUNTIME_UNAVAILABLE` (retriable) when the engine
 * cannot be reached, `ERR_NOT_FOUND` for a missing container or image, `ERR_ALREADY_EXISTS` for a
 * name conflict, `ERR_RUNTIME` for anything else.
 */
import type { RuntimeContainerEvent } from '../../../shared/container-events.js';
import type { ImageManagerService, RuntimeService } from '../cri/services.js';

/** A container as a list call reports it (no inspect). */
export interface ContainerSummary {
  id: string;
  /** Name without Docker's leading `/`. */
  name: string;
  labels: Record<string, string>;
  /** Docker's state word: `created`, `running`, `paused`, `restarting`, `removing`, `exited`, `dead`. */
  state: string;
  /** Epoch ms. */
  createdAtMs: number;
  /** Image ID the container runs, `sha256:…` (Docker's `ImageID`); image GC keeps every image in use. */
  imageId: string;
  /** The image as given at create time (Docker's `Image` of the list); absent when the engine did not say. */
  image?: string;
}

/** One mount of a container as inspect reports it (Docker's `Mounts`, the binds part). */
export interface ContainerMountInfo {
  /** Host path. */
  source: string;
  /** Path in the container. */
  destination: string;
  /** False for a read-only mount. */
  rw: boolean;
  /** Docker's propagation word: `rprivate` (or ''), `rslave`, `rshared`, … */
  propagation: string;
}

/** A container as inspect reports it (the part we read). */
export interface ContainerDetails {
  id: string;
  /** Name without Docker's leading `/`. */
  name: string;
  labels: Record<string, string>;
  /** Image as given at create time (`Config.Image`). */
  image: string;
  /** Image ID, `sha256:…`. */
  imageId: string;
  /** Docker's state word (see ContainerSummary.state). */
  status: string;
  running: boolean;
  exitCode: number;
  oomKilled: boolean;
  /** Docker's error string ('' if none). */
  error: string;
  /** Epoch ms. */
  createdAtMs: number;
  /** Epoch ms; 0 if never started (Docker's `0001-01-01T00:00:00Z`). */
  startedAtMs: number;
  /** Epoch ms; 0 if not finished. */
  finishedAtMs: number;
  /** HostConfig.NetworkMode, e.g. `none`, `host`, `container:<id>`. */
  networkMode: string;
  /** HostConfig.PidMode: '' (its own), `host`, `container:<id>`; absent when not read. */
  pidMode?: string;
  /** HostConfig.IpcMode: `shareable`, `private`, `host`, `container:<id>`; absent when not read. */
  ipcMode?: string;
  /** The container's bind mounts (Docker's `Mounts`); absent when not read. */
  mounts?: ContainerMountInfo[];
  /** HostConfig.CgroupParent ('' = the engine's default); absent when not read. */
  cgroupParent?: string;
  /** Its cgroup limits as the engine holds them; absent when not read. */
  resources?: ContainerResources;
  /** Host PID of the container's init process while it runs (0 otherwise); used to enter its network namespace. */
  pid?: number;
  /** The json-file log's host path (Docker's `LogPath`); '' when the log driver has none (or the fake). */
  logPath?: string;
}

/** A container's cgroup limits (Docker's HostConfig resources; CRI LinuxContainerResources, the part Docker can change on a running container). */
export interface ContainerResources {
  /** Memory limit, bytes (0 = none). */
  memory: number;
  /** Memory plus swap limit, bytes (0 = Docker's default, -1 = unlimited swap). */
  memorySwap?: number;
  /** CFS quota, microseconds per period (0 = none). */
  cpuQuota: number;
  /** CFS period, microseconds (0 = the kernel's). */
  cpuPeriod: number;
  /** Relative CPU weight (cgroup cpu.shares; 0 = Docker's default). */
  cpuShares: number;
}

/** What an exec in a container returned (execInContainer). */
export interface ExecResult {
  /** The command's exit code; -1 when it did not finish within the timeout. */
  exitCode: number;
  /** Combined stdout and stderr, at most 10 KiB (the kubelet's probe output limit). */
  output: string;
  /** stdout alone, at most 10 KiB; absent when the engine could not tell the streams apart (the fake). */
  stdout?: string;
  /** stderr alone, at most 10 KiB; absent as stdout. */
  stderr?: string;
  /** True when the timeout expired first (the command may still be running in the container). */
  timedOut: boolean;
}

/** A local image as imageExists answers it (Docker's image inspect, the part we read). */
export interface LocalImage {
  /** Image ID, `sha256:…`. */
  id: string;
  /** `Config.User`; '' or absent = unset. */
  user?: string;
  /** `repo:tag` references (RepoTags). */
  repoTags?: string[];
  /** `repo@sha256:…` references (RepoDigests). */
  repoDigests?: string[];
  /** Bytes. */
  sizeBytes?: number;
}

/** Registry credentials for one pull (Docker's AuthConfig). */
export interface RegistryAuth {
  username: string;
  password: string;
  /** Registry host, e.g. `127.0.0.1:5056`. */
  serveraddress: string;
}

/** Mount and namespace settings of a new container (Docker HostConfig, the part we set). */
export interface ContainerHostConfig {
  networkMode?: string;
  ipcMode?: string;
  pidMode?: string;
  /** `host:container[:ro]` bind mounts. */
  binds?: string[];
  /** Memory limit, bytes (0 = none). */
  memory?: number;
  /** CFS quota, microseconds per period (0 = none). */
  cpuQuota?: number;
  /** CFS period, microseconds. */
  cpuPeriod?: number;
  /** Relative CPU weight (cgroup cpu.shares). */
  cpuShares?: number;
  /** oom_score_adj of the container's processes, -1000..1000 (Docker OomScoreAdj). */
  oomScoreAdj?: number;
  /** The cgroup the container's cgroup goes under (Docker CgroupParent, cgroupfs path); undefined = Docker's. */
  cgroupParent?: string;
  /** pids.max of the container (Docker PidsLimit); undefined or ≤ 0 = unlimited. */
  pidsLimit?: number;
  /** json-file log rotation (Docker LogConfig `max-size` bytes and `max-file`); undefined = Docker's default. */
  logRotation?: { maxSizeBytes: number; maxFiles: number };
  /** Docker `Privileged`: every capability and device, no seccomp/AppArmor confinement. */
  privileged?: boolean;
  /** Docker `ReadonlyRootfs`: the root filesystem mounted read-only (readOnlyRootFilesystem). */
  readonlyRootfs?: boolean;
  /** Capabilities added / dropped, Docker's names (`NET_ADMIN`, `ALL`). */
  capAdd?: string[];
  capDrop?: string[];
  /** Docker `SecurityOpt`: `no-new-privileges`, `seccomp=unconfined` or `seccomp=<profile JSON>`, `apparmor=<profile>`, `label=…`. */
  securityOpt?: string[];
  /** Docker `Sysctls` (namespaced sysctls of the container's own namespaces; the sandbox's). */
  sysctls?: Record<string, string>;
  /** Docker `GroupAdd`: supplemental group IDs, as decimal strings. */
  groupAdd?: string[];
  /** Docker `MaskedPaths`: paths masked in the container (CRI masked_paths); undefined = Docker's defaults. */
  maskedPaths?: string[];
  /** Docker `ReadonlyPaths`: paths read-only in the container (CRI readonly_paths); undefined = Docker's defaults. */
  readonlyPaths?: string[];
}

/** Everything needed to create one container. */
export interface ContainerCreateSpec {
  name: string;
  image: string;
  labels: Record<string, string>;
  /** Overrides the image's ENTRYPOINT (Kubernetes `command`); undefined keeps the image's. */
  entrypoint?: string[];
  /** Overrides the image's CMD (Kubernetes `args`); undefined keeps the image's. */
  cmd?: string[];
  /** `NAME=value` pairs. */
  env?: string[];
  workingDir?: string;
  /** Docker `User`: `uid` or `uid:gid` (runAsUser/runAsGroup); undefined keeps the image's. */
  user?: string;
  hostname?: string;
  tty?: boolean;
  openStdin?: boolean;
  stdinOnce?: boolean;
  hostConfig: ContainerHostConfig;
}

/** Label filter of a list call: `key` (present) or `key=value`, all must match. */
export interface ContainerListFilter {
  labels: string[];
}

/** One local image (CRI Image, the part image GC reads). */
export interface ImageSummary {
  /** Image ID, `sha256:…`. */
  id: string;
  /** `repo:tag` references, e.g. `busybox:latest` (empty for a dangling image). */
  repoTags: string[];
  /** Bytes. */
  sizeBytes: number;
  /** Epoch ms. */
  createdAtMs: number;
}

/** The filesystem that holds the runtime's images (CRI ImageFsInfo), bytes. */
export interface ImageFsInfo {
  /** Where it is mounted (Docker's root dir, e.g. `/var/lib/docker`). */
  mountpoint: string;
  capacityBytes: number;
  availableBytes: number;
}

/** The runtime's name and version (CRI VersionResponse: runtime_name, runtime_version, runtime_api_version). */
export interface RuntimeVersion {
  /** `docker`, or `fake`. */
  runtimeName: string;
  /** e.g. `20.10.24`. */
  version: string;
  /** e.g. `1.41`. */
  apiVersion: string;
}

/**
 * One container lifecycle event (CRI ContainerEventResponse, flattened): the same shape the events
 * worker posts to the event PLEG (shared/container-events.ts). Actions: `create`, `start`, `die`,
 * `oom`, `destroy`; others (exec_*, attach, kill, stop…) are not state changes and never delivered.
 */
export type ContainerEvent = RuntimeContainerEvent;

/** Callbacks of watchContainerEvents. Each runs on the worker thread that opened the watch. */
export interface ContainerEventHandlers {
  /** The stream is open: every event from now on is delivered. Called once per watch. */
  onOpen(): void;
  /** A batch of events in stream order (never empty). */
  onEvents(events: ContainerEvent[]): void;
  /** The stream ended or failed (once; never after close()); `message` says why. */
  onClose(message: string): void;
}

/** An open events stream. */
export interface ContainerEventWatch {
  /** Closes the stream; no callback runs afterwards. Idempotent. */
  close(): void;
}

/** What part of a container's log to read (CRI LogOptions; PodLogOptions once `previous` chose the container). */
export interface ContainerLogOptions {
  /** Keep reading while the container runs (`kubectl logs -f`). */
  follow: boolean;
  /** Prefix each line with its RFC 3339 time. */
  timestamps: boolean;
  /** Only the last N lines; undefined = all. */
  tailLines?: number;
  /** Only lines newer than this many seconds. */
  sinceSeconds?: number;
}

/** Callbacks of readContainerLogs. */
export interface ContainerLogHandlers {
  /** Log bytes, stdout and stderr merged in order as the kubelet serves them (multiplexed frames already split). */
  onData(chunk: Buffer): void;
  /** The log ended (a non-follow read is done, or the followed container stopped), or failed with `err`. Once; never after cancel(). */
  onEnd(err?: Error): void;
}

/** A log read in progress. */
export interface ContainerLogReader {
  /** Stops reading the engine's stream until resume() (the HTTP client's backpressure). */
  pause(): void;
  resume(): void;
  /** Ends the read; no callback runs afterwards. Idempotent. */
  cancel(): void;
}

/** What to open with openContainerStream (CRI ExecRequest / AttachRequest). */
export interface ContainerStreamOptions {
  /** `exec` runs `command` in the container; `attach` joins its main process's stdio. */
  kind: 'exec' | 'attach';
  /** The command of an exec (argv, never through a shell); ignored by attach. */
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  /** A TTY: raw bytes, no stdout/stderr split; resizable. */
  tty: boolean;
}

/** Callbacks of openContainerStream; they run on the thread that opened the stream. */
export interface ContainerStreamHandlers {
  /** Output bytes of fd 1 (stdout) or 2 (stderr); a TTY's output is all fd 1. */
  onOutput(fd: 1 | 2, chunk: Buffer): void;
  /**
   * The stream ended (once; never after close()): `exitCode` is the exec's exit code, null for
   * attach or when the engine could not say; `err` when the stream failed.
   */
  onExit(exitCode: number | null, err?: Error): void;
}

/** An open exec or attach stream (the engine's hijacked connection). */
export interface ContainerStream {
  /** writeStdin sends bytes to the process's stdin; `done` runs once the engine's socket took them. */
  writeStdin(chunk: Buffer, done: () => void): void;
  /** endStdin closes the process's stdin (half-close); output keeps flowing. Idempotent. */
  endStdin(): void;
  /** resize sets the TTY's size in cells (Docker exec resize, or container resize for attach). */
  resize(width: number, height: number): Promise<void>;
  /** pause/resume reading the engine's output (backpressure of the reader). */
  pause(): void;
  resume(): void;
  /** close tears the stream down (the process of an exec may outlive it, as with the kubelet); no callback runs afterwards. Idempotent. */
  close(): void;
}

/** ContainerRuntime is the port every sync goes through (one instance per worker thread). */
export interface ContainerRuntime {
  /** All containers (running or not) carrying every label of `filter`. */
  listContainers(filter: ContainerListFilter): Promise<ContainerSummary[]>;
  /** @throws ERR_NOT_FOUND if the container does not exist. */
  inspectContainer(id: string): Promise<ContainerDetails>;
  /** Creates (does not start) a container; resolves to its ID. @throws ERR_ALREADY_EXISTS on a name conflict. */
  createContainer(spec: ContainerCreateSpec): Promise<string>;
  /** Starts a created or exited container; a running one is left as is. */
  startContainer(id: string): Promise<void>;
  /** SIGTERM (or the image's stop signal), then SIGKILL after `timeoutSeconds`; a stopped one is left as is. */
  stopContainer(id: string, timeoutSeconds: number): Promise<void>;
  /** Removes a container (force: a running one is killed first) with its anonymous volumes. */
  removeContainer(id: string): Promise<void>;
  /**
   * The local image's ID and its configured user (`Config.User`: `''` when unset, else `name`,
   * `uid`, `uid:gid`, …), or null when `ref` is not present locally; the engine's tags
   * (`repo:tag`), repo digests (`repo@sha256:…`) and size in bytes when it tells them (the fake does not).
   */
  imageExists(ref: string): Promise<LocalImage | null>;
  /**
   * Pulls `ref` from its registry, with `auth` when given (Docker's X-Registry-Auth).
   * @throws AgentError with reason `ErrImagePull` on failure.
   */
  pullImage(ref: string, auth?: RegistryAuth): Promise<void>;
  /**
   * updateContainerResources (optional; CRI UpdateContainerResources): sets the running or
   * created container's cgroup limits (Docker's container update). Absent: the engine cannot.
   * @throws ERR_NOT_FOUND if the container does not exist; ERR_RUNTIME for an engine refusal.
   */
  updateContainerResources?(id: string, resources: ContainerResources): Promise<void>;
  /**
   * Runs `cmd` in the running container `id` (docker exec, no TTY) and resolves with its exit code
   * and output; stops waiting after `timeoutMs` milliseconds (`timedOut`). Used by exec probes and
   * lifecycle hooks. @throws ERR_NOT_FOUND if the container is gone, ERR_RUNTIME if it is not running.
   */
  execInContainer(id: string, cmd: string[], timeoutMs: number): Promise<ExecResult>;
  /**
   * tailLogs (optional; the fake has none): the last `lines` lines of a container's stdout and
   * stderr, at most `bytes` bytes from the end, for terminationMessagePolicy FallbackToLogsOnError.
   */
  tailLogs?(id: string, lines: number, bytes: number): Promise<string>;
  /**
   * readContainerLogs starts reading container `id`'s log (CRI ReadLogs / dockershim
   * GetContainerLogs) and resolves once the engine answered, with the reader; data then flows to
   * `handlers` (the caller applies limitBytes and cancels). The fake answers an empty log.
   * @throws ERR_NOT_FOUND if the container does not exist; ERR_RUNTIME_UNAVAILABLE.
   */
  readContainerLogs(id: string, opts: ContainerLogOptions, handlers: ContainerLogHandlers): Promise<ContainerLogReader>;
  /**
   * watchContainerEvents opens a container events stream (CRI GetContainerEvents) of the containers
   * carrying every label of `filter`; one stream, no reconnect (the caller reconnects after
   * onClose). Never throws: a failure to open is an onClose. The fake emits its own container
   * changes.
   */
  watchContainerEvents(filter: ContainerListFilter, handlers: ContainerEventHandlers): ContainerEventWatch;
  /**
   * openContainerStream starts an exec in, or attaches to, the running container `id` (CRI Exec /
   * Attach, streamed as dockershim did over the engine's hijacked connection) and resolves once
   * the engine accepted it; output then flows to `handlers`. The fake answers an echo (fake-runtime.ts).
   * @throws ERR_NOT_FOUND if the container does not exist; ERR_INVALID_ARGUMENT if it is not
   *   running; ERR_RUNTIME_UNAVAILABLE; ERR_RUNTIME for an engine refusal.
   */
  openContainerStream(id: string, opts: ContainerStreamOptions, handlers: ContainerStreamHandlers): Promise<ContainerStream>;
  /** listImages: every local image (CRI ListImages). */
  listImages(): Promise<ImageSummary[]>;
  /**
   * removeImage untags `ref` (CRI RemoveImage, never forced): the image itself goes with its last
   * tag, and an image a container uses is refused by the engine.
   * @throws ERR_NOT_FOUND if `ref` is not a local image; ERR_ALREADY_EXISTS (409) if it is in use.
   */
  removeImage(ref: string): Promise<void>;
  /** imageFsInfo: the filesystem holding the images (CRI ImageFsInfo), or null when there is none (the in-memory fake: no image GC). */
  imageFsInfo(): Promise<ImageFsInfo | null>;
  /** version: the runtime's name and version (CRI Version); the fake answers `fake` `0.0.0` API `0`. */
  version(): Promise<RuntimeVersion>;
  /**
   * status: resolves when the runtime answers and is ready (CRI Status with RuntimeReady true; for
   * Docker, `GET /_ping`, the cheapest call the engine has). The kubelet's updateRuntimeUp asks it
   * every 5 s. The fake is always ready.
   * @throws AgentError ERR_RUNTIME_UNAVAILABLE (retriable) when the engine cannot be reached;
   * ERR_RUNTIME when it answers but is not ready (an HTTP error).
   */
  status(): Promise<void>;
}

/**
 * NodeRuntime: one thread's runtime bundle (docs/cri.md; the common brief of issue #40 fixes this shape):
 * what every worker entry is given by ../node-runtime.ts getRuntime, and what ../docker/docker-node-runtime.ts
 * and the CRI client build.
 */
export interface NodeRuntime {
  /** The CRI RuntimeService, node-scoped: only this node's sandboxes and containers. */
  runtime: RuntimeService;
  /** The CRI ImageManagerService (images are shared by every owner of the runtime: not scoped). */
  images: ImageManagerService;
  /** PodStatus containerID scheme: 'docker' | 'containerd' | … (Version().runtime_name, lower-cased); for a CRI runtime '' until a Version call answered. */
  idScheme: string;
  /** Container logs: Docker's API (dockershim) or the CRI log file (crilogs). */
  logs: {
    readContainerLogs(containerId: string, opts: ContainerLogOptions, h: ContainerLogHandlers): Promise<ContainerLogReader>;
    tailLogs(containerId: string, lines: number, bytes: number): Promise<string>;
  };
  /** Exec/attach byte streams: Docker's hijacked connection (dockershim) or the CRI streaming server (cristreams). */
  streams: { openContainerStream(containerId: string, opts: ContainerStreamOptions, h: ContainerStreamHandlers): Promise<ContainerStream> };
  /** Container events when the runtime has them (Docker); absent: the PLEG relists (containerd 1.6). */
  events?: { watchContainerEvents(filter: ContainerListFilter, h: ContainerEventHandlers): ContainerEventWatch };
}
