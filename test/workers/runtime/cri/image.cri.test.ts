// The CRI ImageService client against the real containerd of tools/lib/containerd.sh and the local registries of tools/lib/registry.sh; the role of cri-tools' critest pkg/validate/image.go.
import { describe, expect, it } from 'vitest';
import { isNotFound } from '../../../../src/shared/errors.js';
import { criEndpointOrSkip, pushVariantImage, readRunEnv, useCriRun } from '../../../support/cri.js';
import { BUSYBOX_IMAGE } from '../../../support/docker.js';

const endpoint = criEndpointOrSkip();
const registries = readRunEnv('registry');

describe.skipIf(!endpoint)('the CRI image service on containerd', { timeout: 120_000 }, () => {
  const run = useCriRun(endpoint);
  const { images } = run;

  it('answers ImageStatus and ListImages for the imported test image, and a null image for one it does not hold', async () => {
    const status = await images.imageStatus({ image: BUSYBOX_IMAGE });
    expect(status.image).toMatchObject({ repo_tags: expect.arrayContaining([`docker.io/${BUSYBOX_IMAGE}`]) });
    expect(status.image!.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(status.image!.size).toBeGreaterThan(0);
    expect((await images.imageStatus({ image: 'kubelet-ts/no-such-image:0' })).image).toBeNull();

    const all = await images.listImages();
    expect(all.map((i) => i.id)).toContain(status.image!.id);
    // (ListImages' filter is not asserted: containerd 1.6 ignores it, and the kubelet never sends one.)
  });

  it('answers ImageFsInfo with the filesystem of its own root', async () => {
    const fs = await images.imageFsInfo();
    expect(fs.image_filesystems.length).toBeGreaterThan(0);
    expect(fs.image_filesystems[0]!.fs_id?.mountpoint).toMatch(/\.run\/containerd\/root\/io\.containerd\.snapshotter\.v1\.overlayfs$/);
    expect(fs.image_filesystems[0]!.used_bytes?.value).toBeGreaterThan(0);
  });

  describe.skipIf(!registries)('pulls from the local registries', () => {
    it('pulls from the open registry, reports the image, removes it (and again, idempotently)', async () => {
      const pushed = await pushVariantImage(registries!.KUBELET_TS_REGISTRY!, run.label);
      try {
        expect((await images.imageStatus({ image: pushed.ref })).image).toBeNull();
        const ref = await images.pullImage({ image: pushed.ref });
        expect(ref).toBe(pushed.id);
        const status = await images.imageStatus({ image: pushed.ref });
        expect(status.image).toMatchObject({ id: pushed.id, repo_tags: [pushed.ref] });
        expect(status.image!.repo_digests[0]).toMatch(new RegExp(`^${pushed.ref.replace(/:[^:]+$/, '')}@sha256:`));
      } finally {
        await images.removeImage({ image: pushed.ref });
      }
      expect((await images.imageStatus({ image: pushed.ref })).image).toBeNull();
      await images.removeImage({ image: pushed.ref });
      // The test image the variant shares its layers with is still there.
      expect((await images.imageStatus({ image: BUSYBOX_IMAGE })).image).not.toBeNull();
    });

    it('pulls from the registry that wants credentials only with them, naming PullImage when refused', async () => {
      const user = { username: registries!.KUBELET_TS_REGISTRY_USER!, password: registries!.KUBELET_TS_REGISTRY_PASSWORD! };
      const pushed = await pushVariantImage(registries!.KUBELET_TS_REGISTRY_AUTH!, run.label, user);
      try {
        const refused = await images.pullImage({ image: pushed.ref }).then(() => 'pulled', (err: unknown) => err as Error & { code?: string });
        expect(refused).toBeInstanceOf(Error);
        expect((refused as Error & { code: string }).code).toBe('ERR_RUNTIME');
        expect((refused as Error).message).toMatch(/^PullImage: rpc error: code = Unknown desc = .*(401 Unauthorized|unauthorized)/i);
        expect(await images.pullImage({ image: pushed.ref }, user)).toBe(pushed.id);
      } finally {
        await images.removeImage({ image: pushed.ref });
      }
    });
  });

  it('names the method in a NotFound error of the runtime service', async () => {
    const err = await run.runtime.podSandboxStatus('no-such-sandbox').then(() => null, (e: unknown) => e as Error);
    expect(isNotFound(err)).toBe(true);
    expect(err!.message).toMatch(/^PodSandboxStatus: rpc error: code = NotFound desc = /);
  });
});
