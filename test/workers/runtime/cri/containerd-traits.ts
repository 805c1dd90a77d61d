// What containerd 1.6 answers where runtimes differ (docs/cri.md "containerd here"), for the contract suites of test/support/cri-contract.ts.
import type { CriTraits } from '../../../support/cri-contract.js';

/** kContainerdTraits: the test containerd of tools/lib/containerd.sh (its own CNI bridge over 10.223.0.0/16, its streaming server, CRI log files). */
export const kContainerdTraits: CriTraits = {
  version: { runtime_name: 'containerd', runtime_version: /^1\.6\./, runtime_api_version: /^v1$/ },
  criLogFiles: true,
  podNetwork: { ip: /^10\.223\.\d+\.\d+$/, route: '10.223.0.0/16', natPrefix: '10.223.' },
  streamingServer: true,
  grpcErrors: true,
  repoTag: (ref) => `docker.io/${ref}`,
  imageFsMountpoint: /\.run\/containerd\/root\/io\.containerd\.snapshotter\.v1\.overlayfs$/,
  unauthorizedPull: /^PullImage: rpc error: code = Unknown desc = .*(401 Unauthorized|unauthorized)/i,
};
