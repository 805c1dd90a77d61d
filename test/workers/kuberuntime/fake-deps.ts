// The CRI syncer's deps on the Docker implementation of the CRI (runtime/docker, dockershim's role)
// over the in-memory fake engine: no engine needed. Shared by the syncPodCri tests of this folder.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { kDefaultNodeSandboxSettings } from '../../../src/shared/node-settings.js';
import type { CriSyncDeps } from '../../../src/workers/kuberuntime/kill-pod.js';
import { kNoopPodNetwork } from '../../../src/workers/network/pod-network.js';
import { newDockerNodeRuntime } from '../../../src/workers/runtime/docker/docker-node-runtime.js';
import { newFakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import { scopeToNode } from '../../../src/workers/runtime/node-scope.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/**
 * criFakeDeps: a fake engine holding the pause and busybox images, its node-a runtime through
 * dockershim, and CriSyncDeps over it in a fresh root dir (removed after each test), on a FakeClock
 * that `advance` steps (milliseconds).
 */
export async function criFakeDeps(prefix: string) {
  const rootDir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(rootDir);
  const fake = newFakeRuntime({ images: ['kubelet-ts/pause:1.0', 'kubelet-ts/busybox:1.35'] });
  const nr = newDockerNodeRuntime(scopeToNode(fake, 'node-a'), {
    network: kNoopPodNetwork,
    rootDir,
    podInfraImage: 'kubelet-ts/pause:1.0',
    nodeIp: '127.0.0.1',
    podPidsLimit: 0,
    oomScoreAdjFloor: async () => -1000,
  });
  const clock = new FakeClock(Date.now());
  const deps: CriSyncDeps = {
    runtime: nr.runtime,
    images: nr.images,
    nodeName: 'node-a',
    rootDir,
    podLogsDir: join(rootDir, 'pod-logs'),
    clock,
    podNetwork: false,
  };
  return {
    fake,
    nr,
    deps,
    advance: (ms: number) => {
      clock.step(ms);
    },
  };
}

/** fakeCgroupMount: a fake cgroup v1 mount (removed after the test): the cpu, memory and pids hierarchies, each with its `tasks` file. */
export function fakeCgroupMount(): string {
  const mount = mkdtempSync(join(tmpdir(), 'kts-fake-cgroup-'));
  dirs.push(mount);
  for (const c of ['cpu', 'memory', 'pids']) {
    mkdirSync(join(mount, c));
    writeFileSync(join(mount, c, 'tasks'), '');
  }
  return mount;
}

/**
 * criFakeDepsWithSandbox: criFakeDeps with the node's sandbox settings: a node resolv.conf of its
 * own (`nameserver 10.0.0.2`, `search corp.example`) and the pod cgroups under `/kts` on a
 * fakeCgroupMount (`mount`).
 */
export async function criFakeDepsWithSandbox(prefix: string) {
  const fake = await criFakeDeps(prefix);
  const mount = fakeCgroupMount();
  const resolvConf = join(fake.deps.rootDir, 'node-resolv.conf');
  writeFileSync(resolvConf, 'nameserver 10.0.0.2\nsearch corp.example\n');
  fake.deps.sandbox = { ...kDefaultNodeSandboxSettings, resolvConf, cgroupRoot: '/kts' };
  fake.deps.cgroupMount = mount;
  return { ...fake, mount };
}

/** oneContainerPod: `prod/<name>` (UID `uid`), restartPolicy Always, one busybox container `app` sleeping an hour with a termination-message path. */
export function oneContainerPod(uid: string, name = 'web'): Pod {
  return {
    metadata: { name, namespace: 'prod', uid },
    spec: {
      restartPolicy: 'Always',
      containers: [
        {
          name: 'app',
          image: 'kubelet-ts/busybox:1.35',
          imagePullPolicy: 'IfNotPresent',
          command: ['sleep', '3600'],
          terminationMessagePath: '/dev/termination-log',
        },
      ],
    },
  };
}
