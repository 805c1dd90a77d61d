/**
 * Counterpart of pkg/kubelet/types/labels.go (the label keys kuberuntime/labels.go writes) and of what kubelet-ts adds to
 * them: the `kubelet-ts.node-name` owner label and the rule that says which sandboxes and
 * containers an agent may touch (docs/contracts.md, names and labels), and the sandbox's hash. The
 * CRI labels and annotations themselves are kuberuntime/labels.ts's; how a runtime without annotations
 * keeps them is its own (dockershim: naming.go, helpers.go).
 */
import type { Pod } from '../../shared/api.js';
import { stableHash } from '../../shared/hash.js';

/** `io.kubernetes.pod.name` */
export const kPodNameLabel = 'io.kubernetes.pod.name';
/** `io.kubernetes.pod.namespace` */
export const kPodNamespaceLabel = 'io.kubernetes.pod.namespace';
/** `io.kubernetes.pod.uid`: present on every container an agent may touch. */
export const kPodUidLabel = 'io.kubernetes.pod.uid';
/** `io.kubernetes.container.name` (`POD` for the sandbox). */
export const kContainerNameLabel = 'io.kubernetes.container.name';
/** `kubelet-ts.node-name`: the agent (node) that owns the container. */
export const kNodeNameLabel = 'kubelet-ts.node-name';

/** Container name used for the sandbox, in names and labels. */
export const kPodInfraContainerName = 'POD';
/**
 * sandboxHash: the hash written on the sandbox's `annotation.io.kubernetes.container.hash`. It
 * covers what a running sandbox cannot change (its namespaces, its FQDN hostname, its pod-level security settings), so a change makes
 * computePodActions recreate the sandbox, as runtimeutil.PodSandboxChanged does when the
 * network namespace mode changes.
 */
export function sandboxHash(pod: Pod): string {
  const spec = pod.spec;
  const base: Record<string, unknown> = {
    hostNetwork: spec?.hostNetwork === true,
    hostIPC: spec?.hostIPC === true,
    hostPID: spec?.hostPID === true,
    // subdomain and setHostnameAsFQDN (the sandbox's hostname) count only when set, so that the hash
    // of every pod without them stays what it was (an agent upgrade restarts no sandbox).
    subdomain: spec?.subdomain || undefined,
    setHostnameAsFQDN: spec?.setHostnameAsFQDN === true ? true : undefined,
  };
  // What the sandbox itself is given from the pod's securityContext (its user, groups, seccomp
  // profile and the pod's sysctls): a change recreates it. Only when set, so the hash of a pod
  // without them is what it was before securityContext ran.
  const psc = spec?.securityContext;
  const security = psc && {
    runAsUser: psc.runAsUser,
    runAsGroup: psc.runAsGroup,
    supplementalGroups: psc.supplementalGroups,
    fsGroup: psc.fsGroup,
    seccompProfile: psc.seccompProfile,
    sysctls: psc.sysctls,
  };
  if (security && Object.values(security).some((v) => v !== undefined && !(Array.isArray(v) && v.length === 0))) base.security = security;
  return stableHash(base, 8);
}

/**
 * isOwnedBy: true when `labels` mark a container this node's agent may touch: a non-empty
 * `io.kubernetes.pod.uid` AND `kubelet-ts.node-name` equal to `nodeName` (docs/contracts.md, names and labels).
 */
export function isOwnedBy(labels: Record<string, string> | undefined | null, nodeName: string): boolean {
  if (!labels || !nodeName) return false;
  return typeof labels[kPodUidLabel] === 'string' && labels[kPodUidLabel] !== '' && labels[kNodeNameLabel] === nodeName;
}
