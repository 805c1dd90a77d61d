/**
 * Counterpart of pkg/kubelet/kubelet_pods.go GeneratePodHostNameAndDomain,
 * truncatePodHostnameIfNeeded, makeHostsMount / ensureHostsFile / managedHostsFileContent /
 * nodeHostsFileContent / hostsEntriesFromHostAliases, and of the FQDN hostname of
 * pkg/kubelet/kuberuntime/kuberuntime_sandbox.go generatePodSandboxConfig (setHostnameAsFQDN):
 * the pod's hostname and the kubelet-managed `/etc/hosts` of every container.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Pod } from '../../shared/api.js';
import { AgentError } from '../../shared/errors.js';
import { podDir } from '../kubetypes/pod-dirs.js';
import { writePodFileSync } from '../kubetypes/pod-files.js';

/** writePodFile: the pod's small files' writer (kubetypes/pod-files.ts), where the Docker sandbox's resolv.conf imports it from. */
export { writePodFile } from '../kubetypes/pod-files.js';

/** The kernel's hostname limit the kubelet checks an FQDN hostname against (64 characters). */
export const kMaxFQDNHostnameLength = 64;
/** A hostname (the leaf) is cut to 63 characters, as truncatePodHostnameIfNeeded. */
const kHostnameMaxLen = 63;
/** The loopback address the hostname resolves to while the pod has no IP (network `none`). */
export const kNoPodIpHostAddress = '127.0.1.1';

/**
 * generatePodHostNameAndDomain, as the kubelet's: the hostname is spec.hostname or the pod's
 * name, cut to 63 characters (and trailing `-`/`.` trimmed); the domain is
 * `<subdomain>.<namespace>.svc.<clusterDomain>` when spec.subdomain is set, else ''.
 * @throws AgentError ERR_INVALID_ARGUMENT if nothing is left of the hostname after trimming.
 */
export function generatePodHostNameAndDomain(pod: Pod, clusterDomain: string): { hostname: string; domain: string } {
  const name = pod.metadata?.name ?? '';
  let hostname = pod.spec?.hostname || name;
  if (hostname.length > kHostnameMaxLen) {
    hostname = hostname.slice(0, kHostnameMaxLen).replace(/[-.]+$/, '');
    if (!hostname)
      throw new AgentError(
        'ERR_INVALID_ARGUMENT',
        `hostname for pod ${JSON.stringify(name)} was invalid: ${JSON.stringify(pod.spec?.hostname || name)}`,
      );
  }
  const subdomain = pod.spec?.subdomain;
  const domain = subdomain ? `${subdomain}.${pod.metadata?.namespace ?? 'default'}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

/**
 * podSandboxHostname: the hostname the sandbox (and so every container) gets — the leaf
 * hostname, or with `setHostnameAsFQDN: true` the FQDN `<hostname>.<domain>` (the leaf when there
 * is no domain). Undefined for a hostNetwork pod (the host's name, as the kubelet leaves it).
 * @throws AgentError ERR_INVALID_ARGUMENT with the kubelet's message when the FQDN is longer than
 * 64 characters (the sandbox then fails: CreatePodSandboxError).
 */
export function podSandboxHostname(pod: Pod, clusterDomain: string): string | undefined {
  if (pod.spec?.hostNetwork) return undefined;
  const { hostname, domain } = generatePodHostNameAndDomain(pod, clusterDomain);
  if (pod.spec?.setHostnameAsFQDN !== true) return hostname;
  const fqdn = domain ? `${hostname}.${domain}` : hostname;
  if (fqdn.length > kMaxFQDNHostnameLength) {
    throw new AgentError(
      'ERR_INVALID_ARGUMENT',
      `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${kMaxFQDNHostnameLength} characters is the max, ${fqdn.length} characters requested)`,
    );
  }
  return fqdn;
}

/** hostsEntriesFromHostAliases: `\n# Entries added by HostAliases.\n` then one `ip\thost1\thost2` line per alias ('' without aliases). */
export function hostsEntriesFromHostAliases(pod: Pod): string {
  const aliases = pod.spec?.hostAliases ?? [];
  if (aliases.length === 0) return '';
  return '\n# Entries added by HostAliases.\n' + aliases.map((a) => `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`).join('');
}

/**
 * managedHostsFileContent, as the kubelet's: its header, the IPv4/IPv6 localhost lines, one
 * line per pod IP with `<fqdn>\t<hostname>` (or the hostname alone without a domain), then the
 * hostAliases. kubelet-ts difference: with no pod IP (a network-`none` sandbox, until the pod
 * network issue gives pods addresses) the kubelet mounts no hosts file at all; here the
 * hostname is written on {@link kNoPodIpHostAddress} instead, so that it and the hostAliases
 * still resolve.
 */
export function managedHostsFileContent(pod: Pod, podIps: readonly string[], clusterDomain: string): string {
  const { hostname, domain } = generatePodHostNameAndDomain(pod, clusterDomain);
  let out = '# Kubernetes-managed hosts file.\n';
  out += '127.0.0.1\tlocalhost\n';
  out += '::1\tlocalhost ip6-localhost ip6-loopback\n';
  out += 'fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n';
  const ips = podIps.length > 0 ? podIps : [kNoPodIpHostAddress];
  for (const ip of ips) out += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + hostsEntriesFromHostAliases(pod);
}

/** nodeHostsFileContent, as the kubelet's for a hostNetwork pod: a header, the node's hosts file, then the hostAliases. */
export function nodeHostsFileContent(pod: Pod, nodeHosts: string): string {
  return '# Kubernetes-managed hosts file (host network).\n' + nodeHosts + hostsEntriesFromHostAliases(pod);
}

/** etcHostsPath: `{rootDir}/pods/{uid}/etc-hosts`, the host side of every container's /etc/hosts (as the kubelet's). */
export function etcHostsPath(rootDir: string, uid: string): string {
  return path.join(podDir(rootDir, uid), 'etc-hosts');
}

/**
 * ensureHostsFile, as the kubelet's: writes the pod's hosts file (`etcHostsPath`) — for a
 * hostNetwork pod the node's `/etc/hosts` (`nodeHostsFile`) plus the hostAliases, else the
 * managed content — and resolves to its path. Called before each container start (the kubelet
 * rewrites it in makeMounts each time; unchanged content is not rewritten: writePodFileSync). Runs on
 * a worker thread (synchronous writes: kubetypes/pod-files.ts).
 * @throws the fs error when the node's hosts file cannot be read or the file cannot be written.
 */
export async function ensureHostsFile(
  rootDir: string,
  pod: Pod,
  podIps: readonly string[],
  clusterDomain: string,
  nodeHostsFile = '/etc/hosts',
): Promise<string> {
  const file = etcHostsPath(rootDir, pod.metadata?.uid ?? '');
  const content = pod.spec?.hostNetwork
    ? nodeHostsFileContent(pod, await readFile(nodeHostsFile, 'utf8'))
    : managedHostsFileContent(pod, podIps, clusterDomain);
  writePodFileSync(file, content);
  return file;
}
