// Counterpart of pkg/kubelet/dockershim/docker_service.go (Version, Status, UpdateRuntimeConfig), docker_container.go (CreateContainer … ContainerStatus), docker_streaming.go (ExecSync), kubernetes ≤1.23; cri-dockerd core/docker_service.go, core/container_*.go.
/**
 * DockerRuntimeService: the CRI RuntimeService (cri/services.ts) over the Docker-shaped
 * ContainerRuntime — today's Docker client (docker-runtime.ts) or the in-memory fake, wrapped by
 * node-scope.ts so only this node's containers are seen. Sandboxes are docker-sandbox.ts's; the
 * create bodies docker-container-create.ts's; the answers docker-status.ts's.
 *
 * Not here, as the NodeRuntime's Docker extensions instead (docker-node-runtime.ts): Exec,
 * Attach and PortForward (Docker has no streaming server: the agent streams directly over the
 * engine's hijacked connection and the netns helper) — they reject with ERR_RUNTIME saying so;
 * the container log (Docker's json-file, read through Docker's API and rotated by Docker:
 * ReopenContainerLog is a no-op); container events. Stats come from the cgroups (docker-stats.ts).
 */
import path from 'node:path';
import { realClock, type Clock } from '../../../shared/clock.js';
import { AgentError, isAlreadyExists, isNotFound, serializeError } from '../../../shared/errors.js';
import type { Logger } from '../../../shared/logging.js';
import type { PodNetwork } from '../../network/pod-network.js';
import { execTimeoutError } from '../cri/errors.js';
import type { ContainerStatusResponse, CriCallOptions, PodSandboxStatusResponse, RuntimeService } from '../cri/services.js';
import type {
  AttachRequest,
  Container,
  ContainerConfig,
  ContainerFilter,
  CriInput,
  ExecRequest,
  ExecSyncResponse,
  LinuxContainerResources,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PortForwardRequest,
} from '../cri/types.js';
import type {
  ContainerStats,
  ContainerStatsFilter,
  PodSandboxStats,
  PodSandboxStatsFilter,
  StatusResponse,
  VersionResponse,
} from '../cri/types-status.js';
import type { ContainerCreateSpec, ContainerRuntime } from '../container/runtime.js';
import { containerCreateSpec, type DockerCreateSettings } from './docker-container-create.js';
import { kDockerTypeContainer, kDockerTypeLabel, kPodUidLabel, selectorLabels } from './docker-cri-labels.js';
import { createWithConflictRecovery } from './create-conflict.js';
import { DockerSandboxManager, podResolvConf } from './docker-sandbox.js';
import { DockerStats } from './docker-stats.js';
import { containerMatches, toCriContainer, toCriContainerStatus } from './docker-status.js';
import { oomScoreAdjFloor } from '../../cm/oom-score-floor.js';
import { ListCoalescer } from './list-coalescer.js';

/** What the Docker implementation of the CRI is built with (the agent's flags and the thread's network). */
export interface DockerCriOptions {
  /** The node-scoped runtime (node-scope.ts scopeToNode over docker-runtime.ts or the fake). */
  runtime: ContainerRuntime;
  /** The agent's pod network (network/network-service.ts); kNoopPodNetwork for none. */
  network: PodNetwork;
  /** --root-dir (absolute). */
  rootDir: string;
  /** --pod-infra-container-image. */
  podInfraImage: string;
  /** --node-ip: the host address of hostPorts without a `host_ip` ('' = every address). */
  nodeIp?: string;
  /** --container-log-max-size (bytes) / --container-log-max-files: Docker's json-file rotation. */
  logRotation?: { maxSizeBytes: number; maxFiles: number };
  /** --pod-max-pids: each container's PidsLimit when its sandbox has no pod cgroup. */
  podPidsLimit?: number;
  /** The oom_score_adj floor (default: oom-score-floor.ts, read from /proc/self). */
  oomScoreAdjFloor?: () => Promise<number>;
  logger?: Logger;
  /** The thread's Clock (default realClock): the stats' timestamps. */
  clock?: Clock;
}

/** kNoStreamingServer: why Exec, Attach and PortForward have no URL on Docker. */
const kNoStreamingServer =
  "the Docker runtime has no streaming server: direct streaming is used instead (the NodeRuntime's streams over the engine's own connection)";

/** DockerRuntimeService: the CRI RuntimeService of the Docker implementation (one per worker thread). */
export class DockerRuntimeService implements RuntimeService {
  readonly sandboxes: DockerSandboxManager;
  readonly #runtime: ContainerRuntime;
  readonly #rootDir: string;
  readonly #stats: DockerStats;
  /** ListPodSandbox and ListContainers asked together share one Docker list (list-coalescer.ts). */
  readonly #lists: ListCoalescer;
  #settings?: Promise<DockerCreateSettings>;

  constructor(private readonly opts: DockerCriOptions) {
    this.#runtime = opts.runtime;
    this.#rootDir = opts.rootDir;
    this.#stats = new DockerStats(opts.runtime, opts.clock ?? realClock);
    this.#lists = new ListCoalescer(opts.runtime);
    this.sandboxes = new DockerSandboxManager({
      runtime: opts.runtime,
      network: opts.network,
      rootDir: opts.rootDir,
      nodeIp: opts.nodeIp ?? '',
      settings: () => this.#createSettings(),
      listContainers: (filter) => this.#lists.list(filter),
      logger: opts.logger,
      clock: opts.clock,
    });
  }

  #createSettings(): Promise<DockerCreateSettings> {
    return (this.#settings ??= (this.opts.oomScoreAdjFloor ?? oomScoreAdjFloor)().then((floor) => ({
      podInfraImage: this.opts.podInfraImage,
      logRotation: this.opts.logRotation,
      podPidsLimit: this.opts.podPidsLimit,
      oomScoreAdjFloor: floor,
      seccompRoot: path.join(this.#rootDir, 'seccomp'),
    })));
  }

  /** version: `runtime_name` the engine's (`docker`; `fake` for the fake), its version and API version. */
  async version(apiVersion: string, _opts?: CriCallOptions): Promise<VersionResponse> {
    const v = await this.#runtime.version();
    return { version: apiVersion || '0.1.0', runtime_name: v.runtimeName, runtime_version: v.version, runtime_api_version: v.apiVersion };
  }

  /** status: RuntimeReady from Docker's `_ping` (false with the error, never a rejection), NetworkReady true (the agent's own CNI). */
  async status(_verbose?: boolean, _opts?: CriCallOptions): Promise<StatusResponse> {
    const runtimeReady = await this.#runtime.status().then(
      () => null,
      (err: unknown) => err as Error,
    );
    return {
      status: {
        conditions: [
          {
            type: 'RuntimeReady',
            status: runtimeReady === null,
            reason: runtimeReady ? 'DockerDaemonNotReady' : '',
            message: runtimeReady ? `docker: failed to get docker version: ${runtimeReady.message}` : '',
          },
          { type: 'NetworkReady', status: true, reason: '', message: '' },
        ],
      },
      info: {},
      runtime_handlers: [],
      features: null,
    };
  }

  /** updateRuntimeConfig: nothing to do (the agent's CNI reads --pod-cidr itself). */
  async updateRuntimeConfig(_podCidr: string, _opts?: CriCallOptions): Promise<void> {}

  runPodSandbox(config: CriInput<PodSandboxConfig>, _runtimeHandler?: string, _opts?: CriCallOptions): Promise<string> {
    return this.sandboxes.runPodSandbox(config);
  }

  stopPodSandbox(podSandboxId: string, _opts?: CriCallOptions): Promise<void> {
    return this.sandboxes.stopPodSandbox(podSandboxId);
  }

  removePodSandbox(podSandboxId: string, _opts?: CriCallOptions): Promise<void> {
    return this.sandboxes.removePodSandbox(podSandboxId);
  }

  podSandboxStatus(podSandboxId: string, _verbose?: boolean, _opts?: CriCallOptions): Promise<PodSandboxStatusResponse> {
    return this.sandboxes.podSandboxStatus(podSandboxId);
  }

  listPodSandbox(filter?: CriInput<PodSandboxFilter>, _opts?: CriCallOptions): Promise<PodSandbox[]> {
    return this.sandboxes.listPodSandbox(filter);
  }

  /**
   * createContainer: the Docker create body of `config` in sandbox `podSandboxId`
   * (docker-container-create.ts), the pod's resolv.conf bound when the sandbox had a `dns_config`.
   * @throws ERR_NOT_FOUND when the sandbox is gone; ERR_ALREADY_EXISTS on a name conflict.
   */
  async createContainer(
    podSandboxId: string,
    config: CriInput<ContainerConfig>,
    sandboxConfig: CriInput<PodSandboxConfig>,
    _opts?: CriCallOptions,
  ): Promise<string> {
    const image = config.image?.user_specified_image || config.image?.image || '';
    const spec = await containerCreateSpec(config, sandboxConfig, await this.#createSettings(), {
      sandboxId: podSandboxId,
      resolvConfFile: podResolvConf(this.#rootDir, sandboxConfig),
      imageUser: async () => (await this.#runtime.imageExists(image))?.user ?? '',
    });
    return createWithConflictRecovery(this.#runtime, spec);
  }

  startContainer(containerId: string, _opts?: CriCallOptions): Promise<void> {
    return this.#runtime.startContainer(containerId);
  }

  /** stopContainer: SIGTERM, SIGKILL after `timeoutSeconds`; a stopped one succeeds. @throws ERR_NOT_FOUND when unknown. */
  stopContainer(containerId: string, timeoutSeconds: number, _opts?: CriCallOptions): Promise<void> {
    return this.#runtime.stopContainer(containerId, timeoutSeconds);
  }

  /** removeContainer: forced removal; one already gone succeeds. */
  async removeContainer(containerId: string, _opts?: CriCallOptions): Promise<void> {
    await this.#runtime.removeContainer(containerId).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }

  /** listContainers: the app containers matching `filter` (labels and sandbox on the engine; id prefix and state here). */
  async listContainers(filter?: CriInput<ContainerFilter>, _opts?: CriCallOptions): Promise<Container[]> {
    const labels = [`${kDockerTypeLabel}=${kDockerTypeContainer}`, ...selectorLabels(filter?.label_selector)];
    if (filter?.pod_sandbox_id) labels.push(`io.kubernetes.sandbox.id=${filter.pod_sandbox_id}`);
    const list = await this.#lists.list({ labels });
    return list.map(toCriContainer).filter((c) => containerMatches(c, filter));
  }

  /** containerStatus: the inspect of an app container. @throws ERR_NOT_FOUND when gone or when `containerId` is a sandbox. */
  async containerStatus(containerId: string, _verbose?: boolean, _opts?: CriCallOptions): Promise<ContainerStatusResponse> {
    const d = await this.#runtime.inspectContainer(containerId);
    if (d.labels[kDockerTypeLabel] !== kDockerTypeContainer)
      throw new AgentError('ERR_NOT_FOUND', `could not find container "${containerId}"`);
    return { status: toCriContainerStatus(d), info: {} };
  }

  /**
   * updateContainerResources: Docker's container update of what it can change — memory (and
   * memory+swap), CPU quota, period and shares; the rest of LinuxContainerResources (cpuset,
   * hugepages, unified, oom_score_adj) is not changed. Zero leaves a value as it is.
   * @throws ERR_NOT_FOUND when the container is gone; ERR_RUNTIME when the engine refuses or cannot.
   */
  async updateContainerResources(containerId: string, r: CriInput<LinuxContainerResources>, _opts?: CriCallOptions): Promise<void> {
    if (!this.#runtime.updateContainerResources)
      throw new AgentError(
        'ERR_RUNTIME',
        `UpdateContainerResources of container "${containerId}": the runtime cannot change a container's resources`,
      );
    await this.#runtime.updateContainerResources(containerId, {
      memory: r.memory_limit_in_bytes ?? 0,
      memorySwap: r.memory_swap_limit_in_bytes ?? 0,
      cpuQuota: r.cpu_quota ?? 0,
      cpuPeriod: r.cpu_period ?? 0,
      cpuShares: r.cpu_shares ?? 0,
    });
  }

  /**
   * execSync: the command to its end (Docker exec, no TTY), killed after `timeoutSeconds` (0: no
   * limit); stdout and stderr apart (an engine that cannot split them answers all as stdout), each
   * at most 10 KiB (the kubelet's probe output limit). A command that outlives
   * its timeout rejects as cri/errors.ts execTimeoutError (`ExecSync: command "…" timed out after Ns`).
   */
  async execSync(containerId: string, cmd: string[], timeoutSeconds: number, _opts?: CriCallOptions): Promise<ExecSyncResponse> {
    const r = await this.#runtime.execInContainer(containerId, cmd, timeoutSeconds > 0 ? timeoutSeconds * 1000 : 2 ** 31 - 1);
    if (r.timedOut) throw execTimeoutError(cmd, timeoutSeconds, new Error('deadline exceeded'));
    return { stdout: Buffer.from(r.stdout ?? r.output), stderr: Buffer.from(r.stderr ?? ''), exit_code: r.exitCode };
  }

  async exec(_request: CriInput<ExecRequest>, _opts?: CriCallOptions): Promise<{ url: string }> {
    throw new AgentError('ERR_RUNTIME', `Exec: ${kNoStreamingServer}`);
  }

  async attach(_request: CriInput<AttachRequest>, _opts?: CriCallOptions): Promise<{ url: string }> {
    throw new AgentError('ERR_RUNTIME', `Attach: ${kNoStreamingServer}`);
  }

  async portForward(_request: CriInput<PortForwardRequest>, _opts?: CriCallOptions): Promise<{ url: string }> {
    throw new AgentError('ERR_RUNTIME', `PortForward: ${kNoStreamingServer}`);
  }

  /** reopenContainerLog: a no-op — Docker writes and rotates the json-file log itself (max-size / max-file). */
  async reopenContainerLog(_containerId: string, _opts?: CriCallOptions): Promise<void> {}

  /** containerStats: the container's cgroup figures (docker-stats.ts). */
  containerStats(containerId: string, _opts?: CriCallOptions): Promise<ContainerStats | null> {
    return this.#stats.containerStats(containerId);
  }

  /** listContainerStats: the running containers matching `filter` (docker-stats.ts). */
  listContainerStats(filter?: CriInput<ContainerStatsFilter>, _opts?: CriCallOptions): Promise<ContainerStats[]> {
    return this.#stats.listContainerStats(filter);
  }

  /** podSandboxStats: the pod cgroup's figures and its containers' (docker-stats.ts). */
  podSandboxStats(podSandboxId: string, _opts?: CriCallOptions): Promise<PodSandboxStats | null> {
    return this.#stats.podSandboxStats(podSandboxId);
  }

  /** listPodSandboxStats: the stats of the sandboxes matching `filter`. */
  async listPodSandboxStats(filter?: CriInput<PodSandboxStatsFilter>, _opts?: CriCallOptions): Promise<PodSandboxStats[]> {
    const sandboxes = await this.sandboxes.listPodSandbox({ id: filter?.id, label_selector: filter?.label_selector });
    const out = await Promise.all(sandboxes.map((s) => this.#stats.podSandboxStats(s.id).catch(() => null)));
    return out.filter((s): s is PodSandboxStats => s !== null);
  }

  /** close: nothing to drop (the engine client is the thread's). */
  close(): void {}
}
