/**
 * The ownership rule of docs/contracts.md "Docker names and labels" (node-scope.ts) on the CRI
 * seam: an agent lists and touches only the sandboxes and containers that carry
 * `io.kubernetes.pod.uid` AND its own `kubelet-ts.node-name` (kuberuntime puts both on every
 * PodSandboxConfig and ContainerConfig), so several agents and tests may share one containerd.
 * The upstream kubelet owns its runtime and needs no such scope; this is the CRI form of what
 * dockershim got for free. Reads by ID (ContainerStatus, PodSandboxStatus) pass through: they are
 * what the guard itself asks.
 */
import { AgentError, isNotFound } from '../../shared/errors.js';
import { isOwnedBy, kNodeNameLabel, kPodUidLabel } from '../kubetypes/label-keys.js';
import type { CriCallOptions, RuntimeService } from './cri/services.js';
import type { ContainerConfig, CriInput, PodSandboxConfig, StringMap } from './cri/types.js';
import { kMaxOwnedIds } from './node-scope.js';

type Kind = 'container' | 'sandbox';

/** withNodeSelector: `filter` with `label_selector` narrowed to this node's objects (the caller's own labels kept). Pure. */
function withNodeSelector<F extends { label_selector?: CriInput<StringMap> | null }>(filter: F | undefined, nodeName: string): F {
  return { ...(filter ?? {}), label_selector: { ...(filter?.label_selector ?? {}), [kNodeNameLabel]: nodeName } } as unknown as F;
}

class NodeScopedRuntimeService implements RuntimeService {
  /** IDs verified ours (created here, listed with our labels, or guarded once): a CRI object's labels never change. */
  readonly #owned = new Set<string>();

  constructor(
    private readonly inner: RuntimeService,
    private readonly nodeName: string,
  ) {}

  #remember(id: string): void {
    if (!id) return;
    if (this.#owned.size >= kMaxOwnedIds) this.#owned.clear();
    this.#owned.add(id);
  }

  #requireOwned(labels: CriInput<StringMap> | null | undefined, what: string): void {
    if (!isOwnedBy(labels as StringMap | undefined, this.nodeName)) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `${what}: labels ${kPodUidLabel} and ${kNodeNameLabel}=${this.nodeName} are required`);
    }
  }

  /** Refuses `op` on an object not ours; a missing one is left to the runtime's own answer (NotFound, or an idempotent stop/remove). */
  async #guard(kind: Kind, id: string, op: string): Promise<void> {
    if (this.#owned.has(id)) return;
    let labels: StringMap | undefined;
    try {
      labels =
        kind === 'container'
          ? (await this.inner.containerStatus(id)).status?.labels
          : (await this.inner.podSandboxStatus(id)).status?.labels;
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!labels) return;
    if (!isOwnedBy(labels, this.nodeName)) {
      throw new AgentError(
        'ERR_INVALID_ARGUMENT',
        `refusing to ${op} ${kind} ${id}: it does not carry ${kPodUidLabel} and ${kNodeNameLabel}=${this.nodeName}`,
      );
    }
    this.#remember(id);
  }

  version(apiVersion: string, opts?: CriCallOptions) {
    return this.inner.version(apiVersion, opts);
  }
  status(verbose?: boolean, opts?: CriCallOptions) {
    return this.inner.status(verbose, opts);
  }
  updateRuntimeConfig(podCidr: string, opts?: CriCallOptions) {
    return this.inner.updateRuntimeConfig(podCidr, opts);
  }
  close(): void {
    this.inner.close();
  }

  async runPodSandbox(config: CriInput<PodSandboxConfig>, runtimeHandler?: string, opts?: CriCallOptions): Promise<string> {
    this.#requireOwned(config.labels, `run pod sandbox ${config.metadata?.namespace ?? ''}/${config.metadata?.name ?? ''}`);
    const id = await this.inner.runPodSandbox(config, runtimeHandler, opts);
    this.#remember(id);
    return id;
  }
  async stopPodSandbox(id: string, opts?: CriCallOptions) {
    await this.#guard('sandbox', id, 'stop');
    return this.inner.stopPodSandbox(id, opts);
  }
  async removePodSandbox(id: string, opts?: CriCallOptions) {
    await this.#guard('sandbox', id, 'remove');
    await this.inner.removePodSandbox(id, opts);
    this.#owned.delete(id);
  }
  podSandboxStatus(id: string, verbose?: boolean, opts?: CriCallOptions) {
    return this.inner.podSandboxStatus(id, verbose, opts);
  }
  async listPodSandbox(filter?: Parameters<RuntimeService['listPodSandbox']>[0], opts?: CriCallOptions) {
    const mine = (await this.inner.listPodSandbox(withNodeSelector(filter ?? undefined, this.nodeName), opts)).filter((s) =>
      isOwnedBy(s.labels, this.nodeName),
    );
    for (const s of mine) this.#remember(s.id);
    return mine;
  }
  async portForward(request: Parameters<RuntimeService['portForward']>[0], opts?: CriCallOptions) {
    await this.#guard('sandbox', request.pod_sandbox_id ?? '', 'port-forward into');
    return this.inner.portForward(request, opts);
  }

  async createContainer(
    podSandboxId: string,
    config: CriInput<ContainerConfig>,
    sandboxConfig: CriInput<PodSandboxConfig>,
    opts?: CriCallOptions,
  ): Promise<string> {
    this.#requireOwned(config.labels, `create container ${config.metadata?.name ?? ''}`);
    await this.#guard('sandbox', podSandboxId, 'create a container in');
    const id = await this.inner.createContainer(podSandboxId, config, sandboxConfig, opts);
    this.#remember(id);
    return id;
  }
  async startContainer(id: string, opts?: CriCallOptions) {
    await this.#guard('container', id, 'start');
    return this.inner.startContainer(id, opts);
  }
  async stopContainer(id: string, timeoutSeconds: number, opts?: CriCallOptions) {
    await this.#guard('container', id, 'stop');
    return this.inner.stopContainer(id, timeoutSeconds, opts);
  }
  async removeContainer(id: string, opts?: CriCallOptions) {
    await this.#guard('container', id, 'remove');
    await this.inner.removeContainer(id, opts);
    this.#owned.delete(id);
  }
  async listContainers(filter?: Parameters<RuntimeService['listContainers']>[0], opts?: CriCallOptions) {
    const mine = (await this.inner.listContainers(withNodeSelector(filter ?? undefined, this.nodeName), opts)).filter((c) =>
      isOwnedBy(c.labels, this.nodeName),
    );
    for (const c of mine) this.#remember(c.id);
    return mine;
  }
  containerStatus(id: string, verbose?: boolean, opts?: CriCallOptions) {
    return this.inner.containerStatus(id, verbose, opts);
  }
  async updateContainerResources(id: string, resources: Parameters<RuntimeService['updateContainerResources']>[1], opts?: CriCallOptions) {
    await this.#guard('container', id, 'update');
    return this.inner.updateContainerResources(id, resources, opts);
  }
  async execSync(id: string, cmd: string[], timeoutSeconds: number, opts?: CriCallOptions) {
    await this.#guard('container', id, 'exec in');
    return this.inner.execSync(id, cmd, timeoutSeconds, opts);
  }
  async exec(request: Parameters<RuntimeService['exec']>[0], opts?: CriCallOptions) {
    await this.#guard('container', request.container_id ?? '', 'exec in');
    return this.inner.exec(request, opts);
  }
  async attach(request: Parameters<RuntimeService['attach']>[0], opts?: CriCallOptions) {
    await this.#guard('container', request.container_id ?? '', 'attach to');
    return this.inner.attach(request, opts);
  }
  async reopenContainerLog(id: string, opts?: CriCallOptions) {
    await this.#guard('container', id, 'reopen the log of');
    return this.inner.reopenContainerLog(id, opts);
  }

  async containerStats(id: string, opts?: CriCallOptions) {
    await this.#guard('container', id, 'read the stats of');
    return this.inner.containerStats(id, opts);
  }
  async listContainerStats(filter?: Parameters<RuntimeService['listContainerStats']>[0], opts?: CriCallOptions) {
    return (await this.inner.listContainerStats(withNodeSelector(filter ?? undefined, this.nodeName), opts)).filter((s) =>
      isOwnedBy(s.attributes?.labels, this.nodeName),
    );
  }
  async podSandboxStats(id: string, opts?: CriCallOptions) {
    await this.#guard('sandbox', id, 'read the stats of');
    return this.inner.podSandboxStats(id, opts);
  }
  async listPodSandboxStats(filter?: Parameters<RuntimeService['listPodSandboxStats']>[0], opts?: CriCallOptions) {
    return (await this.inner.listPodSandboxStats(withNodeSelector(filter ?? undefined, this.nodeName), opts)).filter((s) =>
      isOwnedBy(s.attributes?.labels, this.nodeName),
    );
  }
}

/**
 * scopeRuntimeServiceToNode wraps a CRI RuntimeService so that it lists only `nodeName`'s
 * sandboxes and containers (the `kubelet-ts.node-name` label selector, checked again on the
 * answer), RunPodSandbox and CreateContainer require the owner labels, and every call that acts on
 * an ID first reads its status and refuses one not ours with AgentError `ERR_INVALID_ARGUMENT`
 * (an ID already verified is not read again; a missing one gets the runtime's own answer).
 * Version, Status and UpdateRuntimeConfig pass through.
 * @throws AgentError ERR_INVALID_ARGUMENT if `nodeName` is empty.
 */
export function scopeRuntimeServiceToNode(runtime: RuntimeService, nodeName: string): RuntimeService {
  if (!nodeName) throw new AgentError('ERR_INVALID_ARGUMENT', 'scopeRuntimeServiceToNode: nodeName must be a non-empty string');
  return new NodeScopedRuntimeService(runtime, nodeName);
}
