/**
 * The Piscina worker entry: the worker-thread half of the kubelet's pod workers
 * (pkg/kubelet/pod_workers.go → kuberuntime SyncPod/KillPod), plus the PLEG's relist, the
 * prober's exec and network probes, container/image GC, the runtime status check and the stats
 * collection: task kinds syncPod, killPod, relist, execProbe, netProbe, grpcProbe, gc, runtimeStatus, stats.
 * Each task is plain data (shared/messages.ts); the handler never throws (STYLE.md C5).
 */
import path from 'node:path';
import { workerData } from 'node:worker_threads';
import { AgentError, InvalidArgumentError, serializeError } from '../shared/errors.js';
import { boundedErr, newLogger, type Logger } from '../shared/logging.js';
import { kDefaultNodeSandboxSettings, PROTOCOL_VERSION, type WorkerBootstrap, type WorkerResult, type WorkerResultMap, type WorkerTask } from '../shared/messages.js';
import { runExecProbe } from './probes/exec-probe.js';
import { killPod } from './kuberuntime/kill-pod.js';
import { runGrpcProbe } from './probes/grpc-probe.js';
import { runNetProbe } from './probes/net-probe.js';
import { readRuntimePods, relist } from './kuberuntime/relist.js';
import type { FakeWorkerBootstrap } from '../shared/fake-runtime-tuning.js';
import { scopeToNode } from './runtime/node-scope.js';
import { getRuntime } from './runtime/runtime-service.js';
import { getRuntime as getNodeRuntime } from './runtime/node-runtime.js';
import { runCriTask } from './kuberuntime/cri-worker-tasks.js';
import { checkRuntimeEndpoint } from '../shared/runtime-endpoint.js';
import type { ContainerRuntime } from './runtime/runtime.js';
import { syncPod, type SyncDeps } from './kuberuntime/sync-pod.js';
import { newImagePuller } from './images/image-puller.js';
import { runGc } from './kuberuntime/gc.js';
import { collectStats } from './stats/collect-stats.js';
import { newPodNetwork } from './network/network-service.js';
import { kNoopPodNetwork, type PodNetwork } from './network/pod-network.js';

/** A worker handler: one task in, one WorkerResult out; never rejects. */
export type WorkerHandler = (task: WorkerTask) => Promise<WorkerResult>;

/** Extra dependencies for createWorkerHandler (tests). */
export interface WorkerHandlerDeps {
  /** Clock, epoch ms (default Date.now). */
  now?: () => number;
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
  if (w.protocol !== PROTOCOL_VERSION) throw new InvalidArgumentError(`workerData.protocol must be ${PROTOCOL_VERSION}, got ${JSON.stringify(w.protocol)}`);
  if (w.runtime === undefined) throw new InvalidArgumentError('workerData.runtime must be set');
  checkRuntimeEndpoint(w);
  if (typeof w.nodeName !== 'string' || !w.nodeName) throw new InvalidArgumentError('workerData.nodeName must be a non-empty string');
  if (typeof w.rootDir !== 'string' || !path.isAbsolute(w.rootDir)) throw new InvalidArgumentError(`workerData.rootDir must be an absolute path, got ${JSON.stringify(w.rootDir)}`);
  if (typeof w.podInfraContainerImage !== 'string' || !w.podInfraContainerImage) throw new InvalidArgumentError('workerData.podInfraContainerImage must be a non-empty string');
  return w as WorkerBootstrap;
}

/**
 * createWorkerHandler builds the task handler for one thread from its bootstrap. The runtime is
 * `runtime` if given, else this thread's runtime per `bootstrap.runtime` (getRuntime); either way
 * wrapped by scopeToNode so only this node's containers are seen
 * or touched. The handler checks `task.protocol`, dispatches on `task.kind` and returns
 * `{ok:true, kind, value}` or `{ok:false, kind, error}` — it never rejects.
 * @throws InvalidArgumentError for a bad bootstrap (see validateBootstrap).
 */
export function createWorkerHandler(bootstrap: WorkerBootstrap, runtime?: ContainerRuntime, deps: WorkerHandlerDeps = {}): WorkerHandler {
  const b = validateBootstrap(bootstrap);
  const logger = deps.logger ?? newLogger(b.logLevel || 'info').child({ component: 'sync-worker', node: b.nodeName });
  if (!runtime && b.runtime === 'remote') return criWorkerHandler(b, deps, logger);
  const raw = runtime ?? getRuntime(b as FakeWorkerBootstrap);
  const scoped = scopeToNode(raw, b.nodeName);
  const syncDeps: SyncDeps = {
    runtime: scoped,
    nodeName: b.nodeName,
    rootDir: b.rootDir,
    podInfraContainerImage: b.podInfraContainerImage,
    now: deps.now ?? Date.now,
    logger,
    imagePuller: newImagePuller(scoped, { rootDir: b.rootDir, credentialsFile: b.imagePullCredentials ?? '' }),
    // Host files, cgroups and Docker options only for real containers (the fake runtime has none).
    sandbox: b.runtime === 'docker' ? { ...kDefaultNodeSandboxSettings, ...b.sandbox } : undefined,
    // The pod network only for real sandboxes (the fake runtime has no netns): CNI per b.network.
    network: deps.network ?? (b.runtime === 'docker' ? newPodNetwork(b.network, logger) : kNoopPodNetwork),
    ...(b.network?.hostPortIp ? { hostPortIp: b.network.hostPortIp } : {}),
  };
  return async (task: WorkerTask): Promise<WorkerResult> => {
    const kind = (task as { kind?: unknown } | null)?.kind as keyof WorkerResultMap;
    try {
      if (task?.protocol !== PROTOCOL_VERSION) {
        throw new AgentError('ERR_PROTOCOL', `task protocol ${JSON.stringify(task?.protocol)} does not match the worker's ${PROTOCOL_VERSION}`);
      }
      switch (task.kind) {
        case 'syncPod':
          return { ok: true, kind: 'syncPod', value: await syncPod(syncDeps, task) };
        case 'killPod':
          return { ok: true, kind: 'killPod', value: await killPod(syncDeps, task) };
        case 'relist': {
          const value = await relist(syncDeps.runtime, b.nodeName, syncDeps.now, task.withPodNames);
          if (task.withRuntimePods) value.runtimePods = await readRuntimePods(syncDeps.runtime, value.containers, syncDeps.network);
          return { ok: true, kind: 'relist', value };
        }
        case 'execProbe':
          return { ok: true, kind: 'execProbe', value: await runExecProbe(syncDeps.runtime, task) };
        case 'netProbe':
          return { ok: true, kind: 'netProbe', value: await runNetProbe(syncDeps.runtime, task) };
        case 'grpcProbe':
          return { ok: true, kind: 'grpcProbe', value: await runGrpcProbe(syncDeps.runtime, task) };
        case 'gc':
          return { ok: true, kind: 'gc', value: await runGc({ ...syncDeps, imageRuntime: raw }, task) };
        case 'stats':
          return { ok: true, kind: 'stats', value: await collectStats({ runtime: scoped, rootDir: b.rootDir, cgroupRoot: b.runtime === 'docker' && syncDeps.sandbox?.cgroupsPerQOS ? syncDeps.sandbox.cgroupRoot : '', now: syncDeps.now }, task) };
        case 'runtimeStatus':
          await raw.status();
          return { ok: true, kind: 'runtimeStatus', value: { observedAtMs: syncDeps.now() } };
        default:
          throw new AgentError('ERR_PROTOCOL', `unknown task kind ${JSON.stringify(kind)}`);
      }
    } catch (err) {
      return failed(logger, kind, err);
    }
  };
}

/**
 * criWorkerHandler: the handler of a thread on a CRI runtime (`runtime: 'remote'`): every task
 * through the node-scoped CRI services of getRuntime (runtime/node-runtime.ts) and
 * kuberuntime/cri-worker-tasks.ts.
 */
function criWorkerHandler(b: WorkerBootstrap, deps: WorkerHandlerDeps, logger: Logger): WorkerHandler {
  const nr = getNodeRuntime(b);
  const criDeps = {
    runtime: nr.runtime, images: nr.images, nodeName: b.nodeName, rootDir: b.rootDir, podInfraContainerImage: b.podInfraContainerImage,
    now: deps.now ?? Date.now, logger, sandbox: { ...kDefaultNodeSandboxSettings, ...b.sandbox }, logs: nr.logs,
  };
  return async (task: WorkerTask): Promise<WorkerResult> => {
    const kind = (task as { kind?: unknown } | null)?.kind as keyof WorkerResultMap;
    try {
      if (task?.protocol !== PROTOCOL_VERSION) {
        throw new AgentError('ERR_PROTOCOL', `task protocol ${JSON.stringify(task?.protocol)} does not match the worker's ${PROTOCOL_VERSION}`);
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
      defaultHandler = createWorkerHandler(workerData as WorkerBootstrap);
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
