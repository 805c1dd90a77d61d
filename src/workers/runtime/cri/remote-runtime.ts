// Counterpart of pkg/kubelet/cri/remote/remote_runtime.go (remoteRuntimeService: the CRI RuntimeService over gRPC).
/**
 * RemoteRuntimeService: the CRI {@link RuntimeService} of a runtime reached over gRPC at
 * `unix:///path` (`--container-runtime-endpoint`). Deadlines as the kubelet's: the request timeout
 * (`--runtime-request-timeout`, default 2 min) for every call; StopContainer that plus the stop
 * timeout; ExecSync that plus the command's timeout, or none when the command has none. Errors
 * name the method (./errors.ts). Worker threads only.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { parseCriEndpoint } from './endpoint.js';
import { execTimeoutError, grpcCodeOf } from './errors.js';
import { CriConnection, type CriClientOptions } from './connection.js';
import { loadCriServices } from './proto.js';
import type { ContainerStatusResponse, CriCallOptions, PodSandboxStatusResponse, RuntimeService } from './services.js';
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
} from './types.js';
import type {
  ContainerStats,
  ContainerStatsFilter,
  PodSandboxStats,
  PodSandboxStatsFilter,
  StatusResponse,
  VersionResponse,
} from './types-status.js';

/** RemoteRuntimeService implements {@link RuntimeService} over one gRPC connection (see the file's docstring). */
export class RemoteRuntimeService implements RuntimeService {
  private readonly conn: CriConnection;

  /**
   * Throws InvalidArgumentError naming `--container-runtime-endpoint` when `endpoint` is not
   * `unix:///path`, or an Error naming api.proto when the protocol cannot be loaded. Does not dial.
   */
  constructor(endpoint: string, opts: CriClientOptions = {}) {
    this.conn = new CriConnection(loadCriServices().RuntimeService, parseCriEndpoint(endpoint), opts);
  }

  version(apiVersion: string, opts?: CriCallOptions): Promise<VersionResponse> {
    return this.conn.call('Version', { version: apiVersion }, 'request', opts);
  }

  async runPodSandbox(config: CriInput<PodSandboxConfig>, runtimeHandler = '', opts?: CriCallOptions): Promise<string> {
    const res = await this.conn.call<{ pod_sandbox_id: string }>(
      'RunPodSandbox',
      { config, runtime_handler: runtimeHandler },
      'request',
      opts,
    );
    return res.pod_sandbox_id;
  }

  async stopPodSandbox(podSandboxId: string, opts?: CriCallOptions): Promise<void> {
    await this.conn.call('StopPodSandbox', { pod_sandbox_id: podSandboxId }, 'request', opts);
  }

  async removePodSandbox(podSandboxId: string, opts?: CriCallOptions): Promise<void> {
    await this.conn.call('RemovePodSandbox', { pod_sandbox_id: podSandboxId }, 'request', opts);
  }

  podSandboxStatus(podSandboxId: string, verbose = false, opts?: CriCallOptions): Promise<PodSandboxStatusResponse> {
    return this.conn.call('PodSandboxStatus', { pod_sandbox_id: podSandboxId, verbose }, 'request', opts);
  }

  async listPodSandbox(filter?: CriInput<PodSandboxFilter>, opts?: CriCallOptions): Promise<PodSandbox[]> {
    return (await this.conn.call<{ items: PodSandbox[] }>('ListPodSandbox', { filter: filter ?? null }, 'request', opts)).items;
  }

  portForward(request: CriInput<PortForwardRequest>, opts?: CriCallOptions): Promise<{ url: string }> {
    return this.conn.call('PortForward', request, 'request', opts);
  }

  async createContainer(
    podSandboxId: string,
    config: CriInput<ContainerConfig>,
    sandboxConfig: CriInput<PodSandboxConfig>,
    opts?: CriCallOptions,
  ): Promise<string> {
    const req = { pod_sandbox_id: podSandboxId, config, sandbox_config: sandboxConfig };
    return (await this.conn.call<{ container_id: string }>('CreateContainer', req, 'request', opts)).container_id;
  }

  async startContainer(containerId: string, opts?: CriCallOptions): Promise<void> {
    await this.conn.call('StartContainer', { container_id: containerId }, 'request', opts);
  }

  async stopContainer(containerId: string, timeoutSeconds: number, opts?: CriCallOptions): Promise<void> {
    const timeout = Math.max(0, Math.trunc(timeoutSeconds));
    await this.conn.call('StopContainer', { container_id: containerId, timeout }, { plusMs: timeout * 1000 }, opts);
  }

  async removeContainer(containerId: string, opts?: CriCallOptions): Promise<void> {
    await this.conn.call('RemoveContainer', { container_id: containerId }, 'request', opts);
  }

  async listContainers(filter?: CriInput<ContainerFilter>, opts?: CriCallOptions): Promise<Container[]> {
    return (await this.conn.call<{ containers: Container[] }>('ListContainers', { filter: filter ?? null }, 'request', opts)).containers;
  }

  containerStatus(containerId: string, verbose = false, opts?: CriCallOptions): Promise<ContainerStatusResponse> {
    return this.conn.call('ContainerStatus', { container_id: containerId, verbose }, 'request', opts);
  }

  async updateContainerResources(containerId: string, resources: CriInput<LinuxContainerResources>, opts?: CriCallOptions): Promise<void> {
    await this.conn.call('UpdateContainerResources', { container_id: containerId, linux: resources }, 'request', opts);
  }

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number, opts?: CriCallOptions): Promise<ExecSyncResponse> {
    const timeout = Math.max(0, Math.trunc(timeoutSeconds));
    const deadline = timeout > 0 ? { plusMs: timeout * 1000 } : 'none';
    const started = this.conn.clock.monotonicMs();
    try {
      return await this.conn.call('ExecSync', { container_id: containerId, cmd, timeout }, deadline, opts);
    } catch (err) {
      // DeadlineExceeded before our own deadline is the runtime ending the command at its timeout.
      const ours = this.conn.timeoutOf(deadline);
      if (
        timeout > 0 &&
        grpcCodeOf(err) === GrpcStatus.DEADLINE_EXCEEDED &&
        (!(ours > 0) || this.conn.clock.monotonicMs() - started < ours)
      ) {
        throw execTimeoutError(cmd, timeout, (err as Error).cause);
      }
      throw err;
    }
  }

  exec(request: CriInput<ExecRequest>, opts?: CriCallOptions): Promise<{ url: string }> {
    return this.conn.call('Exec', request, 'request', opts);
  }

  attach(request: CriInput<AttachRequest>, opts?: CriCallOptions): Promise<{ url: string }> {
    return this.conn.call('Attach', request, 'request', opts);
  }

  async reopenContainerLog(containerId: string, opts?: CriCallOptions): Promise<void> {
    await this.conn.call('ReopenContainerLog', { container_id: containerId }, 'request', opts);
  }

  async containerStats(containerId: string, opts?: CriCallOptions): Promise<ContainerStats | null> {
    return (await this.conn.call<{ stats: ContainerStats | null }>('ContainerStats', { container_id: containerId }, 'request', opts)).stats;
  }

  async listContainerStats(filter?: CriInput<ContainerStatsFilter>, opts?: CriCallOptions): Promise<ContainerStats[]> {
    return (await this.conn.call<{ stats: ContainerStats[] }>('ListContainerStats', { filter: filter ?? null }, 'request', opts)).stats;
  }

  async podSandboxStats(podSandboxId: string, opts?: CriCallOptions): Promise<PodSandboxStats | null> {
    return (await this.conn.call<{ stats: PodSandboxStats | null }>('PodSandboxStats', { pod_sandbox_id: podSandboxId }, 'request', opts))
      .stats;
  }

  async listPodSandboxStats(filter?: CriInput<PodSandboxStatsFilter>, opts?: CriCallOptions): Promise<PodSandboxStats[]> {
    return (await this.conn.call<{ stats: PodSandboxStats[] }>('ListPodSandboxStats', { filter: filter ?? null }, 'request', opts)).stats;
  }

  async updateRuntimeConfig(podCidr: string, opts?: CriCallOptions): Promise<void> {
    await this.conn.call('UpdateRuntimeConfig', { runtime_config: { network_config: { pod_cidr: podCidr } } }, 'request', opts);
  }

  status(verbose = false, opts?: CriCallOptions): Promise<StatusResponse> {
    return this.conn.call('Status', { verbose }, 'request', opts);
  }

  close(): void {
    this.conn.close();
  }
}
