/**
 * Counterpart of the pod-level preparation the kubelet does before a pod's sandbox and containers
 * start (pkg/kubelet/kubelet.go SyncPod: pcm.EnsureExists; kuberuntime_sandbox.go
 * generatePodSandboxConfig: hostname, DNS; kubelet_pods.go makeMounts: the hosts file): one
 * PodSandboxConfig per sync, shared by the sandbox and every container of the pod.
 */
import os from 'node:os';
import type { Pod } from '../../shared/api.js';
import type { Logger } from '../../shared/logging.js';
import type { NodeSandboxSettings, PodEventRecord } from '../../shared/messages.js';
import type { PodSandboxConfig } from './container-config.js';
import { ensureHostsFile, podSandboxHostname } from '../dns/etc-hosts.js';
import { ensurePodCgroup, podCgroupSupported } from '../cm/pod-cgroup.js';
import { ensureResolvConf } from '../dns/pod-dns.js';
import { oomScoreAdjFloor } from '../runtime/docker/oom-score-floor.js';

// Moved to runtime/docker/ (the Docker side of RunPodSandbox and CreateContainer, #40); re-exported while kuberuntime still calls it.
export { oomScoreAdjFloor } from '../runtime/docker/oom-score-floor.js';

let warnedNoCgroup = false;
let warnedOomFloor = false;

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
export async function preparePodSandbox(
  rootDir: string,
  settings: NodeSandboxSettings,
  pod: Pod,
  podIps: readonly string[],
  logger?: Logger,
): Promise<{ config: PodSandboxConfig; events: PodEventRecord[] }> {
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
    logger?.warn(
      { floor },
      "No CAP_SYS_RESOURCE: negative oom_score_adj values (Guaranteed -997, sandbox -998) are raised to the agent's own",
    );
  }
  return {
    config: {
      oomScoreAdjFloor: floor,
      hostname,
      etcHostsFile,
      resolvConfFile: dns.path,
      cgroupParent,
      containerPidsLimit,
      logRotation: { maxSizeBytes: settings.containerLogMaxSizeBytes, maxFiles: settings.containerLogMaxFiles },
      memoryCapacityBytes: os.totalmem(),
    },
    events: dns.events,
  };
}
