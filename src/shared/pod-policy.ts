// One home for the pod rules that both threads apply (issue #41 item 1): the grace period a
// stop gets, when a container restarts, a pod's phase, when a pod is finished and an emptyDir's
// sizeLimit (whether a volume is over it is the eviction manager's verdict alone:
// main/eviction/local-storage.ts). Pure functions and constants, safe in any thread; every caller on the main
// thread and in the workers uses these.
import type { Container, ContainerStatus, Pod, PodPhase, Volume } from './api.js';
import { parseQuantity } from './quantity.js';

/** The `terminationGracePeriodSeconds` default, in seconds (v1.DefaultTerminationGracePeriodSeconds, pkg/apis/core/v1/defaults.go). */
export const kDefaultTerminationGracePeriodSeconds = 30;

/**
 * kGracePeriodFromLabels: the grace period (seconds) of a kill that says "use the one recorded on
 * the containers' `annotation.io.kubernetes.pod.terminationGracePeriod` label", for a pod whose
 * spec is gone (housekeeping's leftovers, an old pod of a replaced UID). Any negative value is read
 * so (isGracePeriodFromLabels); the kubelet's killContainer likewise falls back to the label when it
 * has no spec (pkg/kubelet/kuberuntime/kuberuntime_container.go).
 */
export const kGracePeriodFromLabels = -1;

/** isGracePeriodFromLabels: `gracePeriodSeconds` is the kGracePeriodFromLabels sentinel (any negative number). */
export function isGracePeriodFromLabels(gracePeriodSeconds: number): boolean {
  return gracePeriodSeconds < 0;
}

/**
 * podTerminationGracePeriodSeconds: the pod's `spec.terminationGracePeriodSeconds` in seconds,
 * else the apiserver's default (kDefaultTerminationGracePeriodSeconds, 30 s; a value that is not a
 * number >= 0 counts as unset — validation rejects it on every admitted pod). Follows
 * calculateEffectiveGracePeriod (pkg/kubelet/pod_workers.go) for a pod not being deleted.
 */
export function podTerminationGracePeriodSeconds(pod: Pod | undefined): number {
  const v = pod?.spec?.terminationGracePeriodSeconds;
  return typeof v === 'number' && v >= 0 ? v : kDefaultTerminationGracePeriodSeconds;
}

/**
 * effectiveGracePeriodSeconds: `override` (seconds: a DELETE's gracePeriodSeconds, the pod's
 * `metadata.deletionGracePeriodSeconds`) when given, else podTerminationGracePeriodSeconds(pod).
 * As calculateEffectiveGracePeriod (pkg/kubelet/pod_workers.go), where deletionGracePeriodSeconds
 * overrides the spec's, and the registry's BeforeDelete (pkg/registry/core/pod/strategy.go
 * CheckGracefulDelete) defaulting a DELETE's grace period to the pod's.
 */
export function effectiveGracePeriodSeconds(pod: Pod | undefined, override?: number | null): number {
  return override ?? podTerminationGracePeriodSeconds(pod);
}

/** The `spec.restartPolicy` default, `Always` (SetDefaults_PodSpec, pkg/apis/core/v1/defaults.go). */
export const kDefaultRestartPolicy = 'Always';

/** The pod's `spec.restartPolicy`: `Always` (kDefaultRestartPolicy, also when unset), `OnFailure` or `Never`. */
export function podRestartPolicy(pod: Pod): string {
  return pod.spec?.restartPolicy ?? kDefaultRestartPolicy;
}

/**
 * isRestartableInitContainer: an init container with `restartPolicy: Always` (a sidecar), as
 * podutil.IsRestartableInitContainer (pkg/api/v1/pod/util.go).
 */
export function isRestartableInitContainer(c: Pick<Container, 'restartPolicy'>): boolean {
  return (c as { restartPolicy?: string }).restartPolicy === 'Always';
}

/**
 * shouldRestartExitedContainer: the restart-policy half of kubecontainer.ShouldContainerBeRestarted
 * (pkg/kubelet/container/helpers.go) for an app container that exited with `exitCode`: Never → no;
 * OnFailure → only after a non-zero exit; Always → yes. (A pod being deleted, or a container absent,
 * created or unknown, is decided by the caller.)
 */
export function shouldRestartExitedContainer(pod: Pod, exitCode: number | undefined): boolean {
  const policy = podRestartPolicy(pod);
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && exitCode === 0) return false;
  return true;
}

/**
 * restartsAfterKill: a container the kubelet kills while it runs (a failed liveness or startup
 * probe, a failed postStart hook) is started again unless the pod's restartPolicy is Never
 * (kuberuntime computePodActions / killContainer with a restartable pod).
 */
export function restartsAfterKill(pod: Pod): boolean {
  return podRestartPolicy(pod) !== 'Never';
}

/**
 * podCanFinish: a pod whose restartPolicy is not Always reaches Succeeded or Failed when its
 * containers are done; an Always pod only when the kubelet terminates it (getPhase, kubelet_pods.go).
 */
export function podCanFinish(pod: Pod): boolean {
  return podRestartPolicy(pod) !== 'Always';
}

/** isPodPhaseTerminal: `Succeeded` or `Failed` (podutil.IsPodPhaseTerminal, pkg/api/v1/pod/util.go). */
export function isPodPhaseTerminal(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

/**
 * isPodFinished: the pod stopped for good by itself — its phase is terminal and its restartPolicy
 * lets it finish (podCanFinish); its sandbox is then stopped and its containers kept for their logs.
 */
export function isPodFinished(pod: Pod, phase: string | undefined): boolean {
  return isPodPhaseTerminal(phase) && podCanFinish(pod);
}

/** hasAnyRegularContainerStarted: some app container runs or ran (kubecontainer.HasAnyRegularContainerStarted). */
export function hasAnyRegularContainerStarted(statuses: ContainerStatus[]): boolean {
  return statuses.some((s) => s.state?.running || s.state?.terminated || s.lastState?.terminated);
}

/**
 * getPhase, as the kubelet's (pkg/kubelet/kubelet_pods.go getPhase): Pending while any container
 * waits to start for the first time; Running once all have started and one runs (or a restartPolicy
 * Always / OnFailure pod is between restarts); Succeeded when all exited 0 and none will restart;
 * Failed when all are done and one failed under restartPolicy Never (or the pod is terminal:
 * `terminal`). Init containers (`initStatuses`): until an app container has started, Pending while
 * one is pending or failed (retried), Failed when a regular one failed under restartPolicy Never.
 */
export function getPhase(pod: Pod, statuses: ContainerStatus[], terminal: boolean, initStatuses: ContainerStatus[] = []): PodPhase {
  let unknown = 0,
    running = 0,
    waiting = 0,
    stopped = 0,
    succeeded = 0;
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const restartPolicy = podRestartPolicy(pod);
  // Init containers (getPhase's pendingInitialization / failedInitialization). A pod whose app
  // containers have started was initialized before: sidecars restarting do not make it Pending.
  if (!hasAnyRegularContainerStarted(statuses)) {
    let pendingInitialization = 0,
      failedInitialization = 0;
    const initByName = new Map(initStatuses.map((s) => [s.name, s]));
    for (const c of pod.spec?.initContainers ?? []) {
      const s = initByName.get(c.name);
      if (isRestartableInitContainer(c)) {
        // A sidecar initializes once it runs and is started (its startup probe passed, if any).
        if (!s?.state?.running || s.started !== true) pendingInitialization++;
        continue;
      }
      if (!s) pendingInitialization++;
      else if (s.state?.running) pendingInitialization++;
      else if (s.state?.terminated) {
        if (s.state.terminated.exitCode !== 0) failedInitialization++;
      } else if (s.state?.waiting && s.lastState?.terminated) {
        if (s.lastState.terminated.exitCode !== 0) failedInitialization++;
      } else pendingInitialization++;
    }
    if (failedInitialization > 0 && restartPolicy === 'Never') return 'Failed';
    if (pendingInitialization > 0 || failedInitialization > 0) return 'Pending';
  }
  for (const c of pod.spec?.containers ?? []) {
    const s = byName.get(c.name);
    if (!s) {
      unknown++;
      continue;
    }
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) {
        stopped++;
        if (s.lastState.terminated.exitCode === 0) succeeded++;
      } else waiting++;
    } else unknown++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (terminal) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (restartPolicy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

/**
 * emptyDirSizeLimitBytes: the emptyDir volume's `sizeLimit` in bytes when it is positive; undefined
 * for another volume, no limit, a limit of 0, or one that does not parse (validation rejects those):
 * the limits emptyDirLimitEviction checks (pkg/kubelet/eviction/eviction_manager.go) and the size
 * of a `medium: Memory` emptyDir's tmpfs (pkg/volume/emptydir calculateEmptyDirMemorySize).
 */
export function emptyDirSizeLimitBytes(vol: Volume): number | undefined {
  const raw = vol.emptyDir?.sizeLimit;
  if (raw === undefined || raw === null) return undefined;
  let limit: number;
  try {
    limit = parseQuantity(raw as string | number, 'sizeLimit');
  } catch {
    return undefined;
  }
  return limit > 0 ? limit : undefined;
}
