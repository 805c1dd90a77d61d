/**
 * Counterpart of pkg/kubelet/kuberuntime/security_context.go (determineEffectiveSecurityContext,
 * convertToRuntimeSecurityContext, convertToRuntimeCapabilities, convertToRuntimeSELinuxOption),
 * helpers.go (getSeccompProfile, getAppArmorProfile), pkg/kubelet/kuberuntime/util
 * (NamespacesForPod) and pkg/securitycontext/util.go (ConvertToRuntimeMaskedPaths,
 * ConvertToRuntimeReadonlyPaths): from a pod's securityContext to the CRI's
 * LinuxContainerSecurityContext and LinuxSandboxSecurityContext. Pure.
 */
import path from 'node:path';
import type { Container, Pod } from '../../shared/api.js';
import { capabilityName, effectiveSecurityContext, type EffectiveSecurityContext } from '../../shared/security-context.js';
import type {
  Int64Value,
  LinuxContainerSecurityContext,
  LinuxSandboxSecurityContext,
  NamespaceOption,
  SecurityProfile,
  SELinuxOption,
} from '../runtime/cri/types.js';
import { configError } from '../kubetypes/config-error.js';

/** The paths masked in /proc and /sys unless procMount is `Unmasked` (pkg/securitycontext/util.go defaultMaskedPaths). */
export const kDefaultMaskedPaths: readonly string[] = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
/** The /proc paths made read-only unless procMount is `Unmasked` (defaultReadonlyPaths). */
export const kDefaultReadonlyPaths: readonly string[] = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/**
 * namespacesForPod, as NamespacesForPod: ipc and network NODE with hostIPC / hostNetwork, else
 * POD; pid NODE with hostPID, POD with shareProcessNamespace, else CONTAINER (containerd would
 * otherwise put every container in the sandbox's PID namespace).
 */
export function namespacesForPod(pod: Pod): NamespaceOption {
  const s = pod.spec;
  return {
    network: s?.hostNetwork ? 'NODE' : 'POD',
    pid: s?.hostPID ? 'NODE' : s?.shareProcessNamespace ? 'POD' : 'CONTAINER',
    ipc: s?.hostIPC ? 'NODE' : 'POD',
    target_id: '',
    userns_options: null,
  };
}

/**
 * seccompProfile, as helpers.go getSeccompProfile with `seccompDefault: true` (what kubelet-ts
 * has always done: no container loses the runtime's default confinement): unset or
 * RuntimeDefault → RuntimeDefault; Unconfined → Unconfined; Localhost → `localhost_ref` the
 * absolute path `<rootDir>/seccomp/<localhostProfile>` (the kubelet's seccomp profile root), which
 * must stay inside that directory (the runtime loads the file).
 * @throws AgentError `CreateContainerConfigError` naming `field` for an escaping or unknown profile.
 */
export function seccompProfile(profile: EffectiveSecurityContext['seccompProfile'], rootDir: string, field: string): SecurityProfile {
  if (!profile || profile.type === 'RuntimeDefault') return { profile_type: 'RuntimeDefault', localhost_ref: '' };
  if (profile.type === 'Unconfined') return { profile_type: 'Unconfined', localhost_ref: '' };
  if (profile.type !== 'Localhost') throw configError(`${field}.type: Unsupported value: ${JSON.stringify(profile.type)}`);
  const dir = path.join(rootDir, 'seccomp');
  const name = profile.localhostProfile ?? '';
  const file = path.resolve(dir, name);
  if (!name || path.isAbsolute(name) || !file.startsWith(dir + path.sep))
    throw configError(`${field}.localhostProfile: ${JSON.stringify(name)} must be a file under ${dir}`);
  return { profile_type: 'Localhost', localhost_ref: file };
}

/**
 * appArmorProfile, as helpers.go getAppArmorProfile: the profile and the deprecated string form
 * (`runtime/default`, `unconfined`, `localhost/<name>`); none when unset.
 */
export function appArmorProfile(profile: EffectiveSecurityContext['appArmorProfile']): {
  apparmor: SecurityProfile | null;
  apparmor_profile: string;
} {
  if (!profile) return { apparmor: null, apparmor_profile: '' };
  if (profile.type === 'Unconfined') return { apparmor: { profile_type: 'Unconfined', localhost_ref: '' }, apparmor_profile: 'unconfined' };
  if (profile.type === 'Localhost') {
    const name = profile.localhostProfile ?? '';
    return { apparmor: { profile_type: 'Localhost', localhost_ref: name }, apparmor_profile: `localhost/${name}` };
  }
  return { apparmor: { profile_type: 'RuntimeDefault', localhost_ref: '' }, apparmor_profile: 'runtime/default' };
}

function seLinux(o: EffectiveSecurityContext['seLinuxOptions']): SELinuxOption | null {
  return o ? { user: o.user ?? '', role: o.role ?? '', type: o.type ?? '', level: o.level ?? '' } : null;
}

const int64 = (v: number | undefined): Int64Value | null => (v === undefined ? null : { value: v });

/** podSupplementalGroups, as the kubelet: the fsGroup first, then supplementalGroups, deduplicated. */
function podSupplementalGroups(pod: Pod): number[] {
  const psc = pod.spec?.securityContext;
  return [...new Set([...(psc?.fsGroup !== undefined ? [psc.fsGroup] : []), ...(psc?.supplementalGroups ?? [])])];
}

/** The image's user as ImageStatus gives it (`uid`, or a user name), for run_as_user / run_as_username. */
export interface ImageUser {
  /** The image's numeric user; undefined when it names a user, or unset (root: pass 0). */
  uid?: number;
  /** The image's user name ('' or absent when numeric). */
  username?: string;
}

/**
 * determineEffectiveSecurityContext, as security_context.go: the container's securityContext over
 * the pod's, converted: capabilities (names without `CAP_`), privileged, readonly_rootfs,
 * run_as_user (the effective runAsUser, else the image's uid) or run_as_username (the image's
 * name), run_as_group, supplemental_groups (fsGroup + supplementalGroups), no_new_privs
 * (allowPrivilegeEscalation: false), seccomp, AppArmor, SELinux, the pod's namespace options, and
 * masked/read-only /proc paths (none with procMount `Unmasked`).
 * @throws AgentError `CreateContainerConfigError` for a bad Localhost seccomp profile.
 */
export function determineEffectiveSecurityContext(
  pod: Pod,
  container: Container,
  image: ImageUser,
  rootDir: string,
  field: string,
): LinuxContainerSecurityContext {
  const sc = effectiveSecurityContext(pod, container);
  const seccompField = container.securityContext?.seccompProfile
    ? `${field}.securityContext.seccompProfile`
    : 'spec.securityContext.seccompProfile';
  const caps = (l: string[] | undefined) => (l ?? []).map(capabilityName);
  const unmasked = sc.procMount === 'Unmasked';
  const runAsUser = sc.runAsUser ?? image.uid;
  return {
    capabilities: sc.capabilities
      ? { add_capabilities: caps(sc.capabilities.add), drop_capabilities: caps(sc.capabilities.drop), add_ambient_capabilities: [] }
      : null,
    privileged: sc.privileged === true,
    namespace_options: namespacesForPod(pod),
    selinux_options: seLinux(sc.seLinuxOptions),
    run_as_user: int64(runAsUser),
    run_as_group: int64(sc.runAsGroup),
    run_as_username: sc.runAsUser === undefined && image.uid === undefined ? (image.username ?? '') : '',
    readonly_rootfs: sc.readOnlyRootFilesystem === true,
    supplemental_groups: podSupplementalGroups(pod),
    supplemental_groups_policy: 'Merge',
    no_new_privs: sc.allowPrivilegeEscalation === false,
    masked_paths: unmasked ? [] : [...kDefaultMaskedPaths],
    readonly_paths: unmasked ? [] : [...kDefaultReadonlyPaths],
    seccomp: seccompProfile(sc.seccompProfile, rootDir, seccompField),
    ...appArmorProfile(sc.appArmorProfile),
    seccomp_profile_path: '',
  };
}

/**
 * sandboxSecurityContext, as kuberuntime_sandbox.go generatePodSandboxLinuxConfig: the pod-level
 * runAsUser/runAsGroup, supplemental groups (fsGroup + supplementalGroups), SELinux options, the
 * pod's seccomp profile, the namespace options, and `privileged` when any container is privileged
 * (kubecontainer.HasPrivilegedContainer, init and ephemeral containers included).
 * @throws AgentError `CreateContainerConfigError` for a bad Localhost seccomp profile.
 */
export function sandboxSecurityContext(pod: Pod, rootDir: string): LinuxSandboxSecurityContext {
  const psc = pod.spec?.securityContext ?? {};
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...(pod.spec?.ephemeralContainers ?? [])];
  return {
    namespace_options: namespacesForPod(pod),
    selinux_options: seLinux(psc.seLinuxOptions),
    run_as_user: int64(psc.runAsUser),
    run_as_group: int64(psc.runAsGroup),
    readonly_rootfs: false,
    supplemental_groups: podSupplementalGroups(pod),
    supplemental_groups_policy: 'Merge',
    privileged: all.some((c) => c.securityContext?.privileged === true),
    seccomp: seccompProfile(psc.seccompProfile, rootDir, 'spec.securityContext.seccompProfile'),
    apparmor: null,
    seccomp_profile_path: '',
  };
}
