/**
 * Counterpart of pkg/kubelet/network/dns/dns.go (Configurer.GetPodDNS, getPodDNSType,
 * parseResolvConf, appendDNSConfig, mergeDNSOptions, formDNSConfigFitsLimits,
 * generateSearchesForDNSClusterFirst) and of dockershim's rewriteResolvFile: the pod's resolv.conf.
 *
 * Where it goes: a file `{rootDir}/pods/{uid}/resolv.conf` bind-mounted at /etc/resolv.conf in
 * every app container (not Docker's Dns/DnsSearch/DnsOptions): Docker refuses DNS options on a
 * container that joins another's network (`container:<sandbox>`), and a network-`none` sandbox
 * keeps Docker's copy of the host's file; a bind mount works the same for every network mode and
 * is what dockershim did in effect (it rewrote the sandbox's resolv.conf, which joined containers share).
 */
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pod } from '../../shared/api.js';
import type { PodEventRecord } from '../../shared/sync-tasks.js';
import { kMaxDNSNameservers, kMaxDNSSearchListChars, kMaxDNSSearchPaths } from '../../shared/validation-sandbox.js';
import { podDir } from '../kubetypes/pod-dirs.js';
import { writePodFileSync } from '../kubetypes/pod-files.js';

/** A resolver configuration (the CRI DNSConfig). */
export interface DNSConfig {
  servers: string[];
  searches: string[];
  /** `name` or `name:value`. */
  options: string[];
}

/** The node's DNS settings (the kubelet's --cluster-dns, --cluster-domain, --resolv-conf). */
export interface NodeDNSSettings {
  /** Cluster DNS server IPs; empty = none (ClusterFirst falls back to Default). */
  clusterDNS: readonly string[];
  /** The cluster's domain, e.g. `cluster.local`; '' = none. */
  clusterDomain: string;
  /** The node's resolv.conf text (of --resolv-conf); '' when --resolv-conf is ''. */
  hostResolvConf: string;
  /** True when --resolv-conf is '' (the kubelet then points pods at 127.0.0.1 with search `.`). */
  noResolvConf: boolean;
}

/** The ClusterFirst options (defaultDNSOptions). */
const kDefaultDNSOptions = ['ndots:5'];
/** Longest search path kept (DNS1123SubdomainMaxLength; glibc aborts on longer ones). */
const kMaxSearchPathLength = 253;

/** parseResolvConf, as the kubelet's: nameserver lines accumulate; the last search and options lines win; `#` comments skipped. */
export function parseResolvConf(text: string): DNSConfig {
  const out: DNSConfig = { servers: [], searches: [], options: [] };
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/).filter(Boolean);
    if (fields.length === 0) continue;
    if (fields[0] === 'nameserver' && fields.length >= 2) out.servers.push(fields[1]);
    if (fields[0] === 'search')
      out.searches = fields
        .slice(1)
        .filter((s) => s !== '.')
        .map((s) => s.replace(/\.$/, ''));
    if (fields[0] === 'options') out.options = fields.slice(1);
  }
  return out;
}

function omitDuplicates(list: string[]): string[] {
  return [...new Set(list)];
}

/** mergeDNSOptions, as the kubelet's: by name, the pod's dnsConfig options overriding (order kept, first seen first). */
export function mergeDNSOptions(existing: string[], podOptions: ReadonlyArray<{ name?: string; value?: string }>): string[] {
  const m = new Map<string, string>();
  for (const op of existing) {
    const i = op.indexOf(':');
    if (i === -1) m.set(op, '');
    else m.set(op.slice(0, i), op.slice(i + 1));
  }
  for (const op of podOptions) if (op.name) m.set(op.name, op.value ?? '');
  return [...m].map(([k, v]) => (v ? `${k}:${v}` : k));
}

/**
 * getPodDNS, as Configurer.GetPodDNS: the DNS policy picks the base — `None`: empty;
 * `ClusterFirst` (or `ClusterFirstWithHostNet`; `ClusterFirst` on hostNetwork means Default):
 * the cluster DNS servers with the cluster search paths before the node's and `ndots:5`, or,
 * with no cluster DNS configured, a `MissingClusterDNS` warning event and the Default policy;
 * `Default`: the node's resolv.conf — then the pod's dnsConfig is appended (servers and searches
 * deduplicated, options merged by name) and the result cut to the limits (3 nameservers; 32
 * search paths, each ≤ 253 chars, 2048 chars in all), with a `DNSConfigForming` warning event
 * when something was cut. Pure; returns the events for the pod.
 */
export function getPodDNS(pod: Pod, node: NodeDNSSettings): { config: DNSConfig; events: PodEventRecord[] } {
  const events: PodEventRecord[] = [];
  const host = node.noResolvConf ? { servers: ['127.0.0.1'], searches: ['.'], options: [] } : parseResolvConf(node.hostResolvConf);
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  let config: DNSConfig = { servers: [...host.servers], searches: [...host.searches], options: [...host.options] };
  const clusterFirst = policy === 'ClusterFirstWithHostNet' || (policy === 'ClusterFirst' && pod.spec?.hostNetwork !== true);
  if (policy === 'None') config = { servers: [], searches: [], options: [] };
  else if (clusterFirst) {
    if (node.clusterDNS.length > 0) {
      const d = node.clusterDomain;
      const ns = pod.metadata?.namespace ?? 'default';
      config = {
        servers: [...node.clusterDNS],
        searches: d ? omitDuplicates([`${ns}.svc.${d}`, `svc.${d}`, d, ...host.searches]) : host.searches,
        options: [...kDefaultDNSOptions],
      };
    } else {
      const msg =
        'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';
      events.push({
        type: 'Warning',
        reason: 'MissingClusterDNS',
        message: `pod: "${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})". ${msg}`,
      });
    }
  }
  const dc = pod.spec?.dnsConfig;
  if (dc) {
    config.servers = omitDuplicates([...config.servers, ...(dc.nameservers ?? [])]);
    config.searches = omitDuplicates([...config.searches, ...(dc.searches ?? [])]);
    config.options = mergeDNSOptions(config.options, dc.options ?? []);
  }
  // formDNSConfigFitsLimits
  if (config.servers.length > kMaxDNSNameservers) {
    config.servers = config.servers.slice(0, kMaxDNSNameservers);
    events.push({
      type: 'Warning',
      reason: 'DNSConfigForming',
      message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${config.servers.join(' ')}`,
    });
  }
  let cut = false;
  let searches = config.searches;
  if (searches.length > kMaxDNSSearchPaths) {
    searches = searches.slice(0, kMaxDNSSearchPaths);
    cut = true;
  }
  const kept = searches.filter((s) => s.length <= kMaxSearchPathLength);
  if (kept.length !== searches.length) cut = true;
  searches = kept;
  while (searches.join(' ').length > kMaxDNSSearchListChars) {
    searches = searches.slice(0, -1);
    cut = true;
  }
  if (cut)
    events.push({
      type: 'Warning',
      reason: 'DNSConfigForming',
      message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(' ')}`,
    });
  config.searches = searches;
  return { config, events };
}

/** resolvConfContent: the resolv.conf text of a DNSConfig (nameserver lines, one search line, one options line; empty parts left out). */
export function resolvConfContent(c: DNSConfig): string {
  let out = '';
  for (const s of c.servers) out += `nameserver ${s}\n`;
  if (c.searches.length) out += `search ${c.searches.join(' ')}\n`;
  if (c.options.length) out += `options ${c.options.join(' ')}\n`;
  return out;
}

/** resolvConfPath: `{rootDir}/pods/{uid}/resolv.conf`, the host side of every container's /etc/resolv.conf. */
export function resolvConfPath(rootDir: string, uid: string): string {
  return path.join(podDir(rootDir, uid), 'resolv.conf');
}

/** The node side of the DNS settings as the worker knows them (bootstrap). */
export interface NodeDNSOptions {
  clusterDNS: readonly string[];
  clusterDomain: string;
  /** --resolv-conf: the node's resolv.conf path; '' = none. */
  resolvConf: string;
}

/** The largest node resolv.conf read, bytes (pkg/kubelet/network/dns/dns.go maxResolvConfLength, 10 MiB). */
export const kMaxResolvConfBytes = 10 * 1024 * 1024;

/**
 * readNodeResolvConf: the node's resolv.conf `file` as text, read at each sandbox creation as the
 * kubelet's getHostDNSConfig reads it; '' when it is missing, unreadable, not a regular file or
 * larger than kMaxResolvConfBytes. Synchronous (one open, fstat, read and close in the worker
 * thread, no threadpool hop: kubetypes/pod-files.ts says why): a small regular file on the node,
 * its size checked before it is read.
 */
export function readNodeResolvConf(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const st = fstatSync(fd);
    return st.isFile() && st.size <= kMaxResolvConfBytes ? readFileSync(fd, 'utf8') : '';
  } catch {
    return '';
  } finally {
    closeSync(fd);
  }
}

/**
 * readPodDNS: getPodDNS with the node's resolv.conf read from `node.resolvConf` (readNodeResolvConf:
 * a missing or unreadable one counts as empty) — the pod's DNSConfig for PodSandboxConfig.dns_config,
 * which a CRI runtime writes as the sandbox's resolv.conf. Never rejects.
 */
export async function readPodDNS(pod: Pod, node: NodeDNSOptions): Promise<{ config: DNSConfig; events: PodEventRecord[] }> {
  const hostResolvConf = node.resolvConf ? readNodeResolvConf(node.resolvConf) : '';
  return getPodDNS(pod, {
    clusterDNS: node.clusterDNS,
    clusterDomain: node.clusterDomain,
    hostResolvConf,
    noResolvConf: node.resolvConf === '',
  });
}

/**
 * ensureResolvConf writes the pod's resolv.conf (see getPodDNS) and resolves to its path and the
 * events of forming it. Reads the node's resolv.conf each time (a missing one counts as empty).
 * Runs on a worker thread. @throws the fs error when the file cannot be written.
 */
export async function ensureResolvConf(
  rootDir: string,
  pod: Pod,
  node: NodeDNSOptions,
): Promise<{ path: string; events: PodEventRecord[] }> {
  const { config, events } = await readPodDNS(pod, node);
  const file = resolvConfPath(rootDir, pod.metadata?.uid ?? '');
  writePodFileSync(file, resolvConfContent(config));
  return { path: file, events };
}
