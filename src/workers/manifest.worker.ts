// Counterpart of the decoding half of pkg/kubelet/config/file.go and http.go (extractFromFile, extractFromURL → tryDecodeSinglePod/PodList, applyDefaults): static pod manifests decoded off the main thread.
/**
 * The piscina entry of the manifest thread (newManifestLoader in src/main/pool/worker-pool.ts),
 * used by both static pod sources: the file source (`--pod-manifest-path`) and the URL source
 * (`--manifest-url`). One task kind, `loadStaticPods` (shared/messages.ts): YAML/JSON decoding,
 * static pod identity, defaults and validation of one manifest (shared/static-pod.ts) — several
 * hundred milliseconds for 2,000 pods — plus each pod's content hash. Pure: no runtime and no
 * bootstrap (workerData). Never throws: an invalid manifest or a bad task comes back as
 * `{ok:false, kind, error}` (STYLE.md C5).
 */
import { AgentError, serializeError } from '../shared/errors.js';
import { PROTOCOL_VERSION, type LoadStaticPodsResult, type LoadStaticPodsTask, type WorkerResult } from '../shared/messages.js';
import { loadStaticPods, staticPodContentHash } from '../shared/static-pod.js';

/**
 * runLoadStaticPods answers a `loadStaticPods` task: loadStaticPods on the manifest's text and
 * each pod's staticPodContentHash. Pure and synchronous.
 * @throws InvalidManifestError(task.origin, errors) for a manifest that does not parse or validate.
 */
export function runLoadStaticPods(task: LoadStaticPodsTask): LoadStaticPodsResult {
  const pods = loadStaticPods(task.text, { nodeName: task.nodeName, source: task.source, origin: task.origin, seenAt: new Date(task.seenAtMs), format: task.format });
  return { pods, contentHashes: pods.map(staticPodContentHash) };
}

/**
 * The piscina entry: one `loadStaticPods` task in, its WorkerResult out. Another protocol version
 * or another task kind is an `ERR_PROTOCOL` error result (under the task's own kind).
 */
export default async function decodeManifest(task: LoadStaticPodsTask): Promise<WorkerResult<'loadStaticPods'>> {
  const kind = (task as { kind?: unknown } | null)?.kind as 'loadStaticPods';
  try {
    if (task?.protocol !== PROTOCOL_VERSION) {
      throw new AgentError('ERR_PROTOCOL', `task protocol ${JSON.stringify(task?.protocol)} does not match the worker's ${PROTOCOL_VERSION}`);
    }
    if (kind !== 'loadStaticPods') throw new AgentError('ERR_PROTOCOL', `the manifest worker answers only loadStaticPods tasks, got ${JSON.stringify(kind)}`);
    return { ok: true, kind, value: runLoadStaticPods(task) };
  } catch (err) {
    return { ok: false, kind, error: serializeError(err) };
  }
}
