/**
 * Counterpart of pkg/kubelet/kuberuntime/kuberuntime_container.go generateContainerConfig,
 * kuberuntime_container_linux.go generateLinuxContainerConfig / calculateLinuxResources and
 * kubelet_pods.go GenerateRunContainerOptions (env, mounts, the hosts file, the termination
 * message file): the CRI ContainerConfig of one container — what CreateContainer makes.
 *
 * Two steps, as upstream: generateRunContainerOptions prepares what lives on the node (volume
 * directories, subPaths, the termination message file) and resolves the env (async);
 * generateContainerConfig builds the message from the spec and those options (pure).
 */
import path from 'node:path';
import type { Container, Pod } from '../../shared/api.js';
import { containerOOMScoreAdjust } from '../../shared/qos.js';
import { cpuQuotaFromLimit, cpuSharesFromRequest, kCpuPeriodUs } from '../cm/cpu-quota.js';
import type { ContainerConfig, LinuxContainerResources, Mount, MountPropagation } from '../runtime/cri/types.js';
import {
  containerCpuMemory,
  expandCommand,
  makeEnvironmentVariables,
  makeVolumeMounts,
  prepareTerminationMessageFile,
  type ContainerConfigContext,
  type VolumeBind,
} from './run-container-options.js';
import { newContainerAnnotations, newContainerLabels } from './labels.js';
import { determineEffectiveSecurityContext, type ImageUser } from './security-context.js';
import { containerLogPath } from '../kubetypes/pod-dirs.js';

/** What a container's CRI config depends on besides its spec. */
export interface CriContainerContext extends Omit<ContainerConfigContext, 'podSandbox' | 'imageUser'> {
  /** The image's user (ImageStatus `uid` / `username`; unset = root: `{ uid: 0 }`). */
  image: ImageUser;
  /** The kubelet-managed hosts file to mount at /etc/hosts ('' = none). */
  etcHostsFile: string;
  /** Node memory capacity in bytes (GetContainerOOMScoreAdjust's memoryCapacity). */
  memoryCapacityBytes: number;
  /** The lowest oom_score_adj the runtime can set from here (../cm/oom-score-floor.ts); absent = -1000. */
  oomScoreAdjFloor?: number;
}

/** RunContainerOptions: the env and the mounts of one container attempt (kubecontainer.RunContainerOptions). */
export interface RunContainerOptions {
  /** Ordered [name, value] pairs, `$(VAR)` expanded, every valueFrom resolved. */
  envs: Array<[string, string]>;
  /** Volume mounts, then /etc/hosts, then the termination message file. */
  mounts: VolumeBind[];
}

/**
 * generateRunContainerOptions, as GenerateRunContainerOptions: resolves the env
 * (makeEnvironmentVariables), prepares and resolves the volume mounts (makeVolumeMounts), adds the
 * hosts file at /etc/hosts unless a volume is mounted there, and creates the attempt's termination
 * message file, mounted at terminationMessagePath. `init`: `index` is in spec.initContainers.
 * @throws AgentError with reason `CreateContainerConfigError`.
 */
export async function generateRunContainerOptions(
  pod: Pod,
  container: Container,
  field: string,
  restartCount: number,
  ctx: CriContainerContext,
): Promise<RunContainerOptions> {
  const envs = makeEnvironmentVariables(pod, container, ctx, field);
  const mounts = await makeVolumeMounts(pod, container, ctx.rootDir, field, envs);
  const mounted = new Set((container.volumeMounts ?? []).map((m) => path.posix.normalize(m.mountPath)));
  if (ctx.etcHostsFile && !mounted.has('/etc/hosts'))
    mounts.push({ hostPath: ctx.etcHostsFile, containerPath: '/etc/hosts', readOnly: false });
  if (container.terminationMessagePath) {
    const file = await prepareTerminationMessageFile(ctx.rootDir, pod.metadata?.uid ?? '', container.name, restartCount);
    mounts.push({ hostPath: file, containerPath: container.terminationMessagePath, readOnly: false });
  }
  return { envs, mounts };
}

/** criPropagation: a volumeMount's mountPropagation as the CRI's (makeMountBindings: HostToContainer → HOST_TO_CONTAINER, Bidirectional → BIDIRECTIONAL). */
function criPropagation(mode: string | undefined): MountPropagation {
  if (mode === 'HostToContainer') return 'PROPAGATION_HOST_TO_CONTAINER';
  if (mode === 'Bidirectional') return 'PROPAGATION_BIDIRECTIONAL';
  return 'PROPAGATION_PRIVATE';
}

/** criMount: a resolved mount as the CRI's Mount. */
export function criMount(m: VolumeBind): Mount {
  return {
    container_path: m.containerPath,
    host_path: m.hostPath,
    readonly: m.readOnly,
    selinux_relabel: false,
    propagation: criPropagation(m.propagation),
    uidMappings: [],
    gidMappings: [],
    recursive_read_only: false,
    image: null,
  };
}

/**
 * linuxContainerResources, as calculateLinuxResources: cpu_shares from the CPU request (the
 * limit when there is no request; at least 2), cpu_period 100000 µs and cpu_quota from the CPU
 * limit when there is one (0 = none), memory_limit_in_bytes from the memory limit (0 = none), and
 * oom_score_adj as GetContainerOOMScoreAdjust, raised to `floor`.
 * @throws AgentError `CreateContainerConfigError` naming the field of a bad quantity.
 */
export function linuxContainerResources(
  pod: Pod,
  container: Container,
  field: string,
  memoryCapacityBytes: number,
  floor = -1000,
): LinuxContainerResources {
  const { memory, cpuLimit, cpuRequest } = containerCpuMemory(container, field);
  return {
    cpu_period: cpuLimit > 0 ? kCpuPeriodUs : 0,
    cpu_quota: cpuQuotaFromLimit(cpuLimit),
    cpu_shares: cpuSharesFromRequest(cpuRequest),
    memory_limit_in_bytes: memory,
    oom_score_adj: Math.max(containerOOMScoreAdjust(pod, container, memoryCapacityBytes), floor),
    cpuset_cpus: '',
    cpuset_mems: '',
    hugepage_limits: [],
    unified: {},
    memory_swap_limit_in_bytes: 0,
  };
}

/**
 * generateContainerConfig: metadata (name, attempt = restartCount), image (the resolved reference
 * or ID `imageRef`, with the pod's `image` as user_specified_image), command and args (`$(VAR)`
 * expanded from the env), working_dir, envs, mounts, labels (newContainerLabels) and annotations
 * (newContainerAnnotations: hash, restartCount, termination message path/policy, grace period,
 * preStop, ports), log_path `<name>/<restartCount>.log`, stdin/stdin_once/tty, and linux:
 * resources (linuxContainerResources) and the security context
 * (determineEffectiveSecurityContext). Pure.
 * @throws AgentError `CreateContainerConfigError` (bad quantity, bad seccomp profile).
 */
export function generateContainerConfig(
  pod: Pod,
  container: Container,
  field: string,
  hash: string,
  restartCount: number,
  imageRef: string,
  opts: RunContainerOptions,
  ctx: CriContainerContext,
): ContainerConfig {
  const { command, args } = expandCommand(container, opts.envs);
  return {
    metadata: { name: container.name, attempt: restartCount },
    image: { image: imageRef, annotations: {}, user_specified_image: container.image ?? '', runtime_handler: '' },
    command: command ?? [],
    args: args ?? [],
    working_dir: container.workingDir ?? '',
    envs: opts.envs.map(([key, value]) => ({ key, value })),
    mounts: opts.mounts.map(criMount),
    devices: [],
    labels: newContainerLabels(pod, container, ctx.nodeName),
    annotations: newContainerAnnotations(pod, container, hash, restartCount),
    log_path: containerLogPath(container.name, restartCount),
    stdin: container.stdin === true,
    stdin_once: container.stdinOnce === true,
    tty: container.tty === true,
    linux: {
      resources: linuxContainerResources(pod, container, field, ctx.memoryCapacityBytes, ctx.oomScoreAdjFloor),
      security_context: determineEffectiveSecurityContext(pod, container, ctx.image, ctx.rootDir, field),
    },
    CDI_devices: [],
  };
}
