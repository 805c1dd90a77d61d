/**
 * SpecHashes: the spec hashes of one pod sync, each computed once. The kubelet hashes a container
 * spec where it compares or labels it (pkg/kubelet/container/helpers.go HashContainer, called by
 * kuberuntime_manager.go computePodActions and kuberuntime_container.go's labels); a sync here
 * plans twice (the plan, then whether the result is settled), and each plan needs a container's
 * hash for its backoff key and its hash check — four canonical JSON serialisations and SHA-256s
 * per container per pod start, and two of the sandbox hash, where one each gives the same strings.
 *
 * Memoised by object identity, so one SpecHashes must live no longer than the sync whose task
 * objects it saw (a caller that changes a spec in place between syncs gets a fresh hash with a
 * fresh SpecHashes). Not thread-safe by design: one per sync, on the sync's thread.
 */
import type { Container, Pod } from '../../shared/api.js';
import { hashContainer } from '../../shared/hash.js';
import { sandboxHash } from '../kubetypes/label-keys.js';

/** memo: `map`'s value for `key`, computed by `hash` and kept the first time. */
function memo<K>(map: Map<K, string>, key: K, hash: (k: K) => string): string {
  let h = map.get(key);
  if (h === undefined) map.set(key, (h = hash(key)));
  return h;
}

export class SpecHashes {
  readonly #containers = new Map<Container, string>();
  readonly #sandboxes = new Map<Pod, string>();

  /** container: hashContainer(spec) (8 hex chars), computed once per spec object. */
  container(spec: Container): string {
    return memo(this.#containers, spec, hashContainer);
  }

  /** sandbox: sandboxHash(pod) (8 hex chars), computed once per pod object. */
  sandbox(pod: Pod): string {
    return memo(this.#sandboxes, pod, sandboxHash);
  }
}
