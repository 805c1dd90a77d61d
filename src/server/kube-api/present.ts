/**
 * How this node's pods look through the Kubernetes API: every pod as a `v1` `Pod` with its
 * resourceVersion, and a static pod (file or URL source) as the apiserver shows its mirror pod —
 * with the annotation `kubernetes.io/config.mirror` holding its config hash (pkg/kubelet/pod
 * mirror_client.go CreateMirrorPod; kubetypes.ConfigMirrorAnnotationKey). Pure.
 */
import type { Pod, Status } from '../../shared/api.js';
import { ConfigHashAnnotationKey, ConfigSeenAnnotationKey, isStaticPod } from '../../shared/annotations.js';
import { statusError } from '../http/status.js';

/** kConfigMirrorAnnotation: the mirror pod annotation (kubetypes.ConfigMirrorAnnotationKey). */
export const kConfigMirrorAnnotation = 'kubernetes.io/config.mirror';

/**
 * presentPod: `pod` as the API answers it: `apiVersion`/`kind` set, `metadata.resourceVersion`
 * (when known, `resourceVersion` > 0), and for a static pod the mirror annotation. Never mutates `pod`.
 */
export function presentPod(pod: Pod, resourceVersion?: number): Pod {
  const metadata = { ...pod.metadata };
  // The apiserver stamps creationTimestamp at create (a static pod's mirror pod keeps it across
  // kubelet restarts); here: the pod's status.startTime (kept across agent restarts: the runtime's
  // oldest sandbox), else when the source first saw it.
  metadata.creationTimestamp ??= pod.status?.startTime ?? metadata.annotations?.[ConfigSeenAnnotationKey];
  if (resourceVersion !== undefined && resourceVersion > 0) metadata.resourceVersion = String(resourceVersion);
  if (isStaticPod(pod))
    metadata.annotations = { ...metadata.annotations, [kConfigMirrorAnnotation]: metadata.annotations?.[ConfigHashAnnotationKey] ?? '' };
  return { ...pod, apiVersion: 'v1', kind: 'Pod', metadata };
}

/**
 * mirrorPodWriteRefused: the 403 a write to a static pod's mirror gets. The apiserver lets only the
 * node's kubelet create or delete a mirror pod (plugin/pkg/admission/noderestriction) and its spec
 * never changes through the API (the kubelet recreates it from the manifest); this node's answer
 * says where the pod comes from instead: its manifest on the node.
 * @param verb `update`, `patch` or `delete`.
 */
export function mirrorPodWriteRefused(name: string, verb: string): Status {
  return statusError(
    403,
    'Forbidden',
    `pods ${JSON.stringify(name)} is forbidden: cannot ${verb} a mirror pod: it is the static pod of a manifest on the node (annotation ${kConfigMirrorAnnotation}); edit or remove the manifest instead`,
    { name, kind: 'pods' },
  );
}
