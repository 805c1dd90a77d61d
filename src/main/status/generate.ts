/**
 * Counterpart of pkg/kubelet/kubelet_pods.go (generateAPIPodStatus, getPhase,
 * convertToAPIContainerStatuses) and pkg/kubelet/status/generate.go (the Ready, ContainersReady,
 * Initialized and PodReadyToStartContainers conditions): pure functions from what the runtime
 * reported to a core/v1 PodStatus.
 */
import type { Container, ContainerState, ContainerStatus, Pod, PodCondition, PodPhase, PodStatus } from '../../shared/api.js';
import type { WaitingReason } from '../../shared/sync-tasks.js';
import type { RuntimeContainer, RuntimePod } from '../../shared/runtime-pod.js';
import { getPhase, hasAnyRegularContainerStarted, isPodPhaseTerminal, isRestartableInitContainer } from '../../shared/pod-policy.js';
import { getPodQOS, type PodQOSClass } from '../../shared/qos.js';
import { rfc3339Seconds } from '../../shared/rfc3339.js';

/** Inputs of `generatePodStatus`. Times are epoch milliseconds. */
export interface PodStatusInputs {
  pod: Pod;
  /** What the runtime has of the pod after the last sync, or null if nothing. */
  runtimePod: RuntimePod | null;
  /**
   * The scheme of container and image IDs (`<scheme>://<id>`): the runtime's Version runtime_name,
   * lower-cased (`docker`, `containerd`), as kuberuntime's ContainerID.Type; absent or '' (not
   * known yet): IDs are given bare.
   */
  idScheme?: string;
  /** Waiting reasons the last sync reported (CrashLoopBackOff, ErrImageNeverPull, …), by container name. */
  waiting: Record<string, WaitingReason>;
  /** The node's IP (status.hostIP; podIP of hostNetwork pods). */
  hostIp: string;
  /** When the agent first accepted the pod (status.startTime). */
  startTimeMs: number;
  /** The previous status, so that condition transition times only move on a real transition. */
  previous?: PodStatus;
  /** Set once the pod worker has decided the pod is finished (all containers stopped for good). */
  terminal?: boolean;
  /** Now, for transition times. */
  nowMs: number;
  /**
   * The probe manager's view of a running container (readiness → `ready`, startup probe →
   * `started`), by container name and runtime ID; undefined = no readiness/startup probe results.
   * Absent: a running container is ready and started unless its spec has such a probe.
   */
  probeStatus?: (containerName: string, containerId: string) => { ready: boolean; started: boolean } | undefined;
  /**
   * The kubelet failed the pod itself (e.g. activeDeadlineSeconds passed: reason
   * `DeadlineExceeded`): phase Failed with this status reason and message, whatever the containers say.
   * `condition`, when given, is added True (an eviction's `DisruptionTarget` / `TerminationByKubelet`).
   */
  failure?: { reason: string; message: string; condition?: { type: string; reason: string; message: string } };
}

/** A status' times: RFC 3339 seconds (metav1.Time), each second formatted once (rfc3339Seconds). */
const iso = rfc3339Seconds;

/** runtimeId: `<scheme>://<id>` (kubecontainer.ContainerID.String), or the bare ID when the scheme is not known. Pure. */
export function runtimeId(scheme: string, id: string): string {
  return scheme ? `${scheme}://${id}` : id;
}

/**
 * imageRef: a container status' imageID. Upstream it is the runtime's ContainerStatus image_ref
 * verbatim (kuberuntime_container.go toKubeContainerStatus): a CRI runtime's repo digest
 * (`docker.io/library/busybox@sha256:…`) or a ref that names its scheme (dockershim's
 * `docker://sha256:…`) stays as it is; a bare image ID gets the runtime's scheme, as dockershim gave it. Pure.
 */
export function imageRef(scheme: string, imageId: string): string {
  return imageId.includes('://') || imageId.includes('@') ? imageId : runtimeId(scheme, imageId);
}

/** containerIdOf: the runtime's ID in a status' containerID (`<scheme>://<id>`, any scheme, as kubecontainer.ParseContainerID); a bare one as it is. Pure. */
export function containerIdOf(containerID: string | undefined): string {
  const s = containerID ?? '';
  const i = s.indexOf('://');
  return i < 0 ? s : s.slice(i + 3);
}

function terminatedState(c: RuntimeContainer, scheme: string): ContainerState {
  return {
    terminated: {
      exitCode: c.exitCode,
      reason: c.reason || (c.exitCode === 0 ? 'Completed' : 'Error'),
      ...(c.message ? { message: c.message } : {}),
      startedAt: c.startedAtMs ? iso(c.startedAtMs) : undefined,
      finishedAt: c.finishedAtMs ? iso(c.finishedAtMs) : undefined,
      containerID: runtimeId(scheme, c.id),
    },
  };
}

/**
 * containerStatus builds one ContainerStatus the way convertToAPIContainerStatuses does: the
 * newest attempt gives `state`; a waiting reason from the sync (e.g. CrashLoopBackOff) turns a
 * dead newest attempt into `waiting` with that attempt as `lastState`; otherwise the attempt
 * before the newest is `lastState`. Without a readiness probe a running container is ready.
 * `scheme` prefixes the container and image IDs (`<scheme>://<id>`; '' = bare).
 */
export function containerStatus(
  name: string,
  image: string,
  attempts: RuntimeContainer[],
  waiting: WaitingReason | undefined,
  defaultWaitingReason = 'ContainerCreating',
  scheme = '',
): ContainerStatus {
  const [newest, previousAttempt] = attempts;
  if (!newest) {
    return {
      name,
      image,
      imageID: '',
      ready: false,
      restartCount: 0,
      started: false,
      state: { waiting: waiting ?? { reason: defaultWaitingReason } },
      lastState: {},
    };
  }
  const imageID = newest.imageId ? imageRef(scheme, newest.imageId) : '';
  const containerID = runtimeId(scheme, newest.id);
  const { restartCount } = newest;
  // One literal per status, every field in the same order (no spread of a shared base: cloning it
  // and adding four fields was a quarter of a status generation's time, issue #42).
  const status = (ready: boolean, state: ContainerState, lastState: ContainerState): ContainerStatus => ({
    name,
    image,
    imageID,
    containerID,
    restartCount,
    ready,
    started: ready,
    state,
    lastState,
  });
  const lastAttempt = (): ContainerState =>
    previousAttempt && previousAttempt.state === 'exited' ? terminatedState(previousAttempt, scheme) : {};
  if (newest.state === 'running')
    return status(true, { running: { startedAt: iso(newest.startedAtMs || newest.createdAtMs) } }, lastAttempt());
  if (newest.state === 'exited') {
    if (waiting) return status(false, { waiting }, terminatedState(newest, scheme));
    return status(false, terminatedState(newest, scheme), lastAttempt());
  }
  // created or unknown: not started yet.
  return status(false, { waiting: waiting ?? { reason: defaultWaitingReason } }, lastAttempt());
}

/**
 * uninitializedContainers: the init containers not done, as GeneratePodInitializedCondition sees
 * them: a regular one until it exited 0, a sidecar until it runs and is started (its startup probe
 * passed: `started`); none once an app container started.
 */
export function uninitializedContainers(pod: Pod, statuses: ContainerStatus[], initStatuses: ContainerStatus[]): string[] {
  if (hasAnyRegularContainerStarted(statuses)) return [];
  const byName = new Map(initStatuses.map((s) => [s.name, s]));
  return (pod.spec?.initContainers ?? [])
    .filter((c) => {
      const s = byName.get(c.name);
      if (isRestartableInitContainer(c)) return !s?.state?.running || s.started !== true;
      return s?.state?.terminated?.exitCode !== 0;
    })
    .map((c) => c.name);
}

function condition(
  type: string,
  ok: boolean,
  previous: PodStatus | undefined,
  nowMs: number,
  reason?: string,
  message?: string,
): PodCondition {
  const status = ok ? 'True' : 'False';
  const before = previous?.conditions?.find((c) => c.type === type);
  const lastTransitionTime = before && before.status === status && before.lastTransitionTime ? before.lastTransitionTime : iso(nowMs);
  // Optional fields set after the literal, in order (no conditional spreads: see containerStatus).
  const c: PodCondition = { type, status, lastProbeTime: null as unknown as undefined, lastTransitionTime };
  if (reason) c.reason = reason;
  if (message) c.message = message;
  return c;
}

/**
 * applyProbeStatus sets `ready` and `started` of a running container from its probes, as the
 * kubelet's status manager does with the readiness and startup results (SetContainerReadiness,
 * SetContainerStartup): with a startup probe, started only once it succeeded; with a readiness
 * probe, ready only once it succeeded (and started). Containers without those probes keep
 * "running ⇒ ready". Mutates `status`.
 */
export function applyProbeStatus(
  container: Container,
  status: ContainerStatus,
  probeStatus: ((containerName: string, containerId: string) => { ready: boolean; started: boolean } | undefined) | undefined,
): void {
  if (!status.state?.running) return;
  const id = containerIdOf(status.containerID);
  const p = probeStatus?.(container.name, id);
  if (p) {
    status.started = p.started;
    status.ready = p.ready && p.started;
  } else if (container.readinessProbe || container.startupProbe) {
    status.started = !container.startupProbe;
    status.ready = false;
  }
}

/**
 * generatePodStatus: the whole PodStatus of one pod (generateAPIPodStatus): phase, conditions
 * (PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled), containerStatuses
 * in spec order (and initContainerStatuses, ephemeralContainerStatuses), startTime, hostIP(s), podIP(s), qosClass.
 */
export function generatePodStatus(inp: PodStatusInputs): PodStatus {
  const { pod, runtimePod, waiting, nowMs } = inp;
  const containers = pod.spec?.containers ?? [];
  const initContainers = pod.spec?.initContainers ?? [];
  // With init containers, a container not created yet waits with reason PodInitializing (convertToAPIContainerStatuses).
  const defaultWaiting = initContainers.length > 0 ? 'PodInitializing' : 'ContainerCreating';
  const statuses = containers.map((c) =>
    containerStatus(
      c.name,
      c.image ?? '',
      (runtimePod?.containers ?? []).filter((r) => r.name === c.name),
      waiting[c.name],
      defaultWaiting,
      inp.idScheme,
    ),
  );
  const initStatuses = initContainers.map((c) => {
    const s = containerStatus(
      c.name,
      c.image ?? '',
      (runtimePod?.containers ?? []).filter((r) => r.name === c.name),
      waiting[c.name],
      defaultWaiting,
      inp.idScheme,
    );
    // As the probe manager's UpdatePodStatus: a regular init container is ready once it exited 0
    // (and never while it runs); a sidecar's started and ready come from its probes, as an app container's.
    if (!isRestartableInitContainer(c)) s.ready = s.state?.terminated?.exitCode === 0;
    else applyProbeStatus(c, s, inp.probeStatus);
    return s;
  });
  containers.forEach((c, i) => applyProbeStatus(c, statuses[i], inp.probeStatus));
  // Ephemeral containers (convertToAPIContainerStatuses of EphemeralContainers): in spec order, never ready, no part of phase or readiness.
  const ephemeral = pod.spec?.ephemeralContainers ?? [];
  const ephemeralStatuses = ephemeral.map((c) => ({
    ...containerStatus(
      c.name,
      c.image ?? '',
      (runtimePod?.containers ?? []).filter((r) => r.name === c.name),
      waiting[c.name],
      defaultWaiting,
      inp.idScheme,
    ),
    ready: false,
  }));
  const phase = inp.failure ? 'Failed' : getPhase(pod, statuses, inp.terminal ?? false, initStatuses);
  const done = isPodPhaseTerminal(phase);
  const uninitialized = uninitializedContainers(pod, statuses, initStatuses);
  const sidecarStatuses = initStatuses.filter((_, i) => isRestartableInitContainer(initContainers[i]));
  const unready = [...sidecarStatuses, ...statuses].filter((s) => !s.ready).map((s) => s.name);
  const containersReady = !done && unready.length === 0;
  const notReadyMessage = unready.length ? `containers with unready status: [${unready.join(' ')}]` : undefined;
  const notReadyReason = done ? 'PodCompleted' : 'ContainersNotReady';
  const sandboxReady = runtimePod?.sandboxes[0]?.state === 'running';
  const hostNetwork = pod.spec?.hostNetwork === true;
  const podIp = hostNetwork ? inp.hostIp : (runtimePod?.podIp ?? '');
  const conditions: PodCondition[] = [
    condition('PodReadyToStartContainers', sandboxReady, inp.previous, nowMs),
    condition(
      'Initialized',
      uninitialized.length === 0,
      inp.previous,
      nowMs,
      uninitialized.length ? 'ContainersNotInitialized' : undefined,
      uninitialized.length ? `containers with incomplete status: [${uninitialized.join(' ')}]` : undefined,
    ),
    condition(
      'Ready',
      containersReady,
      inp.previous,
      nowMs,
      containersReady ? undefined : notReadyReason,
      containersReady ? undefined : notReadyMessage,
    ),
    condition(
      'ContainersReady',
      containersReady,
      inp.previous,
      nowMs,
      containersReady ? undefined : notReadyReason,
      containersReady ? undefined : notReadyMessage,
    ),
    condition('PodScheduled', true, inp.previous, nowMs),
  ];
  const fc = inp.failure?.condition;
  if (fc) conditions.push(condition(fc.type, true, inp.previous, nowMs, fc.reason, fc.message));
  // Built field by field in the order of the former literal (its optional fields were conditional
  // spreads, each a cloned object: issue #42); the JSON's key order is unchanged.
  const status: PodStatus = { phase };
  if (inp.failure) {
    status.reason = inp.failure.reason;
    status.message = inp.failure.message;
  }
  status.conditions = conditions;
  status.hostIP = inp.hostIp;
  status.hostIPs = [{ ip: inp.hostIp }];
  if (podIp) {
    status.podIP = podIp;
    status.podIPs = [{ ip: podIp }];
  }
  status.startTime = iso(inp.startTimeMs);
  if (initContainers.length) status.initContainerStatuses = initStatuses;
  status.containerStatuses = statuses;
  if (ephemeral.length) status.ephemeralContainerStatuses = ephemeralStatuses;
  status.qosClass = qosClass(pod);
  return status;
}

/**
 * qosClass, as pkg/apis/core/v1/helper/qos GetPodQOS: Guaranteed, Burstable or BestEffort (see
 * getPodQOS in shared/qos.ts, which the worker also uses for oom_score_adj and the pod cgroup).
 */
export function qosClass(pod: Pod): PodQOSClass {
  return getPodQOS(pod);
}
