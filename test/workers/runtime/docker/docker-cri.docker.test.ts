// The Docker implementation of the CRI (src/workers/runtime/docker/docker-node-runtime.ts) on the real dockerd with the agent's own CNI network (the real plugins of /usr/lib/cni), through the same contract suites as containerd (test/support/cri-contract.ts); the role cri-tools' critest played for dockershim and cri-dockerd.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { defaultNetworkConfigList } from '../../../../src/io/cni-config.js';
import type { NodeNetworkSettings } from '../../../../src/shared/node-settings.js';
import { newPodNetwork } from '../../../../src/workers/network/network-service.js';
import { kNoopPodNetwork, type PodNetwork } from '../../../../src/workers/network/pod-network.js';
import { getDockerRuntime } from '../../../../src/workers/runtime/docker/docker-runtime.js';
import { newDockerNodeRuntime } from '../../../../src/workers/runtime/docker/docker-node-runtime.js';
import { imageServiceContract, runtimeServiceContract, type CriTraits } from '../../../support/cri-contract.js';
import { readRunEnv, useServiceRun, type CriRun } from '../../../support/cri.js';
import { DOCKER_SOCKET, PAUSE_IMAGE, removeLabeledContainers } from '../../../support/docker.js';

/** What Docker answers where runtimes differ; each difference is the Docker implementation's documented choice (docker-cri-service.ts). */
const kDockerTraits: CriTraits = {
  version: { runtime_name: 'docker', runtime_version: /^\d+\.\d+/, runtime_api_version: /^1\.\d+$/ },
  criLogFiles: false,
  podNetwork: null,
  streamingServer: false,
  grpcErrors: false,
  repoTag: (ref) => ref,
  imageFsMountpoint: /^\/var\/lib\/docker/,
  unauthorizedPull: /unauthorized|no basic auth credentials|401/i,
};

const available = inject('dockerAvailable');
/** The agent's CNI needs root and the plugins (tools/ installs them); without them the network test skips. */
const kCniUsable = process.getuid?.() === 0 && existsSync('/usr/lib/cni/bridge') && existsSync('/usr/lib/cni/portmap');

/** A /24 in 10.251.x.0/24 the host does not route (not the agent's 10.222/16 nor the test containerd's 10.223/16). */
function freeSubnet(): { subnet: string; prefix: string } {
  const routes =
    execFileSync('ip', ['-4', 'route', 'show', 'table', 'all'], { encoding: 'utf8' }) +
    execFileSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' });
  for (let i = 0; i < 50; i++) {
    const x = 1 + Math.floor(Math.random() * 254);
    if (!routes.includes(`10.251.${x}.`)) return { subnet: `10.251.${x}.0/24`, prefix: `10.251.${x}.` };
  }
  throw new Error('no free 10.251.x.0/24');
}

/**
 * testNetwork: the agent's default network (a bridge of its own over a free /24, no masquerade) as
 * a PodNetwork, removed after the file (every cached result and lease DELeted, the bridge deleted).
 */
function testNetwork(dir: string): { network: PodNetwork; traits: CriTraits['podNetwork'] } {
  if (!available || !kCniUsable) return { network: kNoopPodNetwork, traits: null };
  const id = randomBytes(3).toString('hex');
  const bridge = `ktsds${id}`;
  const { subnet, prefix } = freeSubnet();
  const confFile = join(dir, 'net.d', 'dockershim.conflist');
  beforeAll(() => {
    mkdirSync(join(dir, 'net.d'), { recursive: true });
    writeFileSync(
      confFile,
      JSON.stringify(defaultNetworkConfigList({ name: `kts-ds-${id}`, bridge, subnet, dataDir: join(dir, 'networks'), masquerade: false })),
    );
  });
  const settings: NodeNetworkSettings = {
    plugin: 'cni',
    binDirs: ['/usr/lib/cni'],
    confFile,
    cacheDir: join(dir, 'cache'),
    hostPortIp: '127.0.0.1',
  };
  const network = newPodNetwork(settings);
  afterAll(async () => {
    await network.reconcile(new Set()).catch(() => undefined);
    try {
      execFileSync('ip', ['link', 'del', bridge], { stdio: 'ignore' });
    } catch {
      // never created
    }
  });
  return { network, traits: { ip: new RegExp(`^${prefix.replaceAll('.', '\\.')}\\d+$`), route: subnet, natPrefix: prefix } };
}

/**
 * dockerRun: the Docker NodeRuntime over the (unscoped) engine client, with `network`: this file's
 * sandboxes and containers carry its run label, and only those are cleaned up.
 */
function dockerRun(rootDir: string, network: PodNetwork = kNoopPodNetwork): CriRun {
  const nr = newDockerNodeRuntime(getDockerRuntime(DOCKER_SOCKET), { rootDir, podInfraImage: PAUSE_IMAGE, network, nodeIp: '127.0.0.1' });
  // Belt and braces after the run's own cleanup: any container still carrying the run label.
  return useServiceRun(nr.runtime, nr.images, available, (label) =>
    removeLabeledContainers('kubelet-ts.test-run', label['kubelet-ts.test-run']!),
  );
}

/** rootDirOf: a --root-dir of this block's own, made before its tests and removed after them. */
function rootDirOf(): string {
  const dir = join(tmpdir(), `kts-dockershim-root-${randomBytes(6).toString('hex')}`);
  beforeAll(() => mkdirSync(dir, { recursive: true, mode: 0o700 }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe.skipIf(!available)("the Docker CRI runtime service on dockerd, with the agent's CNI network", { timeout: 120_000 }, () => {
  const rootDir = rootDirOf();
  const { network, traits } = testNetwork(rootDir);
  runtimeServiceContract(dockerRun(rootDir, network), { ...kDockerTraits, podNetwork: traits });
});

describe.skipIf(!available)('the Docker CRI image service on dockerd', { timeout: 120_000 }, () => {
  imageServiceContract(dockerRun(rootDirOf()), kDockerTraits, readRunEnv('registry'));
});
