/**
 * Counterpart of pkg/kubelet/kuberuntime/labels.go (newPodLabels, newPodAnnotations,
 * newContainerLabels, newContainerAnnotations, getContainerInfoFromAnnotations): the labels and
 * annotations kuberuntime puts on a CRI sandbox and container, and reads back.
 *
 * The CRI keeps labels (selectable: ListPodSandbox / ListContainers filter on them) and
 * annotations (opaque) apart. A runtime that has only labels (dockershim, helpers.go makeLabels)
 * stores each annotation `k` as the label `annotation.k` (`annotation.io.kubernetes.container.hash`, …)
 * and splits them back (extractLabels): kuberuntime sees the CRI's labels and annotations only.
 * Every sandbox and container also carries `kubelet-ts.node-name` (kNodeNameLabel), the label
 * every List of this node filters on (node scope: several agents may share one runtime).
 */
import type { Container, Pod } from '../../shared/api.js';
import type { StringMap } from '../runtime/cri/types.js';
import { podTerminationGracePeriodSeconds } from '../../shared/pod-policy.js';
import {
  kContainerNameLabel,
  kNodeNameLabel,
  kPodNameLabel,
  kPodNamespaceLabel,
  kPodUidLabel,
  sandboxHash,
} from '../kubetypes/label-keys.js';

/** `io.kubernetes.container.hash` (annotation): hashContainer() of the spec the container was made from. */
export const kContainerHashAnnotation = 'io.kubernetes.container.hash';
/** `io.kubernetes.container.restartCount` (annotation). */
export const kRestartCountAnnotation = 'io.kubernetes.container.restartCount';
/** `io.kubernetes.container.terminationMessagePath` (annotation). */
export const kTerminationMessagePathAnnotation = 'io.kubernetes.container.terminationMessagePath';
/** `io.kubernetes.container.terminationMessagePolicy` (annotation). */
export const kTerminationMessagePolicyAnnotation = 'io.kubernetes.container.terminationMessagePolicy';
/** `io.kubernetes.pod.terminationGracePeriod` (annotation, seconds). */
export const kTerminationGracePeriodAnnotation = 'io.kubernetes.pod.terminationGracePeriod';
/** `io.kubernetes.container.preStopHandler` (annotation): the preStop handler as JSON. */
export const kPreStopHandlerAnnotation = 'io.kubernetes.container.preStopHandler';
/** `io.kubernetes.container.ports` (annotation): the container's ports as JSON. */
export const kContainerPortsAnnotation = 'io.kubernetes.container.ports';

function podMeta(pod: Pod): { name: string; namespace: string; uid: string } {
  return { name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? 'default', uid: pod.metadata?.uid ?? '' };
}

/**
 * nodeSelector: the `label_selector` of every ListPodSandbox / ListContainers of this node
 * (optionally of one pod UID): `{ 'kubelet-ts.node-name': nodeName[, 'io.kubernetes.pod.uid': uid] }`.
 */
export function nodeSelector(nodeName: string, uid?: string): StringMap {
  return uid ? { [kNodeNameLabel]: nodeName, [kPodUidLabel]: uid } : { [kNodeNameLabel]: nodeName };
}

/**
 * newPodLabels, as labels.go: the pod's own labels plus `io.kubernetes.pod.name`, `.namespace`,
 * `.uid`, and this node's `kubelet-ts.node-name` (which win over a pod label of the same key).
 */
export function newPodLabels(pod: Pod, nodeName: string): StringMap {
  const m = podMeta(pod);
  return {
    ...(pod.metadata?.labels ?? {}),
    [kPodNameLabel]: m.name,
    [kPodNamespaceLabel]: m.namespace,
    [kPodUidLabel]: m.uid,
    [kNodeNameLabel]: nodeName,
  };
}

/**
 * newPodAnnotations, as labels.go: the pod's annotations, plus what kubelet-ts reads back from a
 * sandbox: its grace period (seconds) and the sandbox hash (`hash`, default sandboxHash(pod): a change of
 * what a running sandbox cannot change recreates it).
 */
export function newPodAnnotations(pod: Pod, hash: string = sandboxHash(pod)): StringMap {
  return {
    ...(pod.metadata?.annotations ?? {}),
    [kTerminationGracePeriodAnnotation]: String(podTerminationGracePeriodSeconds(pod)),
    [kContainerHashAnnotation]: hash,
  };
}

/** newContainerLabels, as labels.go: pod name, namespace, UID, container name, and this node's label. */
export function newContainerLabels(pod: Pod, container: Container, nodeName: string): StringMap {
  const m = podMeta(pod);
  return {
    [kPodNameLabel]: m.name,
    [kPodNamespaceLabel]: m.namespace,
    [kPodUidLabel]: m.uid,
    [kContainerNameLabel]: container.name,
    [kNodeNameLabel]: nodeName,
  };
}

/**
 * newContainerAnnotations, as labels.go: the container's hash and restart count, the pod's grace
 * period (seconds), terminationMessagePath/Policy when set, the preStop handler and the ports as
 * JSON when there are some.
 */
export function newContainerAnnotations(pod: Pod, container: Container, hash: string, restartCount: number): StringMap {
  const out: StringMap = {
    [kContainerHashAnnotation]: hash,
    [kRestartCountAnnotation]: String(restartCount),
    [kTerminationGracePeriodAnnotation]: String(podTerminationGracePeriodSeconds(pod)),
  };
  if (container.terminationMessagePath) out[kTerminationMessagePathAnnotation] = container.terminationMessagePath;
  if (container.terminationMessagePolicy) out[kTerminationMessagePolicyAnnotation] = container.terminationMessagePolicy;
  if (container.lifecycle?.preStop) out[kPreStopHandlerAnnotation] = JSON.stringify(container.lifecycle.preStop);
  if (container.ports?.length) out[kContainerPortsAnnotation] = JSON.stringify(container.ports);
  return out;
}

/** What getContainerInfoFromAnnotations reads back; a missing or malformed value reads as its zero. */
export interface AnnotatedContainerInfo {
  hash: string;
  restartCount: number;
  terminationMessagePath: string;
  terminationMessagePolicy: string;
  /** Seconds; undefined when absent. */
  terminationGracePeriodSeconds?: number;
}

/** getContainerInfoFromAnnotations, as labels.go: the annotations above, parsed. Never throws. */
export function getContainerInfoFromAnnotations(annotations: StringMap | null | undefined): AnnotatedContainerInfo {
  const a = annotations ?? {};
  const int = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined);
  return {
    hash: a[kContainerHashAnnotation] ?? '',
    restartCount: int(a[kRestartCountAnnotation]) ?? 0,
    terminationMessagePath: a[kTerminationMessagePathAnnotation] ?? '',
    terminationMessagePolicy: a[kTerminationMessagePolicyAnnotation] ?? '',
    terminationGracePeriodSeconds: int(a[kTerminationGracePeriodAnnotation]),
  };
}
