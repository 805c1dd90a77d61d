/**
 * Counterpart of pkg/kubelet/kuberuntime/labels.go and dockershim's naming.go: the Docker labels
 * and container names that tie a Docker container to a pod (docs/contracts.md "Docker names and labels").
 *
 * Names: sandbox `k8s_POD_<pod>_<namespace>_<uid>_<attempt>`, app container
 * `k8s_<container>_<pod>_<namespace>_<uid>_<attempt>`. Pod names, namespaces and container names
 * are DNS labels/subdomains and cannot contain `_`, so the name splits back unambiguously.
 */
import type { Container, Pod } from '../../shared/api.js';
import { stableHash } from '../../shared/hash.js';
import { podTerminationGracePeriodSeconds } from '../../shared/pod-policy.js';

/** `io.kubernetes.pod.name` */
export const kPodNameLabel = 'io.kubernetes.pod.name';
/** `io.kubernetes.pod.namespace` */
export const kPodNamespaceLabel = 'io.kubernetes.pod.namespace';
/** `io.kubernetes.pod.uid`: present on every container an agent may touch. */
export const kPodUidLabel = 'io.kubernetes.pod.uid';
/** `io.kubernetes.container.name` (`POD` for the sandbox). */
export const kContainerNameLabel = 'io.kubernetes.container.name';
/** `io.kubernetes.docker.type`: `podsandbox` or `container`. */
export const kContainerTypeLabel = 'io.kubernetes.docker.type';
/** `io.kubernetes.sandbox.id`: the sandbox an app container joined. */
export const kSandboxIdLabel = 'io.kubernetes.sandbox.id';
/** `annotation.io.kubernetes.container.hash`: hashContainer() of the spec it was created from. */
export const kContainerHashLabel = 'annotation.io.kubernetes.container.hash';
/** `annotation.io.kubernetes.container.restartCount` */
export const kRestartCountLabel = 'annotation.io.kubernetes.container.restartCount';
/** `annotation.io.kubernetes.pod.terminationGracePeriod` (seconds). */
export const kTerminationGracePeriodLabel = 'annotation.io.kubernetes.pod.terminationGracePeriod';
/** `annotation.io.kubernetes.container.terminationMessagePath`: the container-side path of its termination message. */
export const kTerminationMessagePathLabel = 'annotation.io.kubernetes.container.terminationMessagePath';
/** `annotation.io.kubernetes.container.terminationMessagePolicy`: `File` or `FallbackToLogsOnError`. */
export const kTerminationMessagePolicyLabel = 'annotation.io.kubernetes.container.terminationMessagePolicy';
/** `kubelet-ts.node-name`: the agent (node) that owns the container. */
export const kNodeNameLabel = 'kubelet-ts.node-name';

/** `io.kubernetes.docker.type` of a sandbox (infra/pause) container. */
export const kContainerTypeSandbox = 'podsandbox';
/** `io.kubernetes.docker.type` of an app container. */
export const kContainerTypeContainer = 'container';
/** Container name used for the sandbox, in names and labels. */
export const kPodInfraContainerName = 'POD';
/** Prefix of every name we create (dockershim's kubePrefix). */
export const kNamePrefix = 'k8s';

/** The parts of a Docker container name we built. */
export interface ParsedContainerName {
  /** Spec container name, or `POD` for the sandbox. */
  containerName: string;
  podName: string;
  namespace: string;
  uid: string;
  attempt: number;
}

function podMeta(pod: Pod): { name: string; namespace: string; uid: string } {
  return { name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? 'default', uid: pod.metadata?.uid ?? '' };
}

/** buildSandboxName returns `k8s_POD_<pod>_<namespace>_<uid>_<attempt>` (dockershim makeSandboxName). */
export function buildSandboxName(pod: Pod, attempt: number): string {
  return buildContainerName(kPodInfraContainerName, pod, attempt);
}

/** buildContainerName returns `k8s_<container>_<pod>_<namespace>_<uid>_<attempt>` (dockershim makeContainerName). */
export function buildContainerName(containerName: string, pod: Pod, attempt: number): string {
  const m = podMeta(pod);
  return [kNamePrefix, containerName, m.name, m.namespace, m.uid, String(attempt)].join('_');
}

/**
 * parseContainerName splits a name built by buildContainerName/buildSandboxName (a leading `/`,
 * as Docker reports names, is ignored). Returns null for any other name (dockershim parseContainerName).
 */
export function parseContainerName(name: string): ParsedContainerName | null {
  const parts = name.replace(/^\//, '').split('_');
  if (parts.length !== 6 || parts[0] !== kNamePrefix) return null;
  const attempt = Number(parts[5]);
  if (!/^\d+$/.test(parts[5]) || !Number.isSafeInteger(attempt)) return null;
  return { containerName: parts[1], podName: parts[2], namespace: parts[3], uid: parts[4], attempt };
}

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

/** Labels common to the sandbox and the app containers of `pod`. */
function podLabels(pod: Pod, nodeName: string): Record<string, string> {
  const m = podMeta(pod);
  return {
    [kPodNameLabel]: m.name,
    [kPodNamespaceLabel]: m.namespace,
    [kPodUidLabel]: m.uid,
    [kTerminationGracePeriodLabel]: String(podTerminationGracePeriodSeconds(pod)),
    [kNodeNameLabel]: nodeName,
  };
}

/** sandboxLabels: the labels of a pod's sandbox (pause) container (restartCount is the attempt). */
export function sandboxLabels(pod: Pod, nodeName: string, attempt: number): Record<string, string> {
  return {
    ...podLabels(pod, nodeName),
    [kContainerNameLabel]: kPodInfraContainerName,
    [kContainerTypeLabel]: kContainerTypeSandbox,
    [kContainerHashLabel]: sandboxHash(pod),
    [kRestartCountLabel]: String(attempt),
  };
}

/** containerLabels: the labels of an app container (newContainerLabels + dockershim's type/sandbox labels). */
export function containerLabels(
  pod: Pod,
  container: Container,
  nodeName: string,
  sandboxId: string,
  hash: string,
  restartCount: number,
): Record<string, string> {
  return {
    ...podLabels(pod, nodeName),
    [kContainerNameLabel]: container.name,
    [kContainerTypeLabel]: kContainerTypeContainer,
    [kSandboxIdLabel]: sandboxId,
    [kContainerHashLabel]: hash,
    [kRestartCountLabel]: String(restartCount),
    ...(container.terminationMessagePath ? { [kTerminationMessagePathLabel]: container.terminationMessagePath } : {}),
    ...(container.terminationMessagePolicy ? { [kTerminationMessagePolicyLabel]: container.terminationMessagePolicy } : {}),
  };
}

/**
 * isOwnedBy: true when `labels` mark a container this node's agent may touch: a non-empty
 * `io.kubernetes.pod.uid` AND `kubelet-ts.node-name` equal to `nodeName` (docs/contracts.md "Docker names and labels").
 */
export function isOwnedBy(labels: Record<string, string> | undefined | null, nodeName: string): boolean {
  if (!labels || !nodeName) return false;
  return typeof labels[kPodUidLabel] === 'string' && labels[kPodUidLabel] !== '' && labels[kNodeNameLabel] === nodeName;
}

/**
 * ownerLabelFilter: the Docker `label` filter values that select this node's containers
 * (optionally of one pod UID): `kubelet-ts.node-name=<node>`, and `io.kubernetes.pod.uid`
 * (present) or `io.kubernetes.pod.uid=<uid>`.
 */
export function ownerLabelFilter(nodeName: string, uid?: string): string[] {
  return [`${kNodeNameLabel}=${nodeName}`, uid ? `${kPodUidLabel}=${uid}` : kPodUidLabel];
}
