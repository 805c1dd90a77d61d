// Counterpart of cmd/kubelet/app/options (the --container-runtime-endpoint / --image-service-endpoint flags) and of kubelet.go PreInitRuntimeService (the image endpoint defaults to the runtime endpoint).
/**
 * Which runtime the agent talks to, from `--runtime`, `--container-runtime-endpoint`,
 * `--image-service-endpoint` and `--docker-endpoint`, and the {@link RuntimeEndpoint} every
 * thread's bootstrap carries.
 *
 * The choice (docs/cri.md "Endpoint"):
 * - no `--container-runtime-endpoint`: Docker at `--docker-endpoint` (the default, unchanged), or
 *   the fake with `--runtime fake`;
 * - an endpoint naming Docker's socket (`--docker-endpoint`'s path): Docker, through the agent's
 *   own Docker implementation. Upstream since 1.24 dials every endpoint as CRI, and Docker's socket
 *   does not speak it (the kubelet then fails to start with `unknown service
 *   runtime.v1.RuntimeService`); before 1.24 the kubelet ran dockershim in-process for Docker,
 *   which is what kubelet-ts's Docker implementation is — so that socket picks it instead of failing;
 * - any other endpoint: the CRI over gRPC (`remote`; containerd, CRI-O), images at
 *   `--image-service-endpoint`, else the same endpoint.
 * Conflicting flags are refused naming both. Main thread only; pure. Also the two flags'
 * descriptors, spread into kAgentOptionDescriptors (agent-option-descriptors.ts).
 */
import { InvalidArgumentError } from '../../shared/errors.js';
import { parseCriEndpoint, type RuntimeEndpoint, type RuntimeName } from '../../shared/runtime-endpoint.js';
import { criEndpoint } from './agent-option-checks.js';
import type { AgentOptionDescriptor } from './agent-option-descriptors.js';

function option<T>(d: AgentOptionDescriptor<T>): AgentOptionDescriptor<T> {
  return d;
}

/** kRuntimeEndpointOptionDescriptors: the CRI endpoint flags, spread into kAgentOptionDescriptors after `--docker-endpoint`. */
export const kRuntimeEndpointOptionDescriptors = {
  /**
   * The CRI runtime's endpoint (`--container-runtime-endpoint`, containerRuntimeEndpoint), the
   * kubelet's `unix:///path` form. '' (the default) = Docker at `--docker-endpoint`, through the
   * agent's own Docker implementation; the path of Docker's socket does the same (there the
   * kubelet ≤1.23 ran its in-process dockershim); any other socket is dialled as a CRI runtime over
   * gRPC (containerd, CRI-O): `--runtime remote` (src/main/options/runtime-endpoint-options.ts).
   */
  containerRuntimeEndpoint: option({
    flag: 'container-runtime-endpoint',
    parse: 'string',
    config: { field: 'containerRuntimeEndpoint' },
    default: '',
    defaultText: '(Docker at --docker-endpoint)',
    check: criEndpoint,
    help: 'CRI runtime endpoint (unix:///path/to.sock), e.g. unix:///run/containerd/containerd.sock; unset: Docker at --docker-endpoint',
  }),
  /** The CRI image service's endpoint (`--image-service-endpoint`, imageServiceEndpoint); '' = the runtime endpoint, as the kubelet's. */
  imageServiceEndpoint: option({
    flag: 'image-service-endpoint',
    parse: 'string',
    config: { field: 'imageServiceEndpoint' },
    default: '',
    defaultText: '(the runtime endpoint)',
    check: criEndpoint,
    help: 'CRI image service endpoint (unix:///path/to.sock); unset: --container-runtime-endpoint',
  }),
};

/** The options the choice reads (a subset of AgentOptions, already checked one by one). */
export interface RuntimeChoiceOptions {
  runtime: RuntimeName;
  dockerSocketPath: string;
  /** --container-runtime-endpoint; '' or absent = none. */
  containerRuntimeEndpoint?: string;
  /** --image-service-endpoint; '' or absent = the runtime endpoint. */
  imageServiceEndpoint?: string;
}

/**
 * resolveRuntimeChoice returns the runtime the agent uses (see file doc). `runtimeGiven`: whether
 * `--runtime` was set explicitly (a default 'docker' yields to an endpoint).
 * @throws InvalidArgumentError naming the flags: `--runtime fake` or `--runtime docker` with a CRI
 *   endpoint, `--runtime remote` without one, `--image-service-endpoint` without a CRI runtime.
 */
export function resolveRuntimeChoice(o: RuntimeChoiceOptions, runtimeGiven: boolean): RuntimeName {
  const endpoint = o.containerRuntimeEndpoint ?? '';
  if (!endpoint) {
    if (o.runtime === 'remote')
      throw new InvalidArgumentError('--runtime remote needs --container-runtime-endpoint (unix:///path/to/runtime.sock)');
    if (o.imageServiceEndpoint)
      throw new InvalidArgumentError(
        `--image-service-endpoint ${JSON.stringify(o.imageServiceEndpoint)} needs --container-runtime-endpoint: ${o.runtime === 'fake' ? 'the fake runtime has' : 'Docker serves'} its own images`,
      );
    return o.runtime;
  }
  const isDocker = parseCriEndpoint(endpoint).path === o.dockerSocketPath;
  if (runtimeGiven && o.runtime === 'fake')
    throw new InvalidArgumentError(`--runtime fake cannot be used with --container-runtime-endpoint ${JSON.stringify(endpoint)}`);
  if (isDocker) {
    if (runtimeGiven && o.runtime === 'remote')
      throw new InvalidArgumentError(
        `--runtime remote: --container-runtime-endpoint ${JSON.stringify(endpoint)} is Docker's socket (--docker-endpoint), which does not speak the CRI`,
      );
    if (o.imageServiceEndpoint && parseCriEndpoint(o.imageServiceEndpoint, '--image-service-endpoint').path !== o.dockerSocketPath) {
      throw new InvalidArgumentError(
        `--image-service-endpoint ${JSON.stringify(o.imageServiceEndpoint)}: with Docker (--container-runtime-endpoint ${JSON.stringify(endpoint)}) images are Docker's own; leave it unset`,
      );
    }
    return 'docker';
  }
  if (runtimeGiven && o.runtime === 'docker') {
    throw new InvalidArgumentError(
      `--runtime docker cannot be used with --container-runtime-endpoint ${JSON.stringify(endpoint)} (not --docker-endpoint's socket); drop --runtime, or point --docker-endpoint at Docker`,
    );
  }
  return 'remote';
}

/**
 * runtimeEndpointOf: the RuntimeEndpoint of every thread's bootstrap from resolved options: the
 * runtime, Docker's socket, and for 'remote' the two CRI endpoints (the image endpoint defaulted to
 * the runtime's, as PreInitRuntimeService does). Pure.
 */
export function runtimeEndpointOf(o: RuntimeChoiceOptions): Required<Pick<RuntimeEndpoint, 'runtime'>> & RuntimeEndpoint {
  if (o.runtime !== 'remote') return { runtime: o.runtime, dockerSocketPath: o.dockerSocketPath };
  return {
    runtime: 'remote',
    dockerSocketPath: o.dockerSocketPath,
    containerRuntimeEndpoint: o.containerRuntimeEndpoint ?? '',
    imageServiceEndpoint: o.imageServiceEndpoint || o.containerRuntimeEndpoint || '',
  };
}
