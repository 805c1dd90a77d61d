// Counterpart of pkg/kubelet/kubelet.go PreInitRuntimeService (the runtime and image clients built from --container-runtime-endpoint / --image-service-endpoint) and of kuberuntime_manager.go NewKubeGenericRuntimeManager (the runtime's name from Version is its IDs' type).
/**
 * NodeRuntime (./container/runtime.ts): the per-thread runtime bundle every worker entry gets from {@link getRuntime} —
 * the CRI RuntimeService and ImageManagerService (the seam of issue #40), the scheme of the
 * runtime's IDs, and what the CRI does not carry (reading logs, exec/attach byte streams, container
 * events) in today's shapes of ./runtime.ts. Worker threads only.
 *
 * - runtime 'remote' (`--container-runtime-endpoint`): RemoteRuntimeService + RemoteImageService
 *   over gRPC, one pair per endpoint per thread, each call under `--runtime-request-timeout`;
 *   `idScheme` from Version's runtime_name (containerd → `containerd`); no `events` (containerd
 *   1.6 has no GetContainerEvents: the PLEG relists); logs: the CRI log files the runtime writes
 *   (../logs/cri-log-reader.ts, as kuberuntime/logs ReadLogs); exec/attach: the runtime's
 *   streaming server (../streams/cri-exec-stream.ts, as the kubelet's server proxies it).
 * - runtime 'docker' and 'fake': the CRI over today's ContainerRuntime as dockershim did
 *   (./docker/docker-node-runtime.ts newDockerNodeRuntime), with the pod network, root dir, pause
 *   image, hostPort address, log rotation and pids limit of the bootstrap ({@link dockerShimSettings}).
 * Both are node-scoped: the CRI runtime by ./node-scope-cri.ts, the Docker one by ./node-scope.ts.
 */
import { AgentError } from '../../shared/errors.js';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logging.js';
import type { NodeNetworkSettings, NodeSandboxSettings } from '../../shared/node-settings.js';
import type { StatsSample } from '../../shared/stats.js';
import type { StatsTask } from '../../shared/sync-tasks.js';
import { newPodNetwork } from '../network/network-service.js';
import type { PodNetwork } from '../network/pod-network.js';
import { idSchemeOf, type RuntimeName } from '../../shared/runtime-endpoint.js';
import { isOwnedBy, kNodeNameLabel, kPodUidLabel } from '../kubetypes/label-keys.js';
import { newCriContainerLogs } from '../logs/cri-log-reader.js';
import { criContainerStreams } from '../streams/cri-exec-stream.js';
import { RemoteImageService } from './cri/remote-image.js';
import { RemoteRuntimeService } from './cri/remote-runtime.js';
import type { RuntimeService } from './cri/services.js';
import { collectStats, type StatsDeps } from './docker/collect-stats.js';
import { newDockerNodeRuntime, type DockerNodeSettings } from './docker/docker-node-runtime.js';
import { scopeRuntimeServiceToNode } from './node-scope-cri.js';
import { scopeToNode } from './node-scope.js';
import { getRuntime as getContainerRuntime, type RuntimeBootstrap } from './runtime-service.js';
import type { ContainerRuntime, NodeRuntime } from './container/runtime.js';

/** NodeRuntimeBootstrap: the part of any thread's bootstrap getRuntime reads — the endpoint, the deadline, the node. */
export interface NodeRuntimeBootstrap extends RuntimeBootstrap {
  /** Only this node's sandboxes and containers are listed or touched. */
  nodeName: string;
  /** Docker and fake only (the sync worker's bootstrap): --root-dir, absolute; default `/var/lib/kubelet`. */
  rootDir?: string;
  /** Docker and fake only: --pod-infra-container-image (the pause image of the sandboxes). */
  podInfraContainerImage?: string;
  /** Docker only: the node's sandbox settings (log rotation, pids limit); the fake has no host files and gets none. */
  sandbox?: Partial<NodeSandboxSettings>;
  /** Docker only: the pod network (CNI) RunPodSandbox joins sandboxes to; absent = none. */
  network?: NodeNetworkSettings;
}

/**
 * dockerShimSettings: what newDockerNodeRuntime is built with from a thread's bootstrap `b` — the
 * pod network (`network` if given, else CNI per `b.network` on Docker, none on the fake), the root
 * dir, the pause image, the hostPort address (`b.network.hostPortIp`, --node-ip), and on Docker the
 * json-file rotation (bytes, files) and `--pod-max-pids`, as dockershim took them from the kubelet's
 * flags (pkg/kubelet/dockershim/docker_service.go NewDockerService). Never throws.
 */
export function dockerShimSettings(
  b: NodeRuntimeBootstrap,
  o: { network?: PodNetwork; logger?: Logger; clock?: Clock } = {},
): DockerNodeSettings {
  const docker = (b.runtime ?? 'docker') === 'docker';
  const s = b.sandbox;
  return {
    network: o.network ?? (docker ? newPodNetwork(b.network, o.logger) : undefined),
    ...(b.rootDir ? { rootDir: b.rootDir } : {}),
    ...(b.podInfraContainerImage ? { podInfraImage: b.podInfraContainerImage } : {}),
    ...(b.network?.hostPortIp ? { nodeIp: b.network.hostPortIp } : {}),
    ...(docker && s?.containerLogMaxSizeBytes !== undefined && s.containerLogMaxFiles !== undefined
      ? { logRotation: { maxSizeBytes: s.containerLogMaxSizeBytes, maxFiles: s.containerLogMaxFiles } }
      : {}),
    ...(docker && s?.podPidsLimit !== undefined ? { podPidsLimit: s.podPidsLimit } : {}),
    ...(o.logger ? { logger: o.logger } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
  };
}

/**
 * newDockerShimRuntime: the NodeRuntime of Docker or the fake over `rt` (not yet scoped: scoped
 * here to `b.nodeName`), built with {@link dockerShimSettings}. Never throws.
 */
export function newDockerShimRuntime(
  rt: ContainerRuntime,
  b: NodeRuntimeBootstrap,
  o: { network?: PodNetwork; logger?: Logger; clock?: Clock } = {},
): NodeRuntime {
  return newDockerNodeRuntime(scopeToNode(rt, b.nodeName), dockerShimSettings(b, o));
}

/**
 * dockerShimStats: the `stats` task on Docker and the fake — the collector over the engine
 * (./docker/collect-stats.ts collectStats: the cgroups of the containers `deps.runtime` lists, their
 * json-file logs, the engine's root dir), as the kubelet's cAdvisor stats provider did for
 * dockershim; a CRI runtime's stats are ../stats/collect-cri-stats.ts's. Rejects as collectStats does.
 */
export function dockerShimStats(deps: StatsDeps): (task: StatsTask) => Promise<StatsSample> {
  return (task) => collectStats(deps, task);
}

/**
 * newCriNodeRuntime: a NodeRuntime over the CRI runtime at `runtimeEndpoint` and the image service
 * at `imageEndpoint` (default the same), scoped to `nodeName`. Calls under `requestTimeoutMs`
 * (milliseconds; absent = 2 min, 0 = none). `idScheme` follows the last Version answer.
 * @throws InvalidArgumentError naming `--container-runtime-endpoint` / `--image-service-endpoint` for a bad endpoint.
 */
export function newCriNodeRuntime(o: {
  runtimeEndpoint: string;
  imageEndpoint?: string;
  nodeName: string;
  requestTimeoutMs?: number;
}): NodeRuntime {
  const opts = o.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: o.requestTimeoutMs };
  const remote = new RemoteRuntimeService(o.runtimeEndpoint, opts);
  const images = new RemoteImageService(o.imageEndpoint || o.runtimeEndpoint, opts);
  const runtime = scopeRuntimeServiceToNode(remote, o.nodeName);
  let scheme = '';
  const version = runtime.version.bind(runtime);
  runtime.version = async (apiVersion, callOpts) => {
    const v = await version(apiVersion, callOpts);
    scheme = idSchemeOf(v.runtime_name) || scheme;
    return v;
  };
  // Exec/attach through the node-scoped runtime; the log reader's ContainerStatus (a read by ID,
  // which the scope passes through) checks the owner too: another node's container is refused.
  const ownedStatus: RuntimeService['containerStatus'] = async (id, verbose, callOpts) => {
    const answer = await runtime.containerStatus(id, verbose, callOpts);
    if (answer.status && !isOwnedBy(answer.status.labels, o.nodeName)) {
      throw new AgentError(
        'ERR_INVALID_ARGUMENT',
        `refusing to read the log of container ${id}: it does not carry ${kPodUidLabel} and ${kNodeNameLabel}=${o.nodeName}`,
      );
    }
    return answer;
  };
  const logs = newCriContainerLogs({ runtime: { containerStatus: ownedStatus } });
  return {
    runtime,
    images,
    get idScheme() {
      return scheme;
    },
    logs,
    streams: criContainerStreams(runtime),
  };
}

/** One bundle per (runtime, endpoints, deadline, node) per thread. */
const bundles = new Map<string, NodeRuntime>();

/**
 * getRuntime returns this thread's NodeRuntime for `b` (see file doc), built on first use and
 * shared by every later call with the same endpoint, deadline and node.
 * @throws InvalidArgumentError for a bad endpoint (naming the flag), or an empty `b.nodeName`.
 */
export function getRuntime(b: NodeRuntimeBootstrap): NodeRuntime {
  const name: RuntimeName = b.runtime ?? 'docker';
  const key = [
    name,
    b.dockerSocketPath,
    b.containerRuntimeEndpoint ?? '',
    b.imageServiceEndpoint ?? '',
    b.runtimeRequestTimeoutMs ?? '',
    b.nodeName,
  ].join('\0');
  let nr = bundles.get(key);
  if (!nr) {
    if (!b.nodeName) throw new AgentError('ERR_INVALID_ARGUMENT', 'getRuntime: nodeName must be a non-empty string');
    nr =
      name === 'remote'
        ? newCriNodeRuntime({
            runtimeEndpoint: b.containerRuntimeEndpoint ?? '',
            imageEndpoint: b.imageServiceEndpoint,
            nodeName: b.nodeName,
            requestTimeoutMs: b.runtimeRequestTimeoutMs,
          })
        : newDockerShimRuntime(getContainerRuntime(b), b);
    bundles.set(key, nr);
  }
  return nr;
}
