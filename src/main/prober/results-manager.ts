/**
 * Counterpart of pkg/kubelet/prober/results/results_manager.go (the cache of probe results by
 * container ID) and of the threshold bookkeeping of pkg/kubelet/prober/worker.go doProbe: pure
 * state and functions, no timers and no I/O. Main thread.
 */

/** Probe types, as the kubelet's probeType. */
export type ProbeType = 'liveness' | 'readiness' | 'startup';

/** A probe verdict: `unknown` before anything is known (the kubelet's results.Unknown). */
export type ProbeResult = 'success' | 'failure' | 'unknown';

/** The spec fields that decide thresholds (defaults applied: successThreshold 1, failureThreshold 3). */
export interface ProbeThresholds {
  successThreshold: number;
  failureThreshold: number;
}

/** ProbeWorkerState: the per-(pod, container, probe type) counters of a probe worker. */
export interface ProbeWorkerState {
  type: ProbeType;
  /** The container the counters are about ('' when no container runs). */
  containerId: string;
  /** The last raw result and how many times in a row it came (resultRun). */
  lastResult: ProbeResult;
  resultRun: number;
  /** Set after a liveness/startup failure was published: no probing until the container ID changes. */
  onHold: boolean;
  /** The published result (what status and the sync act on). */
  result: ProbeResult;
}

/**
 * initialResult: what a probe reports before its first verdict, as the kubelet's worker
 * initialValue: readiness `failure` (a container with a readiness probe is not ready until it
 * passes), liveness `success` (never kill before a probe failed), startup `unknown`.
 */
export function initialResult(type: ProbeType): ProbeResult {
  return type === 'readiness' ? 'failure' : type === 'liveness' ? 'success' : 'unknown';
}

/** newProbeWorkerState: fresh counters for `containerId` (a new container resets everything). */
export function newProbeWorkerState(type: ProbeType, containerId: string): ProbeWorkerState {
  return { type, containerId, lastResult: 'unknown', resultRun: 0, onHold: false, result: initialResult(type) };
}

/** What applyProbeResult changed. */
export interface ProbeTransition {
  /** The published result changed. */
  changed: boolean;
  /** A liveness or startup failure was just published: the container must be killed. */
  kill: boolean;
}

/**
 * applyProbeResult folds one probe verdict into `state` (mutated), as worker.doProbe: a verdict
 * repeated `resultRun` times is published only once the run reaches successThreshold (success)
 * or failureThreshold (failure); a published liveness/startup failure puts the worker on hold
 * (and resets the run) until a new container appears. `unknown` verdicts (the probe could not run)
 * change nothing.
 */
export function applyProbeResult(state: ProbeWorkerState, verdict: ProbeResult, t: ProbeThresholds): ProbeTransition {
  if (verdict === 'unknown' || state.onHold) return { changed: false, kill: false };
  if (state.lastResult === verdict) state.resultRun++;
  else {
    state.lastResult = verdict;
    state.resultRun = 1;
  }
  if ((verdict === 'failure' && state.resultRun < t.failureThreshold) || (verdict === 'success' && state.resultRun < t.successThreshold)) {
    return { changed: false, kill: false };
  }
  const changed = state.result !== verdict;
  state.result = verdict;
  let kill = false;
  if ((state.type === 'liveness' || state.type === 'startup') && verdict === 'failure') {
    state.onHold = true;
    state.resultRun = 0;
    kill = true;
  }
  return { changed, kill };
}

/**
 * ResultsManager: probe results by container ID (results.Manager). `set` returns true when the
 * stored value changed. Main thread.
 */
export class ResultsManager {
  readonly #results = new Map<string, ProbeResult>();

  get(containerId: string): ProbeResult | undefined {
    return this.#results.get(containerId);
  }

  set(containerId: string, result: ProbeResult): boolean {
    const before = this.#results.get(containerId);
    this.#results.set(containerId, result);
    return before !== result;
  }

  remove(containerId: string): void {
    this.#results.delete(containerId);
  }

  get size(): number {
    return this.#results.size;
  }
}
