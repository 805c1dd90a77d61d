// Counterpart of pkg/securitycontext/util.go (DetermineEffectiveSecurityContext), pkg/kubelet/sysctl (safe_sysctls.go, namespace.go) and the securityContext parts of pkg/apis/core/validation/validation.go.
/**
 * PodSecurityContext and container SecurityContext: the allow-lists, their validation (shape and
 * the apiserver's rules), the node's own refusals of what Docker cannot run here, the effective
 * settings of one container (the container's field wins over the pod's), the kubelet's safe
 * sysctls, and which pod fields need a privileged identity through the API. Pure functions over
 * decoded JSON, safe in any thread.
 */
import type { Container, Pod } from './api.js';
import { child, ErrorList, hasBacksteps, index, isAbsolutePath, isObj, type Obj } from './validation-util.js';

/** PodSecurityContext fields kubelet-ts implements (seLinuxChangePolicy is not). */
export const kSupportedPodSecurityContextFields: readonly string[] = [
  'runAsUser',
  'runAsGroup',
  'runAsNonRoot',
  'supplementalGroups',
  'supplementalGroupsPolicy',
  'fsGroup',
  'fsGroupChangePolicy',
  'sysctls',
  'seccompProfile',
  'appArmorProfile',
  'seLinuxOptions',
  'windowsOptions',
];
/** Container SecurityContext fields kubelet-ts implements (seLinuxOptions and windowsOptions validated, then refused on this node). */
export const kSupportedSecurityContextFields: readonly string[] = [
  'runAsUser',
  'runAsGroup',
  'runAsNonRoot',
  'readOnlyRootFilesystem',
  'privileged',
  'allowPrivilegeEscalation',
  'capabilities',
  'seccompProfile',
  'appArmorProfile',
  'procMount',
  'seLinuxOptions',
  'windowsOptions',
];

/**
 * kSafeSysctls: the kubelet's safe sysctls (pkg/kubelet/sysctl/safe_sysctls.go, 1.29): namespaced
 * and isolated, allowed without `--allowed-unsafe-sysctls`. The kernel-version gates upstream
 * (3.16, 4.5) are below any kernel Docker 20.10 runs on.
 */
export const kSafeSysctls: readonly string[] = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];

/** The legacy per-container AppArmor annotation key prefix (`container.apparmor.security.beta.kubernetes.io/<container>`). */
export const kAppArmorAnnotationPrefix = 'container.apparmor.security.beta.kubernetes.io/';

/** The kernel namespace a sysctl lives in (pkg/kubelet/sysctl/namespace.go), or undefined when it is node-wide. */
export type SysctlNamespace = 'ipc' | 'net';

const kIpcSysctls = new Set([
  'kernel.sem',
  'kernel.shmall',
  'kernel.shmmax',
  'kernel.shmmni',
  'kernel.shm_rmid_forced',
  'kernel.msgmax',
  'kernel.msgmnb',
  'kernel.msgmni',
]);

/**
 * normalizeSysctlName: a sysctl name in dots (`net.ipv4.conf.eth0/1.forwarding` stays, `net/ipv4/ip_forward`
 * → `net.ipv4.ip_forward`), as the kubelet's ConvertSysctlVariableToDotsSeparator: when the first
 * separator is `/`, dots and slashes swap.
 */
export function normalizeSysctlName(name: string): string {
  const first = name.search(/[./]/);
  if (first === -1 || name[first] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '/' ? '.' : '/'));
}

/** sysctlNamespace: `ipc`, `net`, or undefined for a sysctl that is not namespaced (NamespacedBy). Takes a dotted name. */
export function sysctlNamespace(name: string): SysctlNamespace | undefined {
  if (kIpcSysctls.has(name) || name.startsWith('kernel.shm') || name.startsWith('kernel.msg') || name.startsWith('fs.mqueue.'))
    return 'ipc';
  if (name.startsWith('net.')) return 'net';
  return undefined;
}

/**
 * sysctlAllowed: `name` (dotted) is in the kubelet's safe set or matches one of `unsafe`
 * (`--allowed-unsafe-sysctls` entries: a name or a prefix ending in `*`), as the kubelet's
 * patternAllowlist.
 */
export function sysctlAllowed(name: string, unsafe: readonly string[]): boolean {
  if (kSafeSysctls.includes(name)) return true;
  return unsafe.some((p) => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : p === name));
}

const kSysctlRe = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
const kSeccompTypes = ['RuntimeDefault', 'Unconfined', 'Localhost'];
const kAppArmorTypes = ['RuntimeDefault', 'Unconfined', 'Localhost'];
const kMaxUserId = 2147483647;

/** isSysctlName: a valid sysctl name, at most 253 characters (IsValidSysctlName). */
export function isSysctlName(name: string): boolean {
  return name.length <= 253 && kSysctlRe.test(name);
}

function validateId(el: ErrorList, path: string, v: unknown): number | undefined {
  const n = el.int(path, v);
  if (n !== undefined && (n < 0 || n > kMaxUserId)) el.invalid(path, n, `must be between 0 and ${kMaxUserId}, inclusive`);
  return n;
}

/** validateLocalDescendingPath: a relative path with no `..` element. */
function validateLocalPath(el: ErrorList, path: string, p: string): void {
  if (isAbsolutePath(p)) el.invalid(path, p, 'must be a relative path');
  if (hasBacksteps(p)) el.invalid(path, p, "must not contain '..'");
}

/** A seccompProfile or appArmorProfile: `type` one of `types`, `localhostProfile` exactly with Localhost (validateSeccompProfileField). */
function validateProfile(el: ErrorList, path: string, v: unknown, types: readonly string[]): void {
  const p = el.obj(path, v);
  if (!p) return;
  el.checkFields(path, p, ['type', 'localhostProfile']);
  const tPath = child(path, 'type');
  const type = el.str(tPath, p.type);
  if (!type) el.required(tPath);
  else if (!types.includes(type)) el.unsupported(tPath, type, types);
  const lpPath = child(path, 'localhostProfile');
  const lp = el.str(lpPath, p.localhostProfile);
  if (type === 'Localhost') {
    if (!lp) el.required(lpPath, 'must be set when the type is Localhost');
    else validateLocalPath(el, lpPath, lp);
  } else if (lp) el.invalid(lpPath, lp, 'can only be set when the type is Localhost');
}

function validateSELinuxOptions(el: ErrorList, path: string, v: unknown): void {
  const o = el.obj(path, v);
  if (!o) return;
  el.checkFields(path, o, ['user', 'role', 'type', 'level']);
  for (const f of ['user', 'role', 'type', 'level']) el.str(child(path, f), o[f]);
}

function validateWindowsOptions(el: ErrorList, path: string, v: unknown): void {
  const o = el.obj(path, v);
  if (o) el.checkFields(path, o, ['gmsaCredentialSpecName', 'gmsaCredentialSpec', 'runAsUserName', 'hostProcess']);
}

/** What pod-level securityContext checks need to know about the rest of the spec. */
export interface PodSecurityScope {
  hostNetwork: boolean;
  hostIPC: boolean;
}

/**
 * validatePodSecurityContext checks `spec.securityContext` (`path`) as ValidatePodSecurityContext:
 * ids in [0, 2147483647], the policies' enums, sysctls (valid, unique names; none of the network
 * namespace with hostNetwork, none of IPC with hostIPC, as validateSysctls), the profiles.
 */
export function validatePodSecurityContext(el: ErrorList, path: string, v: unknown, scope: PodSecurityScope): void {
  const sc = el.obj(path, v);
  if (!sc) return;
  el.checkFields(path, sc, kSupportedPodSecurityContextFields);
  validateId(el, child(path, 'runAsUser'), sc.runAsUser);
  validateId(el, child(path, 'runAsGroup'), sc.runAsGroup);
  validateId(el, child(path, 'fsGroup'), sc.fsGroup);
  el.bool(child(path, 'runAsNonRoot'), sc.runAsNonRoot);
  const sgPath = child(path, 'supplementalGroups');
  el.list(sgPath, sc.supplementalGroups)?.forEach((g, i) => validateId(el, index(sgPath, i), g));
  const sgpPath = child(path, 'supplementalGroupsPolicy');
  const sgp = el.str(sgpPath, sc.supplementalGroupsPolicy);
  if (sgp && !['Merge', 'Strict'].includes(sgp)) el.unsupported(sgpPath, sgp, ['Merge', 'Strict']);
  const fcpPath = child(path, 'fsGroupChangePolicy');
  const fcp = el.str(fcpPath, sc.fsGroupChangePolicy);
  if (fcp && !['OnRootMismatch', 'Always'].includes(fcp)) el.unsupported(fcpPath, fcp, ['OnRootMismatch', 'Always']);
  validateProfile(el, child(path, 'seccompProfile'), sc.seccompProfile, kSeccompTypes);
  validateProfile(el, child(path, 'appArmorProfile'), sc.appArmorProfile, kAppArmorTypes);
  validateSELinuxOptions(el, child(path, 'seLinuxOptions'), sc.seLinuxOptions);
  validateWindowsOptions(el, child(path, 'windowsOptions'), sc.windowsOptions);

  const sysPath = child(path, 'sysctls');
  const names = new Set<string>();
  el.list(sysPath, sc.sysctls)?.forEach((raw, i) => {
    const p = index(sysPath, i);
    const s = el.obj(p, raw);
    if (!s) return;
    el.checkFields(p, s, ['name', 'value']);
    const nPath = child(p, 'name');
    const name = el.str(nPath, s.name);
    el.str(child(p, 'value'), s.value);
    if (!name) return el.required(nPath);
    if (!isSysctlName(name))
      return el.invalid(
        nPath,
        name,
        'must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$',
      );
    const dotted = normalizeSysctlName(name);
    if (names.has(dotted)) el.duplicate(nPath, name);
    names.add(dotted);
    const ns = sysctlNamespace(dotted);
    if (scope.hostNetwork && ns === 'net') el.invalid(nPath, name, "may not be specified when 'hostNetwork' is true");
    if (scope.hostIPC && ns === 'ipc') el.invalid(nPath, name, "may not be specified when 'hostIPC' is true");
  });
}

/**
 * validateContainerSecurityContext checks `<container>.securityContext` (`path`) as
 * ValidateSecurityContext: ids, capability names (strings), procMount Default|Unmasked, the
 * profiles; `allowPrivilegeEscalation: false` conflicts with `privileged: true` and with adding
 * CAP_SYS_ADMIN (AllowPrivilegeEscalation's rule).
 */
export function validateContainerSecurityContext(el: ErrorList, path: string, v: unknown): void {
  const sc = el.obj(path, v);
  if (!sc) return;
  el.checkFields(path, sc, kSupportedSecurityContextFields);
  validateId(el, child(path, 'runAsUser'), sc.runAsUser);
  validateId(el, child(path, 'runAsGroup'), sc.runAsGroup);
  el.bool(child(path, 'runAsNonRoot'), sc.runAsNonRoot);
  el.bool(child(path, 'readOnlyRootFilesystem'), sc.readOnlyRootFilesystem);
  const privileged = el.bool(child(path, 'privileged'), sc.privileged);
  const apePath = child(path, 'allowPrivilegeEscalation');
  const ape = el.bool(apePath, sc.allowPrivilegeEscalation);
  const capPath = child(path, 'capabilities');
  const caps = el.obj(capPath, sc.capabilities);
  let add: string[] = [];
  if (caps) {
    el.checkFields(capPath, caps, ['add', 'drop']);
    add = el.strList(child(capPath, 'add'), caps.add) ?? [];
    el.strList(child(capPath, 'drop'), caps.drop);
  }
  if (ape === false && privileged === true)
    el.invalid(apePath, ape, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true');
  if (ape === false && add.some((c) => capabilityName(c) === 'SYS_ADMIN'))
    el.invalid(apePath, ape, 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN');
  const pmPath = child(path, 'procMount');
  const pm = el.str(pmPath, sc.procMount);
  if (pm && !['Default', 'Unmasked'].includes(pm)) el.unsupported(pmPath, pm, ['Default', 'Unmasked']);
  validateProfile(el, child(path, 'seccompProfile'), sc.seccompProfile, kSeccompTypes);
  validateProfile(el, child(path, 'appArmorProfile'), sc.appArmorProfile, kAppArmorTypes);
  validateSELinuxOptions(el, child(path, 'seLinuxOptions'), sc.seLinuxOptions);
  validateWindowsOptions(el, child(path, 'windowsOptions'), sc.windowsOptions);
}

/** capabilityName: a capability without its `CAP_` prefix, upper-case (`cap_net_admin` → `NET_ADMIN`); `ALL` stays. */
export function capabilityName(c: string): string {
  const u = c.toUpperCase();
  return u.startsWith('CAP_') ? u.slice(4) : u;
}

function allContainers(spec: Obj): Array<{ path: string; c: Obj }> {
  const out: Array<{ path: string; c: Obj }> = [];
  for (const list of ['containers', 'initContainers']) {
    const items = spec[list];
    if (Array.isArray(items))
      items.forEach((c, i) => {
        if (isObj(c)) out.push({ path: `spec.${list}[${i}]`, c });
      });
  }
  return out;
}

/**
 * rejectUnrunnableSecurity: this node's refusals (validatePodForNode) of security settings it
 * cannot run whatever the host: `hostUsers: false` (Docker's user namespaces are the daemon-wide
 * userns-remap, not per pod), `supplementalGroupsPolicy: Strict` (Docker always adds the groups
 * the image's /etc/group gives the user), `procMount: Unmasked` (upstream needs hostUsers: false
 * for it) and `windowsOptions` (a Linux node). A `hostPort` without hostNetwork is the node's
 * admission's to judge (main/pod/admission.ts admitHostPorts: refused only with
 * `--network-plugin none`, else published by CNI portmap). `false` for hostUsers is a
 * request, not an unset value, so it is refused although it is a zero value.
 */
export function rejectUnrunnableSecurity(el: ErrorList, spec: Obj): void {
  if (spec.hostUsers === false)
    el.notSupported(
      'spec.hostUsers',
      'needs a runtime with user namespaces: containerd 2; Docker cannot (its userns-remap is daemon-wide, not per pod), nor can containerd 1.6',
    );
  const psc = isObj(spec.securityContext) ? spec.securityContext : undefined;
  if (psc?.supplementalGroupsPolicy === 'Strict') {
    el.notSupported(
      'spec.securityContext.supplementalGroupsPolicy',
      "Strict: Docker always adds the groups the image's /etc/group gives the user; only Merge can be run",
    );
  }
  if (psc && isObj(psc.windowsOptions) && Object.keys(psc.windowsOptions).length)
    el.notSupported('spec.securityContext.windowsOptions', 'this is a Linux node');
  for (const { path, c } of allContainers(spec)) {
    const sc = isObj(c.securityContext) ? c.securityContext : undefined;
    if (sc?.procMount === 'Unmasked')
      el.notSupported(
        `${path}.securityContext.procMount`,
        'Unmasked needs a user namespace (hostUsers: false), which this node cannot run',
      );
    if (sc && isObj(sc.windowsOptions) && Object.keys(sc.windowsOptions).length)
      el.notSupported(`${path}.securityContext.windowsOptions`, 'this is a Linux node');
  }
}

/** The settings of one container after the pod's and the container's securityContext are merged (all optional). */
export interface EffectiveSecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type: string; localhostProfile?: string };
  appArmorProfile?: { type: string; localhostProfile?: string };
  seLinuxOptions?: { user?: string; role?: string; type?: string; level?: string };
  procMount?: string;
}

/**
 * appArmorFromAnnotation: the legacy annotation's value as a profile (`runtime/default`,
 * `unconfined`, `localhost/<name>`), or undefined for an unknown value.
 */
export function appArmorFromAnnotation(v: string): { type: string; localhostProfile?: string } | undefined {
  if (v === 'runtime/default') return { type: 'RuntimeDefault' };
  if (v === 'unconfined') return { type: 'Unconfined' };
  if (v.startsWith('localhost/') && v.length > 'localhost/'.length)
    return { type: 'Localhost', localhostProfile: v.slice('localhost/'.length) };
  return undefined;
}

/**
 * effectiveSecurityContext, as DetermineEffectiveSecurityContext: each field of the container's
 * securityContext wins over the pod's (runAsUser, runAsGroup, runAsNonRoot, seccompProfile,
 * appArmorProfile, seLinuxOptions; the rest exist only on the container). The AppArmor profile
 * falls back to the container's legacy annotation, as the kubelet's GetProfile.
 */
export function effectiveSecurityContext(pod: Pod, container: Container): EffectiveSecurityContext {
  const psc = pod.spec?.securityContext ?? {};
  const csc = container.securityContext ?? {};
  const annotation = pod.metadata?.annotations?.[kAppArmorAnnotationPrefix + container.name];
  const out: EffectiveSecurityContext = {
    runAsUser: csc.runAsUser ?? psc.runAsUser,
    runAsGroup: csc.runAsGroup ?? psc.runAsGroup,
    runAsNonRoot: csc.runAsNonRoot ?? psc.runAsNonRoot,
    readOnlyRootFilesystem: csc.readOnlyRootFilesystem,
    privileged: csc.privileged,
    allowPrivilegeEscalation: csc.allowPrivilegeEscalation,
    capabilities: csc.capabilities,
    seccompProfile: csc.seccompProfile ?? psc.seccompProfile,
    appArmorProfile: csc.appArmorProfile ?? psc.appArmorProfile ?? (annotation ? appArmorFromAnnotation(annotation) : undefined),
    seLinuxOptions: csc.seLinuxOptions ?? psc.seLinuxOptions,
    procMount: csc.procMount,
  };
  for (const k of Object.keys(out) as Array<keyof EffectiveSecurityContext>) if (out[k] === undefined) delete out[k];
  return out;
}
