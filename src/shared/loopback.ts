// Counterpart of Go's net.IP.IsLoopback (the test the kubelet's stance on --address rests on).
import { BlockList, isIP } from 'node:net';

const kLoopback = new BlockList();
kLoopback.addSubnet('127.0.0.0', 8, 'ipv4');
kLoopback.addAddress('::1', 'ipv6');
kLoopback.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/**
 * isLoopbackHost tells whether `host` reaches only this machine: an IPv4 address in 127.0.0.0/8,
 * the IPv6 loopback `::1` (brackets allowed, as in a URL's host), an IPv4-mapped loopback
 * (`::ffff:127.0.0.1`), or the name `localhost` (RFC 6761 keeps it for loopback). Every other
 * name or address, and the wildcard addresses `0.0.0.0` and `::`, is not loopback. Pure.
 */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const family = isIP(h);
  if (family === 0) return false;
  return kLoopback.check(h, family === 4 ? 'ipv4' : 'ipv6');
}
