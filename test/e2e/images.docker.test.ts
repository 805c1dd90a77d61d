// End-to-end image pulls against the real runtime (dockerd, or containerd through the CRI
// ImageService: test/support/runtime.ts) and the local registries tools/lib/registry.sh starts on
// 127.0.0.1 (the role of test/e2e/common/node/runtime.go's image pull tests): pull policies, one pull
// per image however many pods want it, ErrImagePull → ImagePullBackOff, and node-level credentials
// (--image-pull-credentials) for a registry that requires them. Images are pushed with dockerd.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, docker } from '../support/docker.js';
import { isRunningAndReady, waitForPod, useTestNodes } from '../support/agent.js';
import { imagePulls, removeImage } from '../support/runtime-records.js';

/** .run/registry.env, written by tools/lib/registry.sh (tools/test starts the registries). */
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
const kWaitMs = 90_000;

/** Pushes the local busybox to the open registry under a name of its own (with dockerd), then drops dockerd's tag. */
async function pushUnique(registry: string): Promise<string> {
  const repo = `${registry}/kubelet-ts/e2e-${randomBytes(4).toString('hex')}`;
  await docker.getImage(BUSYBOX_IMAGE).tag({ repo, tag: '1' });
  const stream = (await docker
    .getImage(`${repo}:1`)
    .push({ authconfig: { serveraddress: registry } } as never)) as unknown as NodeJS.ReadableStream;
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (err: Error | null, out: Array<{ error?: string }>) => {
      const failed = out?.find((o) => o.error);
      if (err || failed) reject(err ?? new Error(failed!.error));
      else resolve();
    }),
  );
  await docker
    .getImage(`${repo}:1`)
    .remove({ noprune: true })
    .catch(() => undefined);
  return `${repo}:1`;
}

function podYaml(name: string, image: string, policy: string, containers = 1): string {
  const cs = Array.from(
    { length: containers },
    (_, i) => `    - {name: c${i}, image: ${JSON.stringify(image)}, imagePullPolicy: ${policy}, command: ["sleep", "3600"]}`,
  ).join('\n');
  return `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n${cs}\n`;
}

const waitingOf = (p: Pod) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason;

describe.skipIf(!inject('dockerAvailable') || !env)('image pulls from a local registry', { timeout: 240_000 }, () => {
  const images: string[] = [];
  afterEach(async () => {
    await Promise.all(images.splice(0).map((i) => removeImage(i)));
  });
  // Registered after the image hook, so it runs first (vitest runs afterEach hooks as a stack):
  // the nodes' containers go before their images.
  const start = useTestNodes();

  it('pulls an image once for several pods and containers that want it at the same time', async () => {
    const image = await pushUnique(env!.KUBELET_TS_REGISTRY);
    images.push(image);
    const since = Date.now();
    const node = await start({ workers: 2 });
    await Promise.all(['a', 'b', 'c'].map((n) => node.writeManifest(`${n}.yaml`, podYaml(`pull-${n}`, image, 'IfNotPresent', 2))));
    for (const n of ['a', 'b', 'c']) await waitForPod(node, `pull-${n}`, isRunningAndReady, kWaitMs);
    expect(await imagePulls(image, since)).toBe(1);
    const events = node.agent.events.list();
    expect(events.some((e) => e.reason === 'Pulling' && e.message === `Pulling image "${image}"`)).toBe(true);
    expect(events.some((e) => e.reason === 'Pulled' && e.message?.startsWith(`Successfully pulled image "${image}"`))).toBe(true);
  });

  it('refuses an absent image under imagePullPolicy Never and pulls under Always', async () => {
    const image = await pushUnique(env!.KUBELET_TS_REGISTRY);
    images.push(image);
    const node = await start();
    await node.writeManifest('never.yaml', podYaml('never', image, 'Never'));
    const never = await waitForPod(node, 'never', (p) => waitingOf(p) === 'ErrImageNeverPull', kWaitMs);
    expect(never.status!.containerStatuses![0].state!.waiting!.message).toBe(
      `Container image "${image}" is not present with pull policy of Never`,
    );
    await node.writeManifest('always.yaml', podYaml('always', image, 'Always'));
    await waitForPod(node, 'always', isRunningAndReady, kWaitMs);
  });

  it('reports ErrImagePull, then ImagePullBackOff, for an image the registry does not have', async () => {
    const image = `${env!.KUBELET_TS_REGISTRY}/kubelet-ts/does-not-exist:1`;
    const node = await start();
    await node.writeManifest('missing.yaml', podYaml('missing', image, 'IfNotPresent'));
    const first = await waitForPod(node, 'missing', (p) => waitingOf(p) === 'ErrImagePull', kWaitMs);
    expect(first.status!.phase).toBe('Pending');
    expect(first.status!.containerStatuses![0].state!.waiting!.message).toContain(`Failed to pull image "${image}"`);
    const backoff = await waitForPod(node, 'missing', (p) => waitingOf(p) === 'ImagePullBackOff', kWaitMs);
    expect(backoff.status!.containerStatuses![0].state!.waiting!.message).toBe(`Back-off pulling image "${image}"`);
    const events = node.agent.events.list();
    expect(events.some((e) => e.reason === 'Failed' && e.message === 'Error: ErrImagePull')).toBe(true);
    expect(events.some((e) => e.reason === 'BackOff' && e.message === `Back-off pulling image "${image}"`)).toBe(true);
  });

  it('pulls from a registry that requires credentials only with --image-pull-credentials', async () => {
    const image = `${env!.KUBELET_TS_REGISTRY_AUTH}/kubelet-ts/busybox:1.35`;
    images.push(image);
    await removeImage(image);
    const anonymous = await start();
    await anonymous.writeManifest('auth.yaml', podYaml('auth', image, 'IfNotPresent'));
    await waitForPod(anonymous, 'auth', (p) => waitingOf(p) === 'ErrImagePull', kWaitMs);

    const creds = join(anonymous.rootDir, 'docker-config.json');
    const auth = Buffer.from(`${env!.KUBELET_TS_REGISTRY_USER}:${env!.KUBELET_TS_REGISTRY_PASSWORD}`).toString('base64');
    await writeFile(creds, JSON.stringify({ auths: { [env!.KUBELET_TS_REGISTRY_AUTH]: { auth } } }));
    const node = await start({ imagePullCredentials: creds });
    await node.writeManifest('auth.yaml', podYaml('auth', image, 'IfNotPresent'));
    await waitForPod(node, 'auth', isRunningAndReady, kWaitMs);
  });
});
