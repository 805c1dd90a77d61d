/**
 * Counterpart of the CRI RuntimeService/ImageService (k8s.io/cri-api) as the kubelet's
 * kuberuntime manager uses it: the worker-side port to a container engine. Kept small on purpose;
 * `docker-runtime.ts` implements it over dockerode, `fake-runtime.ts` in memory, and
 * `node-scope.ts` wraps either so that only this node's containers can be listed or touched.
 *
 * Errors: implementations throw AgentError — `ERR_RUNTIME_UNAVAILABLE` (retriable) when the engine
 * cannot be reached, `ERR_NOT_FOUND` for a missing container or image, `ERR_ALREADY_EXISTS` for a
 * name conflict, `ERR_RUNTIME` for anything else.
 */

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
  /** Host PID of the container's init process while it runs (0 otherwise); used to enter its network namespace. */
  pid?: number;
}

/** What an exec in a container returned (execInContainer). */
export interface ExecResult {
  /** The command's exit code; -1 when it did not finish within the timeout. */
  exitCode: number;
  /** Combined stdout and stderr, at most 10 KiB (the kubelet's probe output limit). */
  output: string;
  /** True when the timeout expired first (the command may still be running in the container). */
  timedOut: boolean;
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
  /** The local image's ID, or null when `ref` is not present locally. */
  imageExists(ref: string): Promise<{ id: string } | null>;
  /**
   * Pulls `ref` from its registry, with `auth` when given (Docker's X-Registry-Auth).
   * @throws AgentError with reason `ErrImagePull` on failure.
   */
  pullImage(ref: string, auth?: RegistryAuth): Promise<void>;
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
}
