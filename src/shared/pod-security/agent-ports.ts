/**
 * The node's own guard, beside Pod Security Admission and for every API identity, the admin's
 * too: a pod may not take, as a `hostPort`, a port the agent itself serves on. CNI portmap DNATs
 * a host port in the nat OUTPUT chain as well, so such a pod would shadow the agent's `--port` or
 * `--tls-port` for local clients and receive their bearer tokens (issue #38 finding 2). Upstream
 * has no such check (the kubelet's port is not in a pod's reach there: the apiserver is elsewhere);
 * the node's admission refusing host ports it cannot give (pkg/kubelet/lifecycle: the kubelet's
 * predicate admission, HostPorts) is the nearest. Pure.
 */
import type { FieldError } from '../errors.js';
import { containersOf, list, obj, str } from './visit.js';

/** AgentListen: where the agent serves: its bind address (`--address`) and its TCP ports (`--port`, `--tls-port`). */
export interface AgentListen {
  address: string;
  ports: readonly number[];
}

function unspecified(ip: string): boolean {
  return ip === '' || ip === '0.0.0.0' || ip === '::';
}

function loopback(ip: string): boolean {
  return /^127\./.test(ip) || ip === '::1' || ip === 'localhost';
}

/**
 * agentPortConflicts: one FieldError (`Invalid value`, on `spec.containers[i].ports[j].hostPort`)
 * per TCP host port of `pod` that is one of the agent's ports on an address that reaches the
 * agent: hostIP empty, a wildcard or loopback; any hostIP when the agent binds a wildcard; or the
 * agent's own address. Empty when none.
 */
export function agentPortConflicts(pod: unknown, listen: AgentListen): FieldError[] {
  const spec = obj(obj(pod)?.spec);
  if (!spec || listen.ports.length === 0) return [];
  const errors: FieldError[] = [];
  for (const { c, path } of containersOf(spec)) {
    list(c.ports).forEach((p, j) => {
      const hostPort = p.hostPort;
      if (typeof hostPort !== 'number' || !listen.ports.includes(hostPort)) return;
      if ((str(p.protocol) || 'TCP') !== 'TCP') return;
      const hostIP = str(p.hostIP);
      if (!(unspecified(hostIP) || loopback(hostIP) || unspecified(listen.address) || hostIP === listen.address)) return;
      errors.push({
        field: `${path}.ports[${j}].hostPort`,
        type: 'Invalid value',
        value: hostPort,
        detail: `the agent serves its API on port ${hostPort} (--port/--tls-port); a pod may not take it as a host port`,
      });
    });
  }
  return errors;
}
