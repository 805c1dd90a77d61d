// Counterpart of the decoding half of pkg/kubelet/config/file.go and http.go (extractFromFile, extractFromURL → tryDecodeSinglePod/PodList, applyDefaults): static pod manifests decoded off the main thread.
/**
 * The piscina entry of the manifest threads: each static pod source's (newManifestLoader in
 * src/main/pool/worker-pool.ts: the file source `--pod-manifest-path` and the URL source
 * `--manifest-url`) and the API's body decoder (newBodyDecoderPool, for POST/PUT /pods). Two task
 * kinds (shared/manifest-tasks.ts): `loadStaticPods` — YAML/JSON decoding, static pod identity, defaults
 * and validation of one manifest (shared/static-pod.ts), several hundred milliseconds for 2,000
 * pods, plus each pod's content hash — `decodePodsBody` (shared/pods-body.ts) and
 * `decodeProtobufBody` (shared/kube-protobuf.ts). Pure: no
 * runtime and no bootstrap (workerData). Never throws: an invalid manifest or a bad task comes
 * back as `{ok:false, kind, error}` (STYLE.md C5); a bad request body is a `{ok:true}` answer
 * whose value says why it is refused.
 */
import { AgentError, serializeError } from '../shared/errors.js';
import { PROTOCOL_VERSION, type WorkerResult } from '../shared/thread-wire.js';
import type {
  DecodedProtobufBody,
  DecodePodsBodyTask,
  DecodeProtobufBodyTask,
  LoadStaticPodsResult,
  LoadStaticPodsTask,
} from '../shared/manifest-tasks.js';
import { decodeObjectBody } from '../shared/kube-protobuf.js';
import { decodePodsBody } from '../shared/pods-body.js';
import { loadStaticManifest, staticPodContentHash } from '../shared/static-pod.js';
import { statSync } from 'node:fs';
import { readManifestFileSync, statKey } from '../io/manifest-file.js';
import { announceThreadRole } from './thread-roles.js';

announceThreadRole('manifest');

/**
 * runLoadStaticPods answers a `loadStaticPods` task: loadStaticPods on the manifest's text and
 * each pod's staticPodContentHash. Pure and synchronous.
 * @throws InvalidManifestError(task.origin, errors) for a manifest that does not parse or validate.
 */
export function runLoadStaticPods(task: LoadStaticPodsTask): LoadStaticPodsResult {
  if (task.read !== undefined) {
    const answer = runReadStaticPods(task, task.read);
    const cancelled = (): boolean => task.cancel !== undefined && Atomics.load(task.cancel, 0) !== 0;
    if (task.more !== undefined)
      answer.more = task.more.map((t) =>
        cancelled() ? { pods: [], contentHashes: [] } : runReadStaticPods(t, t.read ?? { skipParseOf: [] }),
      );
    return answer;
  }
  const { pods, objects } = loadStaticManifest(task.text ?? '', {
    nodeName: task.nodeName,
    source: task.source,
    origin: task.origin,
    seenAt: new Date(task.seenAtMs),
    format: task.format,
  });
  return { pods, contentHashes: pods.map(staticPodContentHash), objects };
}

/**
 * runReadStaticPods answers a `loadStaticPods` task with `read` (the file source): nothing while
 * the file's stat says `skipIfStat`, else one bounded read of the file `task.origin` (readManifestFileSync), then, unless the content's SHA-256 is one of
 * `skipParseOf`, its pods as runLoadStaticPods makes them (a blank file holds none, as the
 * kubelet's). A filesystem error, a file that is not regular and an invalid manifest are answers
 * (`file`), never thrown: the file source keeps the read's hash and stat beside its error.
 */
function runReadStaticPods(
  task: LoadStaticPodsTask,
  { skipParseOf, skipIfStat }: NonNullable<LoadStaticPodsTask['read']>,
): LoadStaticPodsResult {
  const none = { pods: [], contentHashes: [] };
  let read;
  try {
    if (skipIfStat !== undefined && isUnchanged(task.origin, skipIfStat)) return { ...none, file: { kind: 'unchanged' } };
    read = readManifestFileSync(task.origin);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return {
      ...none,
      file: { kind: 'failed', message: err instanceof Error ? err.message : String(err), ...(typeof code === 'string' ? { code } : {}) },
    };
  }
  if (read === 'not a file') return { ...none, file: { kind: 'not a file' } };
  const file = { kind: 'read', hash: read.hash, stat: read.stat, mtimeMs: read.mtimeMs, length: read.text.length } as const;
  if (skipParseOf.includes(read.hash)) return { ...none, file: { ...file, parsed: false } };
  if (read.text.trim() === '') return { ...none, file: { ...file, parsed: true } };
  try {
    return { ...runLoadStaticPods({ ...task, read: undefined, text: read.text }), file: { ...file, parsed: true } };
  } catch (err) {
    return { ...none, file: { ...file, parsed: true, error: err instanceof Error ? err.message : String(err) } };
  }
}

/** isUnchanged: `file` is a regular file whose statKey is `key` (a stat error: not unchanged, the read reports it). */
function isUnchanged(file: string, key: string): boolean {
  try {
    const st = statSync(file, { bigint: true });
    return st.isFile() && statKey(st) === key;
  } catch {
    return false;
  }
}

/**
 * runDecodeProtobufBody answers a `decodeProtobufBody` task: the body's object as its JSON form
 * (src/shared/kube-protobuf.ts decodeObjectBody: its definitions are read at the first such
 * task, so the static sources' manifest threads only load the module), or `unparsable` with why.
 * Never throws.
 */
export function runDecodeProtobufBody(task: DecodeProtobufBodyTask): DecodedProtobufBody {
  try {
    return { ok: true, object: decodeObjectBody(task.body, task.objectKind) };
  } catch (err) {
    return { ok: false, kind: 'unparsable', message: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The piscina entry: one `loadStaticPods` or `decodePodsBody` task in, its WorkerResult out.
 * Another protocol version or another task kind is an `ERR_PROTOCOL` error result (under the
 * task's own kind).
 */
export default async function decodeManifest(
  task: LoadStaticPodsTask | DecodePodsBodyTask | DecodeProtobufBodyTask,
): Promise<WorkerResult<'loadStaticPods' | 'decodePodsBody' | 'decodeProtobufBody'>> {
  const kind = (task as { kind?: unknown } | null)?.kind as 'loadStaticPods' | 'decodePodsBody' | 'decodeProtobufBody';
  try {
    if (task?.protocol !== PROTOCOL_VERSION) {
      throw new AgentError(
        'ERR_PROTOCOL',
        `task protocol ${JSON.stringify(task?.protocol)} does not match the worker's ${PROTOCOL_VERSION}`,
      );
    }
    if (task.kind === 'loadStaticPods') return { ok: true, kind: 'loadStaticPods', value: runLoadStaticPods(task) };
    if (task.kind === 'decodePodsBody') return { ok: true, kind: 'decodePodsBody', value: decodePodsBody(task) };
    if (task.kind === 'decodeProtobufBody') return { ok: true, kind: 'decodeProtobufBody', value: runDecodeProtobufBody(task) };
    throw new AgentError(
      'ERR_PROTOCOL',
      `the manifest worker answers only loadStaticPods, decodePodsBody and decodeProtobufBody tasks, got ${JSON.stringify(kind)}`,
    );
  } catch (err) {
    return { ok: false, kind, error: serializeError(err) };
  }
}
