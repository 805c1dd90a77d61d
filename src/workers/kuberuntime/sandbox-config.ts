/**
 * Counterpart of pkg/kubelet/kuberuntime/kuberuntime_sandbox.go generatePodSandboxConfig and
 * generatePodSandboxLinuxConfig: the CRI PodSandboxConfig of a pod — what RunPodSandbox makes.
 * The runtime makes the sandbox and its network (and writes resolv.conf from `dns_config`); the
 * pod's DNS config (../dns/pod-dns.ts getPodDNS) and its cgroup (../cm/pod-cgroup.ts) are computed
 * by the caller. Pure.
 */
import type { Pod } from '../../shared/api.js';
import { normalizeSysctlName } from '../../shared/security-context.js';
import type { DNSConfig as PodDNSConfig } from '../dns/pod-dns.js';
import { podSandboxHostname } from '../dns/etc-hosts.js';
import type { PodSandboxConfig, PortMapping, Protocol } from '../runtime/cri/types.js';
import { newPodAnnotations, newPodLabels } from './labels.js';
import { sandboxSecurityContext } from './security-context.js';
import { podLogsDirectory } from '../kubetypes/pod-dirs.js';

/** What a pod's sandbox config depends on besides the pod. */
export interface SandboxConfigContext {
  /** This node's name (the `kubelet-ts.node-name` label). */
  nodeName: string;
  /** --root-dir, absolute (the seccomp profile root is `<rootDir>/seccomp`). */
  rootDir: string;
  /** The root of the pods' log directories (the kubelet's podLogsDir), absolute. */
  podLogsDir: string;
  /** --cluster-domain ('' = none): the FQDN hostname with setHostnameAsFQDN. */
  clusterDomain: string;
  /** The pod's resolver config (getPodDNS); absent = none (the runtime's default). */
  dns?: PodDNSConfig;
  /** The pod cgroup (ensurePodCgroup's CgroupParent); '' = none (the runtime's default). */
  cgroupParent: string;
  /** sandboxHash(pod) when the caller has it (spec-hashes.ts); absent = computed here. */
  sandboxHash?: string;
}

/**
 * portMappings, as generatePodSandboxConfig: one mapping per port of every app container
 * (MakePortMappings: protocol TCP unless given, host_port 0 = none, host_ip '' = every address).
 */
export function portMappings(pod: Pod): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      out.push({
        protocol: (p.protocol ?? 'TCP') as Protocol,
        container_port: p.containerPort,
        host_port: p.hostPort ?? 0,
        host_ip: p.hostIP ?? '',
      });
    }
  }
  return out;
}

/**
 * generatePodSandboxConfig: metadata (name, namespace, UID, `attempt`), hostname (the pod's, or
 * its FQDN with setHostnameAsFQDN; '' for hostNetwork, which runc cannot set without a UTS
 * namespace), log_directory `<podLogsDir>/<ns>_<name>_<uid>`, dns_config, port_mappings, labels
 * (newPodLabels) and annotations (newPodAnnotations), and linux: cgroup_parent, the pod's
 * security context (sandboxSecurityContext: namespace options, user, groups, seccomp, privileged
 * when a container is) and its sysctls (names with `/` turned to `.`).
 * @throws AgentError for an FQDN over 64 characters (ERR_INVALID_ARGUMENT), a bad Localhost
 * seccomp profile or an unsafe name/namespace/UID (CreateContainerConfigError / ERR_INVALID_ARGUMENT).
 */
export function generatePodSandboxConfig(pod: Pod, attempt: number, ctx: SandboxConfigContext): PodSandboxConfig {
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace ?? 'default';
  const uid = pod.metadata?.uid ?? '';
  const sysctls: Record<string, string> = {};
  for (const s of pod.spec?.securityContext?.sysctls ?? []) sysctls[normalizeSysctlName(s.name)] = s.value;
  return {
    metadata: { name, namespace, uid, attempt },
    hostname: podSandboxHostname(pod, ctx.clusterDomain) ?? '',
    log_directory: podLogsDirectory(ctx.podLogsDir, namespace, name, uid),
    dns_config: ctx.dns ? { servers: [...ctx.dns.servers], searches: [...ctx.dns.searches], options: [...ctx.dns.options] } : null,
    port_mappings: portMappings(pod),
    labels: newPodLabels(pod, ctx.nodeName),
    annotations: newPodAnnotations(pod, ctx.sandboxHash),
    linux: {
      cgroup_parent: ctx.cgroupParent,
      security_context: sandboxSecurityContext(pod, ctx.rootDir),
      sysctls,
      overhead: null,
      resources: null,
    },
  };
}
