/**
 * Counterpart of pkg/kubelet/images/image_gc_manager.go (GarbageCollect / freeSpace): the pure
 * decision of image GC — which images go, oldest used first — and the record of the images this
 * agent pulled itself (`{rootDir}/images/pulled.json`, written by the image puller): image GC only
 * ever removes those, never an image any container of any owner uses. gc.ts applies it.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound } from '../../shared/errors.js';

/** One local image as image GC sees it. */
export interface GcImage {
  /** Image ID (the CRI's Image.id), `sha256:…`. */
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
  /** Size of the image filesystem (ImageFsInfo's mountpoint), bytes. */
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
