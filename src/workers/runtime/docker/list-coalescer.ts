// No upstream counterpart: dockershim (pkg/kubelet/dockershim/docker_sandbox.go ListPodSandbox, docker_container.go ListContainers, kubernetes ≤1.23) makes one Docker list per CRI list; this halves them (issue #42 item 2).
/**
 * ListPodSandbox and ListContainers of one pod (the kubelet's GetPodStatus) or of the whole node
 * (the PLEG's relist) come in pairs, asked at once, with the same label filter but for
 * `io.kubernetes.docker.type` (podsandbox / container). ListCoalescer answers such a pair with ONE
 * Docker list: the requests whose filters are the same once the type label is left out, asked
 * while no list of that filter is under way, share one list without the type label (or with it,
 * when they all ask for the same type), each answered with the containers that match its own
 * whole filter. A request asked while a list of its filter is under way waits for the next one:
 * every answer comes from a list the engine began after the request was made, so a container
 * created (or removed) before a request is in (or out of) its answer, as with one list each.
 */
import type { ContainerListFilter, ContainerRuntime, ContainerSummary } from '../container/runtime.js';
import { kDockerTypeLabel } from './docker-cri-labels.js';

interface Waiter {
  labels: readonly string[];
  resolve(list: ContainerSummary[]): void;
  reject(err: unknown): void;
}

interface Group {
  /** Requests not yet in a list. */
  waiting: Waiter[];
  /** A list of this group is under way (the waiting ones go into the next). */
  busy: boolean;
  /** A flush is queued for the end of this tick. */
  queued: boolean;
}

/** matchesLabels: Docker's label filter — every `key` present, every `key=value` equal. */
export function matchesLabels(labels: Readonly<Record<string, string>>, filters: readonly string[]): boolean {
  return filters.every((f) => {
    const eq = f.indexOf('=');
    return eq < 0 ? f in labels : labels[f.slice(0, eq)] === f.slice(eq + 1);
  });
}

const isTypeFilter = (f: string) => f === kDockerTypeLabel || f.startsWith(`${kDockerTypeLabel}=`);

/** ListCoalescer: `list` in place of `runtime.listContainers` (one per worker thread, as the runtime). */
export class ListCoalescer {
  readonly #groups = new Map<string, Group>();

  constructor(private readonly runtime: Pick<ContainerRuntime, 'listContainers'>) {}

  /**
   * list: the containers (any state) whose labels match every filter of `filter.labels`, as
   * ContainerRuntime.listContainers, from a Docker list begun after this call.
   * @throws what the runtime's listContainers throws (each request of the shared list gets it).
   */
  list(filter: ContainerListFilter): Promise<ContainerSummary[]> {
    const labels = [...filter.labels];
    const key = labels
      .filter((f) => !isTypeFilter(f))
      .sort()
      .join('\n');
    let g = this.#groups.get(key);
    if (!g) this.#groups.set(key, (g = { waiting: [], busy: false, queued: false }));
    const group = g;
    return new Promise<ContainerSummary[]>((resolve, reject) => {
      group.waiting.push({ labels, resolve, reject });
      if (!group.busy && !group.queued) {
        group.queued = true;
        // The other half of a pair is asked in the same tick (Promise.all): gather it first.
        queueMicrotask(() => this.#flush(key, group));
      }
    });
  }

  #flush(key: string, g: Group): void {
    g.queued = false;
    const batch = g.waiting.splice(0);
    if (batch.length === 0) {
      if (!g.busy) this.#groups.delete(key);
      return;
    }
    g.busy = true;
    const types = new Set(batch.map((w) => w.labels.filter(isTypeFilter).join('\n')));
    const labels = types.size === 1 ? batch[0]!.labels : batch[0]!.labels.filter((f) => !isTypeFilter(f));
    this.runtime
      .listContainers({ labels: [...labels] })
      .then(
        (list) => {
          for (const w of batch) w.resolve(list.filter((c) => matchesLabels(c.labels, w.labels)));
        },
        (err: unknown) => {
          for (const w of batch) w.reject(err);
        },
      )
      .finally(() => {
        g.busy = false;
        this.#flush(key, g);
      });
  }
}
