/**
 * Counterpart of pkg/kubelet/kuberuntime/kuberuntime_manager.go KillPod / killPodWithSyncResult
 * and kuberuntime_container.go killContainer / killContainersWithSyncResult /
 * removeContainer, over the CRI: StopContainer (after the preStop hook, by ExecSync), then
 * StopPodSandbox (the runtime tears the network down), RemoveContainer / RemovePodSandbox and,
 * with the pod's removal, its directories (kubelet_pods.go cleanup; kuberuntime_gc.go removes the
 * pod's log directory, which containerd leaves).
 */
import type { Clock } from '../../shared/clock.js';
import { isDeadlineExceeded } from '../runtime/cri/deadline.js';
import { rm } from 'node:fs/promises';
import { AgentError, isNotFound, isUnavailable, serializeError } from '../../shared/errors.js';
import type { KillPodTask, PodSyncResult } from '../../shared/sync-tasks.js';
import type { RuntimeContainer, RuntimePod } from '../../shared/runtime-pod.js';
import type { NodeSandboxSettings } from '../../shared/node-settings.js';
import type { Logger } from '../../shared/logging.js';
import { isGracePeriodFromLabels, kDefaultTerminationGracePeriodSeconds } from '../../shared/pod-policy.js';
import type { Pod } from '../../shared/api.js';
import type { ImageManagerService, RuntimeService } from '../runtime/cri/services.js';
import { removePodCgroup } from '../cm/pod-cgroup.js';
import type { NodeKeyring } from '../images/image-puller.js';
import { unmountUnder } from '../volumes/mount.js';
import { removeCriContainer } from './remove-container.js';
import { getCriRuntimePod } from './runtime-pod.js';
import { runPreStopHook } from './hooks.js';
import { podDir, podLogsDirectory } from '../kubetypes/pod-dirs.js';
import { fillTerminationMessageFiles, type LogTailer } from './termination-message.js';

/** What a sync or a kill on a CRI runtime needs (one per worker thread). */
export interface CriSyncDeps {
  /** The CRI runtime service (node scope: every List filters on `kubelet-ts.node-name`). */
  runtime: RuntimeService;
  /** The CRI image service. */
  images: ImageManagerService;
  nodeName: string;
  /** --root-dir, absolute. */
  rootDir: string;
  /** The root of the pods' CRI log directories (the kubelet's podLogsDir, `/var/log/pods` upstream), absolute. */
  podLogsDir: string;
  /** The thread's Clock (shared/clock.ts): the sync's deadline, backoff and preStop times. */
  clock: Clock;
  logger?: Logger;
  /** The node's sandbox settings (DNS, pod cgroups, pids); absent: no DNS config, no pod cgroup. */
  sandbox?: NodeSandboxSettings;
  /**
   * Whether the runtime gives sandboxes a pod network (absent = true: a CRI runtime's CNI). With
   * it, a ready sandbox of a pod that is not hostNetwork without an IP is re-created
   * (podSandboxChanged); false for dockershim with `--network-plugin none`, whose sandboxes have none.
   */
  podNetwork?: boolean;
  /** The runtime's log tail (NodeRuntime.logs), for FallbackToLogsOnError termination messages; absent = none. */
  logs?: LogTailer;
  /** The node's registry credentials (`--image-pull-credentials`, images/image-puller.ts newNodeKeyring); absent = none. */
  nodeKeyring?: NodeKeyring;
  /** The image IDs every container of the runtime uses, any owner's (image GC keeps them); absent = this node's ListContainers. */
  imagesInUse?: () => Promise<ReadonlySet<string>>;
}

/**
 * kOrphanMaxGracePeriodSeconds: the most a pod whose spec is gone (housekeeping's leftovers, old
 * runtime copies; a kill with a negative grace period) gets to stop: the grace period on its
 * containers' label, at most this (seconds). A label is whatever the spec said when the container
 * was made, and 30 days would keep a leftover running for 30 days. The kubelet is harsher: it kills
 * such orphans with a 1 s override (kubelet_pods.go HandlePodCleanups, "Clean up orphaned pod
 * containers"), which killContainer raises to minimumGracePeriodInSeconds (2 s). We keep the label
 * below the cap (a static pod whose manifest went away while the agent was down still gets the
 * graceful stop it asked for) and use the apiserver's default terminationGracePeriodSeconds (30 s),
 * what a pod that never said gets, as the cap.
 */
export const kOrphanMaxGracePeriodSeconds = kDefaultTerminationGracePeriodSeconds;

/**
 * Extras of stopContainers (all optional): with `pod`, containers whose spec has a preStop hook
 * run it before SIGTERM (`hostIp` serves httpGet hooks of hostNetwork pods); `messages` replace
 * the Killing event's message and `gracePeriods` the grace period (seconds), by container ID;
 * `podIp` (status.podIP) is where httpGet hooks of a pod on the pod network go.
 */
export interface StopOptions {
  pod?: Pod;
  hostIp?: string;
  podIp?: string;
  messages?: Record<string, string>;
  gracePeriods?: Record<string, number>;
}

type StepSink = Pick<PodSyncResult, 'steps' | 'events'>;

/**
 * stopCriContainers stops the live app containers of `containers` in parallel: a Killing event,
 * the preStop hook (ExecSync or httpGet; it shares the grace period), then StopContainer with
 * what is left of the grace period (seconds). One `KillContainer` step each; a container gone
 * counts as stopped. Resolves true if anything was stopped.
 * @throws AgentError ERR_RUNTIME_UNAVAILABLE (the rest is pointless then).
 */
export async function stopCriContainers(
  deps: CriSyncDeps,
  containers: RuntimeContainer[],
  gracePeriodSeconds: number,
  out: StepSink,
  opts: StopOptions = {},
): Promise<boolean> {
  const live = containers.filter((c) => !c.sandbox && c.state !== 'exited');
  let unavailable: unknown;
  await Promise.all(
    live.map(async (c) => {
      const list = opts.pod?.spec?.initContainers?.some((i) => i.name === c.name) ? 'initContainers' : 'containers';
      out.events.push({
        type: 'Normal',
        reason: 'Killing',
        message: opts.messages?.[c.id] ?? `Stopping container ${c.name}`,
        fieldPath: `spec.${list}{${c.name}}`,
      });
      try {
        let grace = opts.gracePeriods?.[c.id] ?? gracePeriodSeconds;
        if (c.state === 'running' && opts.pod)
          grace = await runPreStopHook(
            deps.runtime,
            opts.pod,
            { ...c, sandboxId: '' },
            grace,
            opts.hostIp ?? '127.0.0.1',
            out,
            deps.clock,
            opts.podIp ?? '',
          );
        await deps.runtime.stopContainer(c.id, grace);
        out.steps.push({ action: 'KillContainer', target: c.name, ok: true });
      } catch (err) {
        if (isNotFound(err)) return void out.steps.push({ action: 'KillContainer', target: c.name, ok: true });
        if (isUnavailable(err)) unavailable = err;
        out.steps.push({
          action: 'KillContainer',
          target: c.name,
          ok: false,
          reason: 'KillContainerError',
          message: serializeError(err).message,
        });
      }
    }),
  );
  if (unavailable) throw unavailable;
  return live.length > 0;
}

/**
 * killCriPod, as killPodWithSyncResult: the app containers (stopCriContainers), then
 * StopPodSandbox of every sandbox not yet stopped (`KillPodSandbox` steps; the runtime stops
 * what is left and tears the network down). Resolves true if anything was stopped.
 * @throws AgentError ERR_RUNTIME_UNAVAILABLE.
 */
export async function killCriPod(
  deps: CriSyncDeps,
  runtimePod: RuntimePod,
  gracePeriodSeconds: number,
  out: StepSink,
  opts: StopOptions = {},
): Promise<boolean> {
  const a = await stopCriContainers(deps, runtimePod.containers, gracePeriodSeconds, out, opts);
  const live = runtimePod.sandboxes.filter((s) => s.state !== 'exited');
  for (const s of live) {
    try {
      await deps.runtime.stopPodSandbox(s.id);
      out.steps.push({ action: 'KillPodSandbox', target: 'POD', ok: true });
    } catch (err) {
      if (isUnavailable(err)) throw err;
      if (!isNotFound(err))
        out.steps.push({
          action: 'KillPodSandbox',
          target: 'POD',
          ok: false,
          reason: 'KillPodSandboxError',
          message: serializeError(err).message,
        });
    }
  }
  return a || live.length > 0;
}

/**
 * removeCriContainers: RemoveContainer for the app containers (in parallel), then RemovePodSandbox
 * for the sandboxes (kuberuntime_gc.go's order), a `RemoveContainer` step each; one already gone counts as removed. Best effort.
 * @throws AgentError ERR_RUNTIME_UNAVAILABLE.
 */
export async function removeCriContainers(
  deps: CriSyncDeps,
  containers: Array<Pick<RuntimeContainer, 'id' | 'name' | 'sandbox'>>,
  out: StepSink,
): Promise<boolean> {
  let unavailable: unknown;
  const removeAll = (list: typeof containers) =>
    Promise.all(
      list.map(async (c) => {
        try {
          await (c.sandbox ? deps.runtime.removePodSandbox(c.id) : removeCriContainer(deps.runtime, c.id));
          out.steps.push({ action: 'RemoveContainer', target: c.name, ok: true });
        } catch (err) {
          if (isNotFound(err)) return void out.steps.push({ action: 'RemoveContainer', target: c.name, ok: true });
          if (isUnavailable(err)) unavailable = err;
          out.steps.push({
            action: 'RemoveContainer',
            target: c.name,
            ok: false,
            reason: 'RemoveContainerError',
            message: serializeError(err).message,
          });
        }
      }),
    );
  // The app containers first, then the sandboxes: RemovePodSandbox removes the sandbox's containers
  // itself, and containerd refuses a RemoveContainer racing it ("already in removing state").
  await removeAll(containers.filter((c) => !c.sandbox));
  await removeAll(containers.filter((c) => c.sandbox));
  if (unavailable) throw unavailable;
  return containers.length > 0;
}

/**
 * killCriPodTask carries out a KillPodTask on a CRI runtime (killPod's contract): stop within the
 * grace period (negative: the one on the sandbox's annotation, at most
 * kOrphanMaxGracePeriodSeconds), and with `remove` remove every container and sandbox, unmount
 * and remove `{rootDir}/pods/{uid}`, remove the pod's log directory and its pod cgroup. Resolves
 * with the pod as read afterwards. Idempotent.
 * @throws AgentError ERR_RUNTIME_UNAVAILABLE, ERR_INVALID_ARGUMENT for an unsafe UID, ERR_NETWORK
 * (retriable; the kubelet's teardown wording) or ERR_RUNTIME when a StopPodSandbox failed — then
 * nothing is removed (killPodWithSyncResult's error; the pod worker retries).
 */
export async function killCriPodTask(deps: CriSyncDeps, task: KillPodTask): Promise<PodSyncResult> {
  const dir = podDir(deps.rootDir, task.podUid);
  const result: PodSyncResult = {
    podUid: task.podUid,
    steps: [],
    events: [],
    runtimePod: null,
    waiting: {},
    backoff: {},
    requeueAfterMs: 0,
  };
  let read = await getCriRuntimePod(deps.runtime, deps.nodeName, task.podUid);
  let runtimePod = read.runtimePod;
  const requested = isGracePeriodFromLabels(task.gracePeriodSeconds)
    ? Math.min(runtimePod?.terminationGracePeriodSeconds ?? kOrphanMaxGracePeriodSeconds, kOrphanMaxGracePeriodSeconds)
    : task.gracePeriodSeconds;
  const grace = Math.max(0, Math.floor(requested));
  let changed = false;
  if (runtimePod)
    changed = await killCriPod(deps, runtimePod, grace, result, { pod: task.pod, hostIp: task.hostIp, podIp: runtimePod.podIp });
  const sandboxFailed = result.steps.find((s) => !s.ok && s.action === 'KillPodSandbox');
  // A stop that passed its deadline (the runtime wedged: grace + --runtime-request-timeout) does not
  // fail the kill: its step says so, and the removal that follows (RemoveContainer/RemovePodSandbox)
  // kills what is left by force, so a DELETE completes (issue #38 finding 7; upstream would retry the
  // stop for ever). Any other failed StopPodSandbox (the network's DEL) fails the kill.
  const stopWedged = isDeadlineExceeded({ message: sandboxFailed?.message });
  if (sandboxFailed && !stopWedged) {
    // As killPodWithSyncResult: a StopPodSandbox that failed (e.g. the network's DEL) fails the
    // kill; nothing is removed and the pod worker retries it.
    const msg = sandboxFailed.message ?? 'StopPodSandbox failed';
    throw new AgentError(msg.startsWith('networkPlugin cni failed to teardown') ? 'ERR_NETWORK' : 'ERR_RUNTIME', msg, { retriable: true });
  }
  if (task.remove) {
    if (runtimePod) changed = (await removeCriContainers(deps, [...runtimePod.containers, ...runtimePod.sandboxes], result)) || changed;
    await unmountUnder(dir);
    await rm(dir, { recursive: true, force: true });
    const name = runtimePod?.name || task.pod?.metadata?.name;
    const namespace = runtimePod?.namespace || task.pod?.metadata?.namespace;
    if (name && namespace) await rm(podLogsDirectory(deps.podLogsDir, namespace, name, task.podUid), { recursive: true, force: true });
    if (deps.sandbox?.cgroupsPerQOS) {
      const left = await removePodCgroup(task.podUid, deps.sandbox.cgroupRoot);
      if (left.length) deps.logger?.warn({ uid: task.podUid, errors: left.slice(0, 3) }, 'Failed to remove the pod cgroup');
    }
  }
  if (changed) {
    read = await getCriRuntimePod(deps.runtime, deps.nodeName, task.podUid);
    runtimePod = read.runtimePod;
  }
  if (!task.remove) await fillTerminationMessageFiles(deps.rootDir, runtimePod, read.annotations, deps.logs);
  result.runtimePod = runtimePod;
  return result;
}
