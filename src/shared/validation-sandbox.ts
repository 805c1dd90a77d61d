/**
 * Counterpart of pkg/apis/core/validation/validation.go ValidatePodSpec for the pod-level
 * sandbox fields (validateHostAliases, validatePodDNSConfig, validateDNSPolicy, hostname and
 * subdomain, validateOS) and of the admission plugins that fill or refuse them on a cluster
 * (Priority: plugin/pkg/admission/priority; RuntimeClass: plugin/pkg/admission/runtimeclass) and
 * of the kubelet's OS admit check (pkg/kubelet/lifecycle/predicate.go, `PodOSNotSupported`).
 * Pure functions over decoded JSON; safe in any thread.
 */
import { isIP } from 'node:net';
import { dns1123LabelErrors, dns1123SubdomainErrors } from './names.js';
import { kSystemPriorityClasses } from './qos.js';
import { child, ErrorList, index, isObj, type Obj } from './validation-util.js';

/**
 * kSupportedPodSandboxFields: the PodSpec fields of the pod's sandbox that kubelet-ts runs (issue
 * 12 item 6): /etc/hosts (hostAliases), resolv.conf (dnsConfig), the hostname (subdomain,
 * setHostnameAsFQDN), the host's PID and IPC namespaces, the priority class. `runtimeClassName`
 * (only empty) and `overhead` (only empty: it is set by the RuntimeClass admission) are listed so
 * that they are refused with their reason instead of a bare `Not supported`.
 */
export const kSupportedPodSandboxFields: readonly string[] = [
  'hostAliases',
  'dnsConfig',
  'subdomain',
  'setHostnameAsFQDN',
  'hostPID',
  'hostIPC',
  'priorityClassName',
  'preemptionPolicy',
  'os',
  'runtimeClassName',
  'overhead',
];

/** The DNS policies (core/v1 DNSPolicy). */
export const kDNSPolicies: readonly string[] = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
/** MaxDNSNameservers (validation.go): nameservers of dnsConfig, and of the resolv.conf the kubelet writes. */
export const kMaxDNSNameservers = 3;
/** MaxDNSSearchPaths (validation.go, ExpandedDNSConfig: 32 since 1.28). */
export const kMaxDNSSearchPaths = 32;
/** MaxDNSSearchListChars (validation.go, ExpandedDNSConfig: 2048 since 1.28), spaces included. */
export const kMaxDNSSearchListChars = 2048;
const kPreemptionPolicies = ['PreemptLowerPriority', 'Never'];
const kOSNames = ['linux', 'windows'];

/**
 * validatePodSandboxFields reports the problems of the sandbox fields of `spec` (at `path`,
 * `spec`): hostAliases (ip an IP address, hostnames DNS-1123 subdomains), dnsPolicy (one of
 * kDNSPolicies; `None` needs dnsConfig with at least one nameserver), dnsConfig (at most 3
 * nameservers, each an IP; at most 32 search paths of at most 2048 characters in all, each a
 * DNS-1123 subdomain; options with a name), subdomain (a DNS-1123 label), setHostnameAsFQDN,
 * hostPID and hostIPC (booleans), priorityClassName (a class this node knows: see
 * kSystemPriorityClasses; `priority` must then equal its value), preemptionPolicy, os.name,
 * runtimeClassName and overhead (refused when set: no RuntimeClass without an apiserver).
 * Never throws; appends to `el`.
 */
export function validatePodSandboxFields(el: ErrorList, path: string, spec: Obj): void {
  validateHostAliases(el, child(path, 'hostAliases'), spec.hostAliases);
  const dnsPath = child(path, 'dnsPolicy');
  const policy = el.str(dnsPath, spec.dnsPolicy);
  if (!policy) {
    if (spec.dnsPolicy === undefined || spec.dnsPolicy === null || spec.dnsPolicy === '') el.required(dnsPath);
  } else if (!kDNSPolicies.includes(policy)) el.unsupported(dnsPath, policy, kDNSPolicies);
  validateDNSConfig(el, child(path, 'dnsConfig'), spec.dnsConfig, policy);

  const sdPath = child(path, 'subdomain');
  const subdomain = el.str(sdPath, spec.subdomain);
  if (subdomain) for (const m of dns1123LabelErrors(subdomain)) el.invalid(sdPath, subdomain, m);
  for (const f of ['setHostnameAsFQDN', 'hostPID', 'hostIPC']) el.bool(child(path, f), spec[f]);

  const pcnPath = child(path, 'priorityClassName');
  const pcn = el.str(pcnPath, spec.priorityClassName);
  if (pcn) {
    if (!Object.hasOwn(kSystemPriorityClasses, pcn)) {
      el.forbidden(
        pcnPath,
        `no PriorityClass with name ${pcn} was found (a node without an apiserver knows only ${Object.keys(kSystemPriorityClasses).join(' and ')})`,
      );
    } else if (typeof spec.priority === 'number' && spec.priority !== kSystemPriorityClasses[pcn]) {
      el.forbidden(
        child(path, 'priority'),
        `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${kSystemPriorityClasses[pcn]} from the given PriorityClass name`,
      );
    }
  }
  const ppPath = child(path, 'preemptionPolicy');
  const pp = el.str(ppPath, spec.preemptionPolicy);
  if (pp && !kPreemptionPolicies.includes(pp)) el.unsupported(ppPath, pp, kPreemptionPolicies);

  const osPath = child(path, 'os');
  const os = el.obj(osPath, spec.os);
  if (os) {
    el.checkFields(osPath, os, ['name']);
    const namePath = child(osPath, 'name');
    const name = el.str(namePath, os.name);
    if (!name) el.required(namePath);
    else if (!kOSNames.includes(name)) el.unsupported(namePath, name, kOSNames);
  }
  const rcPath = child(path, 'runtimeClassName');
  const rc = el.str(rcPath, spec.runtimeClassName);
  if (rc)
    el.notSupported(
      rcPath,
      `pod rejected: RuntimeClass "${rc}" not found (a node without an apiserver has no RuntimeClass objects; leave it empty to run with the container runtime's default handler)`,
    );
  const ohPath = child(path, 'overhead');
  const oh = el.obj(ohPath, spec.overhead);
  if (oh && Object.keys(oh).length > 0)
    el.forbidden(ohPath, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
}

/**
 * rejectForeignOS: the kubelet's admit check of `spec.os.name` against the node's OS (always
 * linux here): another OS is refused with the kubelet's reason `PodOSNotSupported`.
 * What validatePodForNode calls. Never throws.
 */
export function rejectForeignOS(el: ErrorList, path: string, spec: Obj): void {
  const os = spec.os;
  if (isObj(os) && typeof os.name === 'string' && os.name !== '' && os.name !== 'linux') {
    el.notSupported(
      child(child(path, 'os'), 'name'),
      `PodOSNotSupported: Failed to admit pod as the OS field doesn't match node OS (this node runs linux, the pod asks for ${JSON.stringify(os.name)})`,
    );
  }
}

function validateHostAliases(el: ErrorList, path: string, v: unknown): void {
  el.list(path, v)?.forEach((raw, i) => {
    const p = index(path, i);
    const ha = el.obj(p, raw);
    if (!ha) return;
    el.checkFields(p, ha, ['ip', 'hostnames']);
    const ipPath = child(p, 'ip');
    const ip = el.str(ipPath, ha.ip);
    if (!ip) el.required(ipPath);
    else if (isIP(ip) === 0) el.invalid(ipPath, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');
    const hnPath = child(p, 'hostnames');
    el.strList(hnPath, ha.hostnames)?.forEach((h, j) => {
      for (const m of dns1123SubdomainErrors(h)) el.invalid(index(hnPath, j), h, m);
    });
  });
}

function validateDNSConfig(el: ErrorList, path: string, v: unknown, policy: string | undefined): void {
  const cfg = el.obj(path, v);
  if (!cfg) {
    if (policy === 'None') el.required(path, 'must provide `dnsConfig` when `dnsPolicy` is None');
    return;
  }
  el.checkFields(path, cfg, ['nameservers', 'searches', 'options']);
  const nsPath = child(path, 'nameservers');
  const nameservers = el.strList(nsPath, cfg.nameservers) ?? [];
  if (policy === 'None' && nameservers.length === 0) el.required(nsPath, 'must provide at least one DNS nameserver when DNSPolicy is None');
  if (nameservers.length > kMaxDNSNameservers) el.invalid(nsPath, nameservers, `must not have more than ${kMaxDNSNameservers} nameservers`);
  nameservers.forEach((ns, i) => {
    if (isIP(ns) === 0) el.invalid(index(nsPath, i), ns, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');
  });
  const sPath = child(path, 'searches');
  const searches = el.strList(sPath, cfg.searches) ?? [];
  if (searches.length > kMaxDNSSearchPaths) el.invalid(sPath, searches, `must not have more than ${kMaxDNSSearchPaths} search paths`);
  if (searches.join(' ').length > kMaxDNSSearchListChars)
    el.invalid(sPath, searches, `must not have more than ${kMaxDNSSearchListChars} characters (including spaces) in the search list`);
  searches.forEach((s, i) => {
    // A trailing dot (an absolute name) is allowed, as upstream trims it before the check.
    const name = s.endsWith('.') ? s.slice(0, -1) : s;
    for (const m of dns1123SubdomainErrors(name)) el.invalid(index(sPath, i), s, m);
  });
  const oPath = child(path, 'options');
  el.list(oPath, cfg.options)?.forEach((raw, i) => {
    const p = index(oPath, i);
    const o = el.obj(p, raw);
    if (!o) return;
    el.checkFields(p, o, ['name', 'value']);
    if (!el.str(child(p, 'name'), o.name)) el.required(p, 'Option.Name must not be empty');
    el.str(child(p, 'value'), o.value);
  });
}
