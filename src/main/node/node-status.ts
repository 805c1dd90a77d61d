/**
 * Counterpart of pkg/kubelet/kubelet_node_status.go and pkg/kubelet/nodestatus/setters.go: the
 * Node object this agent reports (GET /node; the etcd node lease reuses it). `buildNode` is pure;
 * `gatherNodeFacts` reads the machine (os module, /etc/os-release, /proc, statfs of --root-dir).
 */
import { readFileSync } from 'node:fs';
import { readFile, statfs } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Node } from '../../shared/api.js';
import { rfc3339Seconds } from '../../shared/rfc3339.js';
import { kDefaultHardEvictionReservation } from '../eviction/thresholds.js';

type NodeCondition = NonNullable<NonNullable<Node['status']>['conditions']>[number];

/** kPidPressureFraction: PIDPressure when more than this fraction of pid_max is in use. */
export const kPidPressureFraction = 0.9;

/** NodeFacts: what the machine looks like now (gatherNodeFacts fills it; tests build it by hand). */
export interface NodeFacts {
  /** Logical CPUs. */
  cpus: number;
  /** Bytes. */
  memoryTotalBytes: number;
  /** Bytes available (MemAvailable). */
  memoryAvailableBytes: number;
  /** Filesystem of --root-dir, bytes; undefined when it cannot be read. */
  disk?: { totalBytes: number; availableBytes: number };
  /** Processes running and the kernel's pid_max; undefined when unknown. */
  pids?: { running: number; max: number };
  /** `PRETTY_NAME` of /etc/os-release, e.g. `Debian GNU/Linux 12 (bookworm)`. */
  osImage: string;
  /** `uname -r`. */
  kernelVersion: string;
  /** GOARCH words: `amd64`, `arm64`, … */
  architecture: string;
  /** GOOS words: `linux`. */
  operatingSystem: string;
  machineID: string;
  bootID: string;
}

/** NodeInputs: everything buildNode needs besides the facts. */
export interface NodeInputs {
  nodeName: string;
  /**
   * The node is cordoned (node-spec.ts): `spec.unschedulable` and the taint the node lifecycle
   * controller adds for it (`node.kubernetes.io/unschedulable:NoSchedule`). Absent = not cordoned.
   */
  unschedulable?: boolean;
  /** `--node-labels`: set on top of the well-known labels (a key given there wins). Absent = none. */
  nodeLabels?: Readonly<Record<string, string>>;
  /** --node-ip: the InternalIP address. */
  nodeIp: string;
  /** --max-pods: capacity and allocatable `pods`. */
  maxPods: number;
  /** nodeInfo.kubeletVersion: {@link kubeletVersion}, e.g. `v1.32.0-kubelet-ts.0.1.0`. */
  kubeletVersion: string;
  /** `<runtime_name>://<version>` (`docker://24.0.5`, `containerd://1.6.20`), or '' when the runtime could not be asked. */
  containerRuntimeVersion: string;
  /** The agent's health (sync loop and PLEG): Ready is true when ok. */
  health: { ok: boolean; message?: string };
  /**
   * The pod network's readiness (network/network-setup.ts), absent with `--network-plugin none`:
   * while not ready, Ready is False with `message` (the kubelet's `container runtime network not
   * ready: NetworkReady=false …`) and NetworkUnavailable is True.
   */
  network?: { ready: boolean; message: string };
  /**
   * The eviction manager's pressure conditions (eviction/eviction-manager.ts): when given, they
   * decide MemoryPressure and DiskPressure (its thresholds and transition period) instead of the
   * fixed defaults on `facts`.
   */
  pressure?: { memory: boolean; disk: boolean };
  /**
   * The hard eviction thresholds reserved from allocatable (GetNodeAllocatableReservation):
   * `memory.available` in bytes and `nodefs.available` as bytes of a filesystem of `capacity`
   * bytes; absent = the kubelet's defaults (100Mi, 10%).
   */
  hardEviction?: { memoryBytes: (capacity: number) => number; nodefsBytes: (capacity: number) => number };
  /** The HTTP server's port (daemonEndpoints.kubeletEndpoint). */
  port: number;
  facts: NodeFacts;
  /** When this status is taken, epoch ms. */
  nowMs: number;
  /** The Node built last time: a condition keeps its lastTransitionTime while its status stays. */
  previous?: Node;
}

function ki(bytes: number): string {
  return `${Math.max(0, Math.floor(bytes / 1024))}Ki`;
}

function condition(
  type: string,
  status: boolean,
  trueReason: string,
  trueMessage: string,
  falseReason: string,
  falseMessage: string,
  now: string,
  previous: Node | undefined,
): NodeCondition {
  const s = status ? 'True' : 'False';
  const prev = previous?.status?.conditions?.find((c) => c.type === type);
  return {
    type,
    status: s,
    reason: status ? trueReason : falseReason,
    message: status ? trueMessage : falseMessage,
    lastHeartbeatTime: now,
    lastTransitionTime: prev && prev.status === s && prev.lastTransitionTime ? prev.lastTransitionTime : now,
  };
}

/** kNetworkUnavailableReason: NetworkUnavailable True's reason while the pod network is not ready (containerd's NetworkReady reason). */
export const kNetworkUnavailableReason = 'NetworkPluginNotReady';
/** kNetworkAvailableReason: NetworkUnavailable False's reason (as CNI daemons such as Calico set it: `<Plugin>IsUp`). */
export const kNetworkAvailableReason = 'CniPluginIsUp';
/** kNetworkAvailableMessage: NetworkUnavailable False's message. */
export const kNetworkAvailableMessage = 'the CNI network configuration and its plugins are in place';

/** unschedulableSince: when the unschedulable taint was added: kept from the previous Node, else `now`. */
function unschedulableSince(previous: Node | undefined, now: string): string {
  return previous?.spec?.taints?.find((t) => t.key === 'node.kubernetes.io/unschedulable')?.timeAdded ?? now;
}

/**
 * buildNode builds this node as a core/v1 Node, as the kubelet's node status setters do:
 * - conditions MemoryPressure and DiskPressure (the eviction manager's, `pressure`; without it
 *   available memory below 100Mi, --root-dir's filesystem below 10% free), PIDPressure (over 90% of pid_max in use), Ready (the agent's
 *   health and the pod network's readiness; `KubeletReady` / `KubeletNotReady`), with the kubelet's
 *   reasons and messages; with a pod network also NetworkUnavailable (True while the network is not
 *   ready: `NetworkPluginNotReady` and the network's message; False: `CniPluginIsUp`);
 * - capacity cpu, memory (Ki), pods (--max-pods), ephemeral-storage; allocatable = capacity minus
 *   the hard eviction thresholds (`hardEviction`; default memory 100Mi, ephemeral-storage 10%), as with no reservations;
 * - nodeInfo (kubeletVersion, containerRuntimeVersion, osImage, kernelVersion, architecture,
 *   operatingSystem, machineID, bootID); addresses InternalIP (--node-ip) and Hostname.
 * Pure: every input is a parameter.
 */
export function buildNode(inputs: NodeInputs): Node {
  const { facts } = inputs;
  const now = rfc3339Seconds(inputs.nowMs);
  // Without the eviction manager's verdict: the default hard thresholds (kDefaultEvictionHard).
  const memoryPressure = inputs.pressure
    ? inputs.pressure.memory
    : facts.memoryAvailableBytes < kDefaultHardEvictionReservation.memoryBytes(facts.memoryTotalBytes);
  const diskPressure = inputs.pressure
    ? inputs.pressure.disk
    : facts.disk !== undefined &&
      facts.disk.totalBytes > 0 &&
      facts.disk.availableBytes < kDefaultHardEvictionReservation.nodefsBytes(facts.disk.totalBytes);
  const pidPressure = facts.pids !== undefined && facts.pids.max > 0 && facts.pids.running / facts.pids.max > kPidPressureFraction;
  const capacity: Record<string, string> = { cpu: String(facts.cpus), memory: ki(facts.memoryTotalBytes), pods: String(inputs.maxPods) };
  const hardEviction = inputs.hardEviction ?? kDefaultHardEvictionReservation;
  const reservedMemory = hardEviction.memoryBytes(facts.memoryTotalBytes);
  const allocatable: Record<string, string> = {
    cpu: String(facts.cpus),
    memory: ki(facts.memoryTotalBytes - reservedMemory),
    pods: String(inputs.maxPods),
  };
  if (facts.disk) {
    capacity['ephemeral-storage'] = ki(facts.disk.totalBytes);
    const reservedDisk = hardEviction.nodefsBytes(facts.disk.totalBytes);
    allocatable['ephemeral-storage'] = ki(facts.disk.totalBytes - reservedDisk);
  }
  const p = inputs.previous;
  const net = inputs.network;
  // As nodestatus.ReadyCondition: the runtime's and the network's errors together make Ready False.
  const ready = inputs.health.ok && (net?.ready ?? true);
  const notReadyMessage = [
    inputs.health.ok ? '' : (inputs.health.message ?? 'kubelet is not healthy'),
    net && !net.ready ? net.message : '',
  ]
    .filter((m) => m !== '')
    .join(', ');
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: inputs.nodeName,
      labels: nodeLabels(inputs.nodeName, facts.operatingSystem, facts.architecture, inputs.nodeLabels),
      ...(p?.metadata?.creationTimestamp ? { creationTimestamp: p.metadata.creationTimestamp } : { creationTimestamp: now }),
    },
    spec: inputs.unschedulable
      ? {
          unschedulable: true,
          taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: unschedulableSince(p, now) }],
        }
      : {},
    status: {
      capacity,
      allocatable,
      conditions: [
        condition(
          'MemoryPressure',
          memoryPressure,
          'KubeletHasInsufficientMemory',
          'kubelet has insufficient memory available',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
          now,
          p,
        ),
        condition(
          'DiskPressure',
          diskPressure,
          'KubeletHasDiskPressure',
          'kubelet has disk pressure',
          'KubeletHasNoDiskPressure',
          'kubelet has no disk pressure',
          now,
          p,
        ),
        condition(
          'PIDPressure',
          pidPressure,
          'KubeletHasInsufficientPID',
          'kubelet has insufficient PID available',
          'KubeletHasSufficientPID',
          'kubelet has sufficient PID available',
          now,
          p,
        ),
        condition(
          'Ready',
          ready,
          'KubeletReady',
          'kubelet is posting ready status',
          'KubeletNotReady',
          notReadyMessage || 'kubelet is not healthy',
          now,
          p,
        ),
        ...(net
          ? [
              condition(
                'NetworkUnavailable',
                !net.ready,
                kNetworkUnavailableReason,
                net.message,
                kNetworkAvailableReason,
                kNetworkAvailableMessage,
                now,
                p,
              ),
            ]
          : []),
      ],
      addresses: [
        { type: 'InternalIP', address: inputs.nodeIp },
        { type: 'Hostname', address: inputs.nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: inputs.port } },
      nodeInfo: {
        machineID: facts.machineID,
        systemUUID: facts.machineID,
        bootID: facts.bootID,
        kernelVersion: facts.kernelVersion,
        osImage: facts.osImage,
        containerRuntimeVersion: inputs.containerRuntimeVersion,
        kubeletVersion: inputs.kubeletVersion.startsWith('v') ? inputs.kubeletVersion : `v${inputs.kubeletVersion}`,
        kubeProxyVersion: '',
        operatingSystem: facts.operatingSystem,
        architecture: facts.architecture,
      },
    },
  };
}

/**
 * nodeLabels: the labels of this Node, as the kubelet's initialNode sets them: the well-known
 * `kubernetes.io/hostname` (the node name), `kubernetes.io/os`, `kubernetes.io/arch` and their
 * `beta.` forms, then `--node-labels` over them (the kubelet logs and lets the flag win).
 * `os`/`arch` default to this process's, in GOOS/GOARCH words. Pure apart from those defaults.
 */
export function nodeLabels(
  nodeName: string,
  osName = process.platform as string,
  arch = kArch[process.arch] ?? process.arch,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': osName,
    'kubernetes.io/arch': arch,
    'beta.kubernetes.io/os': osName,
    'beta.kubernetes.io/arch': arch,
    ...extra,
  };
}

const kArch: Record<string, string> = {
  x64: 'amd64',
  ia32: '386',
  arm64: 'arm64',
  arm: 'arm',
  ppc64: 'ppc64le',
  s390x: 's390x',
  riscv64: 'riscv64',
};

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * gatherNodeFacts reads the machine: CPUs and memory (MemAvailable from /proc/meminfo, else
 * os.freemem), the filesystem of `rootDir` (statfs), processes in use (/proc/loadavg's running/total
 * field) against /proc/sys/kernel/pid_max, /etc/os-release, the kernel release, machine and boot IDs.
 * Never throws: what cannot be read is left undefined or ''.
 */
export async function gatherNodeFacts(rootDir: string): Promise<NodeFacts> {
  const [meminfo, osRelease, loadavg, pidMax, machineId, bootId] = await Promise.all([
    readText('/proc/meminfo'),
    readText('/etc/os-release'),
    readText('/proc/loadavg'),
    readText('/proc/sys/kernel/pid_max'),
    readText('/etc/machine-id'),
    readText('/proc/sys/kernel/random/boot_id'),
  ]);
  const avail = /^MemAvailable:\s+(\d+) kB/m.exec(meminfo);
  let disk: NodeFacts['disk'];
  try {
    const s = await statfs(rootDir);
    disk = { totalBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
  } catch {
    disk = undefined;
  }
  const tasks = /\s\d+\/(\d+)\s/.exec(loadavg);
  const max = Number(pidMax.trim());
  return {
    cpus: typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length,
    memoryTotalBytes: os.totalmem(),
    memoryAvailableBytes: avail ? Number(avail[1]) * 1024 : os.freemem(),
    disk,
    pids: tasks && max > 0 ? { running: Number(tasks[1]), max } : undefined,
    osImage: /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1] ?? os.type(),
    kernelVersion: os.release(),
    architecture: kArch[process.arch] ?? process.arch,
    operatingSystem: process.platform,
    machineID: machineId.trim(),
    bootID: bootId.trim(),
  };
}

let cachedVersion: string | undefined;

/**
 * kImplementedKubernetesVersion: the Kubernetes release whose API (core/v1, the kubelet's
 * endpoints) this agent implements and is tested against (kubectl and client-go 1.32).
 */
export const kImplementedKubernetesVersion = '1.32.0';

/**
 * kubeletVersion: what the Node reports as `status.nodeInfo.kubeletVersion` and `/version` as
 * its gitVersion: `v1.32.0-kubelet-ts.N`, where `v1.32.0` is {@link kImplementedKubernetesVersion}
 * (tools parse it as a Kubernetes version, as kubectl's version skew check and client-go's
 * version.ParseSemantic do) and N, the semver pre-release part after `kubelet-ts.`, is
 * kubelet-ts's own package version ({@link kubeletTsVersion}, e.g. `0.1.0` →
 * `v1.32.0-kubelet-ts.0.1.0`). Upstream: pkg/kubelet/nodestatus/setters.go (VersionInfo) reports
 * the kubelet's build version there.
 */
export function kubeletVersion(): string {
  return `v${kImplementedKubernetesVersion}-kubelet-ts.${kubeletTsVersion()}`;
}

/**
 * kubeletTsVersion: the `version` of kubelet-ts's package.json (found upwards from this file, in
 * src/ or dist/src/), e.g. `0.1.0`; `0.0.0` when it cannot be found. Cached after the first call.
 */
export function kubeletTsVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'kubelet-ts' && typeof pkg.version === 'string') return (cachedVersion = pkg.version);
    } catch {
      // not here: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) return (cachedVersion = '0.0.0');
    dir = parent;
  }
}
