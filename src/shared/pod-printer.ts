/**
 * The pod's one-word status as `kubectl get pods` prints it (the apiserver's table printer,
 * pkg/printers/internalversion printPod): shared by the client's table (src/cli/get.ts), the
 * dashboard's Status column and the API's Table answers, so all three say the same word.
 * Pure; imports only types.
 */
import type { Pod } from './api.js';

/**
 * A sidecar: an init container with `restartPolicy: Always` (the rule of shared/pod-policy.ts
 * isRestartableInitContainer, written out here: the dashboard serves this file's compiled form to
 * the browser as it is, so it may import types only — test/server/dashboard-assets.test.ts).
 */
const isSidecar = (c: { restartPolicy?: string }): boolean => c.restartPolicy === 'Always';

/** PodStatusSummary: what printPod derives from a pod for the READY, STATUS and RESTARTS columns. */
export interface PodStatusSummary {
  /** The STATUS column: a phase, a reason (`CrashLoopBackOff`, `Completed`, `Init:0/1`, `Terminating`, …). */
  reason: string;
  /** Ready containers (and started sidecar init containers that are ready). */
  ready: number;
  /** Containers counted in READY's denominator: spec.containers plus sidecar (restartPolicy Always) init containers. */
  total: number;
  /** Restarts as printed: the app containers' and sidecars' (plain init containers only while initializing). */
  restarts: number;
  /** The newest restart (last termination's finishedAt) among the counted containers, epoch milliseconds, or 0. */
  lastRestartMs: number;
}

function finishedMs(finishedAt: string | undefined): number {
  return finishedAt ? Date.parse(finishedAt) || 0 : 0;
}

/**
 * podStatusReason: the STATUS column as printPod computes it.
 * - Start from status.reason, else the phase (Pending when absent).
 * - Init containers in order: one exited 0 is passed; a started sidecar (restartPolicy Always) is
 *   passed and counted; the first other one decides `Init:<terminated reason>` (or
 *   `Init:ExitCode:N` / `Init:Signal:N`), `Init:<waiting reason>` (except PodInitializing), or
 *   `Init:i/n`, and the pod is initializing.
 * - Unless initializing (and the Initialized condition is not True), the app containers from the
 *   last to the first: a waiting reason, a terminated reason (or `ExitCode:N` / `Signal:N`) wins;
 *   a ready running one is counted. `Completed` with one still running becomes `Running` when the
 *   pod is Ready, `NotReady` otherwise.
 * - `Unknown` when deleted with reason NodeLost, else `Terminating` once deletionTimestamp is set.
 */
export function podStatusReason(pod: Pod): PodStatusSummary {
  const status = pod.status ?? {};
  const conditions = status.conditions ?? [];
  const initSpecs = pod.spec?.initContainers ?? [];
  const sidecars = new Set(initSpecs.filter(isSidecar).map((c) => c.name));
  let reason = status.reason || status.phase || 'Pending';
  let ready = 0;
  let restarts = 0;
  let lastRestartMs = 0;
  let sidecarRestarts = 0;
  let sidecarLastRestartMs = 0;
  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i];
    const lastMs = finishedMs(c.lastState?.terminated?.finishedAt);
    restarts += c.restartCount ?? 0;
    lastRestartMs = Math.max(lastRestartMs, lastMs);
    if (sidecars.has(c.name)) {
      sidecarRestarts += c.restartCount ?? 0;
      sidecarLastRestartMs = Math.max(sidecarLastRestartMs, lastMs);
    }
    const terminated = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (terminated && terminated.exitCode === 0) continue;
    if (sidecars.has(c.name) && c.started) {
      if (c.ready) ready++;
      continue;
    }
    if (terminated) {
      if (terminated.reason) reason = `Init:${terminated.reason}`;
      else reason = terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode}`;
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }
  const initialized = conditions.some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = sidecarRestarts;
    lastRestartMs = sidecarLastRestartMs;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      restarts += c.restartCount ?? 0;
      lastRestartMs = Math.max(lastRestartMs, finishedMs(c.lastState?.terminated?.finishedAt));
      const waiting = c.state?.waiting;
      const terminated = c.state?.terminated;
      if (waiting?.reason) reason = waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated) reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`;
      else if (c.ready && c.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = conditions.some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata?.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  const total = (pod.spec?.containers?.length ?? (status.containerStatuses ?? []).length) + sidecars.size;
  return { reason, ready, total, restarts, lastRestartMs };
}
