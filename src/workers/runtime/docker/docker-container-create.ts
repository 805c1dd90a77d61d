// Counterpart of pkg/kubelet/dockershim/docker_sandbox.go makeSandboxDockerConfig, docker_container.go CreateContainer, security_context.go and helpers.go (generateMountBindings, getSeccompSecurityOpts, getApparmorSecurityOpts), kubernetes ≤1.23; cri-dockerd core/sandbox_helpers.go, core/container_create.go.
/**
 * The translation from CRI messages to Docker create bodies: a PodSandboxConfig to the pause
 * container's ContainerCreateSpec (RunPodSandbox), a ContainerConfig (with its sandbox's config)
 * to an app container's (CreateContainer). The bodies are the ones the agent's syncer built before
 * the CRI seam (the same names, labels, namespaces, binds, limits and security options), so
 * `docker ps`, adoption after an upgrade and the engine's behaviour do not change.
 *
 * Errors: AgentError `ERR_INVALID_ARGUMENT` naming the field for a config without its metadata or
 * image; `ERR_RUNTIME` for a Localhost seccomp profile that cannot be read or is not JSON.
 */
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { AgentError } from '../../../shared/errors.js';
import { kPodInfraOOMAdj } from '../../../shared/qos.js';
import { capabilityName, normalizeSysctlName } from '../../../shared/security-context.js';
import type {
  ContainerConfig,
  CriInput,
  Int64Value,
  LinuxContainerSecurityContext,
  Mount,
  PodSandboxConfig,
  PodSandboxMetadata,
  SecurityProfile,
  SELinuxOption,
} from '../cri/types.js';
import type { ContainerCreateSpec, ContainerHostConfig } from '../container/runtime.js';
import {
  containerDockerName,
  kContainerNameLabel,
  kDockerTypeContainer,
  kDockerTypeLabel,
  kDockerTypeSandbox,
  kSandboxContainerName,
  kSandboxIdLabel,
  makeDockerLabels,
  sandboxDockerName,
} from './docker-cri-labels.js';

/** What the node gives every Docker create besides the CRI message (the agent's flags). */
export interface DockerCreateSettings {
  /** --pod-infra-container-image: the sandbox's (pause) image. */
  podInfraImage: string;
  /** --container-log-max-size (bytes) / --container-log-max-files: Docker json-file rotation of every container; absent = Docker's default. */
  logRotation?: { maxSizeBytes: number; maxFiles: number };
  /** --pod-max-pids: each container's Docker PidsLimit when the sandbox has no pod cgroup (`cgroup_parent` ''); ≤ 0 or absent = none. */
  podPidsLimit?: number;
  /** The lowest oom_score_adj the engine can set (oom-score-floor.ts); lower values are raised to it. */
  oomScoreAdjFloor: number;
  /**
   * `<root-dir>/seccomp`, the kubelet's seccomp profile root: a Localhost profile must stay inside
   * it once symlinks are resolved (the file is read here and inlined); absent = not checked.
   */
  seccompRoot?: string;
}

type SandboxIn = CriInput<PodSandboxConfig>;
type ContainerIn = CriInput<ContainerConfig>;

/** sandboxMetadata: the config's metadata with every part present. @throws ERR_INVALID_ARGUMENT naming the empty field. */
export function sandboxMetadata(config: SandboxIn | null | undefined, what = 'PodSandboxConfig'): PodSandboxMetadata {
  const m = config?.metadata;
  for (const f of ['name', 'namespace', 'uid'] as const) {
    if (!m?.[f]) throw new AgentError('ERR_INVALID_ARGUMENT', `${what}.metadata.${f} is empty`);
  }
  return { name: m!.name!, namespace: m!.namespace!, uid: m!.uid!, attempt: m!.attempt ?? 0 };
}

/** dockerUser: Docker's `User` from a run_as_user / run_as_username / run_as_group; with only a group the image's user (root when unset) keeps it. */
function dockerUser(
  uid: CriInput<Int64Value> | null | undefined,
  username: string | null | undefined,
  gid: CriInput<Int64Value> | null | undefined,
  imageUser: string,
): string | undefined {
  const user = uid ? String(uid.value ?? 0) : username || undefined;
  if (!gid) return user;
  return `${user ?? (imageUser.split(':')[0] || '0')}:${gid.value ?? 0}`;
}

/**
 * seccompOpts: Docker's SecurityOpt for a seccomp profile (getSeccompSecurityOpts): Unconfined →
 * `seccomp=unconfined`; Localhost → the profile file's JSON (`localhost_ref`, an absolute host
 * path the kubelet resolved under `<root-dir>/seccomp`); RuntimeDefault or unset → none (Docker's
 * default profile). The deprecated `seccomp_profile_path` words (`unconfined`, `localhost/<path>`) too.
 * @throws AgentError ERR_RUNTIME when the Localhost file cannot be read, is not JSON, or resolves
 *   outside `seccompRoot` (a symlink out of `<root-dir>/seccomp`).
 */
async function seccompOpts(
  p: CriInput<SecurityProfile> | null | undefined,
  legacyPath: string | null | undefined,
  containerName: string,
  seccompRoot?: string,
): Promise<string[]> {
  let type = p?.profile_type;
  let file = p?.localhost_ref ?? '';
  if (!p && legacyPath) {
    type = legacyPath === 'unconfined' ? 'Unconfined' : legacyPath.startsWith('localhost/') ? 'Localhost' : 'RuntimeDefault';
    file = legacyPath.slice('localhost/'.length);
  }
  if (type === 'Unconfined') return ['seccomp=unconfined'];
  if (type !== 'Localhost') return [];
  const fail = (why: string) =>
    new AgentError(
      'ERR_RUNTIME',
      `failed to generate security options for container "${containerName}": cannot load seccomp profile ${JSON.stringify(file)}: ${why}`,
    );
  let text: string;
  try {
    if (seccompRoot) {
      // The name was checked to stay under the root (kuberuntime seccompProfile); a symlink placed
      // there must not lead out of it: this thread reads the file and hands its JSON to Docker.
      const [real, realRoot] = await Promise.all([realpath(file), realpath(seccompRoot)]);
      if (!real.startsWith(realRoot + path.sep)) throw new Error(`it resolves to ${real}, outside ${seccompRoot}`);
    }
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw fail((err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message);
  }
  try {
    return [`seccomp=${JSON.stringify(JSON.parse(text))}`];
  } catch (err) {
    throw fail(`not JSON: ${(err as Error).message}`);
  }
}

/** appArmorOpts: RuntimeDefault → `apparmor=docker-default`, Unconfined → `apparmor=unconfined`, Localhost → the profile's name (getApparmorSecurityOpts). */
function appArmorOpts(p: CriInput<SecurityProfile> | null | undefined, legacy: string | null | undefined): string[] {
  const type =
    p?.profile_type ??
    (legacy === 'runtime/default'
      ? 'RuntimeDefault'
      : legacy === 'unconfined'
        ? 'Unconfined'
        : legacy?.startsWith('localhost/')
          ? 'Localhost'
          : undefined);
  if (type === 'Unconfined') return ['apparmor=unconfined'];
  if (type === 'RuntimeDefault') return ['apparmor=docker-default'];
  if (type === 'Localhost') return [`apparmor=${p?.localhost_ref ?? legacy!.slice('localhost/'.length)}`];
  return [];
}

/** seLinuxOpts: Docker's `label=` options (dockershim's selinux options). */
function seLinuxOpts(o: CriInput<SELinuxOption> | null | undefined): string[] {
  if (!o) return [];
  return (['user', 'role', 'type', 'level'] as const).filter((k) => o[k]).map((k) => `label=${k}:${o[k]}`);
}

/** groups: supplemental group IDs as Docker's decimal strings, deduplicated. */
function groups(list: readonly number[] | null | undefined): string[] {
  return [...new Set((list ?? []).map(String))];
}

/** podHostConfig: what the sandbox's config gives each of its containers and itself (cgroup parent, pids, log rotation, oom_score_adj raised to the floor). */
function podHostConfig(sandbox: SandboxIn, s: DockerCreateSettings, oomScoreAdj: number): Partial<ContainerHostConfig> {
  const cgroupParent = sandbox.linux?.cgroup_parent || undefined;
  return {
    oomScoreAdj: Math.max(oomScoreAdj, s.oomScoreAdjFloor),
    cgroupParent,
    pidsLimit: !cgroupParent && s.podPidsLimit && s.podPidsLimit > 0 ? s.podPidsLimit : undefined,
    logRotation: s.logRotation,
  };
}

/**
 * sandboxCreateSpec: the pause container of `config` (makeSandboxDockerConfig): the
 * `k8s_POD_…` name; the config's labels and annotations (`annotation.<key>`) plus
 * `io.kubernetes.docker.type=podsandbox` and `io.kubernetes.container.name=POD`; hostname;
 * network `host` (NODE) or `none` (the agent's CNI joins it after the start); IPC `host` or
 * `shareable`; PID `host` for NODE; the pod-level user, groups, seccomp, SELinux and sysctls;
 * privileged and read-only root when asked; oom_score_adj -998 (raised to the floor); the pod
 * cgroup; --pod-max-pids without one; json-file rotation.
 * @throws AgentError ERR_INVALID_ARGUMENT for missing metadata; ERR_RUNTIME for a bad Localhost seccomp profile.
 */
export async function sandboxCreateSpec(config: SandboxIn, s: DockerCreateSettings): Promise<ContainerCreateSpec> {
  const meta = sandboxMetadata(config);
  const sc = config.linux?.security_context;
  const ns = sc?.namespace_options;
  const sysctls: Record<string, string> = {};
  for (const [k, v] of Object.entries(config.linux?.sysctls ?? {})) sysctls[normalizeSysctlName(k)] = v ?? '';
  return {
    name: sandboxDockerName(meta),
    image: s.podInfraImage,
    labels: makeDockerLabels(config.labels as Record<string, string>, config.annotations as Record<string, string>, {
      [kDockerTypeLabel]: kDockerTypeSandbox,
      [kContainerNameLabel]: kSandboxContainerName,
    }),
    hostname: config.hostname || undefined,
    user: dockerUser(sc?.run_as_user, undefined, sc?.run_as_group, ''),
    hostConfig: {
      groupAdd: groups(sc?.supplemental_groups),
      securityOpt: [
        ...(sc?.privileged ? [] : await seccompOpts(sc?.seccomp, sc?.seccomp_profile_path, kSandboxContainerName, s.seccompRoot)),
        ...seLinuxOpts(sc?.selinux_options),
      ],
      sysctls,
      privileged: sc?.privileged === true || undefined,
      readonlyRootfs: sc?.readonly_rootfs === true || undefined,
      networkMode: ns?.network === 'NODE' ? 'host' : 'none',
      ipcMode: ns?.ipc === 'NODE' ? 'host' : 'shareable',
      pidMode: ns?.pid === 'NODE' ? 'host' : undefined,
      ...podHostConfig(config, s, kPodInfraOOMAdj),
    },
  };
}

/**
 * mountBinds: CRI mounts as Docker binds `host:container[:opts]` (generateMountBindings): `ro`,
 * `Z` for selinux_relabel, propagation HOST_TO_CONTAINER → `rslave`, BIDIRECTIONAL → `rshared`,
 * PRIVATE → none (Docker's rprivate). Pure.
 */
export function mountBinds(mounts: readonly CriInput<Mount>[] | null | undefined): string[] {
  return (mounts ?? []).map((m) => {
    const opts = [...(m.readonly ? ['ro'] : []), ...(m.selinux_relabel ? ['Z'] : [])];
    if (m.propagation === 'PROPAGATION_HOST_TO_CONTAINER') opts.push('rslave');
    else if (m.propagation === 'PROPAGATION_BIDIRECTIONAL') opts.push('rshared');
    return `${m.host_path ?? ''}:${m.container_path ?? ''}${opts.length ? `:${opts.join(',')}` : ''}`;
  });
}

/**
 * withResolvConf: `binds` with the pod's resolv.conf (`file`) at /etc/resolv.conf — after the
 * /etc/hosts bind when there is one (where the syncer put it), else last — unless a mount already
 * targets /etc/resolv.conf or `file` is ''. Pure.
 */
export function withResolvConf(binds: string[], file: string): string[] {
  if (!file || binds.some((b) => b.split(':')[1] === '/etc/resolv.conf')) return binds;
  const bind = `${file}:/etc/resolv.conf`;
  const hosts = binds.findIndex((b) => b.split(':')[1] === '/etc/hosts');
  return hosts < 0 ? [...binds, bind] : [...binds.slice(0, hosts + 1), bind, ...binds.slice(hosts + 1)];
}

/** What containerCreateSpec needs besides the messages. */
export interface ContainerCreateContext {
  /** The sandbox (pause) container's ID: `container:<id>` namespaces and `io.kubernetes.sandbox.id`. */
  sandboxId: string;
  /** The pod's resolv.conf on the host ('' = none: the sandbox had no dns_config). */
  resolvConfFile: string;
  /** The image's configured user (`Config.User`), asked only for a run_as_group without a user. */
  imageUser: () => Promise<string>;
}

/**
 * containerCreateSpec: the Docker create body of `config` in the sandbox of `sandbox`
 * (CreateContainer): the name `k8s_<container>_<pod>_<ns>_<uid>_<attempt>`; labels and
 * `annotation.` labels plus the type and sandbox ID labels; the image (`user_specified_image`,
 * the pod's own words, else `image`); Entrypoint = command, Cmd = args, env, working dir; network
 * and IPC `container:<sandbox>` (IPC `host` for NODE), PID `container:<sandbox>` for POD,
 * `container:<target_id>` for TARGET (an ephemeral container's target, as cri-dockerd's
 * modifyPIDNamespaceOverrides), `host`
 * for NODE, its own for CONTAINER; binds from `mounts` and the pod's resolv.conf; memory, CPU
 * quota/period/shares, oom_score_adj (raised to the floor); the pod cgroup, --pod-max-pids without
 * one, json-file rotation; the security context: User, GroupAdd, Privileged, ReadonlyRootfs,
 * CapAdd/CapDrop, SecurityOpt (`no-new-privileges`, seccomp and AppArmor unless privileged,
 * SELinux labels), MaskedPaths/ReadonlyPaths when given; tty and stdin.
 * @throws AgentError ERR_INVALID_ARGUMENT for missing metadata or image; ERR_RUNTIME for a bad Localhost seccomp profile.
 */
export async function containerCreateSpec(
  config: ContainerIn,
  sandbox: SandboxIn,
  s: DockerCreateSettings,
  ctx: ContainerCreateContext,
): Promise<ContainerCreateSpec> {
  const name = config.metadata?.name;
  if (!name) throw new AgentError('ERR_INVALID_ARGUMENT', 'ContainerConfig.metadata.name is empty');
  const image = config.image?.user_specified_image || config.image?.image;
  if (!image) throw new AgentError('ERR_INVALID_ARGUMENT', `ContainerConfig.image.image of container "${name}" is empty`);
  const pod = sandboxMetadata(sandbox, 'sandbox config');
  const sc: CriInput<LinuxContainerSecurityContext> = config.linux?.security_context ?? {};
  const r = config.linux?.resources ?? {};
  const ns = sc.namespace_options;
  const join = `container:${ctx.sandboxId}`;
  const privileged = sc.privileged === true;
  const user =
    sc.run_as_group && !sc.run_as_user && !sc.run_as_username
      ? dockerUser(undefined, undefined, sc.run_as_group, await ctx.imageUser())
      : dockerUser(sc.run_as_user, sc.run_as_username, sc.run_as_group, '');
  const securityOpt = [
    ...(sc.no_new_privs ? ['no-new-privileges'] : []),
    ...(privileged
      ? []
      : [
          ...(await seccompOpts(sc.seccomp, sc.seccomp_profile_path, name, s.seccompRoot)),
          ...appArmorOpts(sc.apparmor, sc.apparmor_profile),
        ]),
    ...seLinuxOpts(sc.selinux_options),
  ];
  const cpuQuota = r.cpu_quota ?? 0;
  return {
    name: containerDockerName({ name, attempt: config.metadata?.attempt ?? 0 }, pod),
    image,
    labels: makeDockerLabels(config.labels as Record<string, string>, config.annotations as Record<string, string>, {
      [kDockerTypeLabel]: kDockerTypeContainer,
      [kSandboxIdLabel]: ctx.sandboxId,
    }),
    entrypoint: config.command?.length ? [...config.command] : undefined,
    cmd: config.args?.length ? [...config.args] : undefined,
    env: (config.envs ?? []).map((e) => `${e.key ?? ''}=${e.value ?? ''}`),
    workingDir: config.working_dir || undefined,
    user,
    tty: config.tty === true,
    openStdin: config.stdin === true,
    stdinOnce: config.stdin_once === true,
    hostConfig: {
      privileged: privileged || undefined,
      readonlyRootfs: sc.readonly_rootfs === true || undefined,
      capAdd: (sc.capabilities?.add_capabilities ?? []).map(capabilityName),
      capDrop: (sc.capabilities?.drop_capabilities ?? []).map(capabilityName),
      securityOpt,
      groupAdd: groups(sc.supplemental_groups),
      maskedPaths: !privileged && sc.masked_paths?.length ? [...sc.masked_paths] : undefined,
      readonlyPaths: !privileged && sc.readonly_paths?.length ? [...sc.readonly_paths] : undefined,
      networkMode: join,
      ipcMode: ns?.ipc === 'NODE' ? 'host' : join,
      pidMode:
        ns?.pid === 'NODE'
          ? 'host'
          : ns?.pid === 'POD'
            ? join
            : ns?.pid === 'TARGET' && ns.target_id
              ? `container:${ns.target_id}`
              : undefined,
      binds: withResolvConf(mountBinds(config.mounts), ctx.resolvConfFile),
      memory: r.memory_limit_in_bytes ?? 0,
      cpuQuota,
      cpuPeriod: cpuQuota > 0 && r.cpu_period ? r.cpu_period : undefined,
      cpuShares: r.cpu_shares ?? 0,
      ...podHostConfig(sandbox, s, r.oom_score_adj ?? 0),
    },
  };
}
