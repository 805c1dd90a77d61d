/**
 * The resourceVersion of each pod, as the apiserver keeps one per object (etcd's mod revision):
 * here the resourceVersion of the pod's last change in the agent's watch history (AgentHost.watch),
 * kept by the agent's watch cache (AgentHost.podResourceVersion, the one record of it) and read
 * from there; a host without one is followed through one watch of the server's own. GET and LIST report it as
 * `metadata.resourceVersion`; DELETE preconditions and PUT compare against it.
 *
 * The watch delivers each change synchronously, as it is published, and the host publishes a
 * write of the pod when it applies it, before its write method resolves (AgentHost.replacePod,
 * deletePod): so a write's reply, built after that, carries the write's own version, and a read
 * after it sees that one or a later one (the apiserver's contract, staging/src/k8s.io/apiserver
 * pkg/registry/generic/registry/store.go: Update and Delete answer the object as stored).
 */
import type { AgentHost } from '../host/agent-host.js';

/** PodVersions: uid → resourceVersion of the pod's last change. Main thread. */
export interface PodVersions {
  /** get: the pod's resourceVersion, or undefined before its first change was seen. */
  get(uid: string): number | undefined;
  /** close cancels the watch. Idempotent. */
  close(): void;
}

/**
 * newPodVersions reads the host's own record (AgentHost.podResourceVersion: the agent's watch
 * cache) when it keeps one; else it follows `host.watch` from the start (one ADDED per pod, then
 * changes); a host with neither knows no versions.
 */
export function newPodVersions(host: AgentHost): PodVersions {
  if (host.podResourceVersion) return { get: (uid) => host.podResourceVersion!(uid), close() {} };
  const versions = new Map<string, number>();
  const cancel = host.watch?.(undefined, (e) => {
    if (e.uid === '') return;
    if (e.type === 'DELETED') versions.delete(e.uid);
    else versions.set(e.uid, e.resourceVersion);
  });
  let closed = false;
  return {
    get: (uid) => versions.get(uid),
    close() {
      if (closed) return;
      closed = true;
      cancel?.();
      versions.clear();
    },
  };
}
