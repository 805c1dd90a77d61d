/**
 * Counterpart of pkg/kubelet/config/common.go's tryDecodeSinglePod / tryDecodePodList plus the
 * static pod identity and defaults (file.go extractFromFile, http.go extractFromURL), as the file
 * and URL sources share them: a manifest's text becomes static pods on the source's own manifest
 * thread (pool/worker-pool.ts newManifestLoader, `manifest.worker.ts`), never on the main thread.
 * Main thread only; the thread starts at the first non-empty text (or file read) and stays until close().
 */
import type { Pod } from '../../shared/api.js';
import type { ConfigObject } from '../../shared/config-objects.js';
import { PROTOCOL_VERSION, type WorkerResult } from '../../shared/thread-wire.js';
import type { LoadStaticPodsTask, ManifestFileAnswer } from '../../shared/manifest-tasks.js';
import { newManifestLoader, type ManifestLoader } from '../pool/worker-pool.js';

/** What to decode: a LoadStaticPodsTask without its wire fields. */
export type ManifestText = Omit<LoadStaticPodsTask, 'kind' | 'protocol' | 'read'> & { text: string };

/** What file to read and decode (`origin`, the file's absolute path), and which contents need no decoding (their SHA-256). */
export type ManifestFileRef = Omit<ManifestText, 'text'> & { skipParseOf: string[] };

/**
 * ReadManifest: what the manifest thread's read of a file found (ManifestFileAnswer) with the pods
 * it decoded (and each one's staticPodContentHash, same order), or why the thread could not answer
 * (`retry`: nothing is known of the file; read it again later).
 */
export type ReadManifest =
  { file: ManifestFileAnswer; pods: Pod[]; contentHashes: string[]; objects?: ConfigObject[] } | { error: string; retry: true };

/**
 * DecodedManifest: the static pods with each one's staticPodContentHash (same order), or why not:
 * `error` is the InvalidManifestError's message (the origin and every invalid field); with
 * `retry` it is why the thread could not answer, which says nothing about the text (decode it again later).
 */
export type DecodedManifest = { pods: Pod[]; contentHashes: string[]; objects?: ConfigObject[] } | { error: string; retry: boolean };

/** ManifestDecoder: one source's manifest thread. */
export interface ManifestDecoder {
  /** decode never rejects; an empty (blank) text holds no pods and needs no thread, as the kubelet. */
  decode(manifest: ManifestText): Promise<DecodedManifest>;
  /**
   * read has the thread read the file `ref.origin` and decode it unless its content's SHA-256 is
   * one of `ref.skipParseOf` (task loadStaticPods with `read`): one task per read, and the text
   * never crosses to the main thread. Never rejects.
   */
  read(ref: ManifestFileRef): Promise<ReadManifest>;
  /** close ends the thread (if one started); decode after close starts a new one. Rejects when the thread's pool fails to close. */
  close(): Promise<void>;
}

/** newManifestDecoder creates a decoder over `newLoader` (default: a manifest worker thread). */
export function newManifestDecoder(newLoader: () => ManifestLoader = newManifestLoader): ManifestDecoder {
  let loader: ManifestLoader | undefined;
  return {
    async decode(manifest) {
      if (manifest.text.trim() === '') return { pods: [], contentHashes: [] };
      let result: WorkerResult<'loadStaticPods'>;
      try {
        loader ??= newLoader();
        result = await loader.load({ kind: 'loadStaticPods', protocol: PROTOCOL_VERSION, ...manifest });
      } catch (err) {
        return { error: err instanceof Error ? err.message : String(err), retry: true };
      }
      return result.ok ? result.value : { error: result.error.message, retry: false };
    },
    async read({ skipParseOf, ...ref }) {
      let result: WorkerResult<'loadStaticPods'>;
      try {
        loader ??= newLoader();
        result = await loader.load({ kind: 'loadStaticPods', protocol: PROTOCOL_VERSION, ...ref, read: { skipParseOf } });
      } catch (err) {
        return { error: err instanceof Error ? err.message : String(err), retry: true };
      }
      if (!result.ok) return { error: result.error.message, retry: true };
      const { file, ...decoded } = result.value;
      return file === undefined ? { error: 'the manifest thread did not read the file', retry: true } : { file, ...decoded };
    },
    async close() {
      const l = loader;
      loader = undefined;
      await l?.close();
    },
  };
}
