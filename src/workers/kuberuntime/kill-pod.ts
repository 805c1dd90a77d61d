/**
 * Counterpart of kuberuntime's KillPod / killPodWithSyncResult / killContainersWithSyncResult
 * (kuberuntime_manager.go, kuberuntime_container.go) followed by syncTerminatedPod's cleanup:
 * stop a pod's containers within the grace period, then its sandbox; optionally remove it all.
 */
import { rm } from 'node:fs/promises';
import { AgentError, isNotFound, isRetriable, isUnavailable, serializeError } from '../../shared/errors.js';
import type { Pod } from '../../shared/api.js';
import type { KillPodTask, PodSyncResult, RuntimeContainer, RuntimePod } from '../../shared/messages.js';
import { isGracePeriodFromLabels, kDefaultTerminationGracePeriodSeconds } from '../../shared/pod-policy.js';
import { podDir } from './pod-dirs.js';
import { removePodCgroup } from '../cm/pod-cgroup.js';
import { runPreStopHook } from './hooks.js';
import { assembleRuntimePod, readPodDetails } from './runtime-pod.js';
import { recordSyncChanges } from './sync-read-back.js';
import { fillTerminationMessages } from './termination-message.js';
import type { SyncDeps } from './sync-pod.js';
import { unmountUnder } from '../volumes/mount.js';
import { tearDownSandboxNetwork } from './sandbox-network.js';
import { forgetCheckedSandbox } from './sandbox-check.js';
import { isDeadlineExceeded } from '../runtime/deadline.js';

type StepSink = Pick<PodSyncResult, 'steps' | 'events'>;

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

/** Seconds a sandbox gets to stop (dockershim's defaultSandboxGracePeriod); the pause process exits on SIGTERM at once. */
export const kSandboxGracePeriodSeconds = 10;

function failureMessage(err: unknown): string {
  return serializeError(err).message;
}

/**
 * stopContainers stops `containers` in parallel (Docker's stop: SIGTERM, SIGKILL after
 * `gracePeriodSeconds`), recording a `KillContainer` (or `KillPodSandbox`) step for each and a
 * Killing event (`Stopping container <name>`) for app containers. Exited ones are skipped; one
 * that vanished counts as stopped. Resolves to true if anything was stopped.
 * @throws AgentError when the runtime is unavailable (retriable): the rest is pointless.
 */
export async function stopContainers(deps: SyncDeps, containers: RuntimeContainer[], gracePeriodSeconds: number, out: StepSink, opts: StopOptions = {}): Promise<boolean> {
  const live = containers.filter((c) => c.state !== 'exited');
  const results = await Promise.allSettled(
    live.map(async (c) => {
      // An init container's (a sidecar's) events name spec.initContainers, as the kubelet's container ref.
      const list = opts.pod?.spec?.initContainers?.some((i) => i.name === c.name) ? 'initContainers' : 'containers';
      if (!c.sandbox) out.events.push({ type: 'Normal', reason: 'Killing', message: opts.messages?.[c.id] ?? `Stopping container ${c.name}`, fieldPath: `spec.${list}{${c.name}}` });
      try {
        let grace = opts.gracePeriods?.[c.id] ?? gracePeriodSeconds;
        // preStop runs first and shares the grace period (hooks.ts runPreStopHook).
        if (!c.sandbox && c.state === 'running' && opts.pod) grace = await runPreStopHook(deps.runtime, opts.pod, c, grace, opts.hostIp ?? '127.0.0.1', out, deps.now, opts.podIp ?? '');
        await stopOrForceRemove(deps, c.id, grace);
        out.steps.push({ action: c.sandbox ? 'KillPodSandbox' : 'KillContainer', target: c.name, ok: true });
      } catch (err) {
        if (isNotFound(err)) {
          out.steps.push({ action: c.sandbox ? 'KillPodSandbox' : 'KillContainer', target: c.name, ok: true });
          return;
        }
        out.steps.push({ action: c.sandbox ? 'KillPodSandbox' : 'KillContainer', target: c.name, ok: false, reason: c.sandbox ? 'KillPodSandboxError' : 'KillContainerError', message: failureMessage(err) });
        throw err;
      }
    }),
  );
  const unavailable = results.find((r) => r.status === 'rejected' && isRetriable(r.reason) && isUnavailable(r.reason));
  if (unavailable && unavailable.status === 'rejected') throw unavailable.reason;
  return live.length > 0;
}

/**
 * stopOrForceRemove stops container `id` within `gracePeriodSeconds`; a stop that passes its
 * deadline (the grace period plus `--runtime-request-timeout`: the engine is wedged on it) is
 * followed by a forced remove (SIGKILL and delete; a deadline of its own), so that a pod being
 * deleted never waits for ever on a stuck container, as the kubelet moves on past a StopContainer
 * that failed with DeadlineExceeded. Throws what the remove throws, or the stop's error.
 */
async function stopOrForceRemove(deps: SyncDeps, id: string, gracePeriodSeconds: number): Promise<void> {
  try {
    await deps.runtime.stopContainer(id, gracePeriodSeconds);
  } catch (err) {
    if (!isDeadlineExceeded(err)) throw err;
    deps.logger?.warn({ containerID: id, err }, 'Stopping a container passed its deadline; removing it by force');
    await deps.runtime.removeContainer(id);
  }
}

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

/**
 * killRuntimePod stops every app container of `runtimePod` (in parallel, within the grace
 * period, each after its preStop hook when `opts.pod` is given), then its sandboxes, as
 * killPodWithSyncResult; each sandbox that is not exited has its pod network torn down first
 * (StopPodSandbox: TearDownPod, then the container stop; a DEL failure is a failed
 * `KillPodSandbox` step with reason {@link kTearDownNetworkError} and the sandbox is stopped all
 * the same, as dockershim). Pods with `hostNetwork: true` (known from `opts.pod`) skip the
 * network. Resolves to true if anything was stopped.
 * @throws AgentError when the runtime is unavailable.
 */
export async function killRuntimePod(deps: SyncDeps, runtimePod: RuntimePod, gracePeriodSeconds: number, out: StepSink, opts: StopOptions = {}): Promise<boolean> {
  const a = await stopContainers(deps, runtimePod.containers, gracePeriodSeconds, out, opts);
  if (opts.pod?.spec?.hostNetwork !== true) await tearDownSandboxes(deps, runtimePod, runtimePod.sandboxes.filter((s) => s.state !== 'exited'), out);
  const b = await stopContainers(deps, runtimePod.sandboxes, kSandboxGracePeriodSeconds, out);
  return a || b;
}

/** kTearDownNetworkError: the reason of a `KillPodSandbox` step whose pod network DEL failed (the kill is retried). */
export const kTearDownNetworkError = 'KillPodSandboxError';

/** networkTeardownFailed: a step of `out` is a failed teardown of a sandbox's network (killRuntimePod, tearDownSandboxes). */
export function networkTeardownFailed(out: StepSink): boolean {
  return out.steps.some((s) => !s.ok && s.action === 'KillPodSandbox' && s.reason === kTearDownNetworkError && s.message?.startsWith('networkPlugin cni failed to teardown') === true);
}

/**
 * tearDownSandboxes: the pod network's TearDownPod of each of `sandboxes` (of `runtimePod`), one
 * at a time, each idempotent (sandbox-network.ts tearDownSandboxNetwork). A failure is a failed
 * `KillPodSandbox` step (reason {@link kTearDownNetworkError}, the kubelet's teardown wording); the
 * IDs torn down are returned. No-op with the network disabled. Runs on a worker thread.
 * @throws AgentError when the runtime is unavailable.
 */
export async function tearDownSandboxes(deps: SyncDeps, runtimePod: RuntimePod, sandboxes: readonly RuntimeContainer[], out: StepSink): Promise<Set<string>> {
  const done = new Set<string>();
  if (!deps.network.enabled) return done;
  for (const s of sandboxes) {
    try {
      await tearDownSandboxNetwork(deps.runtime, deps.network, s, runtimePod);
      forgetCheckedSandbox(deps.network, s.id);
      done.add(s.id);
    } catch (err) {
      if (isUnavailable(err)) throw err;
      out.steps.push({ action: 'KillPodSandbox', target: 'POD', ok: false, reason: kTearDownNetworkError, message: failureMessage(err) });
      deps.logger?.warn({ podUID: runtimePod.uid, containerID: s.id, err }, 'Failed to tear down the pod network');
    }
  }
  return done;
}

/**
 * removeContainers removes the given containers (in parallel), one `RemoveContainer` step each;
 * an already removed one counts as removed. Best effort: failures are recorded, not thrown,
 * except runtime-unavailable.
 */
export async function removeContainers(deps: SyncDeps, containers: Array<Pick<RuntimeContainer, 'id' | 'name'>>, out: StepSink): Promise<boolean> {
  let unavailable: unknown;
  await Promise.all(
    containers.map(async (c) => {
      try {
        await deps.runtime.removeContainer(c.id);
        out.steps.push({ action: 'RemoveContainer', target: c.name, ok: true });
      } catch (err) {
        if (isNotFound(err)) {
          out.steps.push({ action: 'RemoveContainer', target: c.name, ok: true });
          return;
        }
        if (isUnavailable(err)) unavailable = err;
        out.steps.push({ action: 'RemoveContainer', target: c.name, ok: false, reason: 'RemoveContainerError', message: failureMessage(err) });
      }
    }),
  );
  if (unavailable) throw unavailable;
  return containers.length > 0;
}

/**
 * killPod carries out a KillPodTask: stops the pod's app containers in parallel with
 * `gracePeriodSeconds` (SIGTERM, then SIGKILL; a negative one: the grace period on the containers'
 * label, at most kOrphanMaxGracePeriodSeconds), then its sandbox; with `remove`, removes every
 * container of the pod, unmounts what is mounted below `{rootDir}/pods/{uid}` (tmpfs volumes,
 * subPath binds) and removes that directory (only that). The pod network of each sandbox is torn
 * down before it stops (killRuntimePod) or, already exited, before it is removed; a DEL failure
 * leaves the sandboxes in place and rejects (retried). Idempotent: a pod with
 * nothing left resolves ok with `runtimePod` null. Runs on a worker thread.
 * @throws AgentError (ERR_RUNTIME_UNAVAILABLE, ERR_NETWORK (retriable) when a sandbox's network
 * DEL failed, or ERR_INVALID_ARGUMENT for an unsafe UID).
 */
export async function killPod(deps: SyncDeps, task: KillPodTask): Promise<PodSyncResult> {
  const dir = podDir(deps.rootDir, task.podUid); // validates the UID before anything is touched
  const result: PodSyncResult = { podUid: task.podUid, steps: [], events: [], runtimePod: null, waiting: {}, backoff: {}, requeueAfterMs: 0 };
  // What the kill does is recorded, so the read after it inspects only what it touched (sync-read-back.ts).
  const recorder = recordSyncChanges(deps.runtime);
  deps = { ...deps, runtime: recorder.runtime };
  const first = await readPodDetails(deps.runtime, deps.nodeName, task.podUid);
  let runtimePod = await assembleRuntimePod(task.podUid, first, deps.network);
  // A negative grace period means "the spec is gone": use the one recorded on the containers'
  // label, as the kubelet's killContainer does for a pod it only knows from the runtime, capped.
  const requested = isGracePeriodFromLabels(task.gracePeriodSeconds) ? Math.min(runtimePod?.terminationGracePeriodSeconds ?? kOrphanMaxGracePeriodSeconds, kOrphanMaxGracePeriodSeconds) : task.gracePeriodSeconds;
  const grace = Math.max(0, Math.floor(requested));
  let changed = false;
  if (runtimePod) changed = await killRuntimePod(deps, runtimePod, grace, result, { pod: task.pod, hostIp: task.hostIp, podIp: runtimePod.podIp });
  if (task.remove && runtimePod && task.pod?.spec?.hostNetwork !== true) {
    // Sandboxes that were already exited were not torn down by the kill: RemovePodSandbox does it (idempotent).
    await tearDownSandboxes(deps, runtimePod, runtimePod.sandboxes.filter((s) => s.state === 'exited'), result);
  }
  if (networkTeardownFailed(result)) {
    // StopPodSandbox failed: the sandboxes stay (stopped) and the kill is retried (the pod worker's requeue).
    throw new AgentError('ERR_NETWORK', result.steps.find((s) => !s.ok && s.reason === kTearDownNetworkError)?.message ?? 'pod network teardown failed', { retriable: true });
  }
  if (task.remove) {
    if (runtimePod) changed = (await removeContainers(deps, [...runtimePod.containers, ...runtimePod.sandboxes], result)) || changed;
    // The volumes' tmpfs and subPath bind mounts are unmounted first: a removal must never reach
    // into a mounted tmpfs, nor leave one mounted behind (the kubelet unmounts before it cleans up).
    await unmountUnder(dir);
    await rm(dir, { recursive: true, force: true });
    // The pod cgroup goes with its last container (pod_container_manager Destroy).
    if (deps.sandbox?.cgroupsPerQOS) {
      const left = await removePodCgroup(task.podUid, deps.sandbox.cgroupRoot);
      if (left.length) deps.logger?.warn({ uid: task.podUid, errors: left.slice(0, 3) }, 'Failed to remove the pod cgroup');
    }
  }
  let details = first;
  if (changed) {
    details = (await recorder.readBack(first)) ?? (await readPodDetails(deps.runtime, deps.nodeName, task.podUid));
    runtimePod = await assembleRuntimePod(task.podUid, details, deps.network);
  }
  if (!task.remove) await fillTerminationMessages(deps.rootDir, runtimePod, deps.runtime, details);
  result.runtimePod = runtimePod;
  if (changed || task.remove) deps.logger?.info({ uid: task.podUid, remove: task.remove, gracePeriodSeconds: grace, left: runtimePod ? runtimePod.containers.length + runtimePod.sandboxes.length : 0 }, 'Killed pod');
  return result;
}
