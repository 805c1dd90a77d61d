/**
 * Counterpart of pkg/kubelet/prober/prober.go (runProbe's target for HTTPGet/TCPSocket, with
 * probe.ResolveContainerPort) and pkg/kubelet/lifecycle/handlers.go (the HTTP hook's host):
 * where an httpGet or tcpSocket handler connects. Pure; used by the probe manager (main thread)
 * and by lifecycle hooks (worker threads).
 */
import type { Container, Pod } from './api.js';
import type { NetProbeTask } from './messages.js';

/** Where the pod's network is reachable from (decided by the caller from the pod and its status). */
export interface PodNetwork {
  /** The node's address (--node-ip): the target of hostNetwork pods. */
  hostIp: string;
  /** status.podIP ('' with network `none`). */
  podIp: string;
  /** The running sandbox's container ID ('' if none): the namespace to enter when there is no pod IP. */
  sandboxId: string;
}

/** An httpGet action as core/v1 has it (the fields we read). */
export interface HttpGetAction {
  host?: string;
  path?: string;
  port: number | string;
  scheme?: string;
  httpHeaders?: Array<{ name: string; value: string }>;
}

/** A tcpSocket action as core/v1 has it. */
export interface TcpSocketAction {
  host?: string;
  port: number | string;
}

/**
 * resolveContainerPort, as probe.ResolveContainerPort: a number is used as is; a name is looked up
 * in `container.ports[].name`; a numeric string is a number.
 * @throws Error `port "http" not found in container "web"` (or out of range) for a port that does not resolve.
 */
export function resolveContainerPort(port: number | string, container: Pick<Container, 'name' | 'ports'>): number {
  let n: number;
  if (typeof port === 'number') n = port;
  else if (/^\d+$/.test(port)) n = Number(port);
  else {
    const found = (container.ports ?? []).find((p) => p.name === port);
    if (!found) throw new Error(`port ${JSON.stringify(port)} not found in container ${JSON.stringify(container.name)}`);
    n = found.containerPort;
  }
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`invalid port number: ${n}`);
  return n;
}

/**
 * netProbeTarget turns an httpGet (`mode` http) or tcpSocket action of `container` in `pod` into
 * the target fields of a NetProbeTask, as the kubelet picks them: an explicit `host` wins; else
 * hostNetwork pods are reached on the node's address, pods with an IP on it, and pods with
 * neither (network `none`) on 127.0.0.1 inside the sandbox's network namespace (`sandboxId`).
 * The http path defaults to `/`, the scheme to HTTP.
 * @throws Error when the port does not resolve, or when the pod has no address and no running sandbox.
 */
export function netProbeTarget(
  pod: Pod,
  container: Pick<Container, 'name' | 'ports'>,
  mode: 'http' | 'tcp',
  action: HttpGetAction | TcpSocketAction,
  net: PodNetwork,
): Omit<NetProbeTask, 'kind' | 'protocol' | 'timeoutMs'> {
  const port = resolveContainerPort(action.port, container);
  const base: Omit<NetProbeTask, 'kind' | 'protocol' | 'timeoutMs'> = { mode, host: '', port };
  if (action.host) base.host = action.host;
  else if (pod.spec?.hostNetwork === true) base.host = net.hostIp || '127.0.0.1';
  else if (net.podIp) base.host = net.podIp;
  else if (net.sandboxId) {
    base.host = '127.0.0.1';
    base.sandboxId = net.sandboxId;
  } else throw new Error('pod has no IP address and no running sandbox');
  if (mode === 'http') {
    const h = action as HttpGetAction;
    base.scheme = String(h.scheme ?? 'HTTP').toUpperCase() === 'HTTPS' ? 'HTTPS' : 'HTTP';
    base.path = h.path ? (h.path.startsWith('/') ? h.path : `/${h.path}`) : '/';
    if (h.httpHeaders?.length) base.headers = h.httpHeaders.map((x) => ({ name: x.name, value: x.value }));
  }
  return base;
}
