/**
 * The plan of one pod sync, as kuberuntime_manager.go's podActions, containerToKillInfo and the
 * reasons a container starts: what compute-pod-actions.ts decides (pure) and sync-pod.ts carries
 * out, in this order: kill → remove → sandbox → containers. Plain data.
 */
import type { BackoffEntry, PodEventRecord, WaitingReason } from '../../shared/sync-tasks.js';

/** Why a container is (re)started. */
export type StartReason =
  /** No container of that name exists yet (or all were garbage collected). */
  | 'NotPresent'
  /** The running container was created from another spec (its hash differs). */
  | 'HashChanged'
  /** The container exited and the restart policy says restart it. */
  | 'Restart'
  /** The container exists but never ran (created) or its state is unknown. */
  | 'NotStarted'
  /** The pod gets a new sandbox: every container starts again inside it. */
  | 'SandboxChanged'
  /** The running container failed its liveness or startup probe (SyncPodTask.livenessFailed). */
  | 'ProbeFailed';

/** One container to start (in spec order). */
export interface ContainerToStart {
  /** Index in `spec.containers`, or in `spec.initContainers` when `init`. */
  index: number;
  /** True for an init container (including a sidecar: an init container with `restartPolicy: Always`). */
  init?: boolean;
  /** True for an ephemeral container (`index` in `spec.ephemeralContainers`): started once, never restarted (ephemeral-containers.ts). */
  ephemeral?: boolean;
  name: string;
  reason: StartReason;
  /** hashContainer() of the spec: the new container's hash label. */
  hash: string;
  /** restartCount of the new container: that of the newest container of the name that ran + 1, or 0 (a created-never-started one is no attempt); also the `_<attempt>` of its name. */
  restartCount: number;
}

/** One container to stop (containerToKillInfo). */
export interface ContainerToKill {
  id: string;
  name: string;
  /** Human-readable reason, as the kubelet's kill message (`Container web definition changed, will be restarted`). */
  message: string;
  /** Grace period override, seconds (a probe's terminationGracePeriodSeconds); absent = the pod's. */
  gracePeriodSeconds?: number;
  /** True for a liveness/startup probe kill: the Killing event carries `message`. */
  probeFailed?: boolean;
}

/** PodActions: what one sync must do, in this order (kill → remove → sandbox → containers). */
export interface PodActions {
  /** Stop every container and sandbox of the pod first. */
  killPod: boolean;
  /** Create a new sandbox (attempt `attempt`) after killing the pod. */
  createSandbox: boolean;
  /** The running sandbox to start containers in ('' when createSandbox or none). */
  sandboxId: string;
  /** Attempt of the sandbox to create. */
  attempt: number;
  /** Containers to start, spec order (does not include those held back by restart backoff). */
  containersToStart: ContainerToStart[];
  /** Running containers to stop (hash changed, not in the spec any more, duplicates). */
  containersToKill: ContainerToKill[];
  /**
   * Dead containers and sandboxes to remove (keep one dead per container name, as
   * --maximum-dead-containers-per-container=1; older dead sandboxes when a new one is made).
   */
  containersToRemove: string[];
  /** Containers held back by restart backoff: waiting reason `CrashLoopBackOff`. */
  waiting: Record<string, WaitingReason>;
  /** BackOff events for the containers held back. */
  events: PodEventRecord[];
  /** The pod's backoff map after this sync (entries bumped for containers restarted now). */
  backoff: Record<string, BackoffEntry>;
  /** Milliseconds until the earliest backoff expires (0 = nothing held back). */
  requeueAfterMs: number;
}
