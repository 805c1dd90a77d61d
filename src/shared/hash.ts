/**
 * Counterpart of pkg/kubelet/container/helpers.go HashContainer and of the pod hash in
 * pkg/kubelet/config/common.go: stable hashes of specs. Keys are sorted before hashing
 * (safe-stable-stringify) so a manifest whose fields are reordered hashes the same.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import type { Container } from './api.js';

/** stableHash: hex SHA-256 (first `length` chars) of the canonical JSON of `value`. */
export function stableHash(value: unknown, length = 16): string {
  return createHash('sha256').update(stringify(value) ?? 'null').digest('hex').slice(0, length);
}

/**
 * hashContainer: the container spec hash written to `annotation.io.kubernetes.container.hash`.
 * A change of this hash makes the kubelet (and us) recreate the container.
 */
export function hashContainer(container: Container): string {
  return stableHash(container, 8);
}
