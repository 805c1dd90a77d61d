/**
 * Counterpart of pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions (with
 * runtimeutil.PodSandboxChanged, kubecontainer.ShouldContainerBeRestarted and the restart
 * backoff check of doBackOff): PURE planning of one pod sync, the plan's shape being pod-actions.ts's.
 * sync-pod.ts carries the plan out.
 */
import type { Container, Pod } from '../../shared/api.js';
import { backoffKey, isInBackoffSince, kMaxBackoffMs, nextBackoff } from '../../shared/backoff.js';
import { formatDuration } from '../../shared/duration.js';
import type { BackoffEntry } from '../../shared/sync-tasks.js';
import type { ProbeKill } from '../../shared/probe-tasks.js';
import type { RuntimeContainer, RuntimePod } from '../../shared/runtime-pod.js';
import { isRestartableInitContainer, podRestartPolicy, restartsAfterKill, shouldRestartExitedContainer } from '../../shared/pod-policy.js';
import { ephemeralContainerNames, ephemeralContainersToStart } from './ephemeral-containers.js';
import type { PodActions, StartReason } from './pod-actions.js';
import { SpecHashes } from './spec-hashes.js';

/** `<pod>_<namespace>(<uid>)`, as the kubelet's format.Pod. */
export function formatPod(pod: Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? 'default'}(${pod.metadata?.uid ?? ''})`;
}

/** Newest container of `name` (containers are newest first). */
function latest(runtimePod: RuntimePod | null, name: string): RuntimeContainer | undefined {
  return runtimePod?.containers.find((c) => c.name === name);
}

/** containerSucceeded: its latest container exited with code 0 (kuberuntime containerSucceeded). */
function containerSucceeded(runtimePod: RuntimePod | null, name: string): boolean {
  const c = latest(runtimePod, name);
  return c !== undefined && c.state === 'exited' && c.exitCode === 0;
}

/**
 * shouldContainerBeRestarted, as kubecontainer.ShouldContainerBeRestarted: never for a pod being
 * deleted; always when absent, created or unknown; for an exited one by restart policy
 * (Never: no; OnFailure: only a non-zero exit; Always: yes).
 */
function shouldContainerBeRestarted(pod: Pod, c: RuntimeContainer | undefined): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  if (!c) return true;
  if (c.state === 'running') return false;
  if (c.state === 'unknown' || c.state === 'created') return true;
  return shouldRestartExitedContainer(pod, c.exitCode);
}

/**
 * SandboxNetworkState: what the sync knows of the newest sandbox's pod network, for
 * podSandboxChanged (computePodActions' last argument).
 */
export interface SandboxNetworkState {
  /** The node has a pod network (PodNetwork.enabled); the pod's sandbox needs an IP unless hostNetwork. */
  enabled: boolean;
  /** The newest sandbox's network check (PodNetwork.checkPod) failed: it lost its network. */
  lost?: boolean;
}

/**
 * podSandboxChanged, as runtimeutil.PodSandboxChanged: [create, attempt, existing sandbox ID].
 * A new sandbox is needed when there is none, more than one is ready, the newest is not ready, or
 * the newest's namespace settings (sandboxHash) differ from the spec; with a pod network, also
 * when the newest sandbox of a pod that is not hostNetwork has no IP (the kubelet's "Sandbox for
 * pod has no IP address. Need to start a new one": an ADD that never finished) or lost its network.
 */
function podSandboxChanged(
  pod: Pod,
  runtimePod: RuntimePod | null,
  net: SandboxNetworkState,
  hashes: SpecHashes,
): [boolean, number, string] {
  const sandboxes = runtimePod?.sandboxes ?? [];
  if (sandboxes.length === 0) return [true, 0, ''];
  const newest = sandboxes[0];
  const ready = sandboxes.filter((s) => s.state === 'running').length;
  if (ready > 1 || newest.state !== 'running' || newest.hash !== hashes.sandbox(pod)) return [true, newest.attempt + 1, newest.id];
  if (net.enabled && pod.spec?.hostNetwork !== true && (runtimePod?.podIp === '' || net.lost === true))
    return [true, newest.attempt + 1, newest.id];
  return [false, newest.attempt, newest.id];
}

function specContainers(pod: Pod): Container[] {
  return pod.spec?.containers ?? [];
}

function specInitContainers(pod: Pod): Container[] {
  return pod.spec?.initContainers ?? [];
}

/**
 * hasAnyRegularContainerStarted: some app container of the pod exists in the runtime (running or
 * dead), so the pod was initialized before (kuberuntime isPreviouslyInitialized): init containers
 * are not run again while its sandbox lives, only sidecars are kept running.
 */
export function hasAnyRegularContainerCreated(pod: Pod, runtimePod: RuntimePod | null): boolean {
  const names = new Set(specContainers(pod).map((c) => c.name));
  return (runtimePod?.containers ?? []).some((c) => names.has(c.name) && c.state !== 'created');
}

interface Candidate {
  index: number;
  init: boolean;
  reason: StartReason;
}

/**
 * latestThatRan: the newest container of `name` that was ever started (running or dead). A
 * container in state `created` never ran (the agent died between create and start): it is not an
 * attempt, so it is neither the "previous" container nor counted in restartCount.
 */
function latestThatRan(runtimePod: RuntimePod | null, name: string): RuntimeContainer | undefined {
  return runtimePod?.containers.find((c) => c.name === name && c.state !== 'created');
}

/**
 * computeInitContainerActions, as kuberuntime's (the SidecarContainers flavour): walks the init
 * containers in order and decides the next step of initialization. Returns true when the pod is
 * initialized (every regular init container succeeded and every sidecar is started), so app
 * containers may start. Otherwise pushes at most one init container to start, or sets killPod when
 * a regular init container failed under restartPolicy Never (the pod fails). Once initialized
 * before, only exited sidecars are restarted. A running sidecar counts as started once running,
 * or, with a startup probe, once its ID is in `started` (the startup results manager's Success).
 * A running sidecar in `livenessFailed` (liveness or startup probe failed) is killed and restarted
 * whatever the pod's restartPolicy (`Init container X failed liveness probe`); its liveness probe
 * does not hold back the next init container.
 */
function computeInitContainerActions(
  pod: Pod,
  runtimePod: RuntimePod | null,
  actions: PodActions,
  candidates: Candidate[],
  livenessFailed: readonly ProbeKill[],
  started: readonly string[],
  hashes: SpecHashes,
): boolean {
  const inits = specInitContainers(pod);
  if (inits.length === 0) return true;
  const policy = podRestartPolicy(pod);
  /** A running sidecar failed a probe: kill it and start it again (true when so). */
  const restartOnProbeFailure = (c: RuntimeContainer, index: number): boolean => {
    const failed = livenessFailed.find((k) => k.containerId === c.id);
    if (!failed) return false;
    actions.containersToKill.push({
      id: c.id,
      name: c.name,
      message: `${failed.message}, will be restarted`,
      probeFailed: true,
      ...(failed.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: failed.gracePeriodSeconds } : {}),
    });
    candidates.push({ index, init: true, reason: 'ProbeFailed' });
    return true;
  };
  if (hasAnyRegularContainerCreated(pod, runtimePod)) {
    inits.forEach((spec, index) => {
      if (!isRestartableInitContainer(spec)) return;
      const c = latest(runtimePod, spec.name);
      if (c?.state === 'running') {
        if (c.hash !== hashes.container(spec)) {
          actions.containersToKill.push({
            id: c.id,
            name: c.name,
            message: `Init container ${c.name} definition changed, will be restarted`,
          });
          candidates.push({ index, init: true, reason: 'HashChanged' });
        } else restartOnProbeFailure(c, index);
        return;
      }
      if (!pod.metadata?.deletionTimestamp)
        candidates.push({ index, init: true, reason: !c ? 'NotPresent' : c.state === 'exited' ? 'Restart' : 'NotStarted' });
    });
    return true;
  }
  for (const [index, spec] of inits.entries()) {
    const c = latest(runtimePod, spec.name);
    if (!c) {
      candidates.push({ index, init: true, reason: 'NotPresent' });
      return false;
    }
    if (isRestartableInitContainer(spec)) {
      if (c.state === 'running') {
        if (restartOnProbeFailure(c, index)) return false;
        if (spec.startupProbe && !started.includes(c.id)) return false; // not started yet: wait for its startup probe
        continue; // started: the next one may go
      }
      candidates.push({ index, init: true, reason: c.state === 'exited' ? 'Restart' : 'NotStarted' });
      return false;
    }
    if (c.state === 'running') return false; // still initializing
    if (c.state === 'exited') {
      if (c.exitCode === 0) continue;
      if (policy === 'Never') {
        actions.killPod = true; // failed initialization: the pod fails (getPhase)
        return false;
      }
      candidates.push({ index, init: true, reason: 'Restart' });
      return false;
    }
    candidates.push({ index, init: true, reason: 'NotStarted' });
    if (c.state === 'unknown')
      actions.containersToKill.push({
        id: c.id,
        name: c.name,
        message: `Init container ${c.name} is in an unknown state, will be restarted`,
      });
    return false;
  }
  return true;
}

/**
 * computePodActions plans one sync of `pod` against what the runtime holds (`runtimePod`, null =
 * nothing), given the pod's restart backoff entries (`backoff`, keyed by backoffKey) at `nowMs`
 * (epoch ms). Pure: no I/O, no clock.
 *
 * Follows the kubelet:
 * - sandbox missing, dead, duplicated or changed (or, with `network.enabled`, without a pod IP or
 *   with `network.lost`, for a pod that is not hostNetwork) → killPod + createSandbox (attempt + 1), and every
 *   container starts again, except those that succeeded under OnFailure; but with restartPolicy
 *   Never, once a sandbox existed and containers ran, the dead sandbox is NOT recreated (just kill);
 *   nor when no container would start;
 * - otherwise per spec container: not running → start if shouldContainerBeRestarted; running with
 *   another hash → kill, then start; running but in `livenessFailed` (its liveness or startup probe
 *   failed) → kill (`Container X failed liveness probe, will be restarted`), then start unless
 *   restartPolicy is Never; running containers whose name is not in the spec → kill;
 * - nothing kept running and nothing to start → killPod (the sandbox stops);
 * - a container to start whose last dead attempt finished less than its backoff ago is held back:
 *   waiting `CrashLoopBackOff`, a BackOff event, and `requeueAfterMs`; one that does restart bumps
 *   its entry with nextBackoff (as doBackOff).
 * Init containers (computeInitContainerActions): a new sandbox starts with the first init
 * container only; until the pod is initialized, one init container at a time runs, in order
 * (sidecars — `restartPolicy: Always` — count as done once running, or once their startup probe
 * succeeded (`startedSidecars`: container IDs), and keep running; a sidecar failing its liveness or
 * startup probe is restarted); a regular
 * init container that fails is restarted with backoff, or under restartPolicy Never the pod is
 * killed (it fails). App containers start once initialized; exited sidecars are restarted beside
 * them, and are stopped with the pod when no app container is left to run.
 * `hashes` (default: a fresh one) memoises the container and sandbox hashes: a caller that plans
 * one sync more than once passes the sync's one SpecHashes so each spec is hashed once.
 */
export function computePodActions(
  pod: Pod,
  runtimePod: RuntimePod | null,
  backoff: Record<string, BackoffEntry>,
  nowMs: number,
  livenessFailed: readonly ProbeKill[] = [],
  startedSidecars: readonly string[] = [],
  network: SandboxNetworkState = { enabled: false },
  hashes: SpecHashes = new SpecHashes(),
): PodActions {
  const [sandboxChanged, attempt, sandboxId] = podSandboxChanged(pod, runtimePod, network, hashes);
  const actions: PodActions = {
    killPod: sandboxChanged,
    createSandbox: sandboxChanged,
    sandboxId: sandboxChanged ? '' : sandboxId,
    attempt,
    containersToStart: [],
    containersToKill: [],
    containersToRemove: [],
    waiting: {},
    events: [],
    backoff: {},
    requeueAfterMs: 0,
  };
  const containers = specContainers(pod);
  const inits = specInitContainers(pod);
  const specNames = new Set([...containers, ...inits].map((c) => c.name).concat(ephemeralContainerNames(pod)));
  const candidates: Candidate[] = [];

  if (sandboxChanged) {
    const policy = podRestartPolicy(pod);
    if (policy === 'Never' && attempt !== 0 && (runtimePod?.containers.length ?? 0) !== 0) {
      actions.createSandbox = false;
    } else if (inits.length > 0) {
      // A new sandbox runs initialization again from the first init container.
      candidates.push({ index: 0, init: true, reason: latest(runtimePod, inits[0].name) ? 'SandboxChanged' : 'NotPresent' });
    } else {
      containers.forEach((c, index) => {
        if (policy === 'OnFailure' && containerSucceeded(runtimePod, c.name)) return;
        candidates.push({ index, init: false, reason: latest(runtimePod, c.name) ? 'SandboxChanged' : 'NotPresent' });
      });
      if (candidates.length === 0) actions.createSandbox = false;
    }
  } else if (!computeInitContainerActions(pod, runtimePod, actions, candidates, livenessFailed, startedSidecars, hashes)) {
    // Not initialized yet: app containers wait (their status is PodInitializing).
  } else {
    let keepCount = 0;
    containers.forEach((spec, index) => {
      const c = latest(runtimePod, spec.name);
      if (!c || c.state !== 'running') {
        if (shouldContainerBeRestarted(pod, c)) {
          candidates.push({ index, init: false, reason: !c ? 'NotPresent' : c.state === 'exited' ? 'Restart' : 'NotStarted' });
          // An unknown container might still run: kill it before starting another one.
          if (c?.state === 'unknown')
            actions.containersToKill.push({
              id: c.id,
              name: c.name,
              message: `Container ${c.name} is in an unknown state, will be restarted`,
            });
        }
        return;
      }
      if (c.hash !== hashes.container(spec)) {
        actions.containersToKill.push({ id: c.id, name: c.name, message: `Container ${c.name} definition changed, will be restarted` });
        candidates.push({ index, init: false, reason: 'HashChanged' });
        return;
      }
      const failed = livenessFailed.find((k) => k.containerId === c.id);
      if (failed) {
        // kuberuntime: a liveness/startup failure kills the container; it restarts unless restartPolicy is Never.
        const restart = restartsAfterKill(pod);
        actions.containersToKill.push({
          id: c.id,
          name: c.name,
          message: restart ? `${failed.message}, will be restarted` : failed.message,
          probeFailed: true,
          ...(failed.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: failed.gracePeriodSeconds } : {}),
        });
        if (restart) candidates.push({ index, init: false, reason: 'ProbeFailed' });
        return;
      }
      keepCount++;
    });
    // Running containers that are not (or no longer) the current attempt of a spec container.
    for (const c of runtimePod?.containers ?? []) {
      if (c.state !== 'running' || actions.containersToKill.some((k) => k.id === c.id)) continue;
      if (!specNames.has(c.name)) {
        actions.containersToKill.push({ id: c.id, name: c.name, message: `Container ${c.name} is not in the pod spec` });
      } else if (latest(runtimePod, c.name)?.id !== c.id) {
        actions.containersToKill.push({ id: c.id, name: c.name, message: `Container ${c.name} is an older attempt still running` });
      }
    }
    if (keepCount === 0 && !candidates.some((c) => !c.init)) {
      // Nothing of the app left to run: stop the pod, sidecars included (they must not keep it alive).
      actions.killPod = true;
      candidates.length = 0;
    }
  }

  // Restart backoff (doBackOff): decided per candidate from its newest exited attempt.
  const keep: Record<string, BackoffEntry> = {};
  for (const { index, init, reason } of candidates) {
    const spec = init ? inits[index] : containers[index];
    const fieldPath = init ? `spec.initContainers{${spec.name}}` : `spec.containers{${spec.name}}`;
    const hash = hashes.container(spec);
    const key = backoffKey(pod.metadata?.name ?? '', pod.metadata?.namespace ?? 'default', pod.metadata?.uid ?? '', spec.name, hash);
    const entry = backoff[key];
    // A created-never-started container is removed below and its attempt made again: restartCount
    // counts only containers that ran (the created one's name is free again once it is removed).
    const prev = latestThatRan(runtimePod, spec.name);
    const lastExited = runtimePod?.containers.find((c) => c.name === spec.name && c.state === 'exited');
    if (lastExited && isInBackoffSince(entry, lastExited.finishedAtMs, nowMs)) {
      keep[key] = entry;
      const msg = `back-off ${formatDuration(entry.backoffMs)} restarting failed container=${spec.name} pod=${formatPod(pod)}`;
      actions.waiting[spec.name] = { reason: 'CrashLoopBackOff', message: msg };
      actions.events.push({
        type: 'Warning',
        reason: 'BackOff',
        message: `Back-off restarting failed container ${spec.name} in pod ${formatPod(pod)}`,
        fieldPath,
      });
      const wait = Math.max(1, lastExited.finishedAtMs + entry.backoffMs - nowMs);
      actions.requeueAfterMs = actions.requeueAfterMs === 0 ? wait : Math.min(actions.requeueAfterMs, wait);
      continue;
    }
    if (lastExited) keep[key] = nextBackoff(entry, nowMs);
    else if (entry && nowMs - entry.lastUpdateMs <= 2 * kMaxBackoffMs) keep[key] = entry;
    actions.containersToStart.push({
      index,
      ...(init ? { init } : {}),
      name: spec.name,
      reason,
      hash,
      restartCount: prev ? prev.restartCount + 1 : 0,
    });
    // Keep one dead attempt per container: the newest one that ran stays (it becomes the
    // "previous" container); any other that is not running goes, a created-never-started one too.
    for (const c of runtimePod?.containers ?? []) {
      if (c.name === spec.name && c.id !== prev?.id && c.state !== 'running') actions.containersToRemove.push(c.id);
    }
  }
  // Entries of containers not restarted now survive while the spec still has them and they are fresh.
  for (const spec of [...inits, ...containers]) {
    const key = backoffKey(
      pod.metadata?.name ?? '',
      pod.metadata?.namespace ?? 'default',
      pod.metadata?.uid ?? '',
      spec.name,
      hashes.container(spec),
    );
    const entry = backoff[key];
    if (!(key in keep) && entry && nowMs - entry.lastUpdateMs <= 2 * kMaxBackoffMs) keep[key] = entry;
  }
  actions.backoff = keep;

  // EphemeralContainersToStart: in the sandbox that stays, even before initialization is done.
  if (!actions.killPod && !actions.createSandbox) actions.containersToStart.push(...ephemeralContainersToStart(pod, runtimePod));

  // A new sandbox: dead sandboxes older than the newest one go, and a newest one that never ran.
  if (actions.createSandbox) {
    (runtimePod?.sandboxes ?? []).forEach((s, i) => {
      if (s.state !== 'running' && (i > 0 || s.state === 'created')) actions.containersToRemove.push(s.id);
    });
  }
  return actions;
}
