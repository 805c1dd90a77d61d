/**
 * Counterpart of pkg/kubelet/kuberuntime/security_context.go (determineEffectiveSecurityContext),
 * security_context_others.go (verifyRunAsNonRoot), kuberuntime_sandbox.go's sandbox security
 * context, and dockershim's security_context.go (modifyContainerConfig, modifyHostConfig,
 * getSeccompDockerOpts): from a pod's securityContext to Docker's User, GroupAdd, Privileged,
 * ReadonlyRootfs, CapAdd/CapDrop, SecurityOpt and Sysctls; and the kubelet's SetVolumeOwnership
 * for emptyDir volumes under an fsGroup. Runs on a worker thread.
 */
import { chmod, chown, lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Container, Pod } from '../../shared/api.js';
import {
  capabilityName,
  effectiveSecurityContext,
  normalizeSysctlName,
  type EffectiveSecurityContext,
} from '../../shared/security-context.js';
import { configError } from './config-error.js';
import type { ContainerHostConfig } from '../runtime/runtime.js';

/** The security part of one container's (or the sandbox's) Docker create spec. */
export interface DockerSecurityConfig {
  /** `User`: `uid`, `uid:gid`, or undefined (the image's). */
  user?: string;
  hostConfig: Pick<ContainerHostConfig, 'privileged' | 'readonlyRootfs' | 'capAdd' | 'capDrop' | 'securityOpt' | 'sysctls' | 'groupAdd'>;
}

/** formatPod: the kubelet's format.Pod, `name_namespace(uid)`. */
function formatPod(pod: Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? 'default'}(${pod.metadata?.uid ?? ''})`;
}

/**
 * imageUid: the image's `Config.User` as dockershim's getUserFromImageUser reads it — the part
 * before `:`; a number is a uid, anything else a user name. An unset user is root (uid 0), as
 * kuberuntime's getImageUser ("If none of them is set, treat it as root").
 */
export function imageUid(imageUser: string): { uid?: number; username?: string } {
  const user = imageUser.split(':')[0];
  if (user === '') return { uid: 0 };
  return /^\d+$/.test(user) ? { uid: Number(user) } : { username: user };
}

/**
 * verifyRunAsNonRoot, as the kubelet's: when the effective runAsNonRoot is true, a runAsUser of 0,
 * or no runAsUser and an image that runs as root or as a user name, is refused with the kubelet's
 * messages. `imageUser`: the image's Config.User.
 * @throws AgentError with reason `CreateContainerConfigError`.
 */
export function verifyRunAsNonRoot(pod: Pod, container: Container, imageUser: string): void {
  const sc = effectiveSecurityContext(pod, container);
  if (sc.runAsNonRoot !== true) return;
  if (sc.runAsUser !== undefined) {
    if (sc.runAsUser === 0)
      throw configError(`container's runAsUser breaks non-root policy (pod: "${formatPod(pod)}", container: ${container.name})`);
    return;
  }
  const { uid, username } = imageUid(imageUser);
  if (uid === undefined)
    throw configError(
      `container has runAsNonRoot and image has non-numeric user (${username}), cannot verify user is non-root (pod: "${formatPod(pod)}", container: ${container.name})`,
    );
  if (uid === 0)
    throw configError(`container has runAsNonRoot and image will run as root (pod: "${formatPod(pod)}", container: ${container.name})`);
}

/**
 * dockerUser: Docker's `User` for runAsUser/runAsGroup. With only runAsGroup the image's user is
 * kept and the group set (as containerd does; dockershim refused it), an unset image user being
 * root (`0:<gid>`).
 */
function dockerUser(sc: EffectiveSecurityContext, imageUser: string): string | undefined {
  if (sc.runAsUser === undefined && sc.runAsGroup === undefined) return undefined;
  const user = sc.runAsUser !== undefined ? String(sc.runAsUser) : imageUser.split(':')[0] || '0';
  return sc.runAsGroup !== undefined ? `${user}:${sc.runAsGroup}` : user;
}

/**
 * supplementalGroups: the pod's supplementalGroups plus its fsGroup (the kubelet adds the fsGroup
 * to every container's groups), deduplicated, as decimal strings.
 */
function supplementalGroups(pod: Pod): string[] {
  const psc = pod.spec?.securityContext;
  const groups = [...(psc?.supplementalGroups ?? []), ...(psc?.fsGroup !== undefined ? [psc.fsGroup] : [])];
  return [...new Set(groups.map(String))];
}

/**
 * seccompOption: Docker's SecurityOpt for a seccomp profile, as dockershim's getSeccompDockerOpts:
 * Unconfined → `seccomp=unconfined`; Localhost → the JSON of `<rootDir>/seccomp/<localhostProfile>`
 * (the kubelet's `<root-dir>/seccomp`), which must stay inside that directory after symlinks;
 * RuntimeDefault → none (Docker's default profile). Unset also keeps Docker's default profile: as
 * the kubelet with `seccompDefault: true`, not dockershim's unconfined, so no container loses the
 * confinement it had before securityContext was supported.
 * @throws AgentError `CreateContainerConfigError` for a missing, escaping or non-JSON profile.
 */
async function seccompOption(profile: EffectiveSecurityContext['seccompProfile'], rootDir: string, field: string): Promise<string[]> {
  if (!profile || profile.type === 'RuntimeDefault') return [];
  if (profile.type === 'Unconfined') return ['seccomp=unconfined'];
  if (profile.type !== 'Localhost') throw configError(`${field}.type: Unsupported value: ${JSON.stringify(profile.type)}`);
  const dir = path.join(rootDir, 'seccomp');
  const name = profile.localhostProfile ?? '';
  const file = path.resolve(dir, name);
  const inside = (p: string, d: string) => p.startsWith(d + path.sep);
  if (!name || path.isAbsolute(name) || !inside(file, dir))
    throw configError(`${field}.localhostProfile: ${JSON.stringify(name)} must be a file under ${dir}`);
  let real: string;
  let realDir: string;
  try {
    realDir = await realpath(dir);
    real = await realpath(file);
  } catch {
    throw configError(`${field}.localhostProfile: cannot load seccomp profile ${JSON.stringify(file)}: no such file`);
  }
  if (!inside(real, realDir)) throw configError(`${field}.localhostProfile: ${JSON.stringify(name)} resolves to ${real}, outside ${dir}`);
  const text = await readFile(real, 'utf8').catch((err: Error) => {
    throw configError(`${field}.localhostProfile: cannot load seccomp profile ${JSON.stringify(file)}: ${err.message}`);
  });
  try {
    return [`seccomp=${JSON.stringify(JSON.parse(text))}`];
  } catch (err) {
    throw configError(`${field}.localhostProfile: seccomp profile ${JSON.stringify(file)} is not JSON: ${(err as Error).message}`);
  }
}

/**
 * appArmorOption: Docker's SecurityOpt for an AppArmor profile (RuntimeDefault → `docker-default`,
 * Unconfined → `unconfined`, Localhost → the loaded profile's name). Reached only on a host with
 * AppArmor: admission refuses the others (main/pod/security-admission.ts); Unconfined asks for
 * nothing there either.
 */
function appArmorOption(profile: EffectiveSecurityContext['appArmorProfile']): string[] {
  if (!profile) return [];
  if (profile.type === 'Unconfined') return ['apparmor=unconfined'];
  if (profile.type === 'RuntimeDefault') return ['apparmor=docker-default'];
  return [`apparmor=${profile.localhostProfile ?? ''}`];
}

/** seLinuxOptions: Docker's `label=` options (dockershim's selinux options), for a host with SELinux. */
function seLinuxOption(o: EffectiveSecurityContext['seLinuxOptions']): string[] {
  if (!o) return [];
  const out: string[] = [];
  if (o.user) out.push(`label=user:${o.user}`);
  if (o.role) out.push(`label=role:${o.role}`);
  if (o.type) out.push(`label=type:${o.type}`);
  if (o.level) out.push(`label=level:${o.level}`);
  return out;
}

/**
 * containerSecurityConfig: the Docker settings of one app or init container (dockershim
 * modifyContainerConfig + modifyHostConfig): User from runAsUser/runAsGroup, GroupAdd
 * (supplementalGroups + fsGroup), Privileged, ReadonlyRootfs, CapAdd/CapDrop (names without
 * `CAP_`, `ALL` kept), SecurityOpt (`no-new-privileges` for allowPrivilegeEscalation false, seccomp,
 * AppArmor, SELinux labels). A privileged container gets no seccomp/AppArmor option (Docker
 * unconfines it). Checks runAsNonRoot against the image's user first.
 * @param imageUser the image's Config.User ('' when unset).
 * @param field the container's field path, e.g. `spec.containers[0]`.
 * @throws AgentError with reason `CreateContainerConfigError`.
 */
export async function containerSecurityConfig(
  pod: Pod,
  container: Container,
  imageUser: string,
  rootDir: string,
  field: string,
): Promise<DockerSecurityConfig> {
  verifyRunAsNonRoot(pod, container, imageUser);
  const sc = effectiveSecurityContext(pod, container);
  const securityOpt: string[] = [];
  if (sc.allowPrivilegeEscalation === false) securityOpt.push('no-new-privileges');
  if (sc.privileged !== true) {
    const seccompField = container.securityContext?.seccompProfile
      ? `${field}.securityContext.seccompProfile`
      : 'spec.securityContext.seccompProfile';
    securityOpt.push(...(await seccompOption(sc.seccompProfile, rootDir, seccompField)), ...appArmorOption(sc.appArmorProfile));
  }
  securityOpt.push(...seLinuxOption(sc.seLinuxOptions));
  const caps = (l: string[] | undefined) => (l ?? []).map(capabilityName);
  return {
    user: dockerUser(sc, imageUser),
    hostConfig: {
      privileged: sc.privileged === true || undefined,
      readonlyRootfs: sc.readOnlyRootFilesystem === true || undefined,
      capAdd: caps(sc.capabilities?.add),
      capDrop: caps(sc.capabilities?.drop),
      securityOpt,
      groupAdd: supplementalGroups(pod),
    },
  };
}

/**
 * sandboxSecurityConfig: the sandbox's (pause container's) settings, as the kubelet's
 * generatePodSandboxLinuxConfig: the pod-level runAsUser/runAsGroup, supplemental groups, the
 * pod's seccomp profile, and the pod's sysctls — these go on the sandbox because the app
 * containers join its IPC and network namespaces, and Docker refuses namespaced sysctls on a
 * container that joins another's namespace (or the host's).
 * @throws AgentError `CreateContainerConfigError` for a bad Localhost seccomp profile.
 */
export async function sandboxSecurityConfig(pod: Pod, rootDir: string): Promise<DockerSecurityConfig> {
  const psc = pod.spec?.securityContext ?? {};
  const sysctls: Record<string, string> = {};
  for (const s of psc.sysctls ?? []) sysctls[normalizeSysctlName(s.name)] = s.value;
  return {
    user: dockerUser({ runAsUser: psc.runAsUser, runAsGroup: psc.runAsGroup }, ''),
    hostConfig: {
      groupAdd: supplementalGroups(pod),
      securityOpt: [
        ...(await seccompOption(psc.seccompProfile, rootDir, 'spec.securityContext.seccompProfile')),
        ...seLinuxOption(psc.seLinuxOptions),
      ],
      sysctls,
    },
  };
}

/**
 * setVolumeOwnership, as the kubelet's volume.SetVolumeOwnership for an emptyDir under the pod's
 * fsGroup: every file and directory below `dir` gets group `fsGroup`, group read/write (and
 * execute for directories and executables), and directories the setgid bit, so new files inherit
 * the group. With `fsGroupChangePolicy: OnRootMismatch` nothing is walked when `dir` already has
 * the group and setgid. Symlinks are not followed. Idempotent.
 */
export async function setVolumeOwnership(dir: string, fsGroup: number, policy: string | undefined): Promise<void> {
  const root = await stat(dir);
  if (policy === 'OnRootMismatch' && root.gid === fsGroup && (root.mode & 0o2000) !== 0) return;
  const walk = async (p: string): Promise<void> => {
    const st = await lstat(p);
    if (st.isSymbolicLink()) return;
    await chown(p, st.uid, fsGroup);
    let mode = (st.mode & 0o7777) | 0o060;
    if (st.isDirectory()) mode |= 0o2010;
    else if (st.mode & 0o100) mode |= 0o010;
    await chmod(p, mode);
    if (st.isDirectory()) for (const e of await readdir(p)) await walk(path.join(p, e));
  };
  await walk(dir);
}
