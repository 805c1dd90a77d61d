// Counterpart of the apiserver's host and origin checks for browsers: the CORS filter of
// k8s.io/apiserver/pkg/server/filters/cors.go (an Origin must match --cors-allowed-origins, else
// 403) and the same-origin rule of the websocket handshake (golang.org/x/net/websocket checkOrigin,
// which client-go's streaming server inherits). It keeps a web page a browser on the node opens
// from reading the agent cross-site (a WebSocket from another origin) or by DNS rebinding (a name
// of the attacker's that now resolves to 127.0.0.1: its Host header is not one of the node's).
import type { Status } from '../shared/api.js';
import { statusError } from './http/status.js';

/**
 * OriginPolicy: the `Host` names the agent answers to on a listener of `scheme`: `names` (lower
 * case; IPv6 in brackets), with any port. The port is not checked against the listener's: a tunnel
 * or relay (ssh -L, a port-forward) changes it, while DNS rebinding is defeated by the name alone;
 * an `Origin` must still match the Host's name and port exactly.
 */
export interface OriginPolicy {
  scheme: 'http' | 'https';
  names: ReadonlySet<string>;
}

/** kLoopbackHostNames: the loopback names and addresses every node answers to. */
export const kLoopbackHostNames: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** bracketIPv6: an IPv6 address as a Host header carries it (`[::1]`); other names lower-cased. Pure. */
function hostName(name: string): string {
  const n = name.trim().toLowerCase();
  return n.includes(':') && !n.startsWith('[') ? `[${n}]` : n;
}

/**
 * newOriginPolicy: the policy of a listener of `scheme` for a node known by `names` (the
 * node name, `--address`, the node's IPs; the loopback names are always added; wildcard addresses
 * `0.0.0.0` and `::` and empty names are left out). Pure.
 */
export function newOriginPolicy(scheme: 'http' | 'https', names: readonly string[]): OriginPolicy {
  const set = new Set<string>(kLoopbackHostNames);
  for (const n of names) {
    const h = hostName(n);
    if (h !== '' && h !== '0.0.0.0' && h !== '[::]') set.add(h);
  }
  return { scheme, names: set };
}

/** splitHost: `name[:port]` of a Host header or URL host; port undefined when absent or malformed. */
function splitHost(host: string): { name: string; port?: number } {
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(host.trim().toLowerCase());
  if (!m) return { name: '' };
  return m[2] === undefined ? { name: m[1] } : { name: m[1], port: Number(m[2]) };
}

/** hostAllowed: whether `host` (a Host header) names this node. */
function hostAllowed(policy: OriginPolicy, host: string): boolean {
  return policy.names.has(splitHost(host).name);
}

/**
 * checkHostAndOrigin decides a request a browser could have sent: the `Host` header (`host`) must
 * name this node (OriginPolicy) and an `Origin` header (`origin`, '' when absent: kubectl and curl
 * send none) must be same-origin with it (same scheme, name and port). Pure; called for every
 * WebSocket upgrade and every request without credentials in a header.
 * @returns undefined when allowed, else a 403 Forbidden `Status` naming the header refused.
 */
export function checkHostAndOrigin(policy: OriginPolicy, host: string, origin: string): Status | undefined {
  if (!hostAllowed(policy, host)) {
    return statusError(
      403,
      'Forbidden',
      `the Host header ${JSON.stringify(host)} does not name this node (its names: ${[...policy.names].join(', ')}); a name that resolves here by DNS rebinding is refused`,
    );
  }
  if (origin === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const dflt = policy.scheme === 'https' ? 443 : 80;
  const [o, h] = [splitHost(url?.host ?? ''), splitHost(host)];
  const sameScheme = url !== undefined && url.protocol === `${policy.scheme}:` && (o.port ?? dflt) === (h.port ?? dflt);
  // The other scheme on the listener's own explicit port: no page can have that origin (the port
  // speaks only this listener's scheme), and websocket-client (the Python client's exec and
  // port-forward) sends `Origin: http://host:port` for a wss:// URL.
  const otherScheme =
    url !== undefined && url.protocol === `${policy.scheme === 'https' ? 'http' : 'https'}:` && o.port !== undefined && o.port === h.port;
  const sameOrigin = (sameScheme || otherScheme) && o.name === h.name;
  if (!sameOrigin)
    return statusError(
      403,
      'Forbidden',
      `the Origin header ${JSON.stringify(origin)} is not this node's origin (${policy.scheme}://${host}): cross-site requests are refused`,
    );
  return undefined;
}
