/**
 * The downward API's values, for env (valueFrom.fieldRef / resourceFieldRef) and for downwardAPI
 * and projected volumes alike, as the kubelet's kubelet_pods.go podFieldSelectorRuntimeValue and
 * containerResourceRuntimeValue (pkg/api/v1/resource/helpers.go ExtractContainerResourceValue).
 * A leaf: the volumes read it without the container config.
 */
import os from 'node:os';
import type { Container, Pod } from '../../shared/api.js';
import { parseQuantity } from '../../shared/quantity.js';
import { milliCpu } from '../cm/cpu-quota.js';
import { configError } from './config-error.js';

/** What the downward API reads besides the pod: the node's name and addresses. */
export interface DownwardAPIContext {
  /** This node's name (spec.nodeName when the pod has none). */
  nodeName: string;
  /** The node's address: status.hostIP, and status.podIP for hostNetwork pods. */
  hostIp: string;
  /** status.podIP of a pod that is not hostNetwork ('' or absent = none). */
  podIp?: string;
}

/** resourceQuantity: `resources.{limits|requests}[res]` of a container, undefined when unset. */
export function resourceQuantity(c: Container, which: 'limits' | 'requests', res: string): string | number | undefined {
  return (c.resources?.[which] as Record<string, string | number> | undefined)?.[res];
}

/**
 * resourceFieldValue, as the kubelet's containerResourceRuntimeValue: `limits.cpu` and
 * `requests.cpu` as whole cores rounded up (after the divisor), memory and ephemeral storage in
 * bytes rounded up. An unset limit reads the node's capacity (CPUs, total memory), as the kubelet
 * reads node allocatable.
 */
export function resourceFieldValue(c: Container, resource: string, divisor: string | number | undefined, field: string): string {
  const [which, res] = resource.split('.', 2) as ['limits' | 'requests', string];
  if ((which !== 'limits' && which !== 'requests') || !['cpu', 'memory', 'ephemeral-storage'].includes(res)) {
    throw configError(`${field}.resource: Unsupported value: ${JSON.stringify(resource)}`);
  }
  let q = resourceQuantity(c, which, res);
  if (q === undefined && which === 'limits') q = res === 'cpu' ? os.availableParallelism() : res === 'memory' ? os.totalmem() : undefined;
  if (res === 'cpu') {
    const d = milliCpu(divisor ?? '1', `${field}.divisor`);
    if (d <= 0) throw configError(`${field}.divisor: Invalid value: ${JSON.stringify(divisor)}`);
    return String(Math.ceil(milliCpu(q, field) / d));
  }
  const d = parseQuantity(divisor ?? '1', `${field}.divisor`);
  if (d <= 0) throw configError(`${field}.divisor: Invalid value: ${JSON.stringify(divisor)}`);
  return String(Math.ceil((q === undefined ? 0 : parseQuantity(q, field)) / d));
}

const kLabelRefRe = /^metadata\.(labels|annotations)\['(.+)'\]$/;

/**
 * fieldRefValue, as podFieldSelectorRuntimeValue (the downward API for env and volumes).
 * @throws AgentError `CreateContainerConfigError` naming `field` for an unsupported fieldPath.
 */
export function fieldRefValue(pod: Pod, fieldPath: string, ctx: DownwardAPIContext, field: string): string {
  const m = kLabelRefRe.exec(fieldPath);
  if (m) return (m[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations)?.[m[2]] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? 'default';
    case 'metadata.uid':
      return pod.metadata?.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName || ctx.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
    case 'status.hostIPs':
      return ctx.hostIp;
    case 'status.podIP':
    case 'status.podIPs':
      return pod.spec?.hostNetwork ? ctx.hostIp : (ctx.podIp ?? '');
    default:
      throw configError(`${field}.fieldPath: Unsupported value: ${JSON.stringify(fieldPath)}`);
  }
}
