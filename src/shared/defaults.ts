// Counterpart of pkg/apis/core/v1/defaults.go: the apiserver's defaults for a v1 Pod.
/**
 * kubelet-ts has no apiserver in front of it, so every source defaults pods itself before
 * validation (as the kubelet's own file/http sources do by decoding through the scheme).
 * The defaulter is tolerant: where the input has the wrong shape (say `containers: "x"`) it
 * leaves that part alone and lets validation report it. Pure functions, safe in any thread.
 */
import type { Pod, Probe } from './api.js';
import { kDefaultRestartPolicy, kDefaultTerminationGracePeriodSeconds } from './pod-policy.js';
import { kSystemPriorityClasses } from './qos.js';

/** The `spec.schedulerName` default (v1.DefaultSchedulerName). */
export const kDefaultSchedulerName = 'default-scheduler';
/** The `terminationMessagePath` default (v1.TerminationMessagePathDefault). */
export const kDefaultTerminationMessagePath = '/dev/termination-log';

/**
 * Every VolumeSource field of core/v1 (k8s 1.31). A volume with none of them gets `emptyDir: {}`;
 * one naming any of them (even one we do not support) is left for validation to judge.
 */
export const kAllVolumeSourceFields: readonly string[] = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Go's "zero value" test used by the upstream defaulters: unset, null, '' or 0. */
function unset(v: unknown): boolean {
  return v === undefined || v === null || v === '' || v === 0;
}

function objects(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isObj) : [];
}

/**
 * defaultImagePullPolicy: `Always` when the image's tag is `latest`, or when it has neither a tag
 * nor a digest (the tag then defaults to `latest`); `IfNotPresent` otherwise. As SetDefaults_Container
 * with parsers.ParseImageName.
 */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@')) {
    // A digest pins the image; any tag before it is informational.
    const beforeDigest = image.slice(0, image.indexOf('@'));
    return imageTag(beforeDigest) === 'latest' ? 'Always' : 'IfNotPresent';
  }
  const tag = imageTag(image);
  return tag === undefined || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** The tag of an image reference without digest, or undefined. A `:` before the last `/` is a registry port. */
function imageTag(ref: string): string | undefined {
  const lastSlash = ref.lastIndexOf('/');
  const lastColon = ref.lastIndexOf(':');
  return lastColon > lastSlash ? ref.slice(lastColon + 1) : undefined;
}

function defaultHTTPGet(handler: unknown): void {
  if (!isObj(handler) || !isObj(handler.httpGet)) return;
  const h = handler.httpGet;
  if (unset(h.path)) h.path = '/';
  if (unset(h.scheme)) h.scheme = 'HTTP';
}

/** GRPCAction.Service is `+default=""` (k8s.io/api core/v1 types.go; pkg/apis/core/v1 zz_generated.defaults.go). */
function defaultGRPC(handler: Obj): void {
  if (isObj(handler.grpc) && (handler.grpc.service === undefined || handler.grpc.service === null)) handler.grpc.service = '';
}

function defaultProbe(probe: Probe | undefined): void {
  if (!isObj(probe)) return;
  const p = probe as Obj;
  if (unset(p.timeoutSeconds)) p.timeoutSeconds = 1;
  if (unset(p.periodSeconds)) p.periodSeconds = 10;
  if (unset(p.successThreshold)) p.successThreshold = 1;
  if (unset(p.failureThreshold)) p.failureThreshold = 3;
  defaultHTTPGet(p);
  defaultGRPC(p);
}

function defaultContainer(c: Obj, hostNetwork: boolean): void {
  if (unset(c.imagePullPolicy)) c.imagePullPolicy = defaultImagePullPolicy(typeof c.image === 'string' ? c.image : '');
  if (unset(c.terminationMessagePath)) c.terminationMessagePath = kDefaultTerminationMessagePath;
  if (unset(c.terminationMessagePolicy)) c.terminationMessagePolicy = 'File';
  for (const port of objects(c.ports)) {
    if (unset(port.protocol)) port.protocol = 'TCP';
    // SetDefaults_Pod: with hostNetwork the host port is the container port.
    if (hostNetwork && unset(port.hostPort) && port.containerPort !== undefined) port.hostPort = port.containerPort;
  }
  for (const env of objects(c.env)) {
    if (isObj(env.valueFrom) && isObj(env.valueFrom.fieldRef) && unset(env.valueFrom.fieldRef.apiVersion)) {
      env.valueFrom.fieldRef.apiVersion = 'v1';
    }
  }
  // SetDefaults_Pod: a resource with a limit and no request gets request = limit.
  if (isObj(c.resources) && isObj(c.resources.limits)) {
    const limits = c.resources.limits;
    if (c.resources.requests === undefined || c.resources.requests === null) c.resources.requests = {};
    const requests = c.resources.requests;
    if (isObj(requests)) {
      for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
    }
  }
  defaultProbe(c.livenessProbe as Probe);
  defaultProbe(c.readinessProbe as Probe);
  defaultProbe(c.startupProbe as Probe);
  if (isObj(c.lifecycle)) {
    defaultHTTPGet(c.lifecycle.postStart);
    defaultHTTPGet(c.lifecycle.preStop);
  }
}

/**
 * applyPodDefaults returns a deep copy of `pod` with the apiserver's defaults filled in
 * (SetDefaults_Pod, _PodSpec, _Container, _ContainerPort, _Probe, _HTTPGetAction, _Volume,
 * _HostPathVolumeSource, _ObjectFieldSelector):
 * - metadata.namespace `default`;
 * - spec: restartPolicy `Always`, dnsPolicy `ClusterFirst`, terminationGracePeriodSeconds 30
 *   (seconds), schedulerName `default-scheduler`, securityContext `{}`, enableServiceLinks true;
 *   with priorityClassName `system-node-critical` / `system-cluster-critical`, priority (2000001000 /
 *   2000000000) and preemptionPolicy `PreemptLowerPriority`, as the Priority admission plugin sets them;
 * - each container and init container: imagePullPolicy (see {@link defaultImagePullPolicy}),
 *   terminationMessagePath `/dev/termination-log`, terminationMessagePolicy `File`,
 *   ports[].protocol `TCP` (and hostPort = containerPort with hostNetwork), env
 *   valueFrom.fieldRef.apiVersion `v1`, resources.requests = limits for each resource with a
 *   limit and no request, probes timeoutSeconds 1 / periodSeconds 10 / successThreshold 1 /
 *   failureThreshold 3, httpGet path `/` and scheme `HTTP` (probes and lifecycle hooks), grpc
 *   service `''` (probes);
 * - volumes with no source → `emptyDir: {}`; hostPath.type `''`.
 *
 * As upstream (Go zero values), a field counts as unset when absent, null, `''`, or `0` for
 * the probe numbers. Never throws; the input is not modified.
 */
export function applyPodDefaults(pod: Pod): Pod {
  const out = structuredClone(pod) as Obj;
  if (!isObj(out.metadata)) out.metadata = out.metadata ?? {};
  if (isObj(out.metadata) && unset(out.metadata.namespace)) out.metadata.namespace = 'default';
  if (out.spec === undefined || out.spec === null) out.spec = {};
  const spec = out.spec;
  if (!isObj(spec)) return out as Pod;
  if (unset(spec.restartPolicy)) spec.restartPolicy = kDefaultRestartPolicy;
  if (unset(spec.dnsPolicy)) spec.dnsPolicy = 'ClusterFirst';
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) {
    spec.terminationGracePeriodSeconds = kDefaultTerminationGracePeriodSeconds;
  }
  if (unset(spec.schedulerName)) spec.schedulerName = kDefaultSchedulerName;
  if (spec.securityContext === undefined || spec.securityContext === null) spec.securityContext = {};
  if (spec.enableServiceLinks === undefined || spec.enableServiceLinks === null) spec.enableServiceLinks = true;
  // The Priority admission plugin: a known PriorityClass gives priority and preemptionPolicy
  // (a pod that sets a different priority is refused by validation, as the plugin refuses it).
  const pcn = spec.priorityClassName;
  if (typeof pcn === 'string' && Object.hasOwn(kSystemPriorityClasses, pcn)) {
    if (spec.priority === undefined || spec.priority === null) spec.priority = kSystemPriorityClasses[pcn];
    if (unset(spec.preemptionPolicy)) spec.preemptionPolicy = 'PreemptLowerPriority';
  }
  const hostNetwork = spec.hostNetwork === true;
  for (const c of objects(spec.initContainers)) defaultContainer(c, hostNetwork);
  for (const c of objects(spec.containers)) defaultContainer(c, hostNetwork);
  for (const c of objects(spec.ephemeralContainers)) defaultContainer(c, hostNetwork);
  for (const v of objects(spec.volumes)) {
    if (!kAllVolumeSourceFields.some((k) => v[k] !== undefined && v[k] !== null)) v.emptyDir = {};
    if (isObj(v.hostPath) && (v.hostPath.type === undefined || v.hostPath.type === null)) v.hostPath.type = '';
  }
  return out as Pod;
}
