/**
 * Counterpart of pkg/kubelet/server's HostInterface as the kubelet implements it: the server's view
 * of the agent ({@link AgentHost}), composed from the parts that answer each request — the pod
 * manager and status manager for reads, the intake host for the `api` source's writes, logs, the
 * Node object and events, the watch cache, the metrics and the health checks. It holds no state of
 * its own and touches nothing: every method reads or forwards. Main thread only.
 */
import type { Pod } from '../shared/api.js';

import type { AgentHost, HealthReport } from '../server/agent-host.js';
import type { IntakeHost } from './intake-host.js';
import type { KubeletMetrics } from './metrics/kubelet-metrics.js';
import type { PodManager } from './pod/pod-manager.js';
import type { WatchCache } from './watch/watch-cache.js';

/** The parts {@link newServerHost} composes. */
export interface ServerHostParts {
  podManager: PodManager;
  intake: IntakeHost;
  watchCache: WatchCache;
  metrics: KubeletMetrics;
  healthz(): HealthReport;
}

/** listPods: every pod of the pod manager with the status last generated for it. */
export function listPods(podManager: PodManager): Pod[] {
  const pods: Pod[] = [];
  for (const r of podManager.all()) pods.push({ ...r.pod, status: r.status });
  return pods;
}

/** newServerHost builds the AgentHost the server is started with. */
export function newServerHost(parts: ServerHostParts): AgentHost {
  const { podManager, intake, watchCache, metrics } = parts;
  return {
    listPods: () => listPods(podManager),
    resourceVersion: () => watchCache.resourceVersion(),
    getPod(namespace, name) {
      const r = podManager.getByFullName(`${namespace}/${name}`);
      return r ? { ...r.pod, status: r.status } : undefined;
    },
    healthz: () => parts.healthz(),
    watch: (from, onEvent) => watchCache.watch(from, onEvent),
    metrics: () => metrics.text(),
    observeHttpRequest: (method, path, code, seconds) => metrics.observeHttpRequest(method, path, code, seconds),
    submitPods: (pods) => intake.submitPods(pods),
    replacePod: (namespace, name, pod) => intake.replacePod(namespace, name, pod),
    deletePod: (namespace, name, gracePeriodSeconds) => intake.deletePod(namespace, name, gracePeriodSeconds),
    listEvents: () => intake.listEvents(),
    getNode: () => intake.getNode(),
    containerLogs: (request) => intake.containerLogs(request),
  };
}
