// Counterpart of pkg/kubelet/dockershim/docker_service.go NewDockerService (the in-process CRI over Docker the kubelet ≤1.23 ran) and of cri-dockerd's own streaming and log handling; the bundle shape is ../container/runtime.ts's NodeRuntime (issue #40).
/**
 * newDockerNodeRuntime: one worker thread's runtime bundle on Docker (or on the in-memory fake,
 * the same translation over it): the CRI RuntimeService and ImageManagerService of this
 * directory, `idScheme` `docker` (PodStatus IDs stay `docker://<id>`, on the fake too), and what
 * the CRI does not carry from today's ContainerRuntime: Docker's logs (json-file through the
 * engine's API), exec/attach streams over the engine's hijacked connection ("direct streaming":
 * CRI Exec/Attach/PortForward reject), and Docker's container events (the event PLEG).
 */
import type { Clock } from '../../../shared/clock.js';
import type { Logger } from '../../../shared/logging.js';
import { kNoopPodNetwork, type PodNetwork } from '../../network/pod-network.js';
import type { ContainerRuntime, NodeRuntime } from '../container/runtime.js';
import { DockerRuntimeService } from './docker-cri-service.js';
import { DockerImageService } from './docker-images.js';

/** kDefaultPodInfraImage: the pause image when none is given (the agent's --pod-infra-container-image default). */
export const kDefaultPodInfraImage = 'kubelet-ts/pause:1.0';

/** What a Docker NodeRuntime is built with besides the (node-scoped) ContainerRuntime; every field optional. */
export interface DockerNodeSettings {
  /** The thread's pod network (network/network-service.ts newPodNetwork); default none (sandboxes stay `none`). */
  network?: PodNetwork;
  /** --root-dir (absolute): pods' resolv.conf files under `pods/<uid>/`; default `/var/lib/kubelet`. */
  rootDir?: string;
  /** --pod-infra-container-image; default {@link kDefaultPodInfraImage}. */
  podInfraImage?: string;
  /** --node-ip: hostPorts without a `host_ip` publish there ('' = every address). */
  nodeIp?: string;
  /** --container-log-max-size (bytes) / --container-log-max-files: Docker's json-file rotation. */
  logRotation?: { maxSizeBytes: number; maxFiles: number };
  /** --pod-max-pids, applied per container when the sandbox has no pod cgroup. */
  podPidsLimit?: number;
  /** The oom_score_adj floor (tests); default read from /proc/self. */
  oomScoreAdjFloor?: () => Promise<number>;
  logger?: Logger;
  /** The thread's Clock (default realClock): stats and image filesystem timestamps. */
  clock?: Clock;
}

/** DockerNodeRuntime: the NodeRuntime (../container/runtime.ts) as Docker gives it (events always there). */
export type DockerNodeRuntime = NodeRuntime & Required<Pick<NodeRuntime, 'events'>>;

/**
 * newDockerNodeRuntime: the NodeRuntime over `rt` — a ContainerRuntime already scoped to this
 * node (node-scope.ts scopeToNode over docker-runtime.ts, or over the fake). Never throws.
 */
export function newDockerNodeRuntime(rt: ContainerRuntime, s: DockerNodeSettings = {}): DockerNodeRuntime {
  const podInfraImage = s.podInfraImage || kDefaultPodInfraImage;
  return {
    runtime: new DockerRuntimeService({
      runtime: rt,
      network: s.network ?? kNoopPodNetwork,
      rootDir: s.rootDir ?? '/var/lib/kubelet',
      podInfraImage,
      nodeIp: s.nodeIp,
      logRotation: s.logRotation,
      podPidsLimit: s.podPidsLimit,
      oomScoreAdjFloor: s.oomScoreAdjFloor,
      logger: s.logger,
      clock: s.clock,
    }),
    images: new DockerImageService(rt, podInfraImage, s.clock),
    idScheme: 'docker',
    logs: {
      readContainerLogs: (id, opts, h) => rt.readContainerLogs(id, opts, h),
      tailLogs: (id, lines, bytes) => rt.tailLogs?.(id, lines, bytes) ?? Promise.resolve(''),
    },
    streams: { openContainerStream: (id, opts, h) => rt.openContainerStream(id, opts, h) },
    events: { watchContainerEvents: (filter, h) => rt.watchContainerEvents(filter, h) },
  };
}
