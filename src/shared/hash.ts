/**
 * Counterpart of pkg/kubelet/container/helpers.go HashContainer and of the pod hash in
 * pkg/kubelet/config/common.go: stable hashes of specs. Keys are sorted before hashing
 * (safe-stable-stringify) so a manifest whose fields are reordered hashes the same.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { ConfigSeenAnnotationKey } from './annotations.js';
import type { Container, Pod } from './api.js';

/** stableHash: hex SHA-256 (first `length` chars) of the canonical JSON of `value`. */
export function stableHash(value: unknown, length = 16): string {
  return createHash('sha256')
    .update(stringify(value) ?? 'null')
    .digest('hex')
    .slice(0, length);
}

/**
 * hashContainer: the container spec hash written to `annotation.io.kubernetes.container.hash`.
 * A change of this hash makes the kubelet (and us) recreate the container.
 */
export function hashContainer(container: Container): string {
  return stableHash(container, 8);
}

/**
 * podContentHash: hex SHA-256 (first `length` chars, default 16) of a pod's content, the one pod
 * hash every source and the merge compare versions with: the canonical JSON of the whole `Pod`
 * without `status` (the agent owns it; accepted and ignored on input) and without the
 * `kubernetes.io/config.seen` annotation (it changes with every read, not the pod). Every other
 * annotation, `kubernetes.io/config.hash` included, is content. Key order does not matter.
 *
 * Callers: PodConfig (is an update of a UID a real change), the file source and its decoding
 * worker (keep the previous object of an unchanged static pod), the intake source (the value of
 * its pods' `config.hash`, computed without the old `config.hash`, 32 chars). Pure, any thread.
 * Not a static pod's UID: that is podUidForStatic (src/shared/static-pod.ts), a hash of the pod as
 * read, the node and the manifest's origin. Upstream: the md5 of the pod in config/common.go.
 */
export function podContentHash(pod: Pod, length = 16): string {
  const annotations = { ...(pod.metadata?.annotations ?? {}) };
  delete annotations[ConfigSeenAnnotationKey];
  return stableHash({ ...pod, metadata: { ...pod.metadata, annotations }, status: undefined }, length);
}
