// Counterpart of pkg/kubelet/dockershim/naming.go (container names) and helpers.go (makeLabels / extractLabels), kubernetes ≤1.23; cri-dockerd core/naming.go, core/helpers.go.
/**
 * How the Docker implementation of the CRI keeps a sandbox's or container's CRI metadata, labels
 * and annotations on a Docker container, as dockershim did:
 * - the name: `k8s_<container>_<pod>_<namespace>_<uid>_<attempt>`, the sandbox's container name
 *   being `POD` (pod names, namespaces and container names cannot hold `_`, so it splits back);
 * - the CRI labels as Docker labels, each annotation as the label `annotation.<key>`;
 * - internal labels: `io.kubernetes.docker.type` (`podsandbox` | `container`) and, on a
 *   container, `io.kubernetes.sandbox.id`; the sandbox also carries `io.kubernetes.container.name=POD`.
 * Reading back (extractLabels) drops the internal ones and splits labels from annotations.
 * Pure functions.
 */
import type { ContainerMetadata, PodSandboxMetadata, StringMap } from '../cri/types.js';

/** `io.kubernetes.docker.type`: `podsandbox` or `container` (dockershim containerTypeLabelKey). */
export const kDockerTypeLabel = 'io.kubernetes.docker.type';
/** `io.kubernetes.docker.type` of a sandbox (pause) container. */
export const kDockerTypeSandbox = 'podsandbox';
/** `io.kubernetes.docker.type` of an app container. */
export const kDockerTypeContainer = 'container';
/** `io.kubernetes.sandbox.id`: the sandbox an app container belongs to (dockershim sandboxIDLabelKey). */
export const kSandboxIdLabel = 'io.kubernetes.sandbox.id';
/** `io.kubernetes.container.name` (types.KubernetesContainerNameLabel); `POD` on a sandbox. */
export const kContainerNameLabel = 'io.kubernetes.container.name';
/** `io.kubernetes.pod.uid` */
export const kPodUidLabel = 'io.kubernetes.pod.uid';
/** `io.kubernetes.pod.name` */
export const kPodNameLabel = 'io.kubernetes.pod.name';
/** `io.kubernetes.pod.namespace` */
export const kPodNamespaceLabel = 'io.kubernetes.pod.namespace';
/** The prefix of a Docker label that holds a CRI annotation (dockershim annotationPrefix). */
export const kAnnotationPrefix = 'annotation.';
/** The container name part of a sandbox's Docker name and its `io.kubernetes.container.name`. */
export const kSandboxContainerName = 'POD';
/** `annotation.io.kubernetes.container.restartCount`: read when a name cannot be parsed. */
const kRestartCountAnnotation = 'io.kubernetes.container.restartCount';

const kNamePrefix = 'k8s';
const kInternalLabels = new Set([kDockerTypeLabel, kSandboxIdLabel, 'io.kubernetes.container.logpath']);

/** sandboxDockerName: `k8s_POD_<pod>_<namespace>_<uid>_<attempt>` (naming.go makeSandboxName). */
export function sandboxDockerName(m: PodSandboxMetadata): string {
  return [kNamePrefix, kSandboxContainerName, m.name, m.namespace, m.uid, String(m.attempt)].join('_');
}

/** containerDockerName: `k8s_<container>_<pod>_<namespace>_<uid>_<attempt>` (naming.go makeContainerName). */
export function containerDockerName(c: ContainerMetadata, pod: PodSandboxMetadata): string {
  return [kNamePrefix, c.name, pod.name, pod.namespace, pod.uid, String(c.attempt)].join('_');
}

/** The parts of a Docker name made by sandboxDockerName or containerDockerName. */
export interface ParsedDockerName {
  containerName: string;
  podName: string;
  namespace: string;
  uid: string;
  attempt: number;
}

/** parseDockerName splits a name we made (a leading `/` ignored); null for any other name (naming.go parseContainerName). */
export function parseDockerName(name: string): ParsedDockerName | null {
  const parts = name.replace(/^\//, '').split('_');
  if (parts.length !== 6 || parts[0] !== kNamePrefix || !/^\d+$/.test(parts[5])) return null;
  const attempt = Number(parts[5]);
  if (!Number.isSafeInteger(attempt)) return null;
  return { containerName: parts[1], podName: parts[2], namespace: parts[3], uid: parts[4], attempt };
}

/** makeDockerLabels: the CRI labels plus each annotation as `annotation.<key>`, then `internal` (helpers.go makeLabels). */
export function makeDockerLabels(
  labels: StringMap | null | undefined,
  annotations: StringMap | null | undefined,
  internal: StringMap,
): StringMap {
  const out: StringMap = { ...(labels ?? {}) };
  for (const [k, v] of Object.entries(annotations ?? {})) out[`${kAnnotationPrefix}${k}`] = v;
  return Object.assign(out, internal);
}

/**
 * extractLabels: the CRI labels and annotations back from a container's Docker labels (helpers.go
 * extractLabels): internal labels dropped, the sandbox's `io.kubernetes.container.name` too, an
 * `annotation.<key>` label is the annotation `<key>`.
 */
export function extractLabels(docker: StringMap): { labels: StringMap; annotations: StringMap } {
  const labels: StringMap = {};
  const annotations: StringMap = {};
  const sandbox = docker[kDockerTypeLabel] === kDockerTypeSandbox;
  for (const [k, v] of Object.entries(docker)) {
    if (kInternalLabels.has(k) || (sandbox && k === kContainerNameLabel)) continue;
    if (k.startsWith(kAnnotationPrefix)) annotations[k.slice(kAnnotationPrefix.length)] = v;
    else labels[k] = v;
  }
  return { labels, annotations };
}

/** sandboxMetadataOf: a sandbox's CRI metadata from its Docker name, else from its labels (attempt from restartCount). */
export function sandboxMetadataOf(name: string, docker: StringMap): PodSandboxMetadata {
  const p = parseDockerName(name);
  if (p) return { name: p.podName, namespace: p.namespace, uid: p.uid, attempt: p.attempt };
  return {
    name: docker[kPodNameLabel] ?? '',
    namespace: docker[kPodNamespaceLabel] ?? '',
    uid: docker[kPodUidLabel] ?? '',
    attempt: Number(docker[`${kAnnotationPrefix}${kRestartCountAnnotation}`]) || 0,
  };
}

/** containerMetadataOf: a container's CRI metadata from its Docker name, else from its labels. */
export function containerMetadataOf(name: string, docker: StringMap): ContainerMetadata {
  const p = parseDockerName(name);
  if (p) return { name: p.containerName, attempt: p.attempt };
  return { name: docker[kContainerNameLabel] ?? '', attempt: Number(docker[`${kAnnotationPrefix}${kRestartCountAnnotation}`]) || 0 };
}

/** selectorLabels: a CRI `label_selector` as Docker `label` filter values (`key=value`). */
export function selectorLabels(selector: Readonly<Record<string, string | null | undefined>> | null | undefined): string[] {
  return Object.entries(selector ?? {}).map(([k, v]) => `${k}=${v ?? ''}`);
}

/** idMatches: a CRI filter's `id` matches a container ID when equal or a prefix of it (as containerd's truncated IDs); '' matches all. */
export function idMatches(filterId: string | null | undefined, id: string): boolean {
  return !filterId || id.startsWith(filterId);
}
