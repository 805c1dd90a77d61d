// Counterpart of pkg/kubelet/dockershim/docker_stats_linux.go (ContainerStats, ListContainerStats from the container's cgroup) and of containerd's pkg/cri/server/container_stats_list.go / sandbox_stats_linux.go (usage_nano_cores from the previous sample, the sandbox's stats from its cgroup parent), kubernetes ≤1.23.
/**
 * The CRI ContainerStatsManager of the Docker implementation, read from the cgroups as
 * workers/stats/ reads them: a container's cgroup is its init process's (`/proc/<pid>/cgroup`), a
 * sandbox's the pod cgroup its pause container was put under (`linux.cgroup_parent`). CPU is the
 * cumulative usage (ns) and the rate since this service's previous sample of the same cgroup
 * (nano-cores; absent on the first); memory the working set, usage, RSS, faults and what is left
 * under the limit. A stopped container answers its attributes without CPU or memory; no
 * writable-layer, network or process figures. Errors: ERR_NOT_FOUND for an unknown ID.
 */
import path from 'node:path';
import type { Clock } from '../../../shared/clock.js';
import { AgentError } from '../../../shared/errors.js';
import type { CgroupUsage } from '../../../shared/stats.js';
import { cgroupOfProcess, detectCgroupVersion, readCgroupUsage, type CgroupRef } from '../../stats/cgroup.js';
import type { ContainerStatsFilter, ContainerStats, CpuUsage, MemoryUsage, PodSandboxStats } from '../cri/types-status.js';
import type { CriInput } from '../cri/types.js';
import type { ContainerDetails, ContainerRuntime } from '../container/runtime.js';
import {
  containerMetadataOf,
  extractLabels,
  idMatches,
  kDockerTypeContainer,
  kDockerTypeLabel,
  kDockerTypeSandbox,
  kSandboxIdLabel,
  sandboxMetadataOf,
  selectorLabels,
} from './docker-cri-labels.js';

/** kMaxSamples: how many previous CPU samples a service keeps (cleared when full: the next rates are absent once). */
const kMaxSamples = 20_000;

const u64 = (v: number | undefined) => (v === undefined ? null : { value: v });

/** DockerStats: ContainerStats, ListContainerStats and PodSandboxStats over the Docker-shaped runtime and the cgroups, timestamped by `clock`. */
export class DockerStats {
  #version?: Promise<0 | 1 | 2>;
  readonly #previous = new Map<string, { cpuNs: number; atNs: number }>();

  constructor(
    private readonly runtime: ContainerRuntime,
    private readonly clock: Clock,
  ) {}

  /** usage: the cgroup figures of `ref` at `atNs`, with the CPU rate since the previous sample of `key`. */
  async #usage(key: string, ref: CgroupRef | null, atNs: number): Promise<{ cpu: CpuUsage | null; memory: MemoryUsage | null }> {
    const u: CgroupUsage | null = ref && (await readCgroupUsage(ref));
    if (!u) return { cpu: null, memory: null };
    let nanoCores: number | undefined;
    const prev = this.#previous.get(key);
    if (u.cpuUsageNs !== undefined) {
      if (prev && atNs > prev.atNs && u.cpuUsageNs >= prev.cpuNs)
        nanoCores = Math.round(((u.cpuUsageNs - prev.cpuNs) / (atNs - prev.atNs)) * 1e9);
      if (this.#previous.size >= kMaxSamples) this.#previous.clear();
      this.#previous.set(key, { cpuNs: u.cpuUsageNs, atNs });
    }
    return {
      cpu: { timestamp: atNs, usage_core_nano_seconds: u64(u.cpuUsageNs), usage_nano_cores: u64(nanoCores) },
      memory: {
        timestamp: atNs,
        working_set_bytes: u64(u.workingSetBytes),
        usage_bytes: u64(u.memoryUsageBytes),
        rss_bytes: u64(u.rssBytes),
        page_faults: u64(u.pageFaults),
        major_page_faults: u64(u.majorPageFaults),
        available_bytes: u64(
          u.memoryLimitBytes !== undefined && u.workingSetBytes !== undefined
            ? Math.max(0, u.memoryLimitBytes - u.workingSetBytes)
            : undefined,
        ),
      },
    };
  }

  /** cgroupOf: the cgroup of a running container's init process, null when it does not run or the host has no cgroups. */
  async #cgroupOf(d: ContainerDetails): Promise<CgroupRef | null> {
    const version = await (this.#version ??= detectCgroupVersion());
    if (version === 0 || !d.running || !d.pid) return null;
    return cgroupOfProcess(d.pid, version);
  }

  async #containerStats(d: ContainerDetails): Promise<ContainerStats> {
    const { labels, annotations } = extractLabels(d.labels);
    const { cpu, memory } = await this.#usage(d.id, await this.#cgroupOf(d), this.clock.now() * 1e6);
    return {
      attributes: { id: d.id, metadata: containerMetadataOf(d.name, d.labels), labels, annotations },
      cpu,
      memory,
      writable_layer: null,
      swap: null,
    };
  }

  async #inspect(id: string, type: string, what: string): Promise<ContainerDetails> {
    const d = await this.runtime.inspectContainer(id);
    if (d.labels[kDockerTypeLabel] !== type) throw new AgentError('ERR_NOT_FOUND', `could not find ${what} "${id}"`);
    return d;
  }

  /** containerStats: one app container's stats. @throws ERR_NOT_FOUND when gone or a sandbox. */
  async containerStats(id: string): Promise<ContainerStats> {
    return this.#containerStats(await this.#inspect(id, kDockerTypeContainer, 'container'));
  }

  /** listContainerStats: the stats of the app containers matching `filter` (a stopped one without CPU and memory). */
  async listContainerStats(filter?: CriInput<ContainerStatsFilter> | null): Promise<ContainerStats[]> {
    const labels = [`${kDockerTypeLabel}=${kDockerTypeContainer}`, ...selectorLabels(filter?.label_selector)];
    if (filter?.pod_sandbox_id) labels.push(`${kSandboxIdLabel}=${filter.pod_sandbox_id}`);
    const list = (await this.runtime.listContainers({ labels })).filter((c) => idMatches(filter?.id, c.id));
    const out = await Promise.all(
      list.map((c) =>
        this.runtime.inspectContainer(c.id).then(
          (d) => this.#containerStats(d),
          () => null,
        ),
      ),
    );
    return out.filter((s): s is ContainerStats => s !== null);
  }

  /**
   * podSandboxStats: the pod cgroup's figures (the pause container's cgroup parent; none for a
   * sandbox made without `cgroup_parent`, whose parent is Docker's own) and its containers' stats.
   * @throws ERR_NOT_FOUND when gone or not a sandbox.
   */
  async podSandboxStats(id: string): Promise<PodSandboxStats> {
    const d = await this.#inspect(id, kDockerTypeSandbox, 'pod sandbox');
    const { labels, annotations } = extractLabels(d.labels);
    const own = d.cgroupParent ? await this.#cgroupOf(d) : null;
    const pod: CgroupRef | null = !own
      ? null
      : own.version === 2
        ? { version: 2, path: path.posix.dirname(own.path) }
        : { version: 1, cpuacct: path.posix.dirname(own.cpuacct), memory: path.posix.dirname(own.memory) };
    const { cpu, memory } = await this.#usage(`pod:${d.id}`, pod, this.clock.now() * 1e6);
    return {
      attributes: { id: d.id, metadata: sandboxMetadataOf(d.name, d.labels), labels, annotations },
      linux: { cpu, memory, network: null, process: null, containers: await this.listContainerStats({ pod_sandbox_id: d.id }) },
    };
  }
}
