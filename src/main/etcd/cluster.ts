// Counterpart of the kubelet's API-server wiring in pkg/kubelet/kubelet.go (NewMainKubelet: the apiserver pod source, the status manager's client, node registration and the node lease controller), over etcd.
/**
 * Cluster mode: everything the agent does with etcd, built from AgentOptions and started/stopped
 * by the agent with one call each. One etcd3 client (src/etcd/client.ts) is shared by
 *   - the etcd pod source (src/main/config/source-etcd.ts),
 *   - the pod status writer (src/main/status/etcd-status-writer.ts),
 *   - the node registration and lease heartbeat (src/main/node/node-lease.ts, skipped with --register-node=false).
 */
import { presumedIdScheme } from '../../shared/runtime-endpoint.js';
import type { Node, Pod } from '../../shared/api.js';
import type { Logger } from '../../shared/logging.js';
import type { PodEventRecord } from '../../shared/sync-tasks.js';
import type { PodUpdate } from '../../shared/pod-update.js';
import type { AgentOptions } from '../options/agent-options.js';
import { newEtcdSource, type EtcdSource } from '../config/source-etcd.js';
import { newEtcdObjectSource } from '../config/source-etcd-objects.js';
import type { ConfigObjectUpdate } from '../config/object-store.js';
import { newNodeLease, type NodeLease } from '../node/node-lease.js';
import { buildNode as buildNodeObject, gatherNodeFacts, kubeletVersion } from '../node/node-status.js';
import { newEtcdStatusWriter, type EtcdStatusWriter } from '../status/etcd-status-writer.js';
import type { StatusManager } from '../status/status-manager.js';
import { newEtcdClient, type Etcd3 } from '../../etcd/client.js';
import { realClock, type Clock } from '../../shared/clock.js';

/**
 * EtcdClusterOptions: the AgentOptions cluster mode reads (AgentOptions fits it). Optional fields
 * default as their flags: TLS/auth none, `nodeLeaseDurationSeconds` 40, `etcdQps` 50, `etcdBurst` 100.
 */
export type EtcdClusterOptions = Pick<
  AgentOptions,
  | 'nodeName'
  | 'nodeIp'
  | 'maxPods'
  | 'runtime'
  | 'rootDir'
  | 'port'
  | 'etcdServers'
  | 'etcdPrefix'
  | 'registerNode'
  | 'nodeStatusUpdateFrequencyMs'
> & {
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
  etcdUsername?: string;
  etcdPassword?: string;
  nodeLeaseDurationSeconds?: number;
  etcdQps?: number;
  etcdBurst?: number;
};

/** EtcdClusterDeps: the agent's side of cluster mode. */
export interface EtcdClusterDeps {
  logger: Logger;
  statusManager: StatusManager;
  /** The pods with their status (their statuses are written once at start). */
  listPods(): Pod[];
  /** Where the etcd source's updates go (the agent's PodConfig merge). */
  onUpdate(update: PodUpdate): void;
  /** Receives the ConfigMaps and Secrets under `{prefix}/configmaps/` and `{prefix}/secrets/` (source `etcd`); absent = not read. */
  onObjects?(update: ConfigObjectUpdate): void;
  /** Records an event against a pod (bad values in etcd are reported this way). */
  recordEvent(pod: Pod, event: PodEventRecord): void;
  /**
   * Builds the Node object to register (the agent passes its GET /node one); default:
   * src/main/node/node-status.ts buildNode over gatherNodeFacts(rootDir), Ready from `ready`.
   */
  buildNode?(): Node | Promise<Node>;
  /** The node's readiness (runtime / PLEG health) for the default Node builder. */
  ready?(): { ok: boolean; message?: string };
  /** The clock (epoch ms) of the default Node's heartbeat and of the status writer's rate limit; default the real clock. */
  clock?: Clock;
}

/** EtcdCluster: the running cluster mode. */
export interface EtcdCluster {
  /** Starts the writer, the node lease and the source; resolves after the source's first list attempt. */
  start(): Promise<void>;
  /** Revokes the node lease, flushes pending statuses (up to 2 s), stops the source, closes the client. */
  stop(): Promise<void>;
  /** ok while etcd answers; message says what fails (for /healthz). */
  healthy(): { ok: boolean; message?: string };
  readonly client: Etcd3;
  readonly source: EtcdSource;
  readonly statusWriter: EtcdStatusWriter;
  /** Null with --register-node=false. */
  readonly nodeLease: NodeLease | null;
}

/**
 * newEtcdCluster builds cluster mode for `o` (which must list `etcdServers`).
 * @throws InvalidArgumentError for bad etcd options (see newEtcdClient).
 */
export function newEtcdCluster(o: EtcdClusterOptions, deps: EtcdClusterDeps): EtcdCluster {
  const log = deps.logger;
  const client = newEtcdClient({
    servers: o.etcdServers,
    caFile: o.etcdCafile || undefined,
    certFile: o.etcdCertfile || undefined,
    keyFile: o.etcdKeyfile || undefined,
    username: o.etcdUsername || undefined,
    password: o.etcdPassword || undefined,
  });
  const statusWriter = newEtcdStatusWriter(
    { nodeName: o.nodeName, prefix: o.etcdPrefix, qps: o.etcdQps, burst: o.etcdBurst },
    {
      client,
      logger: log.child({ component: 'etcd-status' }),
      statusManager: deps.statusManager,
      listPods: deps.listPods,
      clock: deps.clock,
    },
  );
  let reconciled = false;
  const source: EtcdSource = newEtcdSource(
    { nodeName: o.nodeName, prefix: o.etcdPrefix },
    {
      client,
      clock: deps.clock,
      logger: log.child({ component: 'etcd-source' }),
      onUpdate: (u) => {
        deps.onUpdate(u);
        if (u.op !== 'SET' || reconciled) return;
        // After the first list the desired set is known: drop status keys of pods deleted meanwhile.
        reconciled = true;
        const live = new Set(deps.listPods().map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`));
        statusWriter
          .reconcile((ns, name) => live.has(`${ns}/${name}`) || source.hasKey(ns, name))
          .catch((err: Error) => log.warn({ err: err.message }, 'Could not clean up stale pod status keys'));
      },
      onProblem: (p) => {
        if (p.message !== null)
          deps.recordEvent(p.pod, { type: 'Warning', reason: 'FailedToParse', message: `Invalid pod in etcd at ${p.key}: ${p.message}` });
        statusWriter.writeProblem(p.namespace, p.name, p.message);
      },
    },
  );
  const objectSource = deps.onObjects
    ? newEtcdObjectSource({
        client,
        prefix: o.etcdPrefix,
        logger: log.child({ component: 'etcd-objects' }),
        onObjects: (u) => deps.onObjects!(u),
        clock: deps.clock,
      })
    : undefined;
  let previousNode: Node | undefined;
  const buildNode =
    deps.buildNode ??
    (async () =>
      (previousNode = buildNodeObject({
        nodeName: o.nodeName,
        nodeIp: o.nodeIp,
        maxPods: o.maxPods,
        kubeletVersion: kubeletVersion(),
        containerRuntimeVersion: `${presumedIdScheme(o.runtime) || 'remote'}://unknown`,
        health: deps.ready?.() ?? { ok: true },
        port: o.port,
        facts: await gatherNodeFacts(o.rootDir),
        nowMs: (deps.clock ?? realClock).now(),
        previous: previousNode,
      })));
  const nodeLease = o.registerNode
    ? newNodeLease(
        {
          nodeName: o.nodeName,
          prefix: o.etcdPrefix,
          ttlSeconds: o.nodeLeaseDurationSeconds ?? 40,
          updateFrequencyMs: o.nodeStatusUpdateFrequencyMs,
        },
        {
          client,
          logger: log.child({ component: 'node-lease' }),
          buildNode,
          clock: deps.clock,
        },
      )
    : null;
  let stopped = false;
  return {
    client,
    source,
    statusWriter,
    nodeLease,
    async start() {
      statusWriter.start();
      // Registration must not hold up the pods: it retries in the background when etcd is down.
      void nodeLease?.start();
      // The objects first, so that the pods' first syncs find them.
      await objectSource?.start();
      await source.start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await nodeLease?.stop();
      await source.stop();
      await objectSource?.stop();
      await statusWriter.stop();
      client.close();
    },
    healthy() {
      const problems: string[] = [];
      if (!source.connected()) problems.push('etcd source not connected');
      const w = statusWriter.healthy();
      if (!w.ok) problems.push(w.message!);
      const l = nodeLease?.healthy();
      if (l && !l.ok) problems.push(l.message!);
      return problems.length === 0 ? { ok: true } : { ok: false, message: problems.join('; ') };
    },
  };
}
