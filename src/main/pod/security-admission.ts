/**
 * Counterpart of pkg/kubelet/sysctl/allowlist.go (the sysctl admit handler), pkg/security/apparmor
 * (validate.go: the AppArmor admit handler) and the SELinux host check: before a pod starts,
 * refuse security settings this host cannot give it — phase Failed with reason `SysctlForbidden`,
 * `AppArmor` or `SELinux` and the kubelet's message, never a pod run without what it asked for.
 * Pure functions but {@link detectHostSecurity}; main thread.
 */
import { readFileSync, existsSync } from 'node:fs';
import type { Pod } from '../../shared/api.js';
import { effectiveSecurityContext, normalizeSysctlName, sysctlAllowed, sysctlNamespace } from '../../shared/security-context.js';

/** What the host offers and the operator allows. */
export interface NodeSecurity {
  /** `--allowed-unsafe-sysctls`: names or `prefix*` patterns beyond the safe set (each namespaced). */
  allowedUnsafeSysctls: readonly string[];
  /** The kernel has AppArmor enabled (`/sys/module/apparmor/parameters/enabled` is `Y`). */
  appArmorEnabled: boolean;
  /** The kernel has SELinux (`/sys/fs/selinux` exists). */
  seLinuxEnabled: boolean;
}

/** detectHostSecurity reads the host's AppArmor and SELinux state (once, at agent start). Never throws. */
export function detectHostSecurity(allowedUnsafeSysctls: readonly string[]): NodeSecurity {
  let appArmorEnabled = false;
  try {
    appArmorEnabled = readFileSync('/sys/module/apparmor/parameters/enabled', 'utf8').trim() === 'Y';
  } catch {
    /* no AppArmor module */
  }
  return { allowedUnsafeSysctls, appArmorEnabled, seLinuxEnabled: existsSync('/sys/fs/selinux/enforce') };
}

/**
 * checkAllowedUnsafeSysctls: each `--allowed-unsafe-sysctls` entry must be namespaced, as the
 * kubelet's NewAllowlist refuses the flag otherwise. Returns the error message, or undefined.
 */
export function checkAllowedUnsafeSysctls(list: readonly string[]): string | undefined {
  for (const raw of list) {
    const name = normalizeSysctlName(raw);
    const probe = name.endsWith('*') ? name.slice(0, -1) : name;
    if (!sysctlNamespace(probe)) {
      return `--allowed-unsafe-sysctls: the sysctl ${JSON.stringify(raw)} is not known to be namespaced`;
    }
  }
  return undefined;
}

/** The result of {@link admitPodSecurity}. */
export type SecurityAdmitResult = { admit: true } | { admit: false; reason: 'SysctlForbidden' | 'AppArmor' | 'SELinux'; message: string };

/**
 * admitPodSecurity decides whether this host can run the pod's security settings: every pod
 * sysctl in the safe set or `--allowed-unsafe-sysctls` (message `forbidden sysctl: "x" not
 * allowlisted`); an AppArmor profile other than Unconfined (field or legacy annotation) only with
 * AppArmor enabled (`Cannot enforce AppArmor: AppArmor is not enabled on the host`, as the
 * AppArmor validator, which lets unconfined pods through); seLinuxOptions only with SELinux.
 */
export function admitPodSecurity(pod: Pod, node: NodeSecurity): SecurityAdmitResult {
  for (const s of pod.spec?.securityContext?.sysctls ?? []) {
    const name = normalizeSysctlName(s.name);
    if (!sysctlAllowed(name, node.allowedUnsafeSysctls.map(normalizeSysctlName))) {
      return { admit: false, reason: 'SysctlForbidden', message: `forbidden sysctl: "${s.name}" not allowlisted` };
    }
  }
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  for (const c of containers) {
    const sc = effectiveSecurityContext(pod, c);
    if (!node.appArmorEnabled && sc.appArmorProfile && sc.appArmorProfile.type !== 'Unconfined') {
      return {
        admit: false,
        reason: 'AppArmor',
        message: `Cannot enforce AppArmor: AppArmor is not enabled on the host (container ${c.name} asks for ${sc.appArmorProfile.type})`,
      };
    }
    if (!node.seLinuxEnabled && sc.seLinuxOptions && Object.values(sc.seLinuxOptions).some((v) => v)) {
      return {
        admit: false,
        reason: 'SELinux',
        message: `Cannot apply seLinuxOptions: SELinux is not enabled on the host (container ${c.name})`,
      };
    }
  }
  return { admit: true };
}
