// The Docker implementation of the CRI (src/workers/runtime/docker/docker-node-runtime.ts) on the real dockerd, through the same contract suites as containerd (test/support/cri-contract.ts); the role cri-tools' critest played for dockershim and cri-dockerd.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, inject } from 'vitest';
import { getDockerRuntime } from '../../../../src/workers/runtime/docker/docker-runtime.js';
import { newDockerNodeRuntime } from '../../../../src/workers/runtime/docker/docker-node-runtime.js';
import { imageServiceContract, runtimeServiceContract, type CriTraits } from '../../../support/cri-contract.js';
import { readRunEnv, useServiceRun } from '../../../support/cri.js';
import { DOCKER_SOCKET, PAUSE_IMAGE, removeLabeledContainers } from '../../../support/docker.js';

/** What Docker answers where runtimes differ; each difference is the Docker implementation's documented choice (docker-cri-service.ts). */
const kDockerTraits: CriTraits = {
  version: { runtime_name: 'docker', runtime_version: /^\d+\.\d+/, runtime_api_version: /^1\.\d+$/ },
  criLogFiles: false,
  podNetworkIp: null,
  execStderrApart: false,
  streamingServer: false,
  stats: false,
  grpcErrors: false,
  repoTag: (ref) => ref,
  imageFsMountpoint: /^\/var\/lib\/docker/,
  unauthorizedPull: /unauthorized|no basic auth credentials|401/i,
};

const available = inject('dockerAvailable');

/** The Docker NodeRuntime over the (unscoped) engine client: this file's sandboxes and containers carry its run label, and only those are cleaned up. */
function dockerRun() {
  const rootDir = available ? mkdtempSync(join(tmpdir(), 'kts-dockershim-root-')) : '/nonexistent/kts-dockershim-root';
  if (available) afterAll(() => rmSync(rootDir, { recursive: true, force: true }));
  const nr = newDockerNodeRuntime(getDockerRuntime(DOCKER_SOCKET), { rootDir, podInfraImage: PAUSE_IMAGE });
  // Belt and braces after the run's own cleanup: any container still carrying the run label.
  return useServiceRun(nr.runtime, nr.images, available, (label) => removeLabeledContainers('kubelet-ts.test-run', label['kubelet-ts.test-run']!));
}

describe.skipIf(!available)('the Docker CRI runtime service on dockerd', { timeout: 120_000 }, () => {
  runtimeServiceContract(dockerRun(), kDockerTraits);
});

describe.skipIf(!available)('the Docker CRI image service on dockerd', { timeout: 120_000 }, () => {
  imageServiceContract(dockerRun(), kDockerTraits, readRunEnv('registry'));
});
