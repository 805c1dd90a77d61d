/**
 * Counterpart of pkg/kubelet/prober/prober.go (runProbe's target for HTTPGet/TCPSocket, with
 * probe.ResolveContainerPort) and pkg/kubelet/lifecycle/handlers.go (the HTTP hook's host):
 * where an httpGet or tcpSocket handler connects. Pure; used by the probe manager (main thread)
 * and by lifecycle hooks (worker threads).
 */
import type { Container, Pod } from './api.js';
import type { GrpcProbeTask, NetProbeTask } from './probe-tasks.js';

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
 * podProbeHost: where a probe without an explicit host connects, as the kubelet's prober uses
 * status.podIP: the node's address for hostNetwork pods, else the pod IP, else (network `none`)
 * 127.0.0.1 inside the running sandbox's network namespace (`sandboxId`).
 * @throws Error when the pod has no address and no running sandbox.
 */
export function podProbeHost(pod: Pod, net: PodNetwork): { host: string; sandboxId?: string } {
  if (pod.spec?.hostNetwork === true) return { host: net.hostIp || '127.0.0.1' };
  if (net.podIp) return { host: net.podIp };
  if (net.sandboxId) return { host: '127.0.0.1', sandboxId: net.sandboxId };
  throw new Error('pod has no IP address and no running sandbox');
}

/** A grpc action as core/v1 has it (GRPCAction). */
export interface GrpcAction {
  port: number;
  /** The service name put in the HealthCheckRequest; unset means '' (the server's overall health). */
  service?: string | null;
}

/**
 * grpcProbeTarget turns a grpc probe action of `pod` into the target fields of a GrpcProbeTask,
 * as pkg/kubelet/prober/prober.go does for `p.GRPC`: the host is the pod's address
 * ({@link podProbeHost}; a grpc action has no host field), the port is used as given (an int32,
 * no named ports), and the service is sent as given, '' when unset.
 * @throws Error when the port is not 1–65535, or the pod has no address and no running sandbox.
 */
export function grpcProbeTarget(pod: Pod, action: GrpcAction, net: PodNetwork): Omit<GrpcProbeTask, 'kind' | 'protocol' | 'timeoutMs'> {
  const port = action.port;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid port number: ${port}`);
  return { ...podProbeHost(pod, net), port, service: action.service ?? '' };
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
  const base: Omit<NetProbeTask, 'kind' | 'protocol' | 'timeoutMs'> = {
    mode,
    port,
    ...(action.host ? { host: action.host } : podProbeHost(pod, net)),
  };
  if (mode === 'http') {
    const h = action as HttpGetAction;
    base.scheme = String(h.scheme ?? 'HTTP').toUpperCase() === 'HTTPS' ? 'HTTPS' : 'HTTP';
    base.path = h.path ? (h.path.startsWith('/') ? h.path : `/${h.path}`) : '/';
    if (h.httpHeaders?.length) base.headers = h.httpHeaders.map((x) => ({ name: x.name, value: x.value }));
  }
  return base;
}
