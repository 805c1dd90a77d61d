/**
 * The pure helpers of sync-pod.ts's SyncPod (kuberuntime_manager.go): the pull policy of a
 * container, the kill options of a plan, and the plans that need no runtime call.
 */
import type { Container, Pod, PullPolicy } from '../../shared/api.js';
import { defaultImagePullPolicy } from '../../shared/defaults.js';
import type { RuntimePod, SyncPodTask } from '../../shared/messages.js';
import { podCanFinish } from '../../shared/pod-policy.js';
import type { ContainerToKill, PodActions } from './compute-pod-actions.js';
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
  return (c.env ?? []).some((e) => e.valueFrom?.fieldRef?.fieldPath === 'status.podIP' || e.valueFrom?.fieldRef?.fieldPath === 'status.podIPs');
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
  return !a.killPod && !a.createSandbox && a.containersToKill.length === 0 && a.containersToRemove.length === 0 && a.containersToStart.length === 0;
}

/**
 * isFinishedPodKill: the plan's only kill is the sandbox of a pod that has finished — restartPolicy
 * Never or OnFailure, the sandbox unchanged, and every container of it exited. Such a pod's status
 * (phase Succeeded or Failed, getPhase) is final; the agent publishes it and then stops the sandbox
 * with a separate kill (agent.ts: "The pod is done"). syncPod leaves that kill out so the final
 * status is not held back by a `docker stop` of the sandbox: the kubelet's order too, where SyncPod
 * sets the status before any runtime call and SyncTerminatingPod stops the pod afterwards.
 */
export function isFinishedPodKill(pod: Pod, runtimePod: RuntimePod | null, a: PodActions): boolean {
  if (!a.killPod || a.createSandbox || a.sandboxId === '' || !runtimePod) return false;
  if (!podCanFinish(pod)) return false;
  return runtimePod.containers.length > 0 && runtimePod.containers.every((c) => c.state === 'exited');
}
