// Counterpart of pkg/kubelet/kuberuntime/kuberuntime_gc.go (container GC) and pkg/kubelet/images/image_gc_manager.go (image GC).
/**
 * The worker side of garbage collection. Two pure decision functions (which containers, which
 * images) and the `gc` task that applies them:
 * - container GC goes through the node-scoped runtime only (node-scope.ts), so containers of other
 *   owners are never listed, let alone removed;
 * - image GC only ever removes images this agent pulled itself (recorded by the image puller in
 *   `{rootDir}/images/pulled.json`) and never an image any container of any owner uses.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound } from '../../shared/errors.js';
import type { GcResult, GcTask, NodeSandboxSettings, RuntimeContainerState } from '../../shared/messages.js';
import {
  kContainerNameLabel,
  kContainerTypeLabel,
  kContainerTypeSandbox,
  kPodUidLabel,
  kSandboxIdLabel,
  ownerLabelFilter,
  parseContainerName,
} from './labels.js';
import { toRuntimeState } from './runtime-pod.js';
import type { ContainerRuntime, ImageFsInfo } from '../runtime/runtime.js';
import { removeOrphanPodCgroups } from '../cm/pod-cgroup.js';
import type { Logger } from '../../shared/logging.js';
import { kNoopPodNetwork, type PodNetwork } from '../network/pod-network.js';
import { tearDownSandboxNetwork } from './sandbox-network.js';
import { kPodNameLabel, kPodNamespaceLabel } from './labels.js';

/** One container as container GC sees it (from a list call; no inspect needed). */
export interface GcContainer {
  id: string;
  podUid: string;
  /** Spec container name; `POD` for a sandbox. */
  name: string;
  sandbox: boolean;
  /** For app containers: the sandbox they joined (`io.kubernetes.sandbox.id`); '' for sandboxes. */
  sandboxId: string;
  state: RuntimeContainerState;
  /** Epoch ms. */
  createdAtMs: number;
  /** The `_<attempt>` of the Docker name (tie-breaker when created at the same millisecond). */
  attempt: number;
}

/** Options of selectContainersToRemove. */
export interface ContainerGcPolicy {
  /** --maximum-dead-containers-per-container: dead containers kept per (pod, container name); >= 0. */
  maxPerPodContainer: number;
  /**
   * UIDs of the pods the agent knows (its pod manager). When given, every dead container of a pod
   * not in it is evictable (kuberuntime_gc.go: containers of deleted pods). Absent = treat all
   * pods as known (only the per-container limit applies).
   */
  activePodUids?: ReadonlySet<string>;
}

/** What container GC decided to remove: Docker container IDs. */
export interface ContainerGcPlan {
  containers: string[];
  sandboxes: string[];
}

function newestFirst(a: GcContainer, b: GcContainer): number {
  return b.createdAtMs - a.createdAtMs || b.attempt - a.attempt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * selectContainersToRemove decides container GC, as kuberuntime_gc.go evictContainers /
 * evictSandboxes (with MinAge 0, as the kubelet's default):
 * - only `exited` containers are evictable; `running`, `created` and `unknown` ones never are;
 * - per (pod UID, container name), the newest `maxPerPodContainer` dead containers are kept and
 *   older ones removed; for a pod not in `activePodUids` (when given), every dead one is removed;
 * - sandboxes: the newest sandbox of a known pod is always kept; an older one is removed when it is
 *   dead and no remaining (not removed) app container belongs to it. For a pod not known, every
 *   dead sandbox without remaining containers is removed.
 * Pure; returns IDs in a stable order (pod, then newest first).
 * @throws RangeError if `maxPerPodContainer` is not an integer >= 0.
 */
export function selectContainersToRemove(all: readonly GcContainer[], policy: ContainerGcPolicy): ContainerGcPlan {
  const max = policy.maxPerPodContainer;
  if (!Number.isInteger(max) || max < 0) throw new RangeError(`maximumDeadContainersPerContainer must be an integer >= 0, got ${max}`);
  const byPod = new Map<string, GcContainer[]>();
  for (const c of all) {
    if (!c.podUid) continue;
    let l = byPod.get(c.podUid);
    if (!l) byPod.set(c.podUid, (l = []));
    l.push(c);
  }
  const plan: ContainerGcPlan = { containers: [], sandboxes: [] };
  for (const uid of [...byPod.keys()].sort()) {
    const list = byPod.get(uid)!.slice().sort(newestFirst);
    const known = policy.activePodUids ? policy.activePodUids.has(uid) : true;
    const keepPerName = known ? max : 0;
    const deadSeen = new Map<string, number>();
    const removed = new Set<string>();
    for (const c of list) {
      if (c.sandbox || c.state !== 'exited') continue;
      const n = deadSeen.get(c.name) ?? 0;
      deadSeen.set(c.name, n + 1);
      if (n >= keepPerName) {
        plan.containers.push(c.id);
        removed.add(c.id);
      }
    }
    const usedSandboxes = new Set(list.filter((c) => !c.sandbox && !removed.has(c.id)).map((c) => c.sandboxId));
    const sandboxes = list.filter((c) => c.sandbox);
    sandboxes.forEach((s, i) => {
      if (known && i === 0) return;
      if (s.state !== 'exited' || usedSandboxes.has(s.id)) return;
      plan.sandboxes.push(s.id);
    });
  }
  return plan;
}

/** One local image as image GC sees it. */
export interface GcImage {
  /** Docker image ID, `sha256:…`. */
  id: string;
  repoTags: string[];
  /** Bytes. */
  sizeBytes: number;
  /** Epoch ms. */
  createdAtMs: number;
}

/** One image this agent pulled (a record of `{rootDir}/images/pulled.json`). */
export interface PulledImageRecord {
  /** The references the agent pulled it by, e.g. `127.0.0.1:5056/busybox:1.35`. */
  refs: string[];
  /** Epoch ms of the last pull. */
  pulledAtMs: number;
  /** Epoch ms when the agent last saw a container use it (0 = never seen in use). */
  lastUsedMs: number;
}

/** pulled.json: image ID → record. */
export type PulledImages = Record<string, PulledImageRecord>;

/** Inputs of selectImagesToRemove. */
export interface ImageGcInput {
  /** Size of the filesystem holding Docker's root, bytes. */
  capacityBytes: number;
  /** Bytes available on it. */
  availableBytes: number;
  /** imageGCHighThresholdPercent: GC runs when usage is at or above this (0–100). */
  highThresholdPercent: number;
  /** imageGCLowThresholdPercent: GC frees down to this usage (0–100, <= high). */
  lowThresholdPercent: number;
  images: readonly GcImage[];
  pulled: PulledImages;
  /** Image IDs used by any container of any owner (running or not). */
  inUseImageIds: ReadonlySet<string>;
  /** Image IDs never removed (the pod infra image). */
  protectedImageIds: ReadonlySet<string>;
}

/** What image GC decided: images to remove (oldest first) and the bytes it aims to free. */
export interface ImageGcPlan {
  /** Usage of the filesystem, percent (0–100). */
  usagePercent: number;
  /** Bytes to free to get down to the low threshold (0 below the high threshold). */
  bytesToFree: number;
  images: GcImage[];
}

/**
 * selectImagesToRemove decides image GC as image_gc_manager.go GarbageCollect/freeSpace: when the
 * usage `(capacity - available) / capacity` is at or above the high threshold, free
 * `capacity * (100 - low) / 100 - available` bytes by removing images oldest first — by the time
 * the agent last saw them used, else their pull time, else their created time. Only images in
 * `pulled` are candidates (images of other owners are never touched), never one in
 * `inUseImageIds` or `protectedImageIds`. Stops once the sizes of the chosen images reach the
 * amount to free. Pure.
 * @throws RangeError for thresholds outside 0..100 or low > high, or a capacity <= 0.
 */
export function selectImagesToRemove(input: ImageGcInput): ImageGcPlan {
  const { highThresholdPercent: high, lowThresholdPercent: low, capacityBytes: cap, availableBytes: avail } = input;
  if (!(high >= 0 && high <= 100)) throw new RangeError(`imageGCHighThresholdPercent must be in 0..100, got ${high}`);
  if (!(low >= 0 && low <= 100)) throw new RangeError(`imageGCLowThresholdPercent must be in 0..100, got ${low}`);
  if (low > high) throw new RangeError(`imageGCLowThresholdPercent (${low}) must not exceed imageGCHighThresholdPercent (${high})`);
  if (!(cap > 0)) throw new RangeError(`capacityBytes must be > 0, got ${cap}`);
  const usagePercent = ((cap - avail) * 100) / cap;
  if (usagePercent < high) return { usagePercent, bytesToFree: 0, images: [] };
  const bytesToFree = Math.max(0, Math.ceil((cap * (100 - low)) / 100 - avail));
  const lastUsed = (img: GcImage): number => {
    const r = input.pulled[img.id];
    return r?.lastUsedMs || r?.pulledAtMs || img.createdAtMs;
  };
  const candidates = input.images
    .filter((img) => input.pulled[img.id] !== undefined && !input.inUseImageIds.has(img.id) && !input.protectedImageIds.has(img.id))
    .sort((a, b) => lastUsed(a) - lastUsed(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const chosen: GcImage[] = [];
  let freed = 0;
  for (const img of candidates) {
    if (freed >= bytesToFree) break;
    chosen.push(img);
    freed += img.sizeBytes;
  }
  return { usagePercent, bytesToFree, images: chosen };
}

/** pulledImagesFile is `{rootDir}/images/pulled.json`. */
export function pulledImagesFile(rootDir: string): string {
  return path.join(rootDir, 'images', 'pulled.json');
}

/**
 * readPulledImages reads pulled.json; a missing file is `{}`.
 * @throws Error naming the file if it is not a JSON object.
 */
export async function readPulledImages(rootDir: string): Promise<PulledImages> {
  const file = pulledImagesFile(rootDir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  const v = JSON.parse(text) as unknown;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${file}: must be a JSON object of image ID → record`);
  return v as PulledImages;
}

/** writePulledImages writes pulled.json atomically (temporary file, then rename). */
export async function writePulledImages(rootDir: string, images: PulledImages): Promise<void> {
  const file = pulledImagesFile(rootDir);
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, JSON.stringify(images));
  await rename(tmp, file);
}

/**
 * recordPulledImage adds `ref` (image ID `imageId`) to pulled.json with pulledAtMs = `nowMs` (epoch ms, the caller's clock).
 * Read-modify-write: two threads recording at the same instant may lose one record (that image is
 * then simply never garbage collected — the safe side).
 */
export async function recordPulledImage(rootDir: string, ref: string, imageId: string, nowMs: number): Promise<void> {
  const all = await readPulledImages(rootDir).catch(() => ({}) as PulledImages);
  const r = all[imageId] ?? { refs: [], pulledAtMs: nowMs, lastUsedMs: 0 };
  if (!r.refs.includes(ref)) r.refs.push(ref);
  r.pulledAtMs = nowMs;
  all[imageId] = r;
  await writePulledImages(rootDir, all);
}

/** Dependencies of runGc. */
export interface GcDeps {
  /** The node-scoped runtime (scopeToNode): it refuses to remove anything not owned by this node. */
  runtime: ContainerRuntime;
  /**
   * The same runtime NOT scoped to the node, for image GC: images are shared by every owner of the
   * engine, and an image any owner's container uses must be kept, so image GC lists every
   * container. It never removes a container. A runtime without an image filesystem
   * (imageFsInfo() null: the fake) gets no image GC.
   */
  imageRuntime: ContainerRuntime;
  nodeName: string;
  rootDir: string;
  podInfraContainerImage: string;
  now: () => number;
  /** The node's sandbox settings: with `cgroupsPerQOS`, orphan pod cgroups are removed too. Absent (the fake runtime): not. */
  sandbox?: NodeSandboxSettings;
  /** The thread's pod network: sandboxes are torn down before removal, leases of gone sandboxes reconciled. Absent: kNoopPodNetwork. */
  network?: PodNetwork;
  logger?: Logger;
}

/** `busybox` → `busybox:latest` (Docker's RepoTags spelling); a ref with a tag or digest is unchanged. */
function withDefaultTag(ref: string): string {
  if (ref.includes('@')) return ref;
  const last = ref.slice(ref.lastIndexOf('/') + 1);
  return last.includes(':') ? ref : `${ref}:latest`;
}

function toGcContainer(c: { id: string; name: string; labels: Record<string, string>; state: string; createdAtMs: number }): GcContainer {
  const sandbox = c.labels[kContainerTypeLabel] === kContainerTypeSandbox;
  const parsed = parseContainerName(c.name);
  return {
    id: c.id,
    podUid: c.labels[kPodUidLabel] ?? '',
    name: c.labels[kContainerNameLabel] ?? parsed?.containerName ?? '',
    sandbox,
    sandboxId: sandbox ? '' : (c.labels[kSandboxIdLabel] ?? ''),
    state: toRuntimeState(c.state),
    createdAtMs: c.createdAtMs,
    attempt: parsed?.attempt ?? 0,
  };
}

/**
 * runGc is the `gc` task: container GC (one list call of this node's containers, then removals
 * through the node-scoped runtime; app containers before sandboxes, as kuberuntime_gc.go), then,
 * if `task.imageGc` is set and the runtime has an image filesystem (imageFsInfo: Docker's root dir,
 * `statfs`), image GC on it. A removal that fails is reported in `errors` and
 * the rest goes on; a container already gone counts as removed. With a pod network: a sandbox's
 * network is torn down (idempotent DEL, netns '' — it is dead) before it is removed, and one whose
 * DEL fails is kept for the next run (StopPodSandbox before RemovePodSandbox); then
 * `network.reconcile` gets every sandbox of this node still in the runtime (any state), so the
 * cache entries and IPAM leases of sandboxes gone behind the agent's back (kill -9 mid-ADD or
 * mid-DEL, a `docker rm`) are released. That list is a second one, taken after reconcile read the
 * leases, so a sandbox whose ADD is under way is always in it.
 * @throws AgentError from the runtime when the list call fails (e.g. ERR_RUNTIME_UNAVAILABLE).
 */
export async function runGc(deps: GcDeps, task: GcTask): Promise<GcResult> {
  const result: GcResult = { removedContainers: [], removedSandboxes: [], removedImages: [], errors: [] };
  const list = await deps.runtime.listContainers({ labels: ownerLabelFilter(deps.nodeName) });
  const plan = selectContainersToRemove(list.map(toGcContainer), {
    maxPerPodContainer: task.maximumDeadContainersPerContainer,
    ...(task.activePodUids ? { activePodUids: new Set(task.activePodUids) } : {}),
  });
  const remove = async (id: string, into: string[]): Promise<void> => {
    try {
      await deps.runtime.removeContainer(id);
      into.push(id);
    } catch (err) {
      if (isNotFound(err)) into.push(id);
      else result.errors.push(`remove container ${id}: ${(err as Error).message}`);
    }
  };
  for (const id of plan.containers) await remove(id, result.removedContainers);
  const network = deps.network ?? kNoopPodNetwork;
  const byId = new Map(list.map((c) => [c.id, c]));
  for (const id of plan.sandboxes) {
    if (network.enabled) {
      const c = byId.get(id);
      const labels = c?.labels ?? {};
      try {
        await tearDownSandboxNetwork(
          deps.runtime,
          network,
          { id, state: 'exited' },
          { uid: labels[kPodUidLabel] ?? '', name: labels[kPodNameLabel] ?? '', namespace: labels[kPodNamespaceLabel] ?? '' },
        );
      } catch (err) {
        result.errors.push(`tear down the network of sandbox ${id}: ${(err as Error).message}`);
        continue;
      }
    }
    await remove(id, result.removedSandboxes);
  }
  if (network.enabled) {
    // The live sandboxes from a list taken after reconcile read its leases (PodNetwork.reconcile).
    const live = async () =>
      new Set(
        (await deps.runtime.listContainers({ labels: ownerLabelFilter(deps.nodeName) }))
          .filter((c) => c.labels[kContainerTypeLabel] === kContainerTypeSandbox)
          .map((c) => c.id),
      );
    const { released } = await network.reconcile(live);
    if (released.length > 0) deps.logger?.info({ released: released.length }, 'Released the pod network of sandboxes that are gone');
  }
  if (deps.sandbox?.cgroupsPerQOS) {
    // Pod cgroups left by pods removed without the agent (e.g. containers removed by hand).
    try {
      const all = await deps.imageRuntime.listContainers({ labels: [kPodUidLabel] });
      await removeOrphanPodCgroups(deps.sandbox.cgroupRoot, new Set(all.map((c) => c.labels[kPodUidLabel])), deps.now());
    } catch (err) {
      result.errors.push(`pod cgroups: ${(err as Error).message}`);
    }
  }
  if (task.imageGc) {
    try {
      const fs = await deps.imageRuntime.imageFsInfo();
      if (fs) await imageGc(deps, task.imageGc, fs, result);
    } catch (err) {
      result.errors.push(`image gc: ${(err as Error).message}`);
    }
  }
  return result;
}

async function imageGc(deps: GcDeps, policy: NonNullable<GcTask['imageGc']>, fs: ImageFsInfo, result: GcResult): Promise<void> {
  const rt = deps.imageRuntime;
  const { capacityBytes, availableBytes } = fs;
  // Every container of every owner: an image any of them uses is never removed.
  const containers = await rt.listContainers({ labels: [] });
  const inUse = new Set(containers.map((c) => c.imageId));
  const pulled = await readPulledImages(deps.rootDir);
  // As image_gc_manager detectImages: images in use are "last used" now.
  const now = deps.now();
  let touched = false;
  for (const id of inUse) {
    if (pulled[id]) {
      pulled[id].lastUsedMs = now;
      touched = true;
    }
  }
  const images: GcImage[] = await rt.listImages();
  const protectedIds = new Set(
    images.filter((i) => i.repoTags.includes(deps.podInfraContainerImage) || i.id === deps.podInfraContainerImage).map((i) => i.id),
  );
  const plan = selectImagesToRemove({
    capacityBytes,
    availableBytes,
    highThresholdPercent: policy.highThresholdPercent,
    lowThresholdPercent: policy.lowThresholdPercent,
    images,
    pulled,
    inUseImageIds: inUse,
    protectedImageIds: protectedIds,
  });
  result.diskUsagePercent = plan.usagePercent;
  for (const img of plan.images) {
    // Remove by the references this agent pulled (untag, never force): a tag another owner added
    // keeps the image; Docker deletes it only when its last tag goes.
    const refs = pulled[img.id].refs.map(withDefaultTag).filter((r) => img.repoTags.includes(r));
    let ok = refs.length > 0;
    for (const ref of refs) {
      try {
        await rt.removeImage(ref);
      } catch (err) {
        ok = false;
        // The runtime's message already starts with `remove image <ref>: `.
        result.errors.push((err as Error).message);
      }
    }
    if (ok) {
      result.removedImages.push(img.id);
      delete pulled[img.id];
      touched = true;
    }
  }
  if (touched) await writePulledImages(deps.rootDir, pulled);
}
