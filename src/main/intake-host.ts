/**
 * Counterpart of the kubelet server's HostInterface methods beyond pod listing
 * (pkg/kubelet/server: GetContainerLogs, GetNode) plus the apiserver-side of pod create/update/
 * delete for the `api` source: the agent's half of issue 4's intake and read API. agent.ts
 * builds one and forwards the AgentHost methods to it; the logic lives here to keep agent.ts thin.
 */
import { podSource } from '../shared/annotations.js';
import type { Event, Node, Pod } from '../shared/api.js';
import { AgentError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import type { RuntimePod } from '../shared/messages.js';
import type { PodUpdate } from '../shared/pod-update.js';
import type { ContainerLogsRequest, HealthReport, LogStream } from '../server/agent-host.js';
import { newIntakeSource, type IntakeSource } from './config/source-intake.js';
import { newLogsClient, selectLogContainer, type LogsClient } from './logs/container-logs.js';
import { buildNode, gatherNodeFacts, kubeletTsVersion } from './node/node-status.js';
import type { PodManager } from './pod/pod-manager.js';

/** Options of {@link newIntakeHost} (a subset of AgentOptions). */
export interface IntakeHostOptions {
  rootDir: string;
  nodeName: string;
  nodeIp: string;
  maxPods: number;
  runtime: 'docker' | 'fake';
  dockerSocketPath: string;
}

/** Dependencies of {@link newIntakeHost}: the agent's parts it reads or feeds. */
export interface IntakeHostDeps {
  logger: Logger;
  podManager: PodManager;
  /**
   * The merge's holder of a full name (PodConfig.owner): asked when the pod manager has none, for
   * pods whose SyncLoop ADD is still queued behind a big update.
   */
  mergedOwner?: (fullName: string) => { uid: string; source: string } | undefined;
  /**
   * The agent's config update entry (PodConfig merge → SyncLoop ADD/UPDATE/REMOVE). Returns a
   * promise that resolves once the update's changes are handled (a big one is handled in chunks,
   * pod-lifecycle.ts); the intake methods wait for it before they answer.
   */
  onUpdate: (update: PodUpdate) => Promise<void> | void;
  /** What Docker last showed of pod `uid` (PodCache.get), to pick a container's log. */
  runtimePod: (uid: string) => RuntimePod | null;
  /** The recorder's events, oldest first. */
  listEvents: () => Event[];
  healthz: () => HealthReport;
  /** The HTTP server's port (0 when not serving). */
  port: () => number;
}

/** IntakeHost: the AgentHost methods of issue 4 plus the grace-period hand-off to the agent. */
export interface IntakeHost {
  /** start restores the persisted intake pods (one SET of source `api`). */
  start(): Promise<void>;
  /** stop ends the logs worker. Pods and their files stay. */
  stop(): Promise<void>;
  submitPods(pods: Pod[]): Promise<Pod[]>;
  replacePod(namespace: string, name: string, pod: Pod): Promise<Pod>;
  deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<Pod>;
  listEvents(): Event[];
  getNode(): Promise<Node>;
  containerLogs(request: ContainerLogsRequest): Promise<LogStream>;
}

class IntakeHostImpl implements IntakeHost {
  readonly #intake: IntakeSource;
  readonly #logs: LogsClient;
  /** Completion of the last update handed to the agent: the intake methods' answers wait for it. */
  #applied: Promise<void> | void = undefined;
  #runtimeVersion: string | undefined;
  #lastNode: Node | undefined;

  constructor(private readonly options: IntakeHostOptions, private readonly deps: IntakeHostDeps) {
    this.#intake = newIntakeSource({ rootDir: options.rootDir, nodeName: options.nodeName }, {
      logger: deps.logger.child({ component: 'intake-source' }),
      onUpdate: (update) => {
        this.#applied = deps.onUpdate(update);
      },
      holder: (fullName) => {
        const r = deps.podManager.getByFullName(fullName);
        return r ? { uid: r.uid, source: podSource(r.pod) ?? 'unknown' } : deps.mergedOwner?.(fullName);
      },
    });
    this.#logs = newLogsClient({ runtime: options.runtime, dockerSocketPath: options.dockerSocketPath, nodeName: options.nodeName }, { logger: deps.logger });
  }

  start(): Promise<void> {
    return this.#intake.start();
  }

  stop(): Promise<void> {
    return this.#logs.close();
  }

  #withStatus(pod: Pod): Pod {
    const r = this.deps.podManager.get(pod.metadata?.uid ?? '');
    return r ? { ...r.pod, status: r.status } : pod;
  }

  async submitPods(pods: Pod[]): Promise<Pod[]> {
    const stored = await this.#intake.submit(pods);
    await this.#applied;
    return stored.map((p) => this.#withStatus(p));
  }

  async replacePod(namespace: string, name: string, pod: Pod): Promise<Pod> {
    const stored = await this.#intake.replace(namespace, name, pod);
    await this.#applied;
    return this.#withStatus(stored);
  }

  async deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<Pod> {
    const removed = await this.#intake.remove(namespace, name, gracePeriodSeconds);
    await this.#applied;
    // The pod stays listed while it terminates (SyncLoop REMOVE puts the same deletion marks on it).
    const record = this.deps.podManager.get(removed.metadata?.uid ?? '');
    return record?.status ? { ...removed, status: record.status } : removed;
  }

  listEvents(): Event[] {
    return this.deps.listEvents();
  }

  async getNode(): Promise<Node> {
    if (this.#runtimeVersion === undefined) {
      try {
        const v = await this.#logs.version();
        this.#runtimeVersion = `${this.options.runtime}://${v.version}`;
      } catch (err) {
        this.deps.logger.warn({ err: (err as Error).message }, 'Could not read the container runtime version');
      }
    }
    const health = this.deps.healthz();
    const failing = health.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.message ?? 'failed'}`);
    this.#lastNode = buildNode({
      nodeName: this.options.nodeName, nodeIp: this.options.nodeIp, maxPods: this.options.maxPods,
      kubeletVersion: kubeletTsVersion(), containerRuntimeVersion: this.#runtimeVersion ?? '',
      health: { ok: health.ok, message: failing.join('; ') || undefined }, port: this.deps.port(),
      facts: await gatherNodeFacts(this.options.rootDir), nowMs: Date.now(), previous: this.#lastNode,
    });
    return this.#lastNode;
  }

  async containerLogs(req: ContainerLogsRequest): Promise<LogStream> {
    const record = this.deps.podManager.getByFullName(`${req.namespace}/${req.pod}`);
    if (!record) throw new AgentError('ERR_NOT_FOUND', `pods "${req.pod}" not found`);
    const containerId = selectLogContainer(record.pod, this.deps.runtimePod(record.uid), req.container, req.previous);
    // A previous (dead) attempt has nothing more to follow.
    return this.#logs.logs(containerId, {
      follow: req.follow && !req.previous, timestamps: req.timestamps,
      tailLines: req.tailLines, sinceSeconds: req.sinceSeconds, limitBytes: req.limitBytes,
    });
  }
}

/** newIntakeHost builds the agent's intake and read-API half; nothing runs until start(). */
export function newIntakeHost(options: IntakeHostOptions, deps: IntakeHostDeps): IntakeHost {
  return new IntakeHostImpl(options, deps);
}
