/**
 * The tasks of the manifest thread (src/workers/manifest.worker.ts): a manifest file's decoding
 * for the file and URL sources, and the body decoder's POST/PUT bodies (JSON, YAML, protobuf).
 * Not tasks of the sync pool. Plain structured-cloneable data only (see thread-wire.ts).
 */
import type { Pod } from './api.js';
import type { ConfigObject } from './config-objects.js';
import type { DecodePodsBodyRequest, DecodedPodsBody } from './pods-body.js';

/**
 * loadStaticPods: decode one manifest file's text into static pods (shared/static-pod.ts
 * loadStaticPods: parse, static pod identity, defaults, validation), so that the file source's
 * YAML parsing runs off the main thread. Pure: it needs no runtime and no bootstrap; the manifest
 * thread answers it (src/workers/manifest.worker.ts), for the file and the URL source alike, and
 * it is not a WorkerTask of the sync pool. An invalid manifest comes back as
 * `{ok:false}` with the InvalidManifestError's message (the file and every bad field).
 */
export interface LoadStaticPodsTask {
  kind: 'loadStaticPods';
  protocol: number;
  /**
   * The manifest's text (the URL source); the caller enforces the size cap and skips an empty
   * text. Absent with `read`.
   */
  text?: string;
  /**
   * The file source: the manifest thread reads the file `origin` itself (io/manifest-file.ts
   * readManifestFileSync: bounded, fstat before the read) and answers what the read found
   * (LoadStaticPodsResult.file); it decodes the content unless its SHA-256 is one of
   * `skipParseOf` (a content the source already has), and an invalid manifest is then an answer
   * (`file.error`), not an `{ok:false}`, so that the read's hash and stat come back with it.
   * With `skipIfStat` it stats the file first and reads nothing while statKey says that
   * (`file.kind` `unchanged`: a full or catch-up check's skip of an unchanged file).
   */
  read?: { skipParseOf: string[]; skipIfStat?: string };
  /**
   * More files read (each with `read`) in the same task, answered in LoadStaticPodsResult.more in
   * the same order: the file source sends the reads a check asks for at once as one task, so a
   * burst of new manifests costs the main thread one message each way per batch, not per file.
   */
  more?: LoadStaticPodsTask[];
  /**
   * With `more`: one Int32 on a SharedArrayBuffer that the source sets to 1 when it stops; the
   * thread then reads no further file of the task (their answers have no `file`), so a stop waits
   * for the file under way only, not the whole batch.
   */
  cancel?: Int32Array;
  /** `json` for `.json` files (JSON.parse), else `yaml`. */
  format: 'yaml' | 'json';
  /** The manifest's path (or URL): named in errors and part of each pod's UID. */
  origin: string;
  /** This node's name (static pods are named `<name>-<nodeName>`). */
  nodeName: string;
  source: 'file' | 'http';
  /** When the source read this version (`kubernetes.io/config.seen`), epoch ms. */
  seenAtMs: number;
}

/**
 * decodePodsBody: decode one POST/PUT /pods request body (shared/pods-body.ts decodePodsBody:
 * parse, defaults, validation) on the agent's body decoder thread (src/workers/manifest.worker.ts,
 * started by src/main/serving/body-decoder.ts), so that a hostile body can exhaust only that thread.
 * Not a WorkerTask of the sync pool. The answer is always `{ok:true}` with a DecodedPodsBody: a
 * bad body is an answer (`value.ok` false), not an error.
 */
export interface DecodePodsBodyTask extends DecodePodsBodyRequest {
  kind: 'decodePodsBody';
  protocol: number;
}

/**
 * decodeProtobufBody: decode one `application/vnd.kubernetes.protobuf` request body of the
 * Kubernetes API (src/shared/kube-protobuf.ts decodeObjectBody) on the body decoder thread,
 * as decodePodsBody, so that a body costly to decode holds that thread and never the main one.
 * The main thread read the envelope's kind first (a wrong kind is refused before any decoding).
 */
export interface DecodeProtobufBodyTask {
  kind: 'decodeProtobufBody';
  protocol: number;
  /** The whole body, `k8s\0` envelope included (at most the server's body limit, 1 MiB by default). */
  body: Uint8Array;
  /** The kind the envelope holds (checked on the main thread against what the route takes). */
  objectKind: string;
}

/**
 * DecodedProtobufBody: the object as its JSON form (`{apiVersion, kind, metadata, …}`), or why
 * not, with the refusals of DecodedPodsBody: `unparsable` (400), `tooLarge` (413), `busy` (429).
 */
export type DecodedProtobufBody =
  { ok: true; object: Record<string, unknown> } | Extract<DecodedPodsBody, { kind: 'unparsable' | 'tooLarge' | 'busy' }>;

/** What a loadStaticPods task returns. */
export interface LoadStaticPodsResult {
  /** The static pods, defaulted and valid, in document order. */
  pods: Pod[];
  /**
   * staticPodContentHash of each pod, in the same order: the file source compares versions of a
   * pod by these without hashing on the main thread.
   */
  contentHashes: string[];
  /** The ConfigMaps and Secrets beside the pods (checked and normalised; not static pods: names as given). */
  objects?: ConfigObject[];
  /** With LoadStaticPodsTask.read: what the read of the file found. */
  file?: ManifestFileAnswer;
  /** The answers to LoadStaticPodsTask.more, in its order. */
  more?: LoadStaticPodsResult[];
}

/**
 * ManifestFileAnswer: one read of a manifest file by the manifest thread. `unchanged`: its stat
 * says `skipIfStat`, nothing read. `not a file`: not a regular file. `failed`: the filesystem's error (`code`, e.g. ENOENT) or the size cap's message.
 * `read`: the content's SHA-256 (`hash`), statKey of the opened file before the read (`stat`), its
 * mtime (`mtimeMs`, epoch ms), the text's length in characters (`length`); `parsed` says whether
 * it was decoded (false: its hash was one of skipParseOf), and `error` is the InvalidManifestError's
 * message (the file and every bad field) when it did not decode or validate.
 */
export type ManifestFileAnswer =
  | { kind: 'unchanged' }
  | { kind: 'not a file' }
  | { kind: 'failed'; message: string; code?: string }
  | { kind: 'read'; hash: string; stat: string; mtimeMs: number; length: number; parsed: boolean; error?: string };
