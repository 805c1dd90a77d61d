/**
 * Admission of Docker-bound operations (issue #16): a worker thread's container creates, starts and
 * removes wait for a slot of an {@link AdaptiveConcurrencyLimit}, so the thread keeps Docker at its
 * knee instead of running every sync's calls at once (the pod workers run up to 32 syncs). The
 * kubelet has no such gate (it relies on the runtime's gRPC server); this is ours, for dense nodes.
 *
 * Gated: `createContainer`, `startContainer`, `removeContainer` — the calls that make dockerd,
 * containerd and runc work. Not gated: reads (list, inspect: cheap, and a relist must not queue
 * behind a burst of starts), `stopContainer` (its latency is the container's grace period, not the
 * engine's), streams, images, exec. Worker threads only; one limit per thread per engine.
 * A freed slot goes to the waiting call furthest along in a pod's start (kAdmissionPriority).
 */
import { realClock, type Clock } from '../../../shared/clock.js';
import { AgentError } from '../../../shared/errors.js';
import { AdaptiveConcurrencyLimit, type Release } from './adaptive-limit.js';
import { TimerList, type TimerEntry } from '../cri/timer-list.js';
import type { ContainerRuntime } from '../container/runtime.js';
import { withOverrides } from '../container/override.js';
import { kDockerTypeLabel, kDockerTypeSandbox } from './docker-cri-labels.js';

/**
 * kFixedLimitEnv: `KUBELET_TS_DOCKER_CONCURRENCY=<n>` fixes each worker thread's limit at n
 * (bench A/B comparisons only: `bench density` runs the agent with and without it). Unset: adaptive.
 */
export const kFixedLimitEnv = 'KUBELET_TS_DOCKER_CONCURRENCY';

/** outcomeOf: how a failed call counts for the limit: an engine that timed out or stopped answering is overload. */
function outcomeOf(err: unknown): 'error' | 'overload' {
  return err instanceof AgentError && err.code === 'ERR_RUNTIME_UNAVAILABLE' ? 'overload' : 'error';
}

/**
 * kMaxSlotHoldMs: a call still unanswered after this many milliseconds gives its slot back (counted
 * as overload) and goes on without one, so calls an engine never answers (a daemon stopping, a
 * wedged containerd) cannot hold the thread's slots for good; the Docker client has no timeout.
 */
export const kMaxSlotHoldMs = 30_000;

/** SlotHold: a granted slot's entry in the wrapper's TimerList of `maxHoldMs`: at that age it gives the slot back as overload. */
class SlotHold implements TimerEntry {
  due = 0;
  settled = false;
  readonly release: Release;

  constructor(release: Release) {
    this.release = release;
  }

  fire(): void {
    this.release('overload');
  }
}

/**
 * admitted runs `call` in a slot of `limit` (waiting only when none is free), giving it back with
 * the call's outcome, or as overload once `holds`' delay passes first. Errors pass unchanged.
 */
async function admitted<T>(
  limit: AdaptiveConcurrencyLimit,
  op: string,
  priority: number,
  call: () => Promise<T>,
  holds: TimerList,
): Promise<T> {
  const hold = new SlotHold(limit.tryAcquire(op, priority) ?? (await limit.acquire(op, priority)));
  holds.add(hold);
  try {
    const out = await call();
    holds.settle(hold);
    hold.release('ok');
    return out;
  } catch (err) {
    holds.settle(hold);
    hold.release(outcomeOf(err));
    throw err;
  }
}

/**
 * limitFromEnv: the limit for a new engine client: fixed at `env[kFixedLimitEnv]` when that is an
 * integer >= 1, else adaptive (initial 4, bounds 2..32 per thread).
 * @throws RangeError when the variable is set to anything else (names the variable and value).
 */
export function limitFromEnv(env: NodeJS.ProcessEnv = process.env): AdaptiveConcurrencyLimit {
  const fixed = env[kFixedLimitEnv];
  if (fixed === undefined || fixed === '') return new AdaptiveConcurrencyLimit();
  const n = Number(fixed);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${kFixedLimitEnv} must be an integer >= 1, got ${JSON.stringify(fixed)}`);
  return new AdaptiveConcurrencyLimit({ initialLimit: n, minLimit: n, maxLimit: n });
}

/**
 * kAdmissionPriority: which waiting call a freed slot goes to first — the one furthest along in a
 * pod's start: a container's start, then a container's create, then a sandbox's start, then a
 * sandbox's create (and removes). So a burst of new pods goes through the engine as a pipeline, pod
 * after pod, as the raw floor's chains do (sandbox create, start, container create, start), rather
 * than every sandbox first: in a FIFO, 100 pods at once made 32 sandboxes in the first second, then
 * only sandbox starts — the slowest kind (~170 ms against ~95 for a container's, the network
 * namespace is made then) — and the first pod ran after 4 s (2026-12-06 trace, 100 pods). No
 * upstream counterpart (the kubelet has no admission of runtime calls).
 */
export const kAdmissionPriority = { sandboxCreate: 0, remove: 0, sandboxStart: 1, containerCreate: 2, containerStart: 3 } as const;

/**
 * withDockerAdmission returns `runtime` with its create/start/remove calls admitted by `limit`
 * in the order of {@link kAdmissionPriority} (every other method passes through, bound to
 * `runtime`). A sandbox is told from a container by its `io.kubernetes.docker.type` label at its
 * create; a start of an ID this wrapper did not create counts as a container's. A call holds its
 * slot at most `maxHoldMs` milliseconds (default {@link kMaxSlotHoldMs}) on `clock` (default realClock). Errors pass unchanged.
 */
export function withDockerAdmission(
  runtime: ContainerRuntime,
  limit: AdaptiveConcurrencyLimit,
  maxHoldMs = kMaxSlotHoldMs,
  clock: Clock = realClock,
): ContainerRuntime {
  /** Sandboxes created through this wrapper and not yet started or removed. */
  const sandboxesToStart = new Set<string>();
  /** The slots' holds: one timer for all (../cri/timer-list.ts). */
  const holds = new TimerList(clock, maxHoldMs);
  const overrides: Partial<ContainerRuntime> = {
    createContainer: async (spec) => {
      const sandbox = spec.labels[kDockerTypeLabel] === kDockerTypeSandbox;
      const id = await admitted(
        limit,
        'create',
        sandbox ? kAdmissionPriority.sandboxCreate : kAdmissionPriority.containerCreate,
        () => runtime.createContainer(spec),
        holds,
      );
      if (sandbox) sandboxesToStart.add(id);
      return id;
    },
    startContainer: (id) => {
      const sandbox = sandboxesToStart.delete(id);
      return admitted(
        limit,
        'start',
        sandbox ? kAdmissionPriority.sandboxStart : kAdmissionPriority.containerStart,
        () => runtime.startContainer(id),
        holds,
      );
    },
    removeContainer: (id) => {
      sandboxesToStart.delete(id);
      return admitted(limit, 'remove', kAdmissionPriority.remove, () => runtime.removeContainer(id), holds);
    },
  };
  return withOverrides(runtime, overrides);
}
