/**
 * RuntimeEndpoint: which container runtime a thread talks to, the one part every thread's
 * bootstrap (workerData) shares — the pool's WorkerBootstrap, the events, logs and streams
 * workers' — and that src/workers/runtime/runtime-service.ts getRuntime reads. The counterpart of
 * the kubelet's `--container-runtime-endpoint` as it reaches the CRI client
 * (pkg/kubelet/kubelet.go PreInitRuntimeService → cri/remote NewRemoteRuntimeService). Plain
 * structured-cloneable data; the agent derives it from `--runtime` and `--docker-endpoint`.
 */

/** RuntimeName: 'docker' talks to dockerd; 'fake' is the in-memory runtime of unit tests and benches. */
export type RuntimeName = 'docker' | 'fake';

/** The runtime a thread talks to and where it is. */
export interface RuntimeEndpoint {
  /** Which runtime; absent = 'docker' (the pool's WorkerBootstrap always names it). */
  runtime?: RuntimeName;
  /** Path of the Docker Engine API unix socket (runtime 'docker'), e.g. `/var/run/docker.sock`. */
  dockerSocketPath: string;
}
