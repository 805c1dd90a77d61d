/**
 * The Piscina worker entry: the worker-thread half of the kubelet's pod workers
 * (pkg/kubelet/pod_workers.go → kuberuntime SyncPod/KillPod), plus the PLEG's relist, the
 * prober's exec and network probes, container/image GC, the runtime status check and the stats
 * collection: task kinds syncPod, killPod, relist, execProbe, netProbe, grpcProbe, gc, runtimeStatus, stats.
 * Each task is plain data (shared/sync-tasks.ts); the handler never throws (STYLE.md C5).
 */
import path from 'node:path';
import { workerData } from 'node:worker_threads';
import { AgentError, InvalidArgumentError, serializeError } from '../shared/errors.js';
import { realClock, type Clock } from '../shared/clock.js';
import { boundedErr, newLogger, type Logger } from '../shared/logging.js';
import { PROTOCOL_VERSION, type WorkerBootstrap, type WorkerResult, type WorkerResultMap } from '../shared/thread-wire.js';
import type { GcResult, WorkerTask } from '../shared/sync-tasks.js';
import { kDefaultNodeSandboxSettings } from '../shared/node-settings.js';
import type { FakeWorkerBootstrap } from '../shared/fake-runtime-tuning.js';
import { scopeToNode } from './runtime/node-scope.js';
import { getRuntime } from './runtime/runtime-service.js';
import { dockerShimStats, getRuntime as getNodeRuntime, newDockerShimRuntime } from './runtime/node-runtime.js';
import { runCriTask, type CriWorkerDeps } from './kuberuntime/worker-tasks.js';
import { kNoopPodNetwork, type PodNetwork } from './network/pod-network.js';
import { newNodeKeyring } from './images/image-puller.js';
import { checkRuntimeEndpoint } from '../shared/runtime-endpoint.js';
import type { ContainerRuntime, NodeRuntime } from './runtime/container/runtime.js';
import { newPodNetwork } from './network/network-service.js';
import { kPodUidLabel } from './kubetypes/label-keys.js';
import { RemoteRuntimeService } from './runtime/cri/remote-runtime.js';
import { announceThreadRole } from './thread-roles.js';

announceThreadRole('sync');

/** A worker handler: one task in, one WorkerResult out; never rejects. */
export type WorkerHandler = (task: WorkerTask) => Promise<WorkerResult>;

/** Extra dependencies for createWorkerHandler (tests). */
export interface WorkerHandlerDeps {
  /** The thread's one Clock (shared/clock.ts; default realClock): every time read and timer of its tasks. */
  clock?: Clock;
  /** Logger (default: pino at bootstrap.logLevel on stderr). */
  logger?: Logger;
  /** The pod network (default: newPodNetwork(bootstrap.network) for the docker runtime, kNoopPodNetwork for the fake). */
  network?: PodNetwork;
}

/**
 * validateBootstrap checks a WorkerBootstrap (workerData).
 * @throws InvalidArgumentError naming the bad `workerData.<field>`.
 */
export function validateBootstrap(b: unknown): WorkerBootstrap {
  if (typeof b !== 'object' || b === null) throw new InvalidArgumentError('workerData must be a WorkerBootstrap object');
  const w = b as Partial<WorkerBootstrap>;
  if (w.protocol !== PROTOCOL_VERSION)
    throw new InvalidArgumentError(`workerData.protocol must be ${PROTOCOL_VERSION}, got ${JSON.stringify(w.protocol)}`);
  if (w.runtime === undefined) throw new InvalidArgumentError('workerData.runtime must be set');
  checkRuntimeEndpoint(w);
  if (typeof w.nodeName !== 'string' || !w.nodeName) throw new InvalidArgumentError('workerData.nodeName must be a non-empty string');
  if (typeof w.rootDir !== 'string' || !path.isAbsolute(w.rootDir))
    throw new InvalidArgumentError(`workerData.rootDir must be an absolute path, got ${JSON.stringify(w.rootDir)}`);
  if (typeof w.podInfraContainerImage !== 'string' || !w.podInfraContainerImage)
    throw new InvalidArgumentError('workerData.podInfraContainerImage must be a non-empty string');
  return w as WorkerBootstrap;
}

/**
 * createWorkerHandler builds the task handler for one thread from its bootstrap. Every runtime
 * runs the same CRI tasks (kuberuntime/worker-tasks.ts): on `remote` over gRPC
 * (node-runtime.ts getRuntime); on Docker and the fake — `runtime` if given, else this thread's
 * Docker-shaped runtime (runtime-service.ts getRuntime) — over dockershim's CRI
 * (node-runtime.ts newDockerShimRuntime), scoped to this node so only its containers are seen
 * or touched. The handler checks `task.protocol`, dispatches on `task.kind` and returns
 * `{ok:true, kind, value}` or `{ok:false, kind, error}` — it never rejects.
 * @throws InvalidArgumentError for a bad bootstrap (see validateBootstrap).
 */
export function createWorkerHandler(bootstrap: WorkerBootstrap, runtime?: ContainerRuntime, deps: WorkerHandlerDeps = {}): WorkerHandler {
  const b = validateBootstrap(bootstrap);
  const logger = deps.logger ?? newLogger(b.logLevel || 'info').child({ component: 'sync-worker', node: b.nodeName });
  if (!runtime && b.runtime === 'remote') {
    const nr = getNodeRuntime(b);
    return criWorkerHandler(b, deps, logger, nr, {
      sandbox: { ...kDefaultNodeSandboxSettings, ...b.sandbox },
      nodeKeyring: newNodeKeyring(b.imagePullCredentials ?? ''),
      podUidsInRuntime: () => criPodUidsInRuntime(b),
    });
  }
  // Docker and the fake: the same CRI syncer over dockershim's translation (runtime/docker).
  const raw = runtime ?? getRuntime(b as FakeWorkerBootstrap);
  const network = deps.network ?? (b.runtime === 'docker' ? newPodNetwork(b.network, logger) : kNoopPodNetwork);
  const clock = deps.clock ?? realClock;
  const nr = newDockerShimRuntime(raw, b, { network, logger, clock });
  const sandbox = b.runtime === 'docker' ? { ...kDefaultNodeSandboxSettings, ...b.sandbox } : undefined;
  const scoped = scopeToNode(raw, b.nodeName);
  return criWorkerHandler(b, deps, logger, nr, {
    // Host files, cgroups and Docker options only for real containers (the fake runtime has none).
    sandbox,
    stats: dockerShimStats({ runtime: scoped, rootDir: b.rootDir, cgroupRoot: sandbox?.cgroupsPerQOS ? sandbox.cgroupRoot : '', clock }),
    // Without a pod network (`--network-plugin none`, the fake) a sandbox has no IP and keeps it.
    podNetwork: network !== kNoopPodNetwork,
    netns: scoped,
    afterGc: network.enabled ? (r) => releaseGoneSandboxNetworks(nr, network, r, logger) : undefined,
    nodeKeyring: newNodeKeyring(b.imagePullCredentials ?? ''),
    // Every owner's containers (not only this node's): an image any of them uses is never removed.
    imagesInUse: async () => new Set((await raw.listContainers({ labels: [] })).map((c) => c.imageId)),
    // Every owner's pods (agents sharing the engine share the cgroup root): their pod cgroups are not orphans.
    podUidsInRuntime: async () => new Set((await raw.listContainers({ labels: [kPodUidLabel] })).map((c) => c.labels[kPodUidLabel])),
  });
}

/** One unscoped client per CRI endpoint per thread, for criPodUidsInRuntime. */
const unscopedCri = new Map<string, RemoteRuntimeService>();

/**
 * criPodUidsInRuntime: the pod UIDs of every sandbox on the CRI runtime of `b`, any owner's (the
 * node-scoped runtime lists only this node's): agents sharing the runtime share the cgroup root,
 * so their pods' cgroups are not orphans (gc.ts cleanupOrphanedPodCgroups).
 * @throws AgentError from the runtime's ListPodSandbox.
 */
async function criPodUidsInRuntime(b: WorkerBootstrap): Promise<ReadonlySet<string>> {
  const endpoint = b.containerRuntimeEndpoint ?? '';
  let rt = unscopedCri.get(endpoint);
  if (!rt) {
    rt = new RemoteRuntimeService(endpoint, b.runtimeRequestTimeoutMs === undefined ? {} : { requestTimeoutMs: b.runtimeRequestTimeoutMs });
    unscopedCri.set(endpoint, rt);
  }
  return new Set((await rt.listPodSandbox()).map((s) => s.labels[kPodUidLabel]).filter((uid): uid is string => !!uid));
}

/**
 * releaseGoneSandboxNetworks: the agent's CNI (dockershim's network plugin) releases the cached
 * results and IPAM leases of sandboxes no longer listed (PodNetwork.reconcile; the live list is
 * taken after the leases are read). A failure goes into `r.errors`.
 */
async function releaseGoneSandboxNetworks(nr: NodeRuntime, network: PodNetwork, r: GcResult, logger: Logger): Promise<void> {
  try {
    const { released } = await network.reconcile(async () => new Set((await nr.runtime.listPodSandbox()).map((s) => s.id)));
    if (released.length > 0) logger.info({ released: released.length }, 'Released the pod network of sandboxes that are gone');
  } catch (err) {
    r.errors.push(`pod network: ${serializeError(err).message}`);
  }
}

/**
 * criWorkerHandler: the handler of one thread: every task through the node-scoped CRI services of
 * `nr` (runtime/node-runtime.ts: gRPC for `remote`, dockershim's for Docker and the fake) and
 * kuberuntime/worker-tasks.ts; `extra` says what differs by runtime.
 */
function criWorkerHandler(
  b: WorkerBootstrap,
  deps: WorkerHandlerDeps,
  logger: Logger,
  nr: NodeRuntime,
  extra: Pick<CriWorkerDeps, 'sandbox' | 'podNetwork' | 'netns' | 'afterGc' | 'nodeKeyring' | 'imagesInUse' | 'podUidsInRuntime' | 'stats'>,
): WorkerHandler {
  const criDeps: CriWorkerDeps = {
    runtime: nr.runtime,
    images: nr.images,
    nodeName: b.nodeName,
    rootDir: b.rootDir,
    podInfraContainerImage: b.podInfraContainerImage,
    clock: deps.clock ?? realClock,
    logger,
    logs: nr.logs,
    ...extra,
  };
  return async (task: WorkerTask): Promise<WorkerResult> => {
    const kind = (task as { kind?: unknown } | null)?.kind as keyof WorkerResultMap;
    try {
      if (task?.protocol !== PROTOCOL_VERSION) {
        throw new AgentError(
          'ERR_PROTOCOL',
          `task protocol ${JSON.stringify(task?.protocol)} does not match the worker's ${PROTOCOL_VERSION}`,
        );
      }
      return await runCriTask(criDeps, task);
    } catch (err) {
      return failed(logger, kind, err);
    }
  };
}

/** failed: the `{ok:false}` result of a task that threw, logged at the level its error deserves. */
function failed(logger: Logger, kind: keyof WorkerResultMap, err: unknown): WorkerResult {
  const error = serializeError(err);
  // Error messages quote pod-provided text (image names): logged bounded (logging.ts). The main
  // thread's runtime state logs the runtime going down and coming back, once each.
  if (kind === 'runtimeStatus') logger.debug({ taskKind: kind, err: boundedErr(err) }, 'Worker task failed');
  else if (error.retriable) logger.warn({ taskKind: kind, err: boundedErr(err) }, 'Worker task failed');
  else logger.error({ taskKind: kind, err: boundedErr(err) }, 'Worker task failed');
  return { ok: false, kind, error };
}

let defaultHandler: WorkerHandler | undefined;
let bootstrapError: unknown;

/**
 * The piscina entry (`filename` of the pool): runs one task with the handler built from this
 * thread's `workerData` (built on first use). Never throws: a bad bootstrap or task comes back as
 * `{ok:false, kind, error}`.
 */
export default async function runTask(task: WorkerTask): Promise<WorkerResult> {
  if (!defaultHandler && bootstrapError === undefined) {
    try {
      defaultHandler = createWorkerHandler(workerData as WorkerBootstrap, undefined, { clock: realClock });
    } catch (err) {
      bootstrapError = err;
    }
  }
  if (!defaultHandler) {
    const kind = (task as { kind?: unknown } | null)?.kind as keyof WorkerResultMap;
    return { ok: false, kind, error: serializeError(bootstrapError) };
  }
  return defaultHandler(task);
}
