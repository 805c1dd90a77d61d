// Counterpart of pkg/kubelet/dockershim/docker_container.go ContainerStatus, ListContainers and docker_sandbox.go PodSandboxStatus, ListPodSandbox, convert.go (toRuntimeAPIContainer, toRuntimeAPISandbox, state words), kubernetes ≤1.23; cri-dockerd core/container_status.go, core/convert.go.
/**
 * Docker's answers (list and inspect, ContainerSummary / ContainerDetails) in the CRI's words:
 * states `CONTAINER_*` / `SANDBOX_*`, times in nanoseconds since the epoch (Docker's are read in
 * milliseconds), labels and annotations split back, metadata from the Docker name. Pure.
 */
import type {
  Container,
  ContainerFilter,
  ContainerState,
  ContainerStatus,
  CriInput,
  LinuxContainerResources,
  MountPropagation,
  NamespaceMode,
  NamespaceOption,
  PodSandbox,
  PodSandboxFilter,
  PodSandboxState,
  PodSandboxStatus,
} from '../cri/types.js';
import type { ContainerDetails, ContainerMountInfo, ContainerResources, ContainerSummary } from '../container/runtime.js';
import { containerMetadataOf, extractLabels, idMatches, kSandboxIdLabel, sandboxMetadataOf } from './docker-cri-labels.js';

/** msToNs: epoch milliseconds as CRI nanoseconds (0 stays 0). */
export function msToNs(ms: number): number {
  return ms > 0 ? ms * 1e6 : 0;
}

/** containerState: Docker's state word as a CRI ContainerState (toRuntimeAPIContainerState): running and paused are RUNNING, created CREATED, exited and dead EXITED. */
export function containerState(dockerState: string): ContainerState {
  switch (dockerState) {
    case 'running':
    case 'paused':
      return 'CONTAINER_RUNNING';
    case 'created':
      return 'CONTAINER_CREATED';
    case 'exited':
    case 'dead':
      return 'CONTAINER_EXITED';
    default:
      return 'CONTAINER_UNKNOWN';
  }
}

/** sandboxState: READY while the pause container runs, else NOTREADY (toRuntimeAPISandboxState). */
export function sandboxState(dockerState: string): PodSandboxState {
  return dockerState === 'running' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY';
}

/** toCriContainer: one ListContainers item from a list entry. */
export function toCriContainer(c: ContainerSummary): Container {
  const { labels, annotations } = extractLabels(c.labels);
  return {
    id: c.id,
    pod_sandbox_id: c.labels[kSandboxIdLabel] ?? '',
    metadata: containerMetadataOf(c.name, c.labels),
    image: { image: c.image || c.imageId, annotations: {}, user_specified_image: '', runtime_handler: '' },
    image_ref: c.imageId,
    image_id: c.imageId,
    state: containerState(c.state),
    created_at: msToNs(c.createdAtMs),
    labels,
    annotations,
  };
}

/** toCriSandbox: one ListPodSandbox item from a list entry. */
export function toCriSandbox(c: ContainerSummary): PodSandbox {
  const { labels, annotations } = extractLabels(c.labels);
  return {
    id: c.id,
    metadata: sandboxMetadataOf(c.name, c.labels),
    state: sandboxState(c.state),
    created_at: msToNs(c.createdAtMs),
    labels,
    annotations,
    runtime_handler: '',
  };
}

/** containerMatches: the parts of a ContainerFilter Docker's label filter does not apply (id prefix, state). */
export function containerMatches(c: Container, f: CriInput<ContainerFilter> | null | undefined): boolean {
  return idMatches(f?.id, c.id) && (!f?.state?.state || f.state.state === c.state);
}

/** sandboxMatches: the parts of a PodSandboxFilter Docker's label filter does not apply (id prefix, state). */
export function sandboxMatches(s: PodSandbox, f: CriInput<PodSandboxFilter> | null | undefined): boolean {
  return idMatches(f?.id, s.id) && (!f?.state?.state || f.state.state === s.state);
}

function propagationOf(p: string): MountPropagation {
  if (p === 'rslave' || p === 'slave') return 'PROPAGATION_HOST_TO_CONTAINER';
  if (p === 'rshared' || p === 'shared') return 'PROPAGATION_BIDIRECTIONAL';
  return 'PROPAGATION_PRIVATE';
}

function toCriMount(m: ContainerMountInfo): ContainerStatus['mounts'][number] {
  return {
    container_path: m.destination,
    host_path: m.source,
    readonly: !m.rw,
    selinux_relabel: false,
    propagation: propagationOf(m.propagation),
    uidMappings: [],
    gidMappings: [],
    recursive_read_only: false,
    image: null,
  };
}

/**
 * exitState: the CRI state, reason and message of a container (ContainerStatus): `OOMKilled`,
 * `Completed` (exit 0) or `Error` once it finished; one whose start failed — Docker leaves it
 * `created` with its error — is EXITED with `StartError`, its exit code (128 when Docker gives
 * none) and Docker's error, as containerd's container_start.go reports a failed start.
 */
function exitState(d: ContainerDetails): {
  state: ContainerState;
  reason: string;
  message: string;
  exitCode: number;
  finishedAtMs: number;
} {
  if (d.running) return { state: 'CONTAINER_RUNNING', reason: '', message: '', exitCode: 0, finishedAtMs: 0 };
  if (d.status === 'created' && d.error !== '') {
    return {
      state: 'CONTAINER_EXITED',
      reason: 'StartError',
      message: d.error,
      exitCode: d.exitCode || 128,
      finishedAtMs: d.finishedAtMs || d.createdAtMs,
    };
  }
  const state = containerState(d.status);
  if (state !== 'CONTAINER_EXITED') return { state, reason: '', message: '', exitCode: 0, finishedAtMs: 0 };
  return {
    state,
    reason: d.oomKilled ? 'OOMKilled' : d.exitCode === 0 ? 'Completed' : 'Error',
    message: d.error,
    exitCode: d.exitCode,
    finishedAtMs: d.finishedAtMs,
  };
}

/** toCriContainerStatus: ContainerStatus from an inspect (log_path: Docker's json-file, the one Docker writes; no resources read back). */
export function toCriContainerStatus(d: ContainerDetails): ContainerStatus {
  const { labels, annotations } = extractLabels(d.labels);
  const x = exitState(d);
  return {
    id: d.id,
    metadata: containerMetadataOf(d.name, d.labels),
    state: x.state,
    created_at: msToNs(d.createdAtMs),
    started_at: msToNs(d.startedAtMs),
    finished_at: msToNs(x.finishedAtMs),
    exit_code: x.exitCode,
    image: { image: d.image, annotations: {}, user_specified_image: '', runtime_handler: '' },
    image_ref: d.imageId,
    image_id: d.imageId,
    reason: x.reason,
    message: x.message,
    labels,
    annotations,
    mounts: (d.mounts ?? []).map(toCriMount),
    log_path: d.logPath ?? '',
    resources: d.resources ? { linux: toCriResources(d.resources) } : null,
    user: null,
  };
}

/** toCriResources: Docker's cgroup limits as LinuxContainerResources (what Docker reports; oom_score_adj and cpusets not read back). */
function toCriResources(r: ContainerResources): LinuxContainerResources {
  return {
    cpu_period: r.cpuPeriod,
    cpu_quota: r.cpuQuota,
    cpu_shares: r.cpuShares,
    memory_limit_in_bytes: r.memory,
    oom_score_adj: 0,
    cpuset_cpus: '',
    cpuset_mems: '',
    hugepage_limits: [],
    unified: {},
    memory_swap_limit_in_bytes: r.memorySwap ?? 0,
  };
}

function namespaceMode(mode: string | undefined, own: NamespaceMode): NamespaceMode {
  return mode === 'host' ? 'NODE' : own;
}

/** sandboxNamespaces: the sandbox's namespace options read back (host → NODE; network and IPC POD, PID CONTAINER otherwise). */
export function sandboxNamespaces(d: ContainerDetails): NamespaceOption {
  return {
    network: namespaceMode(d.networkMode, 'POD'),
    pid: namespaceMode(d.pidMode, 'CONTAINER'),
    ipc: namespaceMode(d.ipcMode, 'POD'),
    target_id: '',
    userns_options: null,
  };
}

/** toCriSandboxStatus: PodSandboxStatus from the pause container's inspect, `ips` its pod IPs (primary first; [] for none), `ready` false when its network was lost. */
export function toCriSandboxStatus(d: ContainerDetails, ips: readonly string[], ready: boolean): PodSandboxStatus {
  const { labels, annotations } = extractLabels(d.labels);
  return {
    id: d.id,
    metadata: sandboxMetadataOf(d.name, d.labels),
    state: d.running && ready ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
    created_at: msToNs(d.createdAtMs),
    network: { ip: ips[0] ?? '', additional_ips: ips.slice(1).map((ip) => ({ ip })) },
    linux: { namespaces: { options: sandboxNamespaces(d) } },
    labels,
    annotations,
    runtime_handler: '',
  };
}
