// Counterpart of the kubelet's runtime client construction (pkg/kubelet/cri/remote NewRemoteRuntimeService on --container-runtime-endpoint): the one place a worker thread picks its runtime.
/**
 * Every worker entry (sync.worker.ts, docker-events.worker.ts, container-logs.worker.ts) gets its
 * ContainerRuntime here from its bootstrap's `runtime` word, so none of them branches on it.
 * Worker threads only.
 */
import type { FakeRuntimeTuning } from '../../shared/fake-runtime-tuning.js';
import type { RuntimeEndpoint } from '../../shared/runtime-endpoint.js';
import { limitFromEnv, withDockerAdmission } from './docker/docker-admission.js';
import { getDockerRuntime } from './docker/docker-runtime.js';
import { newFakeRuntime } from './fake/fake-runtime.js';
import { withFakeTuning } from './fake/fake-tuning.js';
import type { ContainerRuntime } from './runtime.js';

/** The part of a worker's bootstrap (workerData) that chooses its runtime: the endpoint and how calls to it are bounded. */
export interface RuntimeBootstrap extends RuntimeEndpoint {
  /** --runtime-request-timeout, milliseconds: each Docker call's deadline (deadline.ts); absent = 2 min, 0 = none. */
  runtimeRequestTimeoutMs?: number;
  /** Latency and failure injection of the fake runtime (`--fake-runtime-latency`, `--fake-runtime-failure-rate`). */
  fakeRuntime?: FakeRuntimeTuning;
}

let fakeRuntime: ContainerRuntime | undefined;
const admittedDocker = new Map<string, ContainerRuntime>();

/**
 * getRuntime returns this thread's runtime for `b`: the Docker runtime of `b.dockerSocketPath`
 * (one dockerode client per socket per thread; each call under `b.runtimeRequestTimeoutMs`) behind this thread's adaptive admission of creates,
 * starts and removes (docker-admission.ts), or this thread's one in-memory fake (call
 * recording off, so it can hold 10,000 pods; tuned by `b.fakeRuntime` when first built). Not
 * scoped to a node: wrap it with scopeToNode (node-scope.ts) before touching containers.
 */
export function getRuntime(b: RuntimeBootstrap): ContainerRuntime {
  if ((b.runtime ?? 'docker') === 'docker') {
    const key = `${b.dockerSocketPath}\0${b.runtimeRequestTimeoutMs ?? ''}`;
    let rt = admittedDocker.get(key);
    if (!rt) admittedDocker.set(key, (rt = withDockerAdmission(getDockerRuntime(b.dockerSocketPath, b.runtimeRequestTimeoutMs), limitFromEnv())));
    return rt;
  }
  return (fakeRuntime ??= withFakeTuning(newFakeRuntime({ recordCalls: false }), b.fakeRuntime));
}
