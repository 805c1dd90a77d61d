/**
 * Counterpart of pkg/kubelet/lifecycle/handlers.go (HandlerRunner: exec and HTTP lifecycle hooks)
 * and the preStop part of kuberuntime_container.go (executePreStopHook): runs a container's
 * postStart or preStop hook on a worker thread, through the same exec and network probe code as
 * the prober (so an httpGet hook of a pod with network `none` runs inside its sandbox's netns).
 */
import { realClock, type Clock } from '../../shared/clock.js';
import type { Container, Pod } from '../../shared/api.js';
import { PROTOCOL_VERSION, type PodEventRecord, type RuntimeContainer } from '../../shared/messages.js';
import { netProbeTarget, type HttpGetAction, type PodNetwork } from '../../shared/probe-target.js';
import { formatPod } from './compute-pod-actions.js';
import { runExecProbe, runExecSyncProbe, type ExecSyncer } from '../probes/exec-probe.js';
import { runNetProbe } from '../probes/net-probe.js';
import type { ContainerRuntime } from '../runtime/runtime.js';

/**
 * HookRuntime: where hooks run — the Docker-shaped ContainerRuntime (`docker exec`; httpGet inside
 * the sandbox's netns when the pod has no IP), or the CRI's ContainerManager (ExecSync; httpGet to
 * the pod's IP, which the runtime's CNI gave it).
 */
export type HookRuntime = ContainerRuntime | ExecSyncer;

function isCri(runtime: HookRuntime): runtime is ExecSyncer {
  return typeof (runtime as Partial<ExecSyncer>).execSync === 'function';
}

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
    const r = isCri(runtime)
      ? await runExecSyncProbe(runtime, { containerId, command, timeoutMs })
      : await runExecProbe(runtime, { containerId, command, timeoutMs });
    if (r.result === 'success') return null;
    return `Exec lifecycle hook ([${command.join(' ')}]) ${who} failed - error: ${r.result === 'unknown' ? r.output : `command '${command.join(' ')}' exited with non-zero status`}, message: ${JSON.stringify(r.output)}`;
  }
  if (handler.httpGet) {
    const action = handler.httpGet as HttpGetAction;
    try {
      const target = netProbeTarget(pod, container, 'http', action, isCri(runtime) ? { ...net, sandboxId: '' } : net);
      const r = await runNetProbe(runtime as ContainerRuntime, { kind: 'netProbe', protocol: PROTOCOL_VERSION, ...target, timeoutMs });
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
