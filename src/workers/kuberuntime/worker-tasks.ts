/**
 * The worker tasks of sync.worker.ts on a CRI runtime (`runtime: 'remote'`): what the kubelet's
 * kuberuntime manager (SyncPod, KillPod, GetPods for the PLEG's relist, GarbageCollect), prober
 * (exec probes by ExecSync) and status checks do over the CRI alone — on every runtime: a CRI
 * runtime over gRPC, and the runtimes behind dockershim's translation (../runtime/node-runtime.ts).
 */
import type { Clock } from '../../shared/clock.js';
import { AgentError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { WorkerResult } from '../../shared/thread-wire.js';
import type { GcResult, StatsTask, WorkerTask } from '../../shared/sync-tasks.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import type { NodeSandboxSettings } from '../../shared/node-settings.js';
import type { StatsSample } from '../../shared/stats.js';
import { runExecSyncProbe } from '../probes/exec-probe.js';
import { runGrpcProbe } from '../probes/grpc-probe.js';
import { runNetProbe } from '../probes/net-probe.js';
import type { ImageManagerService, RuntimeService } from '../runtime/cri/services.js';
import type { ContainerRuntime } from '../runtime/container/runtime.js';
import { collectCriStats } from '../stats/collect-cri-stats.js';
import { runCriGc, type CriGcDeps } from './gc.js';
import { killCriPodTask, type CriSyncDeps } from './kill-pod.js';
import { criRelist, getCriRuntimePod } from './runtime-pod.js';
import { syncPodCri } from './sync-pod.js';
import { podLogsRoot } from '../kubetypes/pod-dirs.js';
import type { LogTailer } from './termination-message.js';

/** What the CRI tasks of one thread need. */
export interface CriWorkerDeps {
  /** The node-scoped CRI runtime service (NodeRuntime.runtime). */
  runtime: RuntimeService;
  images: ImageManagerService;
  nodeName: string;
  rootDir: string;
  podInfraContainerImage: string;
  /** The thread's one Clock (shared/clock.ts): every time read and timer of the tasks. */
  clock: Clock;
  logger?: Logger;
  /** The node's sandbox settings; absent (the fake runtime): no DNS config, no pod cgroup. */
  sandbox?: NodeSandboxSettings;
  /** Whether sandboxes get a pod network (CriSyncDeps.podNetwork); absent = true. */
  podNetwork?: boolean;
  /**
   * dockershim's runtimes: the node-scoped ContainerRuntime the network probes use to enter the
   * sandbox's netns when the pod has no IP (`--network-plugin none`); absent on a CRI runtime.
   */
  netns?: ContainerRuntime;
  /**
   * Runtime housekeeping after each container GC, its failures added to the result's `errors`
   * (dockershim: release the pod network of sandboxes that are gone); absent = none.
   */
  afterGc?: (result: GcResult) => Promise<void>;
  /**
   * The stats task where the runtime has its own collector (dockershim's engine: runtime/docker/collect-stats.ts,
   * whose cAdvisor labels carry the cgroup path and the engine's container name, as cAdvisor's
   * container handlers); absent = collectCriStats.
   */
  stats?: (task: StatsTask) => Promise<StatsSample>;
  /** The node's registry credentials (CriSyncDeps.nodeKeyring); absent = none. */
  nodeKeyring?: CriSyncDeps['nodeKeyring'];
  /** The images any owner's containers use (CriSyncDeps.imagesInUse); absent = this node's. */
  imagesInUse?: CriSyncDeps['imagesInUse'];
  /** The pod UIDs any owner has in the runtime (CriGcDeps.podUidsInRuntime: orphaned pod cgroups); absent = unknown. */
  podUidsInRuntime?: CriGcDeps['podUidsInRuntime'];
  /** The runtime's log tail (NodeRuntime.logs), for FallbackToLogsOnError termination messages. */
  logs?: LogTailer;
}

/**
 * noNetns: the ContainerRuntime the network probes get on a CRI runtime. A pod on the runtime's
 * network has an IP, so its probes go to that IP (no `sandboxId`); a probe inside a sandbox's
 * netns (a pod without an IP) has no engine inspect to find it and reports why.
 */
const noNetns = {
  inspectContainer: () =>
    Promise.reject(
      new AgentError(
        'ERR_RUNTIME',
        'a probe inside the sandbox network namespace cannot run on a CRI runtime: the pod is probed on its IP, and this pod has none',
      ),
    ),
} as unknown as ContainerRuntime;

/**
 * runCriTask runs one task on the CRI: syncPod → syncPodCri, killPod → killCriPodTask, relist →
 * criRelist (with `withRuntimePods`, getCriRuntimePod of each pod), execProbe → ExecSync, netProbe
 * and grpcProbe on the pod's IP, gc → runCriGc, stats → collectCriStats, runtimeStatus → Status
 * (RuntimeReady must be true). Resolves the `{ok:true}` result.
 * @throws AgentError from the runtime, or ERR_PROTOCOL for an unknown kind.
 */
export async function runCriTask(d: CriWorkerDeps, task: WorkerTask): Promise<WorkerResult> {
  const deps: CriSyncDeps = { ...d, podLogsDir: podLogsRoot(d.rootDir) };
  switch (task.kind) {
    case 'syncPod':
      return { ok: true, kind: 'syncPod', value: await syncPodCri(deps, task) };
    case 'killPod':
      return { ok: true, kind: 'killPod', value: await killCriPodTask(deps, task) };
    case 'relist': {
      const value = await criRelist(d.runtime, d.nodeName, d.clock, task.withPodNames);
      if (task.withRuntimePods) {
        const uids = [...new Set(value.containers.map((c) => c.podUid).filter(Boolean))];
        const pods = await Promise.all(
          uids.map((uid) =>
            getCriRuntimePod(d.runtime, d.nodeName, uid).then(
              (r) => r.runtimePod,
              () => null,
            ),
          ),
        );
        value.runtimePods = pods.filter((p): p is RuntimePod => p !== null);
      }
      return { ok: true, kind: 'relist', value };
    }
    case 'execProbe':
      return { ok: true, kind: 'execProbe', value: await runExecSyncProbe(d.runtime, task) };
    case 'netProbe':
      return { ok: true, kind: 'netProbe', value: await runNetProbe(d.netns ?? noNetns, task, d.clock) };
    case 'grpcProbe':
      return { ok: true, kind: 'grpcProbe', value: await runGrpcProbe(d.netns ?? noNetns, task, d.clock) };
    case 'gc': {
      const value = await runCriGc({ ...deps, podInfraContainerImage: d.podInfraContainerImage }, task);
      await d.afterGc?.(value);
      return { ok: true, kind: 'gc', value };
    }
    case 'stats':
      if (d.stats) return { ok: true, kind: 'stats', value: await d.stats(task) };
      return {
        ok: true,
        kind: 'stats',
        value: await collectCriStats(
          {
            runtime: d.runtime,
            images: d.images,
            rootDir: d.rootDir,
            cgroupRoot: d.sandbox?.cgroupsPerQOS ? d.sandbox.cgroupRoot : '',
            clock: d.clock,
          },
          task,
        ),
      };
    case 'runtimeStatus': {
      const ready = (await d.runtime.status()).status?.conditions.find((c) => c.type === 'RuntimeReady');
      if (ready && !ready.status)
        throw new AgentError('ERR_RUNTIME_UNAVAILABLE', `container runtime is not ready: ${ready.reason}: ${ready.message}`, {
          retriable: true,
        });
      return { ok: true, kind: 'runtimeStatus', value: { observedAtMs: d.clock.now() } };
    }
    default:
      throw new AgentError('ERR_PROTOCOL', `unknown task kind ${JSON.stringify((task as { kind?: unknown }).kind)}`);
  }
}
