// Counterpart of pkg/kubelet/server's HostInterface: what the HTTP server may ask of the agent.
import type { Pod } from '../shared/api.js';

/** HealthCheck: one named check of `AgentHost.healthz()`, as a healthz.HealthChecker's result. */
export interface HealthCheck {
  /** Check name, e.g. `syncloop` or `pleg`. */
  name: string;
  /** True when the check passes. */
  ok: boolean;
  /** Why it fails (or a note when it passes). */
  message?: string;
}

/** HealthReport: the answer of `AgentHost.healthz()`. `ok` is false when any check fails. */
export interface HealthReport {
  ok: boolean;
  checks: HealthCheck[];
}

/**
 * AgentHost is the only way the server reaches the agent: src/main implements it and passes it to
 * `createServer`; the server never imports src/main. Every method runs on the main thread, is
 * synchronous and cheap (it reads the agent's in-memory caches), and must not throw for a normal
 * "not found" (return undefined).
 */
export interface AgentHost {
  /** listPods: every pod the agent manages, each with its latest PodStatus from the status manager. */
  listPods(): Pod[];
  /** getPod: one pod with its status, or undefined if the agent has no pod `namespace/name`. */
  getPod(namespace: string, name: string): Pod | undefined;
  /** healthz: the agent's health checks (e.g. sync loop and PLEG freshness), as /healthz reports them. */
  healthz(): HealthReport;
}
