/**
 * The read of a pod after its sync changed something, without reading the whole pod again. The
 * kubelet's SyncPod leaves that read to the PLEG's next GetPodStatus (list and inspect of every
 * container); ours hands the new state back with the sync result (see pod-cache.ts), and this
 * module makes that read cost only what the sync touched: the sync's runtime is wrapped so that
 * every create, start, stop and remove marks its container, and every inspect made meanwhile (the
 * sandbox's netns lookup) is kept while nothing touched the container after it. The read-back is
 * then the first read less what was removed, with a fresh inspect of each touched container only —
 * no list call, and for a new pod one inspect of the app container (the sandbox's is kept).
 * Containers the sync did not touch keep their first read: a change to one of them meanwhile is a
 * PLEG event, which makes the pod cache's entry stale so the next sync reads everything.
 * Worker threads only; one recorder per sync.
 */
import { isUnavailable } from '../../shared/errors.js';
import { inspectIfPresent } from './runtime-pod.js';
import { withOverrides } from '../runtime/override.js';
import type { ContainerDetails, ContainerRuntime } from '../runtime/runtime.js';

/** SyncChangeRecorder: the sync's runtime and what it changed through it. */
export interface SyncChangeRecorder {
  /** The runtime the sync uses (every call passes through to the wrapped one). */
  readonly runtime: ContainerRuntime;
  /**
   * readBack: the inspects of the pod's containers now, from `first` (the inspects the sync started
   * from; [] when it started from nothing) less the removed containers, with the touched ones
   * inspected again (or the inspect the sync made after its last change). Null when a create
   * failed: Docker may have made the container anyway and its ID is unknown, so the caller reads
   * the whole pod (list and inspects).
   * @throws AgentError from the runtime's inspect (e.g. ERR_RUNTIME_UNAVAILABLE), never not-found.
   */
  readBack(first: ContainerDetails[]): Promise<ContainerDetails[] | null>;
}

/** recordSyncChanges wraps `runtime` for one sync (see the file comment). */
export function recordSyncChanges(runtime: ContainerRuntime): SyncChangeRecorder {
  /** Container ID → how many changes were begun on it (an inspect is kept only if none began meanwhile). */
  const changes = new Map<string, number>();
  /** Container IDs with a change under way (an inspect made meanwhile may show it half done). */
  const active = new Map<string, number>();
  const removed = new Set<string>();
  const inspected = new Map<string, ContainerDetails>();
  let unknownCreate = false;
  const touch = (id: string) => {
    changes.set(id, (changes.get(id) ?? 0) + 1);
    inspected.delete(id);
  };
  const changing = async <T>(id: string, call: () => Promise<T>): Promise<T> => {
    touch(id);
    active.set(id, (active.get(id) ?? 0) + 1);
    try {
      return await call();
    } finally {
      const n = active.get(id)! - 1;
      if (n === 0) active.delete(id);
      else active.set(id, n);
      inspected.delete(id);
    }
  };
  const wrapped = withOverrides(runtime, {
    createContainer: async (spec) => {
      try {
        const id = await runtime.createContainer(spec);
        touch(id);
        return id;
      } catch (err) {
        // A create that failed on the way back (or timed out) may have made a container.
        if (!isUnavailable(err)) unknownCreate = true;
        throw err;
      }
    },
    startContainer: (id) => changing(id, () => runtime.startContainer(id)),
    stopContainer: (id, timeoutSeconds) => changing(id, () => runtime.stopContainer(id, timeoutSeconds)),
    removeContainer: (id) => changing(id, async () => {
      await runtime.removeContainer(id);
      removed.add(id);
    }),
    inspectContainer: async (id) => {
      const before = changes.get(id) ?? 0;
      const busy = active.has(id);
      const d = await runtime.inspectContainer(id);
      if (!busy && !active.has(id) && (changes.get(id) ?? 0) === before) inspected.set(id, d);
      return d;
    },
  });
  return {
    runtime: wrapped,
    async readBack(first) {
      if (unknownCreate) return null;
      const kept = first.filter((d) => !changes.has(d.id));
      const again = await Promise.all([...changes.keys()].filter((id) => !removed.has(id)).map((id) => inspected.get(id) ?? inspectIfPresent(runtime, id)));
      return [...kept, ...again.filter((d): d is ContainerDetails => d !== null)];
    },
  };
}
