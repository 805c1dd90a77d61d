// Counterpart of kubernetes/cri-api pkg/apis/runtime/v1/api.proto (the version, status, image and stats messages).
/**
 * TypeScript shapes of the CRI v1 messages about the runtime itself, images and stats, with the
 * proto's field names. Values arrive as ./types.ts describes: scalars always present, unset
 * messages `null`, enums as names, 64-bit integers as numbers; every `timestamp` is nanoseconds
 * since the Unix epoch; byte counts are bytes; CPU usage is nanoseconds of CPU time (cumulative)
 * and nano-cores (a rate).
 */
import type { ContainerMetadata, ImageSpec, Int64Value, PodSandboxMetadata, StringMap } from './types.js';

/** VersionResponse: e.g. `{ version: '0.1.0', runtime_name: 'containerd', runtime_version: 'v1.6.20', runtime_api_version: 'v1' }`. */
export interface VersionResponse {
  version: string;
  runtime_name: string;
  runtime_version: string;
  runtime_api_version: string;
}
/** RuntimeCondition: `RuntimeReady` or `NetworkReady`, with a reason and message when false. */
export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}
/** StatusResponse: the runtime's conditions; `info` only with `verbose` (JSON strings, runtime-specific). */
export interface StatusResponse {
  status: { conditions: RuntimeCondition[] } | null;
  info: StringMap;
  runtime_handlers: { name: string; features: { recursive_read_only_mounts: boolean; user_namespaces: boolean } | null }[];
  features: { supplemental_groups_policy: boolean } | null;
}

/** UInt64Value: an optional uint64 (unset = null where it is used). */
export interface UInt64Value {
  value: number;
}
/** Image: an image the runtime holds; `id` is its config digest (`sha256:…`), `size` in bytes. */
export interface Image {
  id: string;
  repo_tags: string[];
  repo_digests: string[];
  size: number;
  uid: Int64Value | null;
  username: string;
  spec: ImageSpec | null;
  pinned: boolean;
}
/** ImageStatusResponse: `image` is null when the runtime does not hold the image (not an error). */
export interface ImageStatusResponse {
  image: Image | null;
  info: StringMap;
}
/**
 * AuthConfig: registry credentials for PullImage (the kubelet's credentialprovider gives
 * `username`/`password`, or `auth` = base64 of `user:password`, or a token).
 */
export interface AuthConfig {
  username: string;
  password: string;
  auth: string;
  server_address: string;
  identity_token: string;
  registry_token: string;
}

/** FilesystemUsage: one filesystem's use (ImageFsInfo, a container's writable layer). */
export interface FilesystemUsage {
  timestamp: number;
  fs_id: { mountpoint: string } | null;
  used_bytes: UInt64Value | null;
  inodes_used: UInt64Value | null;
}
/** ImageFsInfoResponse: the filesystems the images and the containers' writable layers are on. */
export interface ImageFsInfoResponse {
  image_filesystems: FilesystemUsage[];
  container_filesystems: FilesystemUsage[];
}
/** CpuUsage: `usage_core_nano_seconds` cumulative CPU time, `usage_nano_cores` the rate over the runtime's last sample. */
export interface CpuUsage {
  timestamp: number;
  usage_core_nano_seconds: UInt64Value | null;
  usage_nano_cores: UInt64Value | null;
}
/** MemoryUsage: bytes (working set = usage minus inactive file), page fault counts. */
export interface MemoryUsage {
  timestamp: number;
  working_set_bytes: UInt64Value | null;
  available_bytes: UInt64Value | null;
  usage_bytes: UInt64Value | null;
  rss_bytes: UInt64Value | null;
  page_faults: UInt64Value | null;
  major_page_faults: UInt64Value | null;
}
/** ContainerAttributes: which container a {@link ContainerStats} is about. */
export interface ContainerAttributes {
  id: string;
  metadata: ContainerMetadata | null;
  labels: StringMap;
  annotations: StringMap;
}
/** ContainerStats: one container's CPU, memory and writable-layer use. */
export interface ContainerStats {
  attributes: ContainerAttributes | null;
  cpu: CpuUsage | null;
  memory: MemoryUsage | null;
  writable_layer: FilesystemUsage | null;
  swap: { timestamp: number; swap_available_bytes: UInt64Value | null; swap_usage_bytes: UInt64Value | null } | null;
}
/** ContainerStatsFilter: ListContainerStats' filter; every part given must match. */
export interface ContainerStatsFilter {
  id: string;
  pod_sandbox_id: string;
  label_selector: StringMap;
}
/** NetworkInterfaceUsage: one interface's byte and error counters (cumulative). */
export interface NetworkInterfaceUsage {
  name: string;
  rx_bytes: UInt64Value | null;
  rx_errors: UInt64Value | null;
  tx_bytes: UInt64Value | null;
  tx_errors: UInt64Value | null;
}
/** PodSandboxStats: a pod's CPU, memory, network and process counts, and its containers' stats. */
export interface PodSandboxStats {
  attributes: { id: string; metadata: PodSandboxMetadata | null; labels: StringMap; annotations: StringMap } | null;
  linux: {
    cpu: CpuUsage | null;
    memory: MemoryUsage | null;
    network: { timestamp: number; default_interface: NetworkInterfaceUsage | null; interfaces: NetworkInterfaceUsage[] } | null;
    process: { timestamp: number; process_count: UInt64Value | null } | null;
    containers: ContainerStats[];
  } | null;
}
/** PodSandboxStatsFilter: ListPodSandboxStats' filter. */
export interface PodSandboxStatsFilter {
  id: string;
  label_selector: StringMap;
}
