// End-to-end image garbage collection (image_gc_manager.go's role for kubelet-ts) against the real dockerd and the
// open registry tools/lib/registry.sh starts: only images this agent pulled and no container uses are removed.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PROTOCOL_VERSION, type WorkerResult } from '../../src/shared/thread-wire.js';
import type { GcResult } from '../../src/shared/sync-tasks.js';
import { readPulledImages } from '../../src/workers/images/image-gc.js';
import { newImagePuller } from '../../src/workers/images/image-puller.js';
import { getDockerRuntime } from '../../src/workers/runtime/docker/docker-runtime.js';
import { scopeToNode } from '../../src/workers/runtime/node-scope.js';
import { createWorkerHandler } from '../../src/workers/sync.worker.js';
import { BUSYBOX_IMAGE, DOCKER_SOCKET, PAUSE_IMAGE, docker } from '../support/docker.js';

function registryEnv(): Record<string, string> | null {
  const file = join(import.meta.dirname, '../../.run/registry.env');
  if (!existsSync(file)) return null;
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}
const env = registryEnv();
const kTestLabel = 'kubelet-ts.test';

async function followPush(ref: string, registry: string): Promise<void> {
  const stream = (await docker
    .getImage(ref)
    .push({ authconfig: { serveraddress: registry } } as never)) as unknown as NodeJS.ReadableStream;
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (err: Error | null, out: Array<{ error?: string }>) => {
      const failed = out?.find((o) => o.error);
      if (err || failed) reject(err ?? new Error(failed!.error));
      else resolve();
    }),
  );
}

describe.skipIf(!inject('dockerAvailable') || !env)('image garbage collection in Docker', { timeout: 120_000 }, () => {
  const refs: string[] = [];
  const containers: string[] = [];
  let rootDir = '';
  afterEach(async () => {
    for (const id of containers.splice(0))
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
    for (const ref of refs.splice(0))
      await docker
        .getImage(ref)
        .remove({ noprune: false })
        .catch(() => undefined);
    if (rootDir) await rm(rootDir, { recursive: true, force: true });
  });

  /** A registry image with an ID of its own (a commit with a unique label), local tags dropped. */
  async function pushDistinct(tag: string): Promise<string> {
    const id = randomBytes(4).toString('hex');
    const repo = `${env!.KUBELET_TS_REGISTRY}/kubelet-ts/gc-${id}`;
    const c = await docker.createContainer({ Image: BUSYBOX_IMAGE, Cmd: ['true'], Labels: { [kTestLabel]: `image-gc-${id}` } });
    containers.push(c.id);
    await c.commit({ repo, tag, changes: [`LABEL kubelet-ts.test.gc=${id}`] } as never);
    refs.push(`${repo}:${tag}`);
    await followPush(`${repo}:${tag}`, env!.KUBELET_TS_REGISTRY);
    await docker.getImage(`${repo}:${tag}`).remove();
    return `${repo}:${tag}`;
  }

  it('removes an unused image this agent pulled; keeps one a container uses and images it did not pull', async () => {
    rootDir = await mkdtemp(join(tmpdir(), 'kubelet-ts-image-gc-'));
    const nodeName = `e2e-${randomBytes(4).toString('hex')}`;
    const unused = await pushDistinct('1');
    const used = await pushDistinct('1');
    const puller = newImagePuller(scopeToNode(getDockerRuntime(DOCKER_SOCKET), nodeName), { rootDir });
    await puller.pull(unused);
    await puller.pull(used);
    const unusedId = (await docker.getImage(unused).inspect()).Id;
    const usedId = (await docker.getImage(used).inspect()).Id;
    expect(Object.keys(await readPulledImages(rootDir)).sort()).toEqual([unusedId, usedId].sort());
    // A container of another owner (no kubelet labels) uses `used`.
    const user = await docker.createContainer({ Image: used, Cmd: ['true'], Labels: { [kTestLabel]: `image-gc-user-${nodeName}` } });
    containers.push(user.id);
    const busyboxId = (await docker.getImage(BUSYBOX_IMAGE).inspect()).Id;

    const handler = createWorkerHandler({
      protocol: PROTOCOL_VERSION,
      runtime: 'docker',
      dockerSocketPath: DOCKER_SOCKET,
      nodeName,
      rootDir,
      podInfraContainerImage: PAUSE_IMAGE,
      logLevel: 'silent',
    });
    // Thresholds 0/0: usage is always at or above the high threshold, and everything collectable is collected.
    const res = (await handler({
      kind: 'gc',
      protocol: PROTOCOL_VERSION,
      maximumDeadContainersPerContainer: 1,
      imageGc: { highThresholdPercent: 0, lowThresholdPercent: 0 },
    })) as WorkerResult<'gc'>;
    expect(res.ok).toBe(true);
    const value = (res as { value: GcResult }).value;
    expect(value.errors).toEqual([]);
    expect(value.removedImages).toEqual([unusedId]);
    await expect(docker.getImage(unused).inspect()).rejects.toThrow();
    expect((await docker.getImage(used).inspect()).Id).toBe(usedId);
    expect((await docker.getImage(BUSYBOX_IMAGE).inspect()).Id).toBe(busyboxId);
    const pulled = await readPulledImages(rootDir);
    expect(Object.keys(pulled)).toEqual([usedId]);
    expect(pulled[usedId].lastUsedMs).toBeGreaterThan(0);
  });
});
