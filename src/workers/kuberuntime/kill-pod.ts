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
import { getCriRuntimePod, statusToRuntimeContainer, type CriPodRead } from './runtime-pod.js';
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
  /** Where the cgroup v1 hierarchies are mounted (absent: /sys/fs/cgroup, kCgroupMount); tests give a directory of their own. */
  cgroupMount?: string;
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
 * Each app container's log files go first (removeCriContainer: a ContainerStatus for its `log_path`),
 * unless `opts.logsGoWithPod`: the caller removes the pod's whole log directory next, which holds
 * them (killCriPodTask's removal of a pod; on Docker the json-file goes with the container anyway).
 * @throws AgentError ERR_RUNTIME_UNAVAILABLE.
 */
export async function removeCriContainers(
  deps: CriSyncDeps,
  containers: Array<Pick<RuntimeContainer, 'id' | 'name' | 'sandbox'>>,
  out: StepSink,
  opts: { logsGoWithPod?: boolean } = {},
): Promise<boolean> {
  let unavailable: unknown;
  const removeOne = (c: (typeof containers)[number]) =>
    c.sandbox
      ? deps.runtime.removePodSandbox(c.id)
      : opts.logsGoWithPod
        ? deps.runtime.removeContainer(c.id)
        : removeCriContainer(deps.runtime, c.id);
  const removeAll = (list: typeof containers) =>
    Promise.all(
      list.map(async (c) => {
        try {
          await removeOne(c);
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
 * readBackStopped: the pod after a kill whose every stop succeeded, without reading it whole:
 * `before` (what the kill worked from) with a ContainerStatus of each container it stopped (those
 * not exited before; in parallel; one removed meanwhile is left out), each sandbox as exited, and
 * no pod IP (what a whole read, getCriRuntimePod, says of a stopped pod). Those ContainerStatus
 * calls give what the final status shows (exit codes, finish times, reasons); anything else is the
 * PLEG's to report, as the kubelet reads a killed pod on the relist that follows its KillPod
 * (pkg/kubelet/kuberuntime/kuberuntime_manager.go KillPod reads nothing back; generic.go relist).
 * The annotations are the stopped containers' only.
 * @throws AgentError from ContainerStatus (ERR_RUNTIME_UNAVAILABLE, …), never not-found.
 */
async function readBackStopped(runtime: RuntimeService, before: RuntimePod): Promise<CriPodRead> {
  const annotations = new Map<string, Record<string, string>>();
  const containers = await Promise.all(
    before.containers.map(async (c) => {
      if (c.state === 'exited') return c;
      const st = await runtime.containerStatus(c.id).then(
        (r) => r.status,
        (err: unknown) => {
          if (isNotFound(err)) return null;
          throw err;
        },
      );
      if (!st) return null;
      annotations.set(c.id, st.annotations);
      return statusToRuntimeContainer(st, c.sandboxId);
    }),
  );
  return {
    runtimePod: {
      ...before,
      sandboxes: before.sandboxes.map((s) => (s.state === 'exited' ? s : { ...s, state: 'exited' as const })),
      containers: containers.filter((c): c is RuntimeContainer => c !== null),
      podIp: '',
    },
    annotations,
  };
}

/**
 * killCriPodTask carries out a KillPodTask on a CRI runtime (killPod's contract): stop within the
 * grace period (negative: the one on the sandbox's annotation, at most
 * kOrphanMaxGracePeriodSeconds), and with `remove` remove every container and sandbox, unmount
 * and remove `{rootDir}/pods/{uid}`, remove the pod's log directory and its pod cgroup. Idempotent.
 *
 * It works from the pod the task carries (`cachedRuntimePod`, or nothing with `knownAbsent`), else
 * reads it (getCriRuntimePod). Resolves with the pod afterwards: as it was when nothing changed;
 * null once a removal removed everything; after stops that all succeeded, readBackStopped (a
 * ContainerStatus of each container stopped); after a failed step, the pod read again whole.
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
  // What the main thread knows of the pod (the kubelet's KillPod works from its pod cache), else a read.
  const read = task.cachedRuntimePod || task.knownAbsent ? null : await getCriRuntimePod(deps.runtime, deps.nodeName, task.podUid);
  const runtimePod = read ? read.runtimePod : (task.cachedRuntimePod ?? null);
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
    const name = runtimePod?.name || task.pod?.metadata?.name;
    const namespace = runtimePod?.namespace || task.pod?.metadata?.namespace;
    const logsDir = name && namespace ? podLogsDirectory(deps.podLogsDir, namespace, name, task.podUid) : '';
    if (runtimePod)
      changed =
        (await removeCriContainers(deps, [...runtimePod.containers, ...runtimePod.sandboxes], result, { logsGoWithPod: logsDir !== '' })) ||
        changed;
    await unmountUnder(dir);
    await rm(dir, { recursive: true, force: true });
    if (logsDir) await rm(logsDir, { recursive: true, force: true });
    if (deps.sandbox?.cgroupsPerQOS) {
      const left = await removePodCgroup(task.podUid, deps.sandbox.cgroupRoot);
      if (left.length) deps.logger?.warn({ uid: task.podUid, errors: left.slice(0, 3) }, 'Failed to remove the pod cgroup');
    }
  }
  result.runtimePod = await podAfterKill(deps, task, runtimePod, read, changed, result);
  return result;
}

/**
 * podAfterKill: the pod once killCriPodTask is done (see there), with the termination messages of
 * the containers it (re)read filled when it only stopped (fillTerminationMessageFiles).
 */
async function podAfterKill(
  deps: CriSyncDeps,
  task: KillPodTask,
  before: RuntimePod | null,
  read: CriPodRead | null,
  changed: boolean,
  result: PodSyncResult,
): Promise<RuntimePod | null> {
  if (task.remove && changed && result.steps.every((s) => s.action !== 'RemoveContainer' || s.ok)) return null;
  let after: CriPodRead = read ?? { runtimePod: before, annotations: new Map() };
  // Whose termination message to fill: every container this task read (a cached pod's were filled by the read it came from).
  let readNow: (c: RuntimeContainer) => boolean = () => read !== null;
  if (changed) {
    const stopsOk = result.steps.every((s) => s.ok || (s.action !== 'KillContainer' && s.action !== 'KillPodSandbox'));
    if (!task.remove && before && stopsOk) {
      const back = await readBackStopped(deps.runtime, before);
      const annotations = new Map([...(read?.annotations ?? []), ...back.annotations]);
      after = { runtimePod: back.runtimePod, annotations };
      readNow = (c) => read !== null || back.annotations.has(c.id);
    } else {
      after = await getCriRuntimePod(deps.runtime, deps.nodeName, task.podUid);
      readNow = () => true;
    }
  }
  const pod = after.runtimePod;
  if (!task.remove && pod)
    await fillTerminationMessageFiles(deps.rootDir, { ...pod, containers: pod.containers.filter(readNow) }, after.annotations, deps.logs);
  return pod;
}
