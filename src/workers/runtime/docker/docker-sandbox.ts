// Counterpart of pkg/kubelet/dockershim/docker_sandbox.go (RunPodSandbox, StopPodSandbox, RemovePodSandbox, PodSandboxStatus, ListPodSandbox) and dockershim/helpers.go ensureSandboxImageExists, kubernetes ≤1.23; cri-dockerd core/sandbox_*.go.
/**
 * The CRI PodSandboxManager over the Docker-shaped ContainerRuntime: a sandbox is the pause
 * container, its network the agent's own CNI chain (network/) joined into the pause container's
 * network namespace after its start, its resolv.conf the pod's `<root-dir>/pods/<uid>/resolv.conf`
 * written from `dns_config` (and bound into each container by CreateContainer). Runs on a worker
 * thread; errors as services.ts says (AgentError ERR_NOT_FOUND, ERR_RUNTIME_UNAVAILABLE, …;
 * ERR_NETWORK with the kubelet's wording when a CNI ADD or DEL fails).
 */
import { createWithConflictRecovery } from './create-conflict.js';
import { failpoint } from '../../../shared/failpoints.js';
import { AgentError, isNotFound } from '../../../shared/errors.js';
import type { Logger } from '../../../shared/logging.js';
import { writePodFile } from '../../dns/etc-hosts.js';
import { resolvConfContent, resolvConfPath } from '../../dns/pod-dns.js';
import type { PodNetwork } from '../../network/pod-network.js';
import type { PodSandboxStatusResponse } from '../cri/services.js';
import type { CriInput, PodSandbox, PodSandboxConfig, PodSandboxFilter } from '../cri/types.js';
import type { ContainerDetails, ContainerListFilter, ContainerRuntime } from '../container/runtime.js';
import { sandboxCreateSpec, sandboxMetadata, type DockerCreateSettings } from './docker-container-create.js';
import {
  kDockerTypeContainer,
  kDockerTypeLabel,
  kDockerTypeSandbox,
  kSandboxIdLabel,
  sandboxMetadataOf,
  selectorLabels,
} from './docker-cri-labels.js';
import { CheckedSandboxes, criPortMappings, networkTargetOf, setUpFailureMessage, tearDownNetwork } from './docker-sandbox-network.js';
import { sandboxMatches, toCriSandbox, toCriSandboxStatus } from './docker-status.js';
import { realClock, type Clock } from '../../../shared/clock.js';

/** kSandboxGracePeriodSeconds: the pause container's stop timeout (dockershim defaultSandboxGracePeriod). */
export const kSandboxGracePeriodSeconds = 10;

/** What the sandbox manager works with (one per worker thread). */
export interface DockerSandboxDeps {
  /** The node-scoped runtime (node-scope.ts): only this node's containers. */
  runtime: ContainerRuntime;
  network: PodNetwork;
  /** --root-dir (absolute): the pods' resolv.conf files go under `pods/<uid>/`. */
  rootDir: string;
  /** --node-ip: the host address of a hostPort whose `host_ip` is '' ('' = every address). */
  nodeIp: string;
  /** The create settings (the floor of oom_score_adj is read once, lazily). */
  settings(): Promise<DockerCreateSettings>;
  /** The container lists (list-coalescer.ts, shared with the runtime service); default `runtime.listContainers`. */
  listContainers?: ContainerRuntime['listContainers'];
  logger?: Logger;
  /** The thread's clock (epoch ms): the created/started times a just-started sandbox is answered with; default the real clock. */
  clock?: Clock;
}

/** podResolvConf: the pod's resolv.conf path when its sandbox config has a `dns_config`, else ''. */
export function podResolvConf(rootDir: string, config: CriInput<PodSandboxConfig> | null | undefined): string {
  return config?.dns_config && config.metadata?.uid ? resolvConfPath(rootDir, config.metadata.uid) : '';
}

/**
 * kJustStartedMs: how long (milliseconds) after RunPodSandbox on the pod network its first PodSandboxStatus is answered
 * from what the start knew; later ones inspect (the kubelet asks at once, upstream's createPodSandbox).
 */
export const kJustStartedMs = 10_000;

/** usesCni: the sandbox joins the agent's pod network (network enabled, not NODE). */
function usesCni(network: PodNetwork, d: Pick<ContainerDetails, 'networkMode'>): boolean {
  return network.enabled && d.networkMode !== 'host';
}

function notFound(id: string, cause?: unknown): AgentError {
  return new AgentError('ERR_NOT_FOUND', `could not find pod sandbox "${id}"`, cause === undefined ? {} : { cause });
}

/** DockerSandboxManager: RunPodSandbox … ListPodSandbox of the Docker implementation. */
export class DockerSandboxManager {
  readonly #checked = new CheckedSandboxes();
  /**
   * The sandboxes this thread has just started, as it knows them (the inspect runPodSandbox made
   * for the netns, or what it asked Docker for), for the first PodSandboxStatus after
   * RunPodSandbox (the kubelet's createPodSandbox asks at once, for the IP): answered from here,
   * once, within kJustStartedMs, instead of a second inspect.
   */
  readonly #justStarted = new Map<string, { details: ContainerDetails; atMs: number }>();

  readonly #clock: Clock;

  constructor(private readonly deps: DockerSandboxDeps) {
    this.#clock = deps.clock ?? realClock;
  }

  #list(filter: ContainerListFilter) {
    return this.deps.listContainers ? this.deps.listContainers(filter) : this.deps.runtime.listContainers(filter);
  }

  /** inspectSandbox: the pause container `id`. @throws ERR_NOT_FOUND when gone or not a sandbox. */
  async inspectSandbox(id: string): Promise<ContainerDetails> {
    const d = await this.deps.runtime.inspectContainer(id).catch((err: unknown) => {
      throw isNotFound(err) ? notFound(id, err) : err;
    });
    if (d.labels[kDockerTypeLabel] !== kDockerTypeSandbox) throw notFound(id);
    return d;
  }

  /** sandboxIfPresent: inspectSandbox, null when gone (or not a sandbox). */
  async #sandboxIfPresent(id: string): Promise<ContainerDetails | null> {
    return this.inspectSandbox(id).catch((err: unknown) => {
      if (isNotFound(err)) return null;
      throw err;
    });
  }

  /**
   * runPodSandbox: pulls the pause image when missing, writes the pod's resolv.conf from
   * `dns_config`, creates and starts the pause container, then (network not NODE, pod network on)
   * CNI ADD into its netns with the `port_mappings`. A failed ADD is undone (DEL, the sandbox
   * removed) and rejects with ERR_NETWORK in the kubelet's words. Resolves the sandbox's ID.
   */
  async runPodSandbox(config: CriInput<PodSandboxConfig>): Promise<string> {
    const { runtime, network } = this.deps;
    const settings = await this.deps.settings();
    const spec = await sandboxCreateSpec(config, settings);
    const meta = sandboxMetadata(config);
    if (!(await runtime.imageExists(settings.podInfraImage))) await runtime.pullImage(settings.podInfraImage);
    if (config.dns_config) {
      const d = config.dns_config;
      await writePodFile(
        podResolvConf(this.deps.rootDir, config),
        resolvConfContent({ servers: [...(d.servers ?? [])], searches: [...(d.searches ?? [])], options: [...(d.options ?? [])] }),
      );
    }
    failpoint('before-sandbox-create');
    const id = await createWithConflictRecovery(runtime, spec);
    failpoint('after-sandbox-create');
    await runtime.startContainer(id);
    failpoint('after-sandbox-start');
    this.#pruneJustStarted();
    // Without the pod network there is no inspect to reuse: the first PodSandboxStatus inspects, so
    // its created time is Docker's, as every later read's (one made up here from the agent's clock
    // differed from them by milliseconds, and the read-back of a start must equal a full read).
    if (!usesCni(network, { networkMode: spec.hostConfig.networkMode ?? '' })) return id;
    const target = networkTargetOf(id, meta);
    try {
      const d = await runtime.inspectContainer(id);
      if (!d.pid) throw new AgentError('ERR_NETWORK', 'the sandbox container is not running (no network namespace)');
      this.#justStarted.set(id, { details: d, atMs: this.#clock.now() });
      failpoint('before-network-setup');
      await network.setUpPod({
        ...target,
        netnsPath: `/proc/${d.pid}/ns/net`,
        portMappings: criPortMappings(config.port_mappings, this.deps.nodeIp),
      });
      failpoint('after-network-setup');
      this.#checked.mark(id);
      return id;
    } catch (err) {
      // As the syncer did: the sandbox whose SetUpPod failed is torn down and removed (DEL is idempotent).
      await tearDownNetwork(network, target, '').catch((e: unknown) =>
        this.deps.logger?.warn({ containerID: id, err: e }, 'Tearing down a sandbox whose network set-up failed'),
      );
      await runtime
        .removeContainer(id)
        .catch((e: unknown) => this.deps.logger?.warn({ containerID: id, err: e }, 'Removing a sandbox whose network set-up failed'));
      this.#justStarted.delete(id);
      throw new AgentError('ERR_NETWORK', setUpFailureMessage(id, meta.name, meta.namespace, err), { cause: err, retriable: true });
    }
  }

  /** Forgets the just-started sandboxes nobody asked about within kJustStartedMs. */
  #pruneJustStarted(): void {
    const now = this.#clock.now();
    for (const [id, e] of this.#justStarted) if (now - e.atMs > kJustStartedMs) this.#justStarted.delete(id);
  }

  /** The just-started sandbox `id` as this thread knows it, once (then forgotten); undefined when none or too old. */
  #takeJustStarted(id: string): ContainerDetails | undefined {
    const e = this.#justStarted.get(id);
    if (!e) return undefined;
    this.#justStarted.delete(id);
    return this.#clock.now() - e.atMs <= kJustStartedMs ? e.details : undefined;
  }

  /** containersOf: the app containers of sandbox `id` (label `io.kubernetes.sandbox.id`). */
  async #containersOf(id: string) {
    return this.#list({ labels: [`${kDockerTypeLabel}=${kDockerTypeContainer}`, `${kSandboxIdLabel}=${id}`] });
  }

  /** tearDown: CNI DEL of sandbox `d` (its netns while it runs, '' after); forgets its check. */
  async #tearDown(d: ContainerDetails): Promise<void> {
    if (!usesCni(this.deps.network, d)) return;
    const meta = sandboxMetadataOf(d.name, d.labels);
    await tearDownNetwork(this.deps.network, networkTargetOf(d.id, meta), d.running && d.pid ? `/proc/${d.pid}/ns/net` : '');
    this.#checked.forget(d.id);
  }

  /**
   * stopPodSandbox: kills the sandbox's running containers (the kubelet stopped them with their
   * grace period before), CNI DEL while the netns still exists, then stops the pause container.
   * Idempotent: a sandbox already gone is not an error. With the pod network on, the pause container
   * is inspected first, as dockershim's StopPodSandbox (getPodSandboxDetails), for the DEL's target
   * and netns; without it nothing reads an inspect (issue #42: a pod's removal's Engine calls).
   */
  async stopPodSandbox(id: string): Promise<void> {
    this.#justStarted.delete(id);
    const d = this.deps.network.enabled ? await this.#sandboxIfPresent(id) : null;
    if (this.deps.network.enabled && !d) return;
    const running = (await this.#containersOf(id)).filter((c) => c.state === 'running' || c.state === 'paused');
    await Promise.all(running.map((c) => this.deps.runtime.stopContainer(c.id, 0)));
    if (d) await this.#tearDown(d);
    await this.deps.runtime.stopContainer(id, kSandboxGracePeriodSeconds).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }

  /**
   * removePodSandbox: removes the sandbox's containers (forced), tears its network down if still set
   * up, removes the pause container. Idempotent. With the pod network on, the pause container is
   * inspected first (gone: nothing to do), for the CNI DEL's target and netns; without it there is no
   * network to tear down, and, as dockershim's RemovePodSandbox (docker_sandbox.go), the list of its
   * containers and the removals are all (issue #42: no inspect in a pod's removal that nothing reads).
   */
  async removePodSandbox(id: string): Promise<void> {
    this.#justStarted.delete(id);
    const d = this.deps.network.enabled ? await this.#sandboxIfPresent(id) : null;
    if (this.deps.network.enabled && !d) return;
    for (const c of await this.#containersOf(id)) {
      await this.deps.runtime.removeContainer(c.id).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    if (d) await this.#tearDown(d);
    await this.deps.runtime.removeContainer(id).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }

  /**
   * podSandboxStatus: the pause container's state, namespaces, labels and annotations, and its IP
   * from the CNI result cache. A running sandbox of the pod network whose network is lost (no
   * cached result, or checkPod false: a full CNI CHECK the first time this thread sees it, a quick
   * one after) is NOTREADY, so the kubelet recreates it; a check that throws counts as passed
   * (logged): a broken plugin must not recreate every sandbox of the node. The first one asked
   * right after this thread's runPodSandbox of `id` (within kJustStartedMs) is answered from what
   * that knew (its inspect, or the create it asked for: running, created when the create
   * answered), without an inspect of its own (issue #42 item 2: the engine's calls per pod start).
   */
  async podSandboxStatus(id: string): Promise<PodSandboxStatusResponse> {
    const d = this.#takeJustStarted(id) ?? (await this.inspectSandbox(id));
    const { network } = this.deps;
    let ips: string[] = [];
    let ready = true;
    if (usesCni(network, d)) {
      const st = await network.podNetworkStatus(d.id);
      ips = st?.ips ?? [];
      if (d.running) ready = st !== null && (await this.#networkOk(d));
    }
    return { status: toCriSandboxStatus(d, ips, ready), info: {}, containers_statuses: [], timestamp: 0 };
  }

  async #networkOk(d: ContainerDetails): Promise<boolean> {
    const mode = this.#checked.mode(d.id);
    const meta = sandboxMetadataOf(d.name, d.labels);
    try {
      const ok = await this.deps.network.checkPod(
        networkTargetOf(d.id, meta),
        mode === 'full' && d.pid ? `/proc/${d.pid}/ns/net` : '',
        mode,
      );
      if (ok && mode === 'full') this.#checked.mark(d.id);
      if (!ok) this.deps.logger?.info({ podUID: meta.uid, containerID: d.id, mode }, 'Pod sandbox lost its network');
      return ok;
    } catch (err) {
      this.deps.logger?.warn({ podUID: meta.uid, containerID: d.id, mode, err }, 'Pod network check failed');
      return true;
    }
  }

  /** listPodSandbox: the pause containers matching `filter` (label selector on the engine; id prefix and state here). */
  async listPodSandbox(filter?: CriInput<PodSandboxFilter> | null): Promise<PodSandbox[]> {
    const list = await this.#list({
      labels: [`${kDockerTypeLabel}=${kDockerTypeSandbox}`, ...selectorLabels(filter?.label_selector)],
    });
    return list.map(toCriSandbox).filter((s) => sandboxMatches(s, filter));
  }
}
