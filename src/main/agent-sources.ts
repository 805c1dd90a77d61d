/**
 * The pod sources' wiring, as pkg/kubelet/kubelet.go makePodSourceConfig builds them: the manifest
 * path (`--pod-manifest-path`), the manifest URL (`--manifest-url`) and, in cluster mode, etcd —
 * each started and read once before the agent handles pods. The intake (`api` source) is the
 * agent's own (intake-api.ts). Wiring only. Main thread.
 */
import type { Pod } from '../shared/api.js';
import type { Clock } from '../shared/clock.js';
import { boundedField, type Logger } from '../shared/logging.js';
import type { PodUpdate, SourceError } from '../shared/pod-update.js';

import type { AgentOptions } from './options/agent-options.js';
import type { ConfigObjectUpdate } from './config/object-store.js';
import { newFileSource, type FileSource } from './config/source-file.js';
import { newHttpSource, type HttpSource } from './config/source-http.js';
import { newEtcdCluster, type EtcdCluster, type EtcdClusterDeps } from './etcd/cluster.js';

/** What {@link startPodSources} needs: where updates go, and what cluster mode reports. */
export interface PodSourcesDeps {
  logger: Logger;
  clock: Clock;
  /** A source's pods, into the PodConfig merge (the sync loop's `config` event). */
  onUpdate(update: PodUpdate): Promise<void> | void;
  /** A source's ConfigMaps, Secrets and claims, into the object store. */
  onObjects(update: ConfigObjectUpdate): void;
  /** Records an event against a pod (a duplicate name in the manifest path, bad values in etcd). */
  recordEvent: EtcdClusterDeps['recordEvent'];
  /** Cluster mode: the status manager whose statuses are written back, the pods, readiness and the Node. */
  statusManager: EtcdClusterDeps['statusManager'];
  listPods(): Pod[];
  ready(): { ok: boolean; message?: string };
  buildNode: NonNullable<EtcdClusterDeps['buildNode']>;
}

/** The started sources (each absent when its flag is not set), for the agent's stop and health. */
export interface PodSources {
  file: FileSource | null;
  http: HttpSource | null;
  etcd: EtcdCluster | null;
}

/**
 * startPodSources starts each configured source in the kubelet's order (file, http, etcd) and
 * resolves once each has had its first read. A source logs its own errors (at warn, once per
 * change) and decides what becomes of its pods; here they are logged at debug only.
 * @throws what a source's start throws (e.g. InvalidArgumentError for bad etcd options).
 */
export async function startPodSources(o: AgentOptions, deps: PodSourcesDeps): Promise<PodSources> {
  const onError = (e: SourceError) =>
    deps.logger.debug({ source: e.source, origin: e.origin, detail: boundedField(e.message) }, 'Source reported an error');
  const sourceDeps = { logger: deps.logger, onUpdate: deps.onUpdate, onObjects: deps.onObjects, onError, clock: deps.clock };
  const sources: PodSources = { file: null, http: null, etcd: null };
  if (o.podManifestPath) {
    sources.file = newFileSource(
      { path: o.podManifestPath, nodeName: o.nodeName, checkFrequencyMs: o.fileCheckFrequencyMs },
      {
        ...sourceDeps,
        // The kubelet's event for a pod left out for its duplicate name (config.go filterInvalidPods).
        onDuplicate: (pod, message) =>
          deps.recordEvent(pod, {
            type: 'Warning',
            reason: 'FailedValidation',
            message: `Error validating pod from source file due to duplicate pod name, ignoring: ${message}`,
          }),
      },
    );
    await sources.file.start();
  }
  if (o.manifestUrl) {
    sources.http = newHttpSource(
      { url: o.manifestUrl, nodeName: o.nodeName, headers: o.manifestUrlHeaders, checkFrequencyMs: o.httpCheckFrequencyMs },
      sourceDeps,
    );
    await sources.http.start();
  }
  if (o.etcdServers.length > 0) {
    sources.etcd = newEtcdCluster(o, {
      logger: deps.logger,
      statusManager: deps.statusManager,
      listPods: deps.listPods,
      onUpdate: (u) => void deps.onUpdate(u),
      onObjects: deps.onObjects,
      recordEvent: deps.recordEvent,
      ready: deps.ready,
      buildNode: deps.buildNode,
      clock: deps.clock,
    });
    await sources.etcd.start();
  }
  return sources;
}
