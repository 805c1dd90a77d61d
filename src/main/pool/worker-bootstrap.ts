/**
 * The bootstrap every worker thread gets (piscina's workerData): the runtime endpoint, the node's
 * names and directories, the pod network's settings and the sandbox settings the kubelet passes to
 * its runtime manager (pkg/kubelet/kubelet.go NewMainKubelet → kuberuntime.NewKubeGenericRuntimeManager).
 * A pure function of the agent's options. Main thread.
 */
import { parseFakeFailureRates, parseFakeLatencies, type FakeWorkerBootstrap } from '../../shared/fake-runtime-tuning.js';
import { PROTOCOL_VERSION } from '../../shared/thread-wire.js';
import type { NodeNetworkSettings } from '../../shared/node-settings.js';
import { parseQuantity } from '../../shared/quantity.js';
import type { AgentOptions } from '../options/agent-options.js';
import { runtimeEndpointOf } from '../options/runtime-endpoint-options.js';

/**
 * workerBootstrap: the worker threads' bootstrap from the agent's options and the pod network's
 * settings (network/network-setup.ts). `--container-log-max-size` becomes bytes; the fake runtime's
 * tuning is parsed only with `--runtime fake`.
 * @throws InvalidArgumentError when a fake-runtime tuning flag does not parse (as parseFakeLatencies).
 */
export function workerBootstrap(o: AgentOptions, network: NodeNetworkSettings): FakeWorkerBootstrap {
  return {
    protocol: PROTOCOL_VERSION,
    ...runtimeEndpointOf(o),
    nodeName: o.nodeName,
    rootDir: o.rootDir,
    podInfraContainerImage: o.podInfraContainerImage,
    logLevel: o.logLevel,
    imagePullCredentials: o.imagePullCredentials,
    network,
    runtimeRequestTimeoutMs: o.runtimeRequestTimeoutMs,
    sandbox: {
      clusterDNS: o.clusterDNS,
      clusterDomain: o.clusterDomain,
      resolvConf: o.resolvConf,
      cgroupsPerQOS: o.cgroupsPerQOS,
      cgroupRoot: o.cgroupRoot,
      podPidsLimit: o.podPidsLimit,
      containerLogMaxSizeBytes: Math.floor(parseQuantity(o.containerLogMaxSize)),
      containerLogMaxFiles: o.containerLogMaxFiles,
    },
    fakeRuntime:
      o.runtime === 'fake'
        ? { latencyMs: parseFakeLatencies(o.fakeRuntimeLatency), failureRate: parseFakeFailureRates(o.fakeRuntimeFailureRate) }
        : undefined,
  };
}
