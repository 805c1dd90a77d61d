/**
 * Counterpart of pkg/kubelet/kubelet_pods.go makeEnvironmentVariables / makeMounts and of the
 * resource reading of kuberuntime_container_linux.go calculateLinuxResources: what a container's
 * CRI config (container-config.ts) is made of — its env, its volume mounts (the directories
 * prepared on the node), its termination message file and its CPU/memory — runtime-neutral.
 */
import { constants as fsConstants } from 'node:fs';
import { chmod, mkdir, open, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Container, EnvVar, Pod, VolumeMount } from '../../shared/api.js';
import { kubernetesServiceEnv } from '../../shared/kubernetes-service-env.js';
import { expand, mappingFor } from '../../shared/expansion.js';
import { parseQuantity } from '../../shared/quantity.js';
import { claimVolumeHostPath } from '../volumes/local-path.js';
import { apiVolumePath } from '../volumes/pod-volumes.js';
import { checkSubPath, prepareSubPath, subPathMountPath } from '../volumes/subpath.js';
import { setVolumeOwnership } from './security-checks.js';
import type { PodConfigObjects } from '../../shared/sync-tasks.js';
import { envVarNameErrors } from '../../shared/names.js';
import { milliCpu } from '../cm/cpu-quota.js';
import { configError } from '../kubetypes/config-error.js';
import { fieldRefValue, resourceFieldValue, resourceQuantity, type DownwardAPIContext } from '../kubetypes/downward-api.js';
import { emptyDirPath, podDir, terminationMessageFile } from '../kubetypes/pod-dirs.js';
import { createEmptyPodFile } from '../kubetypes/pod-files.js';

/** What a container's config depends on besides its spec. */
export interface ContainerConfigContext extends DownwardAPIContext {
  /** This node's name (spec.nodeName when the pod has none; `kubelet-ts.node-name`). */
  nodeName: string;
  /** --root-dir (absolute). */
  rootDir: string;
  /** The node's address: status.hostIP, and status.podIP for hostNetwork pods. */
  hostIp: string;
  /**
   * status.podIP of a pod that is not hostNetwork: its sandbox's address on the pod network (CNI
   * ADD result; '' or absent = none, network `none`), as the kubelet's podIPs argument of
   * generateContainerConfig.
   */
  podIp?: string;
  /** The sandbox the container joins (RunPodSandbox's ID). */
  sandboxId: string;
  /** The ConfigMaps and Secrets the pod references (SyncPodTask.configObjects); absent = none known. */
  configObjects?: PodConfigObjects;
  /** Receives a Warning event on the pod (e.g. `InvalidEnvironmentVariableNames`); absent = dropped. */
  warn?: (reason: string, message: string) => void;
}

/**
 * envObject: the ConfigMap or Secret `name` of the pod's namespace from the task's objects, as a
 * map of keys to string values (a Secret's base64 `data` decoded; a ConfigMap's `data` only, as the
 * kubelet reads no binaryData into env), or undefined when absent.
 */
function envObject(ctx: ContainerConfigContext, kind: 'configmap' | 'secret', name: string): Record<string, string> | undefined {
  if (kind === 'configmap') {
    const cm = ctx.configObjects?.configMaps[name];
    return cm ? { ...(cm.data ?? {}) } : undefined;
  }
  const secret = ctx.configObjects?.secrets[name];
  if (!secret) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
  return out;
}

/**
 * makeEnvironmentVariables returns the container's env as ordered [name, value] pairs, as
 * kubelet_pods.go makeEnvironmentVariables: first each `envFrom` source's keys (`prefix` put in
 * front; a key that is no valid variable name is skipped and named in one Warning event
 * `InvalidEnvironmentVariableNames`: `Keys [a, b] from the EnvFrom configMap ns/x were skipped
 * since they are considered invalid environment variable names.`), then `env` in order, a later
 * one overriding: `value` with `$(VAR)` expanded against the variables defined before it;
 * `valueFrom.fieldRef` and `resourceFieldRef` resolved; `configMapKeyRef` / `secretKeyRef` read
 * from `ctx.configObjects`. A missing object or key that is not `optional` is a
 * CreateContainerConfigError with the kubelet's message (`configmap "x" not found`, `couldn't
 * find key k in ConfigMap ns/x`, the same for `secret`/`Secret`); an optional one is skipped.
 * @throws AgentError with reason `CreateContainerConfigError`.
 */
export function makeEnvironmentVariables(
  pod: Pod,
  container: Container,
  ctx: ContainerConfigContext,
  field: string,
): Array<[string, string]> {
  const defined = new Map<string, string>(kubernetesServiceEnv(ctx.configObjects?.kubernetesService));
  const lookup = mappingFor(defined);
  const ns = pod.metadata?.namespace || 'default';
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind = from.configMapRef ? 'configmap' : 'secret';
    if (!ref) continue;
    const values = envObject(ctx, kind, ref.name ?? '');
    if (!values) {
      if (ref.optional) continue;
      throw configError(`${kind} "${ref.name}" not found`);
    }
    const invalid: string[] = [];
    for (const [k, v] of Object.entries(values)) {
      const name = `${from.prefix ?? ''}${k}`;
      if (envVarNameErrors(name).length > 0) {
        invalid.push(name);
        continue;
      }
      defined.set(name, v);
    }
    if (invalid.length > 0) {
      invalid.sort();
      ctx.warn?.(
        'InvalidEnvironmentVariableNames',
        `Keys [${invalid.join(', ')}] from the EnvFrom ${kind === 'configmap' ? 'configMap' : 'secret'} ${ns}/${ref.name} were skipped since they are considered invalid environment variable names.`,
      );
    }
  }
  for (const [i, e] of (container.env ?? []).entries()) {
    const f = `${field}.env[${i}]`;
    let value: string | undefined;
    const vf = e.valueFrom;
    if (vf?.fieldRef) value = fieldRefValue(pod, vf.fieldRef.fieldPath, ctx, `${f}.valueFrom.fieldRef`);
    else if (vf?.resourceFieldRef) {
      const ref = vf.resourceFieldRef;
      const target = ref.containerName ? pod.spec?.containers?.find((c) => c.name === ref.containerName) : container;
      if (!target) throw configError(`${f}.valueFrom.resourceFieldRef.containerName: Not found: ${JSON.stringify(ref.containerName)}`);
      value = resourceFieldValue(target, ref.resource, ref.divisor, `${f}.valueFrom.resourceFieldRef`);
    } else if (vf?.configMapKeyRef || vf?.secretKeyRef) {
      const ref = (vf.configMapKeyRef ?? vf.secretKeyRef)!;
      const kind = vf.configMapKeyRef ? 'configmap' : 'secret';
      const values = envObject(ctx, kind, ref.name ?? '');
      if (!values) {
        if (ref.optional) continue;
        throw configError(`${kind} "${ref.name}" not found`);
      }
      if (!Object.hasOwn(values, ref.key)) {
        if (ref.optional) continue;
        throw configError(`couldn't find key ${ref.key} in ${kind === 'configmap' ? 'ConfigMap' : 'Secret'} ${ns}/${ref.name}`);
      }
      value = values[ref.key];
    } else value = expand(e.value ?? '', lookup);
    defined.set(e.name, value);
  }
  return [...defined.entries()];
}

/** expandCommand, as ExpandContainerCommandAndArgs: `$(VAR)` in command and args from the final env. */
export function expandCommand(container: Container, env: Array<[string, string]>): { command?: string[]; args?: string[] } {
  const lookup = mappingFor(new Map(env));
  return {
    command: container.command?.length ? container.command.map((s) => expand(s, lookup)) : undefined,
    args: container.args?.length ? container.args.map((s) => expand(s, lookup)) : undefined,
  };
}

async function checkHostPath(p: string, type: string, field: string): Promise<void> {
  const kind = await stat(p).catch(() => null);
  const fail = (what: string) => configError(`${field}: hostPath type check failed: ${p} is not ${what}`);
  switch (type) {
    case '':
      return;
    case 'DirectoryOrCreate':
      if (!kind) await mkdir(p, { recursive: true, mode: 0o755 });
      else if (!kind.isDirectory()) throw fail('a directory');
      return;
    case 'Directory':
      if (!kind?.isDirectory()) throw fail('a directory');
      return;
    case 'FileOrCreate':
      if (!kind) {
        await mkdir(path.dirname(p), { recursive: true, mode: 0o755 });
        await (await open(p, fsConstants.O_CREAT | fsConstants.O_WRONLY, 0o644)).close();
      } else if (!kind.isFile()) throw fail('a file');
      return;
    case 'File':
      if (!kind?.isFile()) throw fail('a file');
      return;
    case 'Socket':
      if (!kind?.isSocket()) throw fail('a socket file');
      return;
    case 'CharDevice':
      if (!kind?.isCharacterDevice()) throw fail('a character device');
      return;
    case 'BlockDevice':
      if (!kind?.isBlockDevice()) throw fail('a block device');
      return;
    default:
      throw configError(`${field}.type: Unsupported value: ${JSON.stringify(type)}`);
  }
}

/** One resolved volumeMount: the host path bound at `containerPath` (kubecontainer.Mount). */
export interface VolumeBind {
  hostPath: string;
  containerPath: string;
  readOnly: boolean;
  /** The volumeMount's mountPropagation (`None`, `HostToContainer`, `Bidirectional`; undefined = None). */
  propagation?: string;
}

/**
 * makeVolumeMounts, as the kubelet's makeMounts: the container's volumeMounts resolved to host
 * paths (kubecontainer.Mount; container-config.ts makes them the CRI's Mount): emptyDir →
 * `{rootDir}/pods/{uid}/volumes/kubernetes.io~empty-dir/{name}` (set up by setUpPodVolumes before,
 * mode 0777, a `medium: Memory` one a tmpfs: volumes/pod-volumes.ts; with the pod's fsGroup, group-owned
 * by it with setgid, as SetVolumeOwnership); hostPath → checked or created by its `type` (never
 * chowned, as the kubelet); persistentVolumeClaim → the claim's directory (read-only with the
 * volume's `readOnly`: volumes/local-path.ts); configMap, secret, downwardAPI and projected →
 * their AtomicWriter directory, always read-only (ReadOnlyAPIDataVolumes). `subPath`, or
 * `subPathExpr` expanded from the container's env (`env`, as ExpandContainerVolumeMounts: a
 * `$(VAR)` without a value is an error), is resolved safely inside the volume and bind-mounted
 * (volumes/subpath.ts), created as a directory when missing. `mountPropagation` is kept as given.
 * Idempotent.
 * @throws AgentError with reason `CreateContainerConfigError` (unknown volume, unsupported type,
 * failed hostPath check, subPath absolute, with `..`, or reaching outside the volume).
 */
export async function makeVolumeMounts(
  pod: Pod,
  container: Container,
  rootDir: string,
  field: string,
  env: Array<[string, string]> = [],
): Promise<VolumeBind[]> {
  const uid = pod.metadata?.uid ?? '';
  const mounts: VolumeBind[] = [];
  for (const [i, m] of (container.volumeMounts ?? ([] as VolumeMount[])).entries()) {
    const f = `${field}.volumeMounts[${i}]`;
    const vol = pod.spec?.volumes?.find((v) => v.name === m.name);
    if (!vol) throw configError(`${f}.name: Not found: ${JSON.stringify(m.name)}`);
    let hostPath: string;
    let readOnly = m.readOnly === true;
    if (vol.emptyDir) {
      // Made 0777 by the volume manager earlier in the same sync (setUpPodVolumes; while it was
      // never set up no container starts: sync-pod.ts waitForVolumes), as makeMounts reads a mounted
      // volume's path and makes nothing.
      hostPath = emptyDirPath(rootDir, uid, vol.name);
      const fsGroup = pod.spec?.securityContext?.fsGroup;
      if (fsGroup !== undefined) await setVolumeOwnership(hostPath, fsGroup, pod.spec?.securityContext?.fsGroupChangePolicy);
    } else if (vol.persistentVolumeClaim) {
      try {
        hostPath = await claimVolumeHostPath(rootDir, uid, vol.name);
      } catch (err) {
        throw configError(`${f}: ${(err as Error).message}`);
      }
      readOnly ||= vol.persistentVolumeClaim.readOnly === true;
    } else if (vol.hostPath) {
      hostPath = vol.hostPath.path;
      await checkHostPath(hostPath, vol.hostPath.type ?? '', `spec.volumes[${vol.name}].hostPath`);
    } else {
      const apiPath = apiVolumePath(rootDir, uid, vol);
      if (!apiPath)
        throw configError(
          `spec.volumes[${vol.name}]: Not supported: only emptyDir, hostPath, configMap, secret, downwardAPI, projected and persistentVolumeClaim volumes are supported`,
        );
      hostPath = apiPath;
      readOnly = true;
    }
    let subPath = m.subPath ?? '';
    if (m.subPathExpr) subPath = expandSubPathExpr(m.subPathExpr, env, `${f}.subPathExpr`);
    if (subPath) {
      try {
        checkSubPath(subPath);
        hostPath = await prepareSubPath(hostPath, subPath, subPathMountPath(podDir(rootDir, uid), vol.name, container.name, i));
      } catch (err) {
        throw configError(`${f}: ${(err as Error).message}`);
      }
    }
    mounts.push({ hostPath, containerPath: m.mountPath, readOnly, propagation: m.mountPropagation });
  }
  return mounts;
}

/**
 * expandSubPathExpr, as ExpandContainerVolumeMounts: `$(VAR)` from the container's env; a variable
 * without a value is `missing value for VAR`. Pure.
 * @throws AgentError with reason `CreateContainerConfigError`.
 */
export function expandSubPathExpr(expr: string, env: Array<[string, string]>, field: string): string {
  const values = new Map(env);
  const missing = new Set<string>();
  const out = expand(expr, (name: string) => {
    const v = values.get(name);
    if (!v) missing.add(name);
    return v ?? '';
  });
  if (missing.size) throw configError(`${field}: missing value for ${[...missing].sort().join(', ')}`);
  return out;
}

/**
 * prepareTerminationMessageFile: the host file of a container attempt's termination message
 * (kubelet makeMounts: `pods/<uid>/containers/<name>/<attempt>`), created empty and writable by
 * any user (synchronous calls, one open, fchmod and close: kubetypes/pod-files.ts); resolves to
 * its path.
 */
export async function prepareTerminationMessageFile(
  rootDir: string,
  uid: string,
  containerName: string,
  restartCount: number,
): Promise<string> {
  const file = terminationMessageFile(rootDir, uid, containerName, restartCount);
  createEmptyPodFile(file, 0o666);
  return file;
}

/**
 * containerCpuMemory: a container's memory limit (bytes, 0 = none) and CPU limit and request
 * (millicores; the request defaults to the limit), as calculateLinuxResources reads them.
 * @throws AgentError `CreateContainerConfigError` naming the field of a bad quantity.
 */
export function containerCpuMemory(container: Container, field: string): { memory: number; cpuLimit: number; cpuRequest: number } {
  try {
    const memLimit = resourceQuantity(container, 'limits', 'memory');
    const memory = memLimit === undefined ? 0 : Math.ceil(parseQuantity(memLimit, `${field}.resources.limits.memory`));
    const cpuLimit = milliCpu(resourceQuantity(container, 'limits', 'cpu'), `${field}.resources.limits.cpu`);
    const cpuRequest = milliCpu(resourceQuantity(container, 'requests', 'cpu'), `${field}.resources.requests.cpu`);
    return { memory, cpuLimit, cpuRequest: cpuRequest === 0 && cpuLimit > 0 ? cpuLimit : cpuRequest };
  } catch (err) {
    throw configError((err as Error).message);
  }
}
