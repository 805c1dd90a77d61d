// Counterpart of kubernetes/cri-api pkg/apis/runtime/v1/api.proto (the pod sandbox and container messages; the generated api.pb.go types).
/**
 * TypeScript shapes of the CRI v1 messages the kubelet's kuberuntime builds and reads, with the
 * proto's own field names (snake_case: the loader runs with `keepCase`). Stats, images and the
 * runtime's status are in ./types-status.ts.
 *
 * How the values arrive (the loader options of ./proto.ts):
 * - every scalar, repeated and map field is present in an answer (proto3 defaults: `''`, `0`,
 *   `false`, `[]`, `{}`); a message-typed field the runtime left unset is `null`;
 * - enums are their names as strings (`'CONTAINER_RUNNING'`, `'SANDBOX_READY'`, `'TCP'`);
 * - 64-bit integers are JavaScript numbers. Timestamps (`created_at`, `started_at`, …) are
 *   nanoseconds since the Unix epoch: a number that size keeps 256 ns of precision, far finer than
 *   the seconds the kubelet's API status carries. Byte counts stay exact up to 8 PiB.
 * Requests are written as {@link CriInput} of these shapes: any field may be left out.
 */

/** CriInput: the request form of a CRI message `T` — every field optional, nested ones too; the encoder fills proto3 defaults. */
export type CriInput<T> = T extends readonly (infer E)[]
  ? readonly CriInput<E>[]
  : T extends object
    ? { [K in keyof T]?: CriInput<Exclude<T[K], null>> | null }
    : T;

/** A CRI string map (labels, annotations, sysctls, info). */
export type StringMap = Record<string, string>;

/** Protocol of a {@link PortMapping}. */
export type Protocol = 'TCP' | 'UDP' | 'SCTP';
/** MountPropagation of a {@link Mount} (the kubelet maps the pod's mountPropagation onto it). */
export type MountPropagation = 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';
/** NamespaceMode: POD (shared by the pod), CONTAINER (its own), NODE (the host's), TARGET (another container's, ephemeral containers). */
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
/** PodSandboxState as the runtime reports it. */
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
/** ContainerState as the runtime reports it. */
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
/** SecurityProfile.ProfileType (seccomp, AppArmor). */
export type SecurityProfileType = 'RuntimeDefault' | 'Unconfined' | 'Localhost';

/** DNSConfig: the sandbox's resolv.conf (the kubelet's network/dns builds it). */
export interface DNSConfig {
  servers: string[];
  searches: string[];
  options: string[];
}
/** PortMapping: a hostPort of the pod (`host_port` 0 = none; `host_ip` '' = every address). */
export interface PortMapping {
  protocol: Protocol;
  container_port: number;
  host_port: number;
  host_ip: string;
}
/** IDMapping of a user namespace or an idmapped mount. */
export interface IDMapping {
  host_id: number;
  container_id: number;
  length: number;
}
/** ImageSpec: an image by reference or ID; `user_specified_image` is the pod's `image` as written. */
export interface ImageSpec {
  image: string;
  annotations: StringMap;
  user_specified_image: string;
  runtime_handler: string;
}
/** Mount: a bind mount of `host_path` at `container_path` (or of an image, `image`, for image volumes). */
export interface Mount {
  container_path: string;
  host_path: string;
  readonly: boolean;
  selinux_relabel: boolean;
  propagation: MountPropagation;
  uidMappings: IDMapping[];
  gidMappings: IDMapping[];
  recursive_read_only: boolean;
  image: ImageSpec | null;
}
/** UserNamespace of a sandbox (mode NODE = the host's; POD with `uids`/`gids` mappings). */
export interface UserNamespace {
  mode: NamespaceMode;
  uids: IDMapping[];
  gids: IDMapping[];
}
/** NamespaceOption: network, pid and ipc namespaces of a sandbox or container; `target_id` for TARGET. */
export interface NamespaceOption {
  network: NamespaceMode;
  pid: NamespaceMode;
  ipc: NamespaceMode;
  target_id: string;
  userns_options: UserNamespace | null;
}
/** Int64Value: an optional int64 (unset = null where it is used). */
export interface Int64Value {
  value: number;
}
/** SELinuxOption: the SELinux label parts. */
export interface SELinuxOption {
  user: string;
  role: string;
  type: string;
  level: string;
}
/** SecurityProfile: a seccomp or AppArmor profile; `localhost_ref` names a Localhost one. */
export interface SecurityProfile {
  profile_type: SecurityProfileType;
  localhost_ref: string;
}
/** Capability: capabilities added and dropped (names without `CAP_`, or `ALL`). */
export interface Capability {
  add_capabilities: string[];
  drop_capabilities: string[];
  add_ambient_capabilities: string[];
}
/** HugepageLimit: a hugetlb limit, `limit` in bytes. */
export interface HugepageLimit {
  page_size: string;
  limit: number;
}
/**
 * LinuxContainerResources: the cgroup settings of a container (or a sandbox's overhead/resources).
 * CPU period and quota in microseconds, shares in cgroup v1 units (2–262144), memory in bytes.
 */
export interface LinuxContainerResources {
  cpu_period: number;
  cpu_quota: number;
  cpu_shares: number;
  memory_limit_in_bytes: number;
  oom_score_adj: number;
  cpuset_cpus: string;
  cpuset_mems: string;
  hugepage_limits: HugepageLimit[];
  unified: StringMap;
  memory_swap_limit_in_bytes: number;
}

/** LinuxSandboxSecurityContext: the pod-level security settings the sandbox is made with. */
export interface LinuxSandboxSecurityContext {
  namespace_options: NamespaceOption | null;
  selinux_options: SELinuxOption | null;
  run_as_user: Int64Value | null;
  run_as_group: Int64Value | null;
  readonly_rootfs: boolean;
  supplemental_groups: number[];
  supplemental_groups_policy: 'Merge' | 'Strict';
  privileged: boolean;
  seccomp: SecurityProfile | null;
  apparmor: SecurityProfile | null;
  seccomp_profile_path: string;
}
/** LinuxPodSandboxConfig: the pod cgroup (`cgroup_parent`), the pod's security context and sysctls. */
export interface LinuxPodSandboxConfig {
  cgroup_parent: string;
  security_context: LinuxSandboxSecurityContext | null;
  sysctls: StringMap;
  overhead: LinuxContainerResources | null;
  resources: LinuxContainerResources | null;
}
/** PodSandboxMetadata: the pod's name, UID, namespace and the sandbox's attempt (0, 1, … per re-creation). */
export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}
/**
 * PodSandboxConfig: what RunPodSandbox makes (kuberuntime_sandbox.go generatePodSandboxConfig).
 * `log_directory` is the pod's log directory (`/var/log/pods/<ns>_<name>_<uid>`), under which each
 * container's `log_path` is relative; `hostname` must be '' for a host-network sandbox.
 */
export interface PodSandboxConfig {
  metadata: PodSandboxMetadata | null;
  hostname: string;
  log_directory: string;
  dns_config: DNSConfig | null;
  port_mappings: PortMapping[];
  labels: StringMap;
  annotations: StringMap;
  linux: LinuxPodSandboxConfig | null;
}

/** LinuxContainerSecurityContext: a container's Linux security settings (kuberuntime security_context.go). */
export interface LinuxContainerSecurityContext {
  capabilities: Capability | null;
  privileged: boolean;
  namespace_options: NamespaceOption | null;
  selinux_options: SELinuxOption | null;
  run_as_user: Int64Value | null;
  run_as_group: Int64Value | null;
  run_as_username: string;
  readonly_rootfs: boolean;
  supplemental_groups: number[];
  supplemental_groups_policy: 'Merge' | 'Strict';
  no_new_privs: boolean;
  masked_paths: string[];
  readonly_paths: string[];
  seccomp: SecurityProfile | null;
  apparmor: SecurityProfile | null;
  apparmor_profile: string;
  seccomp_profile_path: string;
}
/** LinuxContainerConfig: a container's resources and security context. */
export interface LinuxContainerConfig {
  resources: LinuxContainerResources | null;
  security_context: LinuxContainerSecurityContext | null;
}
/** ContainerMetadata: the container's name in the pod and its attempt (the restart count). */
export interface ContainerMetadata {
  name: string;
  attempt: number;
}
/** KeyValue: one environment variable. */
export interface KeyValue {
  key: string;
  value: string;
}
/** Device: a host device in the container. */
export interface Device {
  container_path: string;
  host_path: string;
  permissions: string;
}
/**
 * ContainerConfig: what CreateContainer makes (kuberuntime_container.go generateContainerConfig).
 * `log_path` is relative to the sandbox's `log_directory` (`<name>/<attempt>.log`).
 */
export interface ContainerConfig {
  metadata: ContainerMetadata | null;
  image: ImageSpec | null;
  command: string[];
  args: string[];
  working_dir: string;
  envs: KeyValue[];
  mounts: Mount[];
  devices: Device[];
  labels: StringMap;
  annotations: StringMap;
  log_path: string;
  stdin: boolean;
  stdin_once: boolean;
  tty: boolean;
  linux: LinuxContainerConfig | null;
  CDI_devices: { name: string }[];
}

/** PodSandboxNetworkStatus: the pod's IP ('' for a host-network sandbox) and any further ones. */
export interface PodSandboxNetworkStatus {
  ip: string;
  additional_ips: { ip: string }[];
}
/** PodSandboxStatus: the answer of PodSandboxStatus; `created_at` in nanoseconds since the epoch. */
export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  created_at: number;
  network: PodSandboxNetworkStatus | null;
  linux: { namespaces: { options: NamespaceOption | null } | null } | null;
  labels: StringMap;
  annotations: StringMap;
  runtime_handler: string;
}
/** PodSandbox: one item of ListPodSandbox. */
export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  created_at: number;
  labels: StringMap;
  annotations: StringMap;
  runtime_handler: string;
}
/** PodSandboxFilter: ListPodSandbox's filter; every part given must match (`label_selector`: all pairs). */
export interface PodSandboxFilter {
  id: string;
  state: { state: PodSandboxState } | null;
  label_selector: StringMap;
}

/** Container: one item of ListContainers; `created_at` in nanoseconds since the epoch. */
export interface Container {
  id: string;
  pod_sandbox_id: string;
  metadata: ContainerMetadata | null;
  image: ImageSpec | null;
  image_ref: string;
  state: ContainerState;
  created_at: number;
  labels: StringMap;
  annotations: StringMap;
  image_id: string;
}
/** ContainerFilter: ListContainers' filter; every part given must match. */
export interface ContainerFilter {
  id: string;
  state: { state: ContainerState } | null;
  pod_sandbox_id: string;
  label_selector: StringMap;
}
/**
 * ContainerStatus: the answer of ContainerStatus. Times in nanoseconds since the epoch (0 = not
 * yet); `exit_code` and `reason` (`Completed`, `Error`, `OOMKilled`) once exited; `log_path` absolute.
 */
export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata | null;
  state: ContainerState;
  created_at: number;
  started_at: number;
  finished_at: number;
  exit_code: number;
  image: ImageSpec | null;
  image_ref: string;
  reason: string;
  message: string;
  labels: StringMap;
  annotations: StringMap;
  mounts: Mount[];
  log_path: string;
  resources: { linux: LinuxContainerResources | null } | null;
  image_id: string;
  user: { linux: { uid: number; gid: number; supplemental_groups: number[] } | null } | null;
}
/** ExecSyncResponse: the output and exit code of a command run to its end (ExecSync). */
export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exit_code: number;
}
/** ExecRequest: a streaming exec; the runtime answers the URL of its streaming server. */
export interface ExecRequest {
  container_id: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}
/** AttachRequest: a streaming attach to the container's main process. */
export interface AttachRequest {
  container_id: string;
  stdin: boolean;
  tty: boolean;
  stdout: boolean;
  stderr: boolean;
}
/** PortForwardRequest: a port-forward into the sandbox's network namespace (`port` may be empty: any). */
export interface PortForwardRequest {
  pod_sandbox_id: string;
  port: number[];
}
