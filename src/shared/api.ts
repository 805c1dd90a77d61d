/**
 * Counterpart of k8s.io/api/core/v1 (types.go): the subset of the v1 API that kubelet-ts speaks.
 *
 * We reuse the `kubernetes-types` package's generated types rather than writing our own copy of
 * the API; every field there is optional, exactly as in the wire format. Code that needs a field
 * present after defaulting (see `defaults.ts`) narrows with the helpers below.
 *
 * Type-only module: safe to import from any thread.
 */
import type * as v1 from 'kubernetes-types/core/v1.js';
import type * as meta from 'kubernetes-types/meta/v1.js';

export type Pod = v1.Pod;
export type PodSpec = v1.PodSpec;
export type PodStatus = v1.PodStatus;
export type PodCondition = v1.PodCondition;
export type Container = v1.Container;
export type ContainerPort = v1.ContainerPort;
export type ContainerStatus = v1.ContainerStatus;
export type ContainerState = v1.ContainerState;
export type EnvVar = v1.EnvVar;
export type Volume = v1.Volume;
export type VolumeMount = v1.VolumeMount;
export type Probe = v1.Probe;
export type ResourceRequirements = v1.ResourceRequirements;
export type PodList = v1.PodList;
export type Event = v1.Event;
export type Node = v1.Node;
export type ConfigMap = v1.ConfigMap;
export type Secret = v1.Secret;
export type ObjectMeta = meta.ObjectMeta;
export type Status = meta.Status;
export type StatusCause = meta.StatusCause;

/**
 * StatusReason: the `metav1.StatusReason` values kubelet-ts answers with (the `reason` of an HTTP
 * `Status`, apimachinery's api/errors). Not a container's waiting reason: see `ContainerReason`
 * in errors.ts.
 */
export type StatusReason =
  | 'BadRequest'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Expired'
  | 'Gone'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'TooManyRequests'
  | 'Unauthorized'
  | 'Forbidden'
  | 'Timeout';

/** PodPhase values (core/v1 PodPhase). */
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** RestartPolicy values (core/v1 RestartPolicy). */
export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

/** PullPolicy values (core/v1 PullPolicy). */
export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/** Where a pod came from: the `kubernetes.io/config.source` annotation (docs/contracts.md "Pod sources and pod identity"). */
export type PodSourceName = 'file' | 'http' | 'api' | 'etcd';
