/**
 * The one place that enforces the ownership rule of docs/contracts.md "Docker names and labels" (what dockershim got for free by
 * owning its engine): an agent lists and touches only containers that carry
 * `io.kubernetes.pod.uid` AND its own `kubelet-ts.node-name`. Several agents (and tests) may
 * share one Docker engine.
 */
import { AgentError, isNotFound } from '../../shared/errors.js';
import { isOwnedBy, kNodeNameLabel, kPodUidLabel } from '../kubetypes/label-keys.js';
import type {
  ContainerCreateSpec,
  ContainerEventHandlers,
  ContainerResources,
  ContainerEventWatch,
  ContainerListFilter,
  ContainerLogHandlers,
  ContainerLogOptions,
  ContainerLogReader,
  ContainerRuntime,
  ContainerStream,
  ContainerStreamHandlers,
  ContainerStreamOptions,
  ContainerSummary,
  RegistryAuth,
} from './container/runtime.js';

/**
 * nodeEventsFilter: the label filter of this node's events stream, `kubelet-ts.node-name=<node>`
 * plus `filter`'s labels (an event without a pod UID label is delivered with podUid '' and the
 * PLEG ignores it, so the pod UID label is not required here). Pure.
 */
export function nodeEventsFilter(nodeName: string, filter: ContainerListFilter): ContainerListFilter {
  return { labels: [...new Set([`${kNodeNameLabel}=${nodeName}`, ...filter.labels])] };
}

/** A full Docker container ID (64 hex digits): only these are remembered as ours — a name can be reused by another container. */
const kFullId = /^[0-9a-f]{64}$/;

/** How many verified IDs a scope remembers before it forgets them all (one worker's share of a dense node, with room). */
export const kMaxOwnedIds = 20_000;

class NodeScopedRuntime implements ContainerRuntime {
  /**
   * Full IDs known to be ours: created through this scope, or seen with our labels in a list or
   * an inspect. A container's labels cannot change after its create and an ID is never reused, so
   * an ID once verified stays ours; the guard's inspect is spared for it (two Docker calls per pod
   * start, four per removal). Forgotten on remove; cleared when it outgrows kMaxOwnedIds.
   */
  readonly #owned = new Set<string>();

  constructor(
    private readonly inner: ContainerRuntime,
    private readonly nodeName: string,
  ) {}

  #remember(id: string): void {
    if (!kFullId.test(id)) return;
    if (this.#owned.size >= kMaxOwnedIds) this.#owned.clear();
    this.#owned.add(id);
  }

  async listContainers(filter: ContainerListFilter): Promise<ContainerSummary[]> {
    const labels = [...ownerLabelFilter(this.nodeName), ...filter.labels];
    const list = await this.inner.listContainers({ labels: [...new Set(labels)] });
    // Belt and braces: the engine applied the filter, check it anyway.
    const mine = list.filter((c) => isOwnedBy(c.labels, this.nodeName));
    for (const c of mine) this.#remember(c.id);
    return mine;
  }

  async inspectContainer(id: string) {
    const c = await this.inner.inspectContainer(id);
    if (c.id === id && isOwnedBy(c.labels, this.nodeName)) this.#remember(id);
    return c;
  }

  async createContainer(spec: ContainerCreateSpec): Promise<string> {
    if (!isOwnedBy(spec.labels, this.nodeName)) {
      throw new AgentError(
        'ERR_INVALID_ARGUMENT',
        `create container ${spec.name}: labels ${kPodUidLabel} and ${kNodeNameLabel}=${this.nodeName} are required`,
      );
    }
    const id = await this.inner.createContainer(spec);
    this.#remember(id);
    return id;
  }

  async startContainer(id: string): Promise<void> {
    await this.#guard(id, 'start');
    return this.inner.startContainer(id);
  }

  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    await this.#guard(id, 'stop');
    return this.inner.stopContainer(id, timeoutSeconds);
  }

  async removeContainer(id: string): Promise<void> {
    await this.#guard(id, 'remove');
    await this.inner.removeContainer(id);
    this.#owned.delete(id);
  }

  imageExists(ref: string) {
    return this.inner.imageExists(ref);
  }

  pullImage(ref: string, auth?: RegistryAuth) {
    return this.inner.pullImage(ref, auth);
  }

  async updateContainerResources(id: string, resources: ContainerResources): Promise<void> {
    await this.#guard(id, 'update');
    if (!this.inner.updateContainerResources)
      throw new AgentError('ERR_RUNTIME', `update container ${id}: the runtime cannot change a container's resources`);
    return this.inner.updateContainerResources(id, resources);
  }

  async execInContainer(id: string, cmd: string[], timeoutMs: number) {
    await this.#guard(id, 'exec in');
    return this.inner.execInContainer(id, cmd, timeoutMs);
  }

  async tailLogs(id: string, lines: number, bytes: number): Promise<string> {
    if (!this.inner.tailLogs) return '';
    await this.#guard(id, 'read the log of');
    return this.inner.tailLogs(id, lines, bytes);
  }

  async readContainerLogs(id: string, opts: ContainerLogOptions, handlers: ContainerLogHandlers): Promise<ContainerLogReader> {
    // A container the runtime does not know is left to it to answer: Docker says ERR_NOT_FOUND,
    // the fake (whose thread holds no pods) an empty log. One that exists must be ours.
    await this.#guard(id, 'read the logs of', true);
    return this.inner.readContainerLogs(id, opts, handlers);
  }

  async openContainerStream(id: string, opts: ContainerStreamOptions, handlers: ContainerStreamHandlers): Promise<ContainerStream> {
    // As for logs: a container the runtime does not know is its to refuse (Docker: ERR_NOT_FOUND; the fake echoes).
    await this.#guard(id, `${opts.kind} in`, true);
    return this.inner.openContainerStream(id, opts, handlers);
  }

  watchContainerEvents(filter: ContainerListFilter, handlers: ContainerEventHandlers): ContainerEventWatch {
    return this.inner.watchContainerEvents(nodeEventsFilter(this.nodeName, filter), handlers);
  }

  // Images are shared by every owner of the engine: the node scope applies to containers only.
  listImages() {
    return this.inner.listImages();
  }

  removeImage(ref: string) {
    return this.inner.removeImage(ref);
  }

  imageFsInfo() {
    return this.inner.imageFsInfo();
  }

  version() {
    return this.inner.version();
  }

  status() {
    return this.inner.status();
  }

  /**
   * Re-reads the labels of what we are about to touch, unless its ID is already known to be ours
   * (#owned); refuses anything not ours (and, with `allowMissing`, lets a missing one through). A
   * known ID that is gone meanwhile gets the engine's own not-found from the call itself.
   */
  async #guard(id: string, op: string, allowMissing = false): Promise<void> {
    if (this.#owned.has(id)) return;
    let c;
    try {
      c = await this.inner.inspectContainer(id);
    } catch (err) {
      if (allowMissing && isNotFound(err)) return;
      throw err;
    }
    if (!isOwnedBy(c.labels, this.nodeName)) {
      throw new AgentError(
        'ERR_INVALID_ARGUMENT',
        `refusing to ${op} container ${id} (${c.name}): it does not carry ${kPodUidLabel} and ${kNodeNameLabel}=${this.nodeName}`,
      );
    }
    if (c.id === id) this.#remember(id);
  }
}

/**
 * scopeToNode wraps a ContainerRuntime so that listContainers only ever returns containers owned
 * by `nodeName`, createContainer requires the owner labels, and start/stop/remove first inspect
 * the target and throw AgentError `ERR_INVALID_ARGUMENT` if it is not owned (ERR_NOT_FOUND if it
 * is gone) — except a full ID this scope already verified (created, listed or inspected as ours),
 * which needs no second look. Every worker code path goes through this wrapper.
 * @throws AgentError ERR_INVALID_ARGUMENT if `nodeName` is empty.
 */
export function scopeToNode(runtime: ContainerRuntime, nodeName: string): ContainerRuntime {
  if (!nodeName) throw new AgentError('ERR_INVALID_ARGUMENT', 'scopeToNode: nodeName must be a non-empty string');
  return new NodeScopedRuntime(runtime, nodeName);
}

/**
 * ownerLabelFilter: the Docker `label` filter values that select this node's containers
 * (optionally of one pod UID): `kubelet-ts.node-name=<node>`, and `io.kubernetes.pod.uid`
 * (present) or `io.kubernetes.pod.uid=<uid>`.
 */
export function ownerLabelFilter(nodeName: string, uid?: string): string[] {
  return [`${kNodeNameLabel}=${nodeName}`, uid ? `${kPodUidLabel}=${uid}` : kPodUidLabel];
}
