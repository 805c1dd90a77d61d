/**
 * Counterpart of pkg/kubelet/server's HostInterface as the kubelet implements it: the server's view
 * of the agent ({@link AgentHost}), composed from the parts that answer each request — the pod
 * manager (records with their last status) and the watch cache for reads, the intake API for the `api` source's writes, the body decoder for their bodies, the node API
 * for the Node object and logs, the event recorder, the watch cache, the metrics and the health
 * checks. It holds no state of
 * its own and touches nothing: every method reads or forwards. Main thread only.
 */
import type { Pod } from '../../shared/api.js';
import { configObjectResource, type ConfigObject } from '../../shared/config-objects.js';

import type { AgentHost, HealthReport, ResourceChangeKind } from '../../server/host/agent-host.js';
import type { BodyDecoder } from './body-decoder.js';
import type { EventRecorder } from '../events/recorder.js';
import type { IntakeApi } from './intake-api.js';
import type { ClaimController } from '../config/claims.js';
import type { IntakeObjectSource } from '../config/source-intake-objects.js';
import type { KubeletMetrics } from '../metrics/kubelet-metrics.js';
import type { NodeApi } from '../node/node-api.js';
import type { PodManager } from '../pod/pod-manager.js';
import type { WatchCache } from '../watch/watch-cache.js';
import type { StatsProvider } from '../stats/stats-provider.js';
import type { ProbeMetrics } from '../stats/probe-metrics.js';
import type { ObjectStore } from '../config/object-store.js';
import type { NamespaceStore } from './namespace-store.js';
import type { Clock } from '../../shared/clock.js';

/** The parts {@link newServerHost} composes. */
export interface ServerHostParts {
  podManager: PodManager;
  intake: IntakeApi;
  /** The intake's ConfigMaps and Secrets (POST /pods beside pods, PUT/DELETE /configmaps|secrets/…). */
  intakeObjects?: IntakeObjectSource;
  /** Decodes POST/PUT /pods bodies off the main thread; absent = the server decodes them itself (tests). */
  bodyDecoder?: BodyDecoder;
  nodeApi: NodeApi;
  events: EventRecorder;
  watchCache: WatchCache;
  metrics: KubeletMetrics;
  /** The stats collector (Summary API, /metrics/resource, /metrics/cadvisor); absent = those paths answer 404. */
  stats?: StatsProvider;
  /** prober_probe_total (/metrics/probes). */
  probeMetrics?: ProbeMetrics;
  healthz(): HealthReport;
  /** The merged ConfigMaps and Secrets (GET /api/v1/…/configmaps|secrets); absent = those answer 405. */
  objects?: ObjectStore;
  /** The claims' deletion protection (DELETE of a persistentvolumeclaim); absent = removed at once. */
  claims?: ClaimController;
  /** The namespaces created through the API; absent = namespace writes answer 405. */
  namespaces?: NamespaceStore;
  /** The agent's clock (AgentHost.clock); default the real clock. */
  clock?: Clock;
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
  /** readBack: a stored object as the object store reads it now (its resourceVersion stamped); a dry run's as it is. */
  const readBack = (o: ConfigObject, write: { dryRun?: boolean } | undefined): ConfigObject =>
    (write?.dryRun ? undefined : parts.objects?.get(o.kind, o.metadata?.namespace ?? 'default', o.metadata?.name ?? '')) ?? o;
  return {
    clock: parts.clock,
    listPods: () => listPods(podManager),
    resourceVersion: () => watchCache.resourceVersion(),
    podResourceVersion: (uid) => watchCache.podResourceVersion(uid),
    getPod(namespace, name) {
      const r = podManager.getByFullName(`${namespace}/${name}`);
      return r ? { ...r.pod, status: r.status } : undefined;
    },
    healthz: () => parts.healthz(),
    watch: (from, onEvent) => watchCache.watch(from, onEvent),
    metrics: () => metrics.text(),
    statsSummary: parts.stats ? () => parts.stats!.podSummary() : undefined,
    resourceMetrics: parts.stats ? () => parts.stats!.resourceMetrics() : undefined,
    cadvisorMetrics: parts.stats ? () => parts.stats!.cadvisorMetrics() : undefined,
    probeMetrics: parts.probeMetrics ? () => parts.probeMetrics!.text() : undefined,
    observeHttpRequest: (method, path, code, seconds) => metrics.observeHttpRequest(method, path, code, seconds),
    decodePodsBody: parts.bodyDecoder ? (request) => parts.bodyDecoder!.decode(request) : undefined,
    decodeProtobufBody: parts.bodyDecoder ? (request) => parts.bodyDecoder!.decodeProtobuf(request) : undefined,
    submitPods: (pods, write) => intake.submitPods(pods, write),
    // A write answers with the object as the store now reads it: the resourceVersion of that write.
    submitObjects: parts.intakeObjects
      ? async (objects, write) => (await parts.intakeObjects!.create(objects, write)).map((o) => readBack(o, write))
      : undefined,
    replaceObject: parts.intakeObjects
      ? async (object, write) => readBack(await parts.intakeObjects!.replace(object, write), write)
      : undefined,
    // A claim's deletion goes through its protection (config/claims.ts): kept, marked deleted, while a pod uses it.
    deleteObject: parts.intakeObjects
      ? (kind, namespace, name, write) =>
          kind === 'PersistentVolumeClaim' && parts.claims
            ? parts.claims.remove(namespace, name, write)
            : parts.intakeObjects!.remove(kind, namespace, name, write)
      : undefined,
    objectsResourceVersion: parts.objects ? () => parts.objects!.resourceVersion() : undefined,
    replacePod: (namespace, name, pod, write) => intake.replacePod(namespace, name, pod, write),
    deletePod: (namespace, name, gracePeriodSeconds) => intake.deletePod(namespace, name, gracePeriodSeconds),
    listObjects: parts.objects ? (kind) => parts.objects!.list(kind) : undefined,
    createdNamespaces: parts.namespaces ? () => parts.namespaces!.list() : undefined,
    createNamespace: parts.namespaces ? (ns) => parts.namespaces!.add(ns) : undefined,
    updateNamespace: parts.namespaces ? (ns) => parts.namespaces!.update(ns) : undefined,
    deleteNamespace: parts.namespaces ? (name) => parts.namespaces!.remove(name) : undefined,
    listEvents: () => parts.events.list(),
    onResourceChange(fn) {
      // Events as they are recorded; namespaces when a pod comes or goes (one may start or stop being in use);
      // ConfigMaps and Secrets as the object store changes them, whatever their source (API, file, URL, etcd).
      const offEvents = parts.events.subscribe(() => fn('events'));
      const offObjects = parts.objects?.subscribe((c) => fn(configObjectResource(c.object.kind) as ResourceChangeKind));
      const offPods = watchCache.watch(undefined, (e) => {
        if (e.type === 'ADDED' || e.type === 'DELETED') {
          fn('namespaces');
          fn('serviceaccounts'); // a namespace's `default`, or an account only a pod names
        }
      });
      return () => {
        offEvents();
        offObjects?.();
        offPods();
      };
    },
    getNode: () => parts.nodeApi.getNode(),
    setNodeUnschedulable: (value) => parts.nodeApi.setUnschedulable(value),
    containerLogs: (request) => parts.nodeApi.containerLogs(request),
    streamTarget: (namespace, pod, container) => parts.nodeApi.streamTarget(namespace, pod, container),
    openContainerStream: (spec) => parts.nodeApi.openContainerStream(spec),
    portForwardTarget: (namespace, pod) => parts.nodeApi.portForwardTarget(namespace, pod),
    openPortForward: (spec) => parts.nodeApi.openPortForward(spec),
  };
}
