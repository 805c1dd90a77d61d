/**
 * The `kubernetes` service's environment variables, as the kubelet gives every container
 * (pkg/kubelet/kubelet_pods.go getServiceEnvVarMap: the master service of the `default` namespace is
 * always included, enableServiceLinks or not; pkg/kubelet/envvars/envvars.go FromServices makes the
 * names), pointed at the node's own TLS API where the pod can reach it — there is no service IP on
 * a lone node. Where that is ({@link kubernetesServiceEndpoint}) is secure by default: the API is
 * never opened wider for it. Pure; any thread.
 */
import type { Pod } from './api.js';

/** KubernetesServiceEndpoint: where a pod reaches the node's API: an IP and the TLS port. */
export interface KubernetesServiceEndpoint {
  host: string;
  port: number;
}

/** ApiListener: the node's TLS API as the pods may see it. */
export interface ApiListener {
  /** `--address`, the API's bind address (e.g. 127.0.0.1, 0.0.0.0, a host IP). */
  address: string;
  /** The TLS port serving now; ≤ 0 = no TLS listener (then no endpoint). */
  tlsPort: number;
  /** The pod network's gateway on the node (the agent's bridge), '' = no pod network of the agent's. */
  gateway: string;
}

const kWildcards = new Set(['0.0.0.0', '::', '']);

function isLoopback(a: string): boolean {
  return a === 'localhost' || a === '::1' || a.startsWith('127.');
}

/**
 * kubernetesServiceEndpoint: where `pod` reaches the API, or undefined when it cannot:
 * - a hostNetwork pod: `127.0.0.1` when the API binds loopback or every address, else the bind address;
 * - a pod on the agent's pod network: the network's gateway, only when the API binds every address
 *   (`--address 0.0.0.0`) or the gateway itself — with the default `--address 127.0.0.1` such a pod
 *   gets no endpoint (loopback is its own);
 * - otherwise (network `none`, no TLS port) none.
 * @param onPodNetwork whether the pod's sandbox is on the agent's pod network (CNI).
 */
export function kubernetesServiceEndpoint(pod: Pod, onPodNetwork: boolean, api: ApiListener): KubernetesServiceEndpoint | undefined {
  if (!(api.tlsPort > 0)) return undefined;
  if (pod.spec?.hostNetwork === true) {
    return { host: isLoopback(api.address) || kWildcards.has(api.address) ? '127.0.0.1' : api.address, port: api.tlsPort };
  }
  if (!onPodNetwork || api.gateway === '') return undefined;
  if (kWildcards.has(api.address) || api.address === api.gateway) return { host: api.gateway, port: api.tlsPort };
  return undefined;
}

/**
 * kubernetesServiceEnv: the variables of the `kubernetes` service (envvars.go FromServices for a
 * service named `kubernetes` with one port named `https`): `KUBERNETES_SERVICE_HOST`,
 * `KUBERNETES_SERVICE_PORT`, `KUBERNETES_SERVICE_PORT_HTTPS`, `KUBERNETES_PORT`,
 * `KUBERNETES_PORT_<port>_TCP` and its `_PROTO`, `_PORT`, `_ADDR`; [] for no endpoint. An IPv6
 * host is bracketed in the URLs.
 */
export function kubernetesServiceEnv(ep: KubernetesServiceEndpoint | undefined): Array<[string, string]> {
  if (!ep) return [];
  const url = `tcp://${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}`;
  const p = `KUBERNETES_PORT_${ep.port}_TCP`;
  return [
    ['KUBERNETES_SERVICE_HOST', ep.host],
    ['KUBERNETES_SERVICE_PORT', String(ep.port)],
    ['KUBERNETES_SERVICE_PORT_HTTPS', String(ep.port)],
    ['KUBERNETES_PORT', url],
    [p, url],
    [`${p}_PROTO`, 'tcp'],
    [`${p}_PORT`, String(ep.port)],
    [`${p}_ADDR`, ep.host],
  ];
}

/**
 * podNetworkGateway: the gateway of a pod CIDR as the bridge plugin's host-local IPAM picks it (the
 * first address of the range), '' for none or for an IPv6 range.
 */
export function podNetworkGateway(podCIDR: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(podCIDR);
  if (!m) return '';
  const n = ((+m[1] << 24) >>> 0) + (+m[2] << 16) + (+m[3] << 8) + +m[4] + 1;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}
