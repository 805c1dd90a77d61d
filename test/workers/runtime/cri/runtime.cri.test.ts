// The CRI RuntimeService client against the real containerd of tools/lib/containerd.sh; the role of cri-tools' critest (pkg/validate: runtime_info, pod, container, networking, streaming). The bodies are test/support/cri-contract.ts's, shared with the Docker implementation's run.
import { describe } from 'vitest';
import { runtimeServiceContract } from '../../../support/cri-contract.js';
import { criEndpointOrSkip, useCriRun } from '../../../support/cri.js';
import { kContainerdTraits } from './containerd-traits.js';

const endpoint = criEndpointOrSkip();

describe.skipIf(!endpoint)('the CRI runtime service on containerd', { timeout: 120_000 }, () => {
  runtimeServiceContract(useCriRun(endpoint), kContainerdTraits);
});
