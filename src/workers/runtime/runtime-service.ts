// Counterpart of the kubelet's runtime client construction (pkg/kubelet/cri/remote NewRemoteRuntimeService on --container-runtime-endpoint): the one place a worker thread picks its runtime.
/**
 * Today's Docker-shaped ContainerRuntime of a thread, from its bootstrap's `runtime` word (Docker
 * or the fake). The worker entries take their NodeRuntime from ./node-runtime.ts getRuntime, which
 * builds on this for Docker and the fake; the sync worker still takes the ContainerRuntime itself
 * until kuberuntime speaks the CRI (issue #40). Worker threads only.
 */
import { AgentError } from '../../shared/errors.js';
import type { FakeRuntimeTuning } from '../../shared/fake-runtime-tuning.js';
import type { RuntimeEndpoint } from '../../shared/runtime-endpoint.js';
import { limitFromEnv, withDockerAdmission } from './docker/docker-admission.js';
import { getDockerRuntime } from './docker/docker-runtime.js';
import { newFakeRuntime } from './fake/fake-runtime.js';
import { withFakeTuning } from './fake/fake-tuning.js';
import type { ContainerRuntime } from './container/runtime.js';

/** The part of a worker's bootstrap (workerData) that chooses its runtime: the endpoint and how calls to it are bounded. */
export interface RuntimeBootstrap extends RuntimeEndpoint {
  /** --runtime-request-timeout, milliseconds: each Docker call's deadline (cri/deadline.ts); absent = 2 min, 0 = none. */
  runtimeRequestTimeoutMs?: number;
  /** Latency and failure injection of the fake runtime (`--fake-runtime-latency`, `--fake-runtime-failure-rate`). */
  fakeRuntime?: FakeRuntimeTuning;
}

let fakeRuntime: ContainerRuntime | undefined;
const admittedDocker = new Map<string, ContainerRuntime>();

/**
 * getRuntime returns this thread's runtime for `b`: the Docker runtime of `b.dockerSocketPath`
 * (one Engine client — undici for a pod's calls, dockerode for streams — per socket per thread; each call under `b.runtimeRequestTimeoutMs`) behind this thread's adaptive admission of creates,
 * starts and removes (docker-admission.ts), or this thread's one in-memory fake (call
 * recording off, so it can hold 10,000 pods; tuned by `b.fakeRuntime` when first built). Not
 * scoped to a node: wrap it with scopeToNode (node-scope.ts) before touching containers.
 * @throws AgentError ERR_RUNTIME for runtime 'remote' (the CRI has no ContainerRuntime).
 */
export function getRuntime(b: RuntimeBootstrap): ContainerRuntime {
  if (b.runtime === 'remote') {
    throw new AgentError(
      'ERR_RUNTIME',
      'a CRI runtime (--container-runtime-endpoint) has no Docker-shaped ContainerRuntime: use node-runtime.ts getRuntime (issue #40)',
    );
  }
  if ((b.runtime ?? 'docker') === 'docker') {
    const key = `${b.dockerSocketPath}\0${b.runtimeRequestTimeoutMs ?? ''}`;
    let rt = admittedDocker.get(key);
    if (!rt)
      admittedDocker.set(key, (rt = withDockerAdmission(getDockerRuntime(b.dockerSocketPath, b.runtimeRequestTimeoutMs), limitFromEnv())));
    return rt;
  }
  return (fakeRuntime ??= withFakeTuning(newFakeRuntime({ recordCalls: false }), b.fakeRuntime));
}
