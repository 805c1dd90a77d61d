/**
 * Latency and failure injection for the fake runtime (kubemark's hollow-node idea: the kubelet's
 * code paths run for real, the runtime only pretends): wraps a ContainerRuntime so each operation
 * waits its configured latency and fails with its configured probability. Worker threads only.
 */
import { realClock, type Clock } from '../../../shared/clock.js';
import { AgentError } from '../../../shared/errors.js';
import type { FakeRuntimeOp, FakeRuntimeTuning } from '../../../shared/fake-runtime-tuning.js';
import type { ContainerRuntime } from '../container/runtime.js';
import { withOverrides } from '../container/override.js';

/**
 * withFakeTuning returns `runtime` with `tuning` applied: before each list/inspect/create/start/
 * stop/remove it waits `latencyMs[op]` milliseconds, then fails with probability
 * `failureRate[op]` by throwing a retriable AgentError `ERR_RUNTIME` ("injected failure"), as a
 * flaky dockerd would. Other methods pass through. `random` (default Math.random) is for tests;
 * the latency is waited on `clock` (default realClock).
 * Returns `runtime` itself when nothing is tuned.
 */
export function withFakeTuning(
  runtime: ContainerRuntime,
  tuning: FakeRuntimeTuning | undefined,
  random: () => number = Math.random,
  clock: Clock = realClock,
): ContainerRuntime {
  const latency = tuning?.latencyMs ?? {};
  const failure = tuning?.failureRate ?? {};
  if (!Object.values(latency).some((v) => v) && !Object.values(failure).some((v) => v)) return runtime;
  const gate = async (op: FakeRuntimeOp, what: string) => {
    const ms = latency[op] ?? 0;
    if (ms > 0) await new Promise<void>((resolve) => clock.setTimeout(resolve, ms));
    const rate = failure[op] ?? 0;
    if (rate > 0 && random() < rate)
      throw new AgentError('ERR_RUNTIME', `${what}: injected failure (fake runtime, ${op} failure rate ${rate})`, { retriable: true });
  };
  const overrides: Partial<ContainerRuntime> = {
    listContainers: async (f) => {
      await gate('list', 'list containers');
      return runtime.listContainers(f);
    },
    inspectContainer: async (id) => {
      await gate('inspect', `inspect container ${id}`);
      return runtime.inspectContainer(id);
    },
    createContainer: async (s) => {
      await gate('create', `create container ${s.name}`);
      return runtime.createContainer(s);
    },
    startContainer: async (id) => {
      await gate('start', `start container ${id}`);
      return runtime.startContainer(id);
    },
    stopContainer: async (id, t) => {
      await gate('stop', `stop container ${id}`);
      return runtime.stopContainer(id, t);
    },
    removeContainer: async (id) => {
      await gate('remove', `remove container ${id}`);
      return runtime.removeContainer(id);
    },
  };
  return withOverrides(runtime, overrides);
}
