/**
 * Counterpart of pkg/kubelet/images/puller.go and image_manager.go over the CRI's
 * ImageManagerService (pkg/kubelet/kuberuntime/kuberuntime_image.go PullImage, GetImageRef,
 * getImageUser): the ImagePort of ensureImageExists on a CRI runtime, and the image's user.
 */
import { realClock, type Clock } from '../../shared/clock.js';
import { isUnavailable } from '../../shared/errors.js';
import type { ImageManagerService } from '../runtime/cri/services.js';
import type { AuthConfig } from '../runtime/cri/types-status.js';
import type { CriInput, PodSandboxConfig } from '../runtime/cri/types.js';
import type { RegistryAuth } from '../runtime/container/runtime.js';
import type { ImagePort } from '../images/image-manager.js';
import { pullUnderLock, type NodeKeyring } from '../images/image-puller.js';
import type { ImageUser } from './security-context.js';
import { recordPulledImage } from '../images/image-gc.js';

/**
 * authConfig: a pull secret's credentials as the CRI's AuthConfig: username and password, and no
 * server_address, as the kubelet sends them (pkg/credentialprovider/keyring.go Add keeps only the
 * user, password and email of a matched entry; kuberuntime_image.go passes that on). The keyring
 * has already matched the credentials to the image's registry; a runtime may check a server_address
 * against it: containerd 1.6 parses it as a URL and refused a bare `127.0.0.1:5056` ("parse server
 * address: first path segment in URL cannot contain colon"), so no pull with credentials succeeded.
 */
export function authConfig(a: RegistryAuth): CriInput<AuthConfig> {
  return { username: a.username, password: a.password, server_address: '' };
}

/**
 * criImagePort: present = ImageStatus answers an image; pull = PullImage with each of the pod's
 * credentials for the registry in turn until one succeeds (kuberuntime_image.go PullImage: the
 * keyring's matches: the pod's pull secrets, then the node's `nodeKeyring` entry for the
 * registry), or without credentials when there are none. `sandboxConfig`
 * goes with the pull (the runtime may use it, e.g. for its runtime handler). With `rootDir`, a
 * pulled image is recorded in `images/pulled.json` (image-gc.ts recordPulledImage): image GC removes
 * only what this agent pulled, at `clock.now()` (default realClock).
 * @throws from pull: the last PullImage error (AgentError naming PullImage).
 */
export function criImagePort(
  images: ImageManagerService,
  sandboxConfig?: CriInput<PodSandboxConfig>,
  rootDir?: string,
  nodeKeyring?: NodeKeyring,
  clock: Clock = realClock,
): ImagePort {
  const pulled = async (image: string, id: string) => {
    if (rootDir) await recordPulledImage(rootDir, image, id, clock.now());
  };
  const present = async (image: string) => (await images.imageStatus({ image })).image !== null;
  const pullNow = async (image: string, podOpts: { pullSecrets: RegistryAuth[] }) => {
    const node = await nodeKeyring?.(image);
    const opts = { pullSecrets: node ? [...podOpts.pullSecrets, node] : podOpts.pullSecrets };
    if (opts.pullSecrets.length === 0) {
      await pulled(image, await images.pullImage({ image }, null, sandboxConfig ?? null));
      return;
    }
    let last: unknown;
    for (const auth of opts.pullSecrets) {
      try {
        await pulled(image, await images.pullImage({ image }, authConfig(auth), sandboxConfig ?? null));
        return;
      } catch (err) {
        if (isUnavailable(err)) throw err;
        last = err;
      }
    }
    throw last;
  };
  return {
    present,
    // One pull of an image at a time in this thread (a second caller joins it) and across threads
    // (pullUnderLock), as the Docker puller: several pods wanting one image pull it once.
    pull: (image, podOpts) => {
      const key = `${rootDir ?? ''}\0${image}\0${JSON.stringify(podOpts.pullSecrets)}`;
      let p = inFlight.get(key);
      if (!p) {
        const run = () => pullNow(image, podOpts);
        p = (rootDir ? pullUnderLock(rootDir, image, podOpts.ifNotPresent, () => present(image), run, clock) : run()).finally(() =>
          inFlight.delete(key),
        );
        inFlight.set(key, p);
      }
      return p;
    },
  };
}

/** This thread's CRI pulls in flight, by root dir, image and credentials (criImagePort joins them). */
const inFlight = new Map<string, Promise<void>>();

/**
 * imageRefAndUser, as GetImageRef + getImageUser: the image's ID (what CreateContainer is given;
 * the reference itself when the runtime does not answer one) and its user — `uid` when numeric,
 * else `username`, and root (`uid` 0) when neither is set.
 * @throws AgentError from ImageStatus.
 */
export async function imageRefAndUser(images: ImageManagerService, image: string): Promise<{ ref: string; user: ImageUser }> {
  const img = (await images.imageStatus({ image })).image;
  if (!img) return { ref: image, user: { uid: 0 } };
  const user: ImageUser = img.uid ? { uid: img.uid.value } : img.username ? { username: img.username } : { uid: 0 };
  return { ref: img.id || image, user };
}
