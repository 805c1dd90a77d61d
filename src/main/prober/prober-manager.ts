/**
 * Counterpart of pkg/kubelet/prober/prober_manager.go, worker.go and prober.go: the probe manager.
 * One probe worker per (pod UID, container, liveness|readiness|startup), all timed by ONE shared
 * scheduler (scheduler.ts: a min-heap and one timer, bounded probes in flight). The probes
 * themselves run on the worker pool (`execProbe`, `grpcProbe`, and `netProbe` of pods without a pod IP), except
 * httpGet/tcpSocket probes of an address the node reaches (hostNetwork, pod IP), which this thread
 * dials itself (io/http-probe.ts: a raw-socket GET, no worker hop); the main thread otherwise keeps
 * counters:
 * - readiness drives ContainerStatus.ready and the Ready/ContainersReady conditions (probeStatus);
 * - a startup probe holds liveness and readiness back until it succeeds, and sets `started`; its
 *   success runs the readiness probe at once (prober_manager.go UpdatePodStatus's manual trigger);
 * - a liveness or startup failure (failureThreshold in a row) asks the pod worker for a sync that
 *   kills and restarts the container (probeKills → SyncPodTask.livenessFailed);
 * - every failed probe is recorded as an `Unhealthy` Warning event (`Liveness probe failed: …`).
 * Workers start when a container of that name runs (its ID is known) and are reset when its ID
 * changes; they go with the container, the spec entry or the pod.
 * Sidecars (init containers with `restartPolicy: Always`) are probed as app containers are, as the
 * kubelet's AddPod does for restartable init containers: their readiness counts for the pod's Ready
 * condition, a liveness or startup failure restarts them, and their startup probe's success is what
 * lets the next init container (or the app containers) start (`startedSidecars`, onSync).
 */
import type { Container, Pod, Probe } from '../../shared/api.js';
import { realClock, type Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logging.js';
import { podFields } from '../../shared/logging.js';
import { isRestartableInitContainer } from '../../shared/pod-policy.js';
import { PROTOCOL_VERSION } from '../../shared/thread-wire.js';
import type { ExecProbeTask, GrpcProbeTask, NetProbeTask, ProbeKill, ProbeOutcome } from '../../shared/probe-tasks.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import { runDirectNetProbe } from '../../io/http-probe.js';
import { grpcProbeTarget, netProbeTarget, type HttpGetAction, type TcpSocketAction } from '../../shared/probe-target.js';
import type { PodEventRecord } from '../../shared/sync-tasks.js';
import { applyProbeResult, newProbeWorkerState, type ProbeType, type ProbeWorkerState } from './results-manager.js';
import { newProbeScheduler, type ProbeScheduler } from './scheduler.js';

/** The part of the worker pool the probe manager uses (PodSyncRunner.run for probe tasks). */
export interface ProbeRunner {
  run(task: ExecProbeTask | NetProbeTask | GrpcProbeTask): Promise<ProbeOutcome>;
}

/** Options of newProberManager. */
export interface ProberManagerOptions {
  /** The node's address: the target of hostNetwork pods' httpGet/tcpSocket probes. */
  hostIp: string;
  /** Probes running at once across the node (default 16). */
  maxInFlight?: number;
}

/** Dependencies of newProberManager. */
export interface ProberManagerDeps {
  runner: ProbeRunner;
  /**
   * Runs an httpGet/tcpSocket probe of a directly reachable target on this thread; default
   * runDirectNetProbe (io/http-probe.ts). Tests pass a fake.
   */
  directProbe?: (task: NetProbeTask) => Promise<ProbeOutcome>;
  /** Records Unhealthy events (the agent's event recorder). */
  recordEvent(pod: Pod, event: PodEventRecord): void;
  logger: Logger;
  /** A readiness or startup result changed: the pod's status should be generated again. */
  onStatusChange(uid: string): void;
  /**
   * The pod should be synced: a liveness or startup probe failed for good (probeKills has it), or a
   * sidecar's startup probe succeeded (startedSidecars has it: the next container may start).
   */
  onKill(uid: string): void;
  /** Clock and timers (tests pass a fake); default the real ones. */
  clock?: Clock;
  /** Counts every probe's result (prober_probe_total at /metrics/probes, main/stats/probe-metrics.ts) and drops a removed pod's series. Optional. */
  probeMetrics?: {
    observe(
      type: ProbeType,
      result: ProbeOutcome['result'],
      pod: { uid: string; name: string; namespace: string },
      container: string,
    ): void;
    forgetPod(uid: string): void;
  };
}

/** Readiness and startedness of one container as its probes say. */
export interface ContainerProbeStatus {
  ready: boolean;
  started: boolean;
}

/** ProberManager: the node's probe manager. Main thread only. */
export interface ProberManager {
  /**
   * updatePod reconciles the probe workers of `pod` with what runs (`runtimePod`, after a sync):
   * starts workers for running containers with probes, resets those whose container ID changed,
   * stops those whose container stopped or whose probe left the spec. `podIp` is status.podIP.
   * Idempotent.
   */
  updatePod(pod: Pod, runtimePod: RuntimePod | null, podIp: string): void;
  /** removePod stops every probe worker of pod `uid` (pod terminating or gone). */
  removePod(uid: string): void;
  /**
   * probeStatus: `{ready, started}` of container `containerName` (runtime ID `containerId`) of
   * pod `uid` per its readiness and startup probes; undefined when it has neither (then a running
   * container is ready and started).
   */
  probeStatus(uid: string, containerName: string, containerId: string): ContainerProbeStatus | undefined;
  /** probeKills: the containers of pod `uid` whose liveness or startup probe failed and which still run. */
  probeKills(uid: string): ProbeKill[];
  /**
   * startedSidecars: the runtime IDs of pod `uid`'s running sidecars whose startup probe has
   * succeeded (the kubelet's startupManager.Get(id) == Success), for SyncPodTask.startedSidecars.
   */
  startedSidecars(uid: string): string[];
  /** Figures: probe workers, and the scheduler's. */
  stats(): { workers: number; jobs: number; inFlight: number; waiting: number; timers: number };
  /** Stops probing; resolves when the probes in flight have returned. */
  stop(): Promise<void>;
}

const kTypes: readonly ProbeType[] = ['startup', 'liveness', 'readiness'];
const kProbeField: Record<ProbeType, 'startupProbe' | 'livenessProbe' | 'readinessProbe'> = {
  startup: 'startupProbe',
  liveness: 'livenessProbe',
  readiness: 'readinessProbe',
};
const kTitle: Record<ProbeType, string> = { startup: 'Startup', liveness: 'Liveness', readiness: 'Readiness' };

interface ProbeWorker {
  key: string;
  uid: string;
  containerName: string;
  /** True for a sidecar (an init container with `restartPolicy: Always`). */
  sidecar: boolean;
  type: ProbeType;
  probe: Probe;
  state: ProbeWorkerState;
  /** When the probed container started, epoch ms. */
  startedAtMs: number;
  /** True while the scheduler has a job for this worker. */
  scheduled: boolean;
}

interface PodProbes {
  pod: Pod;
  podIp: string;
  sandboxId: string;
  workers: Map<string, ProbeWorker>;
}

const sec = (v: number | undefined, dflt: number): number => (typeof v === 'number' && v >= 0 ? v : dflt);

/** probedContainers: the app containers and the sidecars (restartable init containers) of `pod`, with which is which. */
function probedContainers(pod: Pod): Array<{ c: Container; sidecar: boolean }> {
  return [
    ...(pod.spec?.containers ?? []).map((c) => ({ c, sidecar: false })),
    ...(pod.spec?.initContainers ?? []).filter(isRestartableInitContainer).map((c) => ({ c, sidecar: true })),
  ];
}

class ProberManagerImpl implements ProberManager {
  readonly #pods = new Map<string, PodProbes>();
  readonly #scheduler: ProbeScheduler;
  readonly #clock: Clock;
  #stopped = false;

  constructor(
    private readonly opts: ProberManagerOptions,
    private readonly deps: ProberManagerDeps,
  ) {
    this.#clock = deps.clock ?? realClock;
    this.#scheduler = newProbeScheduler({ maxInFlight: opts.maxInFlight ?? 16 }, this.#clock);
  }

  updatePod(pod: Pod, runtimePod: RuntimePod | null, podIp: string): void {
    if (this.#stopped) return;
    const uid = pod.metadata?.uid ?? '';
    if (!uid) return;
    let pp = this.#pods.get(uid);
    const sandbox = runtimePod?.sandboxes[0];
    const sandboxId = sandbox && sandbox.state === 'running' ? sandbox.id : '';
    const wanted = new Set<string>();
    for (const { c, sidecar } of probedContainers(pod)) {
      for (const type of kTypes) {
        const probe = c[kProbeField[type]];
        if (!probe) continue;
        if (!pp) this.#pods.set(uid, (pp = { pod, podIp, sandboxId, workers: new Map() }));
        const key = `${uid}/${c.name}/${type}`;
        wanted.add(key);
        const newest = runtimePod?.containers.find((r) => r.name === c.name);
        const running = newest?.state === 'running' ? newest : undefined;
        let w = pp.workers.get(key);
        if (!w) {
          w = {
            key,
            uid,
            containerName: c.name,
            sidecar,
            type,
            probe,
            state: newProbeWorkerState(type, running?.id ?? ''),
            startedAtMs: running?.startedAtMs ?? 0,
            scheduled: false,
          };
          pp.workers.set(key, w);
        }
        w.probe = probe;
        if ((running?.id ?? '') !== w.state.containerId) {
          // A new container (or none): the kubelet's worker resets its counters on a new ID.
          w.state = newProbeWorkerState(type, running?.id ?? '');
          w.startedAtMs = running?.startedAtMs ?? 0;
          this.#unschedule(w);
        }
        if (running && !w.scheduled) this.#schedule(w);
        if (!running) this.#unschedule(w);
      }
    }
    if (!pp) return;
    pp.pod = pod;
    pp.podIp = podIp;
    pp.sandboxId = sandboxId;
    for (const [key, w] of pp.workers) {
      if (wanted.has(key)) continue;
      this.#unschedule(w);
      pp.workers.delete(key);
    }
    if (pp.workers.size === 0) this.#pods.delete(uid);
  }

  removePod(uid: string): void {
    const pp = this.#pods.get(uid);
    this.deps.probeMetrics?.forgetPod(uid);
    if (!pp) return;
    for (const w of pp.workers.values()) this.#unschedule(w);
    this.#pods.delete(uid);
  }

  #schedule(w: ProbeWorker): void {
    const periodMs = sec(w.probe.periodSeconds, 10) * 1000;
    const now = this.#clock.now();
    const notBefore = w.startedAtMs + sec(w.probe.initialDelaySeconds, 0) * 1000;
    // Spread probes of pods started together over a tenth of the period (worker.go jitters its first run).
    const jitter = Math.floor(Math.random() * Math.min(periodMs, 10_000) * 0.1);
    w.scheduled = true;
    this.#scheduler.add(w.key, Math.max(now, notBefore) + jitter, Math.max(1, periodMs), () => this.#doProbe(w));
  }

  #unschedule(w: ProbeWorker): void {
    if (!w.scheduled) return;
    w.scheduled = false;
    this.#scheduler.remove(w.key);
  }

  #current(w: ProbeWorker): boolean {
    return this.#pods.get(w.uid)?.workers.get(w.key) === w;
  }

  /** One probe of worker `w` (worker.doProbe). */
  async #doProbe(w: ProbeWorker): Promise<void> {
    const pp = this.#pods.get(w.uid);
    if (!pp || !this.#current(w) || !w.state.containerId || w.state.onHold) return;
    if (w.type === 'startup' && w.state.result === 'success') return; // started: the startup probe is done
    if (w.type !== 'startup') {
      const startup = pp.workers.get(`${w.uid}/${w.containerName}/startup`);
      if (startup && !(startup.state.containerId === w.state.containerId && startup.state.result === 'success')) return;
    }
    if (this.#clock.now() < w.startedAtMs + sec(w.probe.initialDelaySeconds, 0) * 1000) return;
    const containerId = w.state.containerId;
    const container = probedContainers(pp.pod).find((e) => e.c.name === w.containerName)?.c;
    if (!container) return;
    const outcome = await this.#runProbe(pp, container, w.probe, containerId);
    if (!this.#current(w) || w.state.containerId !== containerId || this.#stopped) return;
    const pod = pp.pod;
    this.deps.probeMetrics?.observe(
      w.type,
      outcome.result,
      { uid: w.uid, name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '' },
      w.containerName,
    );
    if (outcome.result === 'failure') {
      this.deps.recordEvent(pod, {
        type: 'Warning',
        reason: 'Unhealthy',
        message: `${kTitle[w.type]} probe failed: ${outcome.output.trim()}`,
        fieldPath: `spec.${w.sidecar ? 'initContainers' : 'containers'}{${w.containerName}}`,
      });
    } else if (outcome.result === 'unknown') {
      this.deps.logger.debug(
        { ...podFields(pod), container: w.containerName, probeType: w.type, output: outcome.output },
        'Probe could not run',
      );
    }
    const t = applyProbeResult(w.state, outcome.result, {
      successThreshold: w.probe.successThreshold ?? 1,
      failureThreshold: w.probe.failureThreshold ?? 3,
    });
    if (t.changed)
      this.deps.logger.info(
        { ...podFields(pod), container: w.containerName, containerID: containerId, probeType: w.type, result: w.state.result },
        'Probe result changed',
      );
    if (t.kill) {
      this.deps.logger.info(
        { ...podFields(pod), container: w.containerName, containerID: containerId, probeType: w.type },
        `Container failed ${w.type} probe, will be restarted`,
      );
      this.deps.onKill(w.uid);
    }
    // Started: the readiness probe runs now rather than a period later, as the kubelet's
    // UpdatePodStatus triggers a started, not yet ready container's readiness worker
    // (prober_manager.go, worker.manualTriggerCh): the pod is Ready right after startup.
    if (t.changed && w.type === 'startup' && w.state.result === 'success') this.#scheduler.trigger(`${w.uid}/${w.containerName}/readiness`);
    if (t.changed && (w.type === 'readiness' || w.type === 'startup')) this.deps.onStatusChange(w.uid);
    // A sidecar that started lets the next init container (or the app containers) start: sync now.
    if (t.changed && w.type === 'startup' && w.sidecar && w.state.result === 'success') this.deps.onKill(w.uid);
  }

  async #runProbe(pp: PodProbes, container: Container, probe: Probe, containerId: string): Promise<ProbeOutcome> {
    const timeoutMs = Math.max(1, sec(probe.timeoutSeconds, 1)) * 1000;
    try {
      if (probe.exec) {
        return await this.deps.runner.run({
          kind: 'execProbe',
          protocol: PROTOCOL_VERSION,
          containerId,
          command: probe.exec.command ?? [],
          timeoutMs,
        });
      }
      if (probe.grpc) {
        // gRPC probes run on the worker pool (workers/probes/grpc-probe.ts: grpc-js lives there).
        const target = grpcProbeTarget(pp.pod, probe.grpc, { hostIp: this.opts.hostIp, podIp: pp.podIp, sandboxId: pp.sandboxId });
        return await this.deps.runner.run({ kind: 'grpcProbe', protocol: PROTOCOL_VERSION, ...target, timeoutMs });
      }
      const mode = probe.httpGet ? 'http' : probe.tcpSocket ? 'tcp' : null;
      if (!mode) return { result: 'unknown', output: 'probe has no handler' };
      const action = (probe.httpGet ?? probe.tcpSocket) as HttpGetAction | TcpSocketAction;
      const target = netProbeTarget(pp.pod, container, mode, action, {
        hostIp: this.opts.hostIp,
        podIp: pp.podIp,
        sandboxId: pp.sandboxId,
      });
      const task = { kind: 'netProbe', protocol: PROTOCOL_VERSION, ...target, timeoutMs } as const;
      // A target the node reaches directly is dialled from this thread (no worker-pool hop, issue
      // #16); a pod without a pod IP is probed inside its netns by a worker's helper.
      return await (task.sandboxId ? this.deps.runner.run(task) : (this.deps.directProbe ?? runDirectNetProbe)(task));
    } catch (err) {
      return { result: 'unknown', output: (err as Error)?.message ?? String(err) };
    }
  }

  probeStatus(uid: string, containerName: string, containerId: string): ContainerProbeStatus | undefined {
    const pp = this.#pods.get(uid);
    if (!pp) return undefined;
    const r = pp.workers.get(`${uid}/${containerName}/readiness`);
    const s = pp.workers.get(`${uid}/${containerName}/startup`);
    if (!r && !s) return undefined;
    const started = s ? s.state.containerId === containerId && s.state.result === 'success' : true;
    const ready = started && (r ? r.state.containerId === containerId && r.state.result === 'success' : true);
    return { ready, started };
  }

  probeKills(uid: string): ProbeKill[] {
    const pp = this.#pods.get(uid);
    if (!pp) return [];
    const out: ProbeKill[] = [];
    for (const w of pp.workers.values()) {
      if ((w.type !== 'liveness' && w.type !== 'startup') || !w.state.onHold || w.state.result !== 'failure' || !w.state.containerId)
        continue;
      const grace = w.probe.terminationGracePeriodSeconds;
      out.push({
        name: w.containerName,
        containerId: w.state.containerId,
        message: `${w.sidecar ? 'Init container' : 'Container'} ${w.containerName} failed ${w.type} probe`,
        ...(typeof grace === 'number' && grace >= 0 ? { gracePeriodSeconds: grace } : {}),
      });
    }
    return out;
  }

  startedSidecars(uid: string): string[] {
    const pp = this.#pods.get(uid);
    if (!pp) return [];
    const out: string[] = [];
    for (const w of pp.workers.values()) {
      if (w.sidecar && w.type === 'startup' && w.state.containerId && w.state.result === 'success') out.push(w.state.containerId);
    }
    return out;
  }

  stats() {
    let workers = 0;
    for (const pp of this.#pods.values()) workers += pp.workers.size;
    return { workers, ...this.#scheduler.stats() };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#scheduler.stop();
  }
}

/** newProberManager creates the probe manager; nothing is probed until updatePod. */
export function newProberManager(options: ProberManagerOptions, deps: ProberManagerDeps): ProberManager {
  return new ProberManagerImpl(options, deps);
}
