/**
 * The pure helpers of sync-pod.ts's SyncPod (kuberuntime_manager.go): the pull policy of a
 * container, the kill options of a plan, and the plans that need no runtime call.
 */
import type { Container, Pod, PullPolicy } from '../../shared/api.js';
import { defaultImagePullPolicy } from '../../shared/defaults.js';
import type { PodSyncResult, SyncPodTask } from '../../shared/sync-tasks.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import { podCanFinish } from '../../shared/pod-policy.js';
import type { ContainerToKill, PodActions } from './pod-actions.js';
import type { StopOptions } from './kill-pod.js';

/**
 * pullPolicyOf: the container's imagePullPolicy. Pods reach the worker defaulted (every source runs
 * applyPodDefaults, and validation refuses other values); an unset policy falls back to the same
 * default, {@link defaultImagePullPolicy} (SetDefaults_Container).
 */
export function pullPolicyOf(c: Pick<Container, 'image' | 'imagePullPolicy'>): PullPolicy {
  const p = c.imagePullPolicy as PullPolicy | undefined;
  if (p === 'Always' || p === 'IfNotPresent' || p === 'Never') return p;
  return defaultImagePullPolicy(c.image ?? '');
}

/** usesPodIp: the container's env reads status.podIP or status.podIPs (downward API). */
export function usesPodIp(c: Container): boolean {
  return (c.env ?? []).some(
    (e) => e.valueFrom?.fieldRef?.fieldPath === 'status.podIP' || e.valueFrom?.fieldRef?.fieldPath === 'status.podIPs',
  );
}

/** killOptions: preStop hooks, and the probe kills' Killing messages and grace periods (kuberuntime killContainer). */
export function killOptions(pod: Pod, task: SyncPodTask, kills: ContainerToKill[], podIp: string): StopOptions {
  const messages: Record<string, string> = {};
  const gracePeriods: Record<string, number> = {};
  for (const k of kills) {
    if (k.probeFailed) messages[k.id] = k.message;
    if (k.gracePeriodSeconds !== undefined) gracePeriods[k.id] = k.gracePeriodSeconds;
  }
  return { pod, hostIp: task.hostIp, podIp, messages, gracePeriods };
}

/** isNothingToDo: the plan kills, removes, creates and starts nothing. */
export function isNothingToDo(a: PodActions): boolean {
  return (
    !a.killPod &&
    !a.createSandbox &&
    a.containersToKill.length === 0 &&
    a.containersToRemove.length === 0 &&
    a.containersToStart.length === 0
  );
}

/** sameEntries: two flat records hold the same keys with equal (deep-equal, key order aside) values. Pure. */
function sameEntries(a: Record<string, object>, b: Record<string, object>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => {
    const x = a[k] as Record<string, unknown>;
    const y = b[k] as Record<string, unknown> | undefined;
    if (!y) return false;
    const fields = Object.keys(x);
    return fields.length === Object.keys(y).length && fields.every((f) => x[f] === y[f]);
  });
}

/**
 * isSettled: the plan `next`, made from a sync result's runtime pod with that result's `backoff`
 * (as the pod's next sync would make it), does nothing, records no event, holds nothing back
 * (no requeue) and leaves `waiting` and `backoff` as they are (PodSyncResult.settled): a sync
 * from that runtime pod would change nothing. `otherEvents`: what else such a sync would record
 * (the pod's volume set-up events); any makes it unsettled. Pure.
 */
export function isSettled(
  next: PodActions,
  result: Pick<PodSyncResult, 'waiting' | 'backoff'>,
  otherEvents: readonly unknown[] = [],
): boolean {
  return (
    isNothingToDo(next) &&
    next.events.length === 0 &&
    otherEvents.length === 0 &&
    next.requeueAfterMs === 0 &&
    sameEntries(next.waiting, result.waiting) &&
    sameEntries(next.backoff, result.backoff)
  );
}

/**
 * isFinishedPodKill: the plan's only kill is the sandbox of a pod that has finished — restartPolicy
 * Never or OnFailure, the sandbox unchanged, and every container of it exited. Such a pod's status
 * (phase Succeeded or Failed, getPhase) is final; the agent publishes it and then stops the sandbox
 * with a separate kill (agent.ts: "The pod is done"). syncPod leaves that kill out so the final
 * status is not held back by the sandbox's StopPodSandbox: the kubelet's order too, where SyncPod
 * sets the status before any runtime call and SyncTerminatingPod stops the pod afterwards.
 */
export function isFinishedPodKill(pod: Pod, runtimePod: RuntimePod | null, a: PodActions): boolean {
  if (!a.killPod || a.createSandbox || a.sandboxId === '' || !runtimePod) return false;
  if (!podCanFinish(pod)) return false;
  return runtimePod.containers.length > 0 && runtimePod.containers.every((c) => c.state === 'exited');
}

/**
 * recordSandboxFailure records a failed sandbox creation into `result` (kuberuntime SyncPod's
 * createPodSandbox error): the `CreatePodSandbox` step fails with `CreatePodSandboxError` (put at
 * `at` in the steps, default the end), the kubelet's `FailedCreatePodSandBox` event, and every
 * container waits (ContainerCreating; PodInitializing for app containers behind init containers).
 * The caller requeues.
 */
export function recordSandboxFailure(pod: Pod, result: PodSyncResult, message: string, at = result.steps.length): void {
  result.steps.splice(Math.min(at, result.steps.length), 0, {
    action: 'CreatePodSandbox',
    target: 'POD',
    ok: false,
    reason: 'CreatePodSandboxError',
    message,
  });
  result.events.push({ type: 'Warning', reason: 'FailedCreatePodSandBox', message: `Failed to create pod sandbox: ${message}` });
  // The containers wait for the sandbox: their status says why (the reason stays ContainerCreating, as the kubelet's).
  const inits = pod.spec?.initContainers ?? [];
  for (const c of [...inits, ...(pod.spec?.containers ?? [])]) {
    const reason = inits.length > 0 && !inits.includes(c) ? 'PodInitializing' : 'ContainerCreating';
    result.waiting[c.name] ??= { reason, message: `Failed to create pod sandbox: ${message}` };
  }
}

/**
 * recordStartFailure records a container that could not be started (kuberuntime startContainer's
 * errors): a failed `StartContainer` step with `reason`, a Warning `Failed` event on `fieldPath`
 * (`eventMessage`, default `Error: <message>`), and the container's waiting reason. The caller requeues.
 */
export function recordStartFailure(
  result: PodSyncResult,
  name: string,
  fieldPath: string,
  reason: string,
  message: string,
  eventMessage = `Error: ${message}`,
): void {
  result.steps.push({ action: 'StartContainer', target: name, ok: false, reason, message });
  result.events.push({ type: 'Warning', reason: 'Failed', message: eventMessage, fieldPath });
  result.waiting[name] = { reason, message };
}
