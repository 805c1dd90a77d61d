// The CRI ImageService client against the real containerd of tools/lib/containerd.sh and the local registries of tools/lib/registry.sh; the role of cri-tools' critest pkg/validate/image.go. The bodies are test/support/cri-contract.ts's, shared with the Docker implementation's run.
import { describe } from 'vitest';
import { imageServiceContract } from '../../../support/cri-contract.js';
import { criEndpointOrSkip, readRunEnv, useCriRun } from '../../../support/cri.js';
import { kContainerdTraits } from './containerd-traits.js';

const endpoint = criEndpointOrSkip();

describe.skipIf(!endpoint)('the CRI image service on containerd', { timeout: 120_000 }, () => {
  imageServiceContract(useCriRun(endpoint), kContainerdTraits, readRunEnv('registry'));
});
