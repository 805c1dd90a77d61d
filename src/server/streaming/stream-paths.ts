/**
 * The Kubernetes API's exec and attach paths (`/api/v1/namespaces/{ns}/pods/{pod}/exec|attach`,
 * the container in `?container=`), served by the same WebSocket code as the kubelet's own
 * `/exec/{ns}/{pod}/{container}` (streaming/exec-ws.ts). As the apiserver's pod exec/attach REST
 * (pkg/registry/core/pod/rest/subresources.go with pod.ExecLocation: a pod with one container
 * needs no `container`; with several, kubectl names one, defaulting to the
 * `kubectl.kubernetes.io/default-container` annotation or the first).
 */
import type { AgentHost } from '../host/agent-host.js';

/** kStreamPatterns: [kind, uWS pattern] of every WebSocket stream path, the kubelet's first. */
export const kStreamPatterns: readonly (readonly ['exec' | 'attach', string])[] = Object.freeze([
  ['exec', '/exec/:namespace/:pod/:container'],
  ['attach', '/attach/:namespace/:pod/:container'],
  ['exec', '/api/v1/namespaces/:namespace/pods/:pod/exec'],
  ['attach', '/api/v1/namespaces/:namespace/pods/:pod/attach'],
] as const);

/** isKubeStreamPattern: the pattern is the Kubernetes API's (the container comes from the query). */
export function isKubeStreamPattern(pattern: string): boolean {
  return pattern.startsWith('/api/');
}

/**
 * kubeStreamContainer: the container a Kubernetes-API stream enters, still percent-encoded as uWS
 * path parameters are: `?container=`, else the pod's only container, else '' (the stream code then
 * answers 400 naming the parameter). Reads `rawNamespace`/`rawPod` as uWS gives them (encoded).
 */
export function kubeStreamContainer(host: AgentHost, rawNamespace: string, rawPod: string, query: URLSearchParams): string {
  const given = query.get('container');
  if (given) return encodeURIComponent(given);
  let pod;
  try {
    pod = host.getPod(decodeURIComponent(rawNamespace), decodeURIComponent(rawPod));
  } catch {
    return '';
  }
  const containers = pod?.spec?.containers ?? [];
  const preferred = pod?.metadata?.annotations?.['kubectl.kubernetes.io/default-container'];
  const name = containers.find((c) => c.name === preferred)?.name ?? (containers.length === 1 ? containers[0].name : '');
  // A pod that does not exist: any valid name, so that the lookup answers 404 for the pod.
  return encodeURIComponent(name || (pod ? '' : 'unknown'));
}
