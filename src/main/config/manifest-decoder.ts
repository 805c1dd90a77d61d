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

/**
 * What file to read and decode (`origin`, the file's absolute path), which contents need no
 * decoding (their SHA-256), and the statKey while which it need not be read at all (`skipIfStat`).
 */
export type ManifestFileRef = Omit<ManifestText, 'text'> & { skipParseOf: string[]; skipIfStat?: string };

/** kMaxReadBatch: the most file reads one task of the manifest thread carries (manifest-decoder read). */
export const kMaxReadBatch = 16;

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
   * read has the thread read the file `ref.origin` (nothing while its stat says `ref.skipIfStat`)
   * and decode it unless its content's SHA-256 is one of `ref.skipParseOf` (task loadStaticPods
   * with `read`); the text never crosses to the main thread. The reads asked for before the event
   * loop's next turn go in one task (at most kMaxReadBatch: LoadStaticPodsTask.more). Never
   * rejects; a read still queued when close() is called answers `retry`.
   */
  read(ref: ManifestFileRef): Promise<ReadManifest>;
  /** close ends the thread (if one started); decode after close starts a new one. Rejects when the thread's pool fails to close. */
  close(): Promise<void>;
}

/** newManifestDecoder creates a decoder over `newLoader` (default: a manifest worker thread). */
export function newManifestDecoder(newLoader: () => ManifestLoader = newManifestLoader): ManifestDecoder {
  let loader: ManifestLoader | undefined;
  let queued: { ref: ManifestFileRef; resolve(answer: ReadManifest): void }[] = [];
  let flushing = false;
  /** The cancel flags of the batches in flight (LoadStaticPodsTask.cancel): close() sets them. */
  const inFlight = new Set<Int32Array>();
  const toTask = ({ skipParseOf, skipIfStat, ...ref }: ManifestFileRef): LoadStaticPodsTask => ({
    kind: 'loadStaticPods',
    protocol: PROTOCOL_VERSION,
    ...ref,
    read: skipIfStat === undefined ? { skipParseOf } : { skipParseOf, skipIfStat },
  });
  /** flushReads sends the queued reads as tasks of at most kMaxReadBatch files and resolves each with its answer. */
  const flushReads = (): void => {
    flushing = false;
    const all = queued;
    queued = [];
    for (let i = 0; i < all.length; i += kMaxReadBatch) void readBatch(all.slice(i, i + kMaxReadBatch));
  };
  const readBatch = async (batch: typeof queued): Promise<void> => {
    const [first, ...rest] = batch.map((q) => toTask(q.ref));
    const cancel = rest.length === 0 ? undefined : new Int32Array(new SharedArrayBuffer(4));
    let result: WorkerResult<'loadStaticPods'>;
    try {
      loader ??= newLoader();
      if (cancel !== undefined) inFlight.add(cancel);
      result = await loader.load(cancel === undefined ? first! : { ...first!, more: rest, cancel });
    } catch (err) {
      for (const q of batch) q.resolve({ error: err instanceof Error ? err.message : String(err), retry: true });
      return;
    } finally {
      if (cancel !== undefined) inFlight.delete(cancel);
    }
    const answers = result.ok ? [result.value, ...(result.value.more ?? [])] : [];
    batch.forEach((q, i) => {
      const a = answers[i];
      if (!result.ok) q.resolve({ error: result.error.message, retry: true });
      else if (a?.file === undefined) q.resolve({ error: 'the manifest thread did not read the file', retry: true });
      else q.resolve({ file: a.file, pods: a.pods, contentHashes: a.contentHashes, objects: a.objects });
    });
  };
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
    read(ref) {
      return new Promise((resolve) => {
        queued.push({ ref, resolve });
        if (!flushing) {
          flushing = true;
          setImmediate(flushReads);
        }
      });
    },
    async close() {
      for (const cancel of inFlight) Atomics.store(cancel, 0, 1);
      for (const q of queued.splice(0)) q.resolve({ error: 'the manifest thread was closed', retry: true });
      const l = loader;
      loader = undefined;
      await l?.close();
    },
  };
}
