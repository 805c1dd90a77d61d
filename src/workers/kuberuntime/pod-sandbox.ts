/**
 * Counterpart of the pod-level preparation the kubelet does before a pod's sandbox and containers
 * start (pkg/kubelet/kubelet.go SyncPod: pcm.EnsureExists; kuberuntime_sandbox.go
 * generatePodSandboxConfig: hostname, DNS; kubelet_pods.go makeMounts: the hosts file): one
 * PodSandboxConfig per sync, shared by the sandbox and every container of the pod.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import type { Pod } from '../../shared/api.js';
import type { Logger } from '../../shared/logging.js';
import type { NodeSandboxSettings, PodEventRecord } from '../../shared/messages.js';
import type { PodSandboxConfig } from './container-config.js';
import { ensureHostsFile, podSandboxHostname } from '../dns/etc-hosts.js';
import { ensurePodCgroup, podCgroupSupported } from '../cm/pod-cgroup.js';
import { ensureResolvConf } from '../dns/pod-dns.js';

let warnedNoCgroup = false;
let warnedOomFloor = false;
let oomFloor: number | undefined;

/** CAP_SYS_RESOURCE, the capability a process needs to lower an oom_score_adj (capability.h). */
const kCapSysResource = 24n;

/**
 * oomScoreAdjFloor: the lowest oom_score_adj the runtime can give a container from here: -1000
 * when this process has CAP_SYS_RESOURCE (the engine, started by the same root, then has it too),
 * else this process's own oom_score_adj — the kernel refuses a lower value without that capability,
 * and runc then fails the container's start (`can't get final child's PID from pipe`), as on this
 * project's CI machine. Read once per thread from /proc/self.
 */
export async function oomScoreAdjFloor(): Promise<number> {
  if (oomFloor !== undefined) return oomFloor;
  try {
    const status = await readFile('/proc/self/status', 'utf8');
    const capEff = BigInt(`0x${/^CapEff:\s*([0-9a-f]+)/m.exec(status)?.[1] ?? '0'}`);
    oomFloor = (capEff >> kCapSysResource) & 1n ? -1000 : Number((await readFile('/proc/self/oom_score_adj', 'utf8')).trim()) || 0;
  } catch {
    oomFloor = -1000;
  }
  return oomFloor;
}

/**
 * preparePodSandbox computes the pod's hostname (the FQDN with setHostnameAsFQDN), writes its
 * `pods/{uid}/etc-hosts` and `pods/{uid}/resolv.conf`, and, with --cgroups-per-qos on a cgroup v1
 * host, creates the pod cgroup with its limits (--pod-max-pids on it); else each container gets
 * --pod-max-pids as its own PidsLimit. `podIps`: the pod's addresses ([] while sandboxes have
 * network `none`). Resolves to the config and the events of forming the DNS config
 * (MissingClusterDNS, DNSConfigForming). Idempotent; runs on a worker thread.
 * @throws AgentError for an FQDN hostname over 64 characters; ERR_RUNTIME when the pod cgroup
 * cannot be written; the fs error when a file cannot be written.
 */
export async function preparePodSandbox(rootDir: string, settings: NodeSandboxSettings, pod: Pod, podIps: readonly string[], logger?: Logger): Promise<{ config: PodSandboxConfig; events: PodEventRecord[] }> {
  const hostname = podSandboxHostname(pod, settings.clusterDomain);
  const etcHostsFile = await ensureHostsFile(rootDir, pod, podIps, settings.clusterDomain);
  const dns = await ensureResolvConf(rootDir, pod, settings);
  let cgroupParent = '';
  let containerPidsLimit = settings.podPidsLimit;
  if (settings.cgroupsPerQOS) {
    if (await podCgroupSupported()) {
      cgroupParent = await ensurePodCgroup(pod, settings.cgroupRoot, settings.podPidsLimit);
      containerPidsLimit = -1;
    } else if (!warnedNoCgroup) {
      warnedNoCgroup = true;
      logger?.warn({}, 'No cgroup v1 memory, cpu and pids hierarchies: pods run without a pod cgroup');
    }
  }
  const floor = await oomScoreAdjFloor();
  if (floor > -1000 && !warnedOomFloor) {
    warnedOomFloor = true;
    logger?.warn({ floor }, 'No CAP_SYS_RESOURCE: negative oom_score_adj values (Guaranteed -997, sandbox -998) are raised to the agent\'s own');
  }
  return {
    config: {
      oomScoreAdjFloor: floor,
      hostname, etcHostsFile, resolvConfFile: dns.path, cgroupParent, containerPidsLimit,
      logRotation: { maxSizeBytes: settings.containerLogMaxSizeBytes, maxFiles: settings.containerLogMaxFiles },
      memoryCapacityBytes: os.totalmem(),
    },
    events: dns.events,
  };
}
