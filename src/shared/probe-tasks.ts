/**
 * The probe tasks of the sync pool (pkg/kubelet/prober: exec, httpGet/tcpSocket and gRPC probes run
 * off the main thread) and what a probe returned. Plain structured-cloneable data only (see thread-wire.ts).
 */

/** One container the probe manager wants killed (failed liveness or startup probe). */
export interface ProbeKill {
  /** Container name in the spec. */
  name: string;
  /** The Docker container ID that failed; a newer attempt is left alone. */
  containerId: string;
  /** Kill message, e.g. `Container web failed liveness probe`. */
  message: string;
  /** The probe-level terminationGracePeriodSeconds, seconds, if the probe sets it (overrides the pod's). */
  gracePeriodSeconds?: number;
}

/**
 * execProbe: run a probe's (or hook's) command in a running container with `docker exec`
 * (kubelet prober.runProbe for Exec); exit code 0 is success.
 */
export interface ExecProbeTask {
  kind: 'execProbe';
  protocol: number;
  containerId: string;
  command: string[];
  /** timeoutSeconds in milliseconds: a command still running then is a failure. */
  timeoutMs: number;
}

/**
 * netProbe: an httpGet or tcpSocket probe (kubelet pkg/probe/http and pkg/probe/tcp). With
 * `sandboxId`, it runs inside that sandbox's network namespace (pods with network `none`, which
 * have no address reachable from the host); otherwise it connects from the node to `host`.
 */
export interface NetProbeTask {
  kind: 'netProbe';
  protocol: number;
  mode: 'http' | 'tcp';
  /** Address to connect to (an IP, or a name for httpGet.host). */
  host: string;
  port: number;
  /** http only: `HTTP` or `HTTPS` (HTTPS certificates are not verified, as the kubelet). */
  scheme?: 'HTTP' | 'HTTPS';
  /** http only: path with query, e.g. `/healthz`. */
  path?: string;
  /** http only: extra request headers (httpHeaders). */
  headers?: Array<{ name: string; value: string }>;
  /** Enter the network namespace of this sandbox container first. */
  sandboxId?: string;
  timeoutMs: number;
}

/**
 * grpcProbe: a gRPC probe (kubelet pkg/probe/grpc): one `grpc.health.v1.Health/Check` of
 * `service` at `host:port`, plaintext. With `sandboxId`, it dials inside that sandbox's network
 * namespace (pods with network `none`); otherwise from the node. Runs on a worker thread.
 */
export interface GrpcProbeTask {
  kind: 'grpcProbe';
  protocol: number;
  /** The pod's IP (the node's for hostNetwork pods; 127.0.0.1 inside the sandbox's netns). */
  host: string;
  port: number;
  /** `grpc.service` as given ('' when unset: the server's overall health). */
  service: string;
  /** Enter the network namespace of this sandbox container first. */
  sandboxId?: string;
  /** timeoutSeconds in milliseconds: bounds the connection and the Check together. */
  timeoutMs: number;
}

/** What a probe returned: `unknown` when it could not be run (an error, not a verdict). */
export interface ProbeOutcome {
  result: 'success' | 'failure' | 'unknown';
  /** Probe output or the reason of a failure, e.g. `HTTP probe failed with statuscode: 500`. */
  output: string;
}
