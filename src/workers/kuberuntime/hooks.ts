/**
 * Counterpart of pkg/kubelet/lifecycle/handlers.go (HandlerRunner: exec and HTTP lifecycle hooks)
 * and the preStop part of kuberuntime_container.go (executePreStopHook): runs a container's
 * postStart or preStop hook on a worker thread, through the same exec and HTTP probe code as the
 * prober: exec by the CRI's ExecSync, httpGet to the pod's IP (or the handler's host).
 */
import { realClock, type Clock } from '../../shared/clock.js';
import type { Container, Pod } from '../../shared/api.js';
import { PROTOCOL_VERSION } from '../../shared/thread-wire.js';
import type { PodEventRecord } from '../../shared/sync-tasks.js';
import type { RuntimeContainer } from '../../shared/runtime-pod.js';
import { netProbeTarget, type HttpGetAction, type PodNetwork } from '../../shared/probe-target.js';
import { formatPod } from './compute-pod-actions.js';
import { runDirectNetProbe } from '../../io/http-probe.js';
import { runExecSyncProbe, type ExecSyncer } from '../probes/exec-probe.js';

/** HookRuntime: where hooks run — the CRI's ContainerManager (ExecSync; an httpGet hook goes to the pod's IP). */
export type HookRuntime = ExecSyncer;

/** Hook names of core/v1 Lifecycle. */
export type HookName = 'postStart' | 'preStop';

/** Minimum seconds left for SIGTERM→SIGKILL after a preStop hook (kuberuntime minimumGracePeriodInSeconds). */
export const kMinimumGracePeriodSeconds = 2;

/** hasHook: whether `container` defines the `hook` lifecycle handler (exec or httpGet). */
export function hasHook(container: Container | undefined, hook: HookName): boolean {
  const h = container?.lifecycle?.[hook];
  return !!h && (!!h.exec || !!h.httpGet);
}

/**
 * runLifecycleHook runs `container`'s `hook` handler against the running container `containerId`
 * of `pod`, waiting at most `timeoutMs` milliseconds. Resolves null on success, else the failure
 * message in the kubelet's words (`Exec lifecycle hook ([sh -c exit 1]) for Container "main" in
 * Pod "p_ns(uid)" failed - error: …, message: "…"`, `HTTP lifecycle hook (/path) for Container …`).
 * An exec hook succeeds on exit code 0; an httpGet hook on a 2xx/3xx status. Never rejects.
 */
export async function runLifecycleHook(
  runtime: HookRuntime,
  pod: Pod,
  container: Container,
  containerId: string,
  hook: HookName,
  net: PodNetwork,
  timeoutMs: number,
): Promise<string | null> {
  const handler = container.lifecycle?.[hook];
  if (!handler) return null;
  const who = `for Container ${JSON.stringify(container.name)} in Pod ${JSON.stringify(formatPod(pod))}`;
  if (handler.exec) {
    const command = handler.exec.command ?? [];
    const r = await runExecSyncProbe(runtime, { containerId, command, timeoutMs });
    if (r.result === 'success') return null;
    return `Exec lifecycle hook ([${command.join(' ')}]) ${who} failed - error: ${r.result === 'unknown' ? r.output : `command '${command.join(' ')}' exited with non-zero status`}, message: ${JSON.stringify(r.output)}`;
  }
  if (handler.httpGet) {
    const action = handler.httpGet as HttpGetAction;
    try {
      // No sandbox netns to enter on the CRI: the target is the pod's IP (or the handler's host).
      const target = netProbeTarget(pod, container, 'http', action, { ...net, sandboxId: '' });
      const r = await runDirectNetProbe({ kind: 'netProbe', protocol: PROTOCOL_VERSION, ...target, timeoutMs });
      if (r.result === 'success') return null;
      return `HTTP lifecycle hook (${action.path ?? ''}) ${who} failed - error: ${r.output}, message: ""`;
    } catch (err) {
      return `HTTP lifecycle hook (${action.path ?? ''}) ${who} failed - error: ${(err as Error).message}, message: ""`;
    }
  }
  return null;
}

/** Where events of runPreStopHook go (a PodSyncResult). */
export interface HookEventSink {
  events: PodEventRecord[];
}

/**
 * runPreStopHook runs the preStop hook of the running container `c` (if its spec in `pod` has one
 * and `gracePeriodSeconds` > 0), waiting at most the grace period, and resolves the grace period
 * left for SIGTERM→SIGKILL: the time the hook took is subtracted, with at least
 * kMinimumGracePeriodSeconds left (kuberuntime killContainer + executePreStopHook). A failed hook
 * is a `FailedPreStopHook` Warning event; the stop goes on either way. `podIp`: status.podIP (the
 * target of an httpGet hook without a host; '' = inside the sandbox's netns). Never rejects.
 */
export async function runPreStopHook(
  runtime: HookRuntime,
  pod: Pod,
  c: Pick<RuntimeContainer, 'id' | 'name' | 'sandboxId'>,
  gracePeriodSeconds: number,
  hostIp: string,
  out: HookEventSink,
  clock: Clock = realClock,
  podIp = '',
): Promise<number> {
  const spec = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === c.name);
  if (!spec || !hasHook(spec, 'preStop') || !(gracePeriodSeconds > 0)) return gracePeriodSeconds;
  const started = clock.monotonicMs();
  const msg = await runLifecycleHook(
    runtime,
    pod,
    spec,
    c.id,
    'preStop',
    { hostIp, podIp, sandboxId: c.sandboxId },
    gracePeriodSeconds * 1000,
  );
  const fieldPath = `spec.${(pod.spec?.containers ?? []).includes(spec) ? 'containers' : 'initContainers'}{${c.name}}`;
  if (msg) out.events.push({ type: 'Warning', reason: 'FailedPreStopHook', message: msg, fieldPath });
  const elapsed = Math.floor((clock.monotonicMs() - started) / 1000);
  return Math.max(kMinimumGracePeriodSeconds, gracePeriodSeconds - elapsed);
}
