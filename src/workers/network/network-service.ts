/**
 * newPodNetwork: the worker thread's PodNetwork from its bootstrap's NodeNetworkSettings — the
 * CNI plugin chain for `plugin: 'cni'`, else the no-op network (as runtime-service.ts picks the
 * runtime).
 */
import type { Logger } from '../../shared/logging.js';
import type { NodeNetworkSettings } from '../../shared/node-settings.js';
import { newCniPodNetwork } from './cni-pod-network.js';
import { kNoopPodNetwork, type PodNetwork } from './pod-network.js';

/**
 * newPodNetwork builds the PodNetwork for `settings` (absent or `plugin: 'none'` → kNoopPodNetwork).
 * @throws AgentError ERR_INVALID_ARGUMENT for a `cni` settings without an absolute confFile or cacheDir, or without binDirs.
 */
export function newPodNetwork(settings: NodeNetworkSettings | undefined, logger?: Logger): PodNetwork {
  if (!settings || settings.plugin === 'none') return kNoopPodNetwork;
  return newCniPodNetwork(settings, logger?.child({ component: 'cni' }));
}
