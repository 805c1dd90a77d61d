/**
 * One ImageStatus per image and sync: the CRI image service as one SyncPod uses it
 * (pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer: EnsureImageExists' GetImageRef,
 * then getImageUser, each an ImageStatus of the same image).
 */
import type { ImageManagerService } from '../runtime/cri/services.js';
import type { ImageStatusResponse } from '../runtime/cri/types-status.js';

/**
 * imageStatusOnce: `images` for one sync, whose ImageStatus answers each image spec once (the
 * image manager's presence check and the container's image ref and user — GetImageRef and
 * getImageUser of kuberuntime_container.go startContainer, two ImageStatus calls upstream — are one
 * call here). A pull forgets every answer (the image may have changed); a failed call and an answer
 * that the image is absent are not kept (another thread may pull it: pullUnderLock re-checks);
 * a verbose call is not cached. The other calls go to `images` as they are.
 */
export function imageStatusOnce(images: ImageManagerService): ImageManagerService {
  const seen = new Map<string, Promise<ImageStatusResponse>>();
  return {
    listImages: (filter, opts) => images.listImages(filter, opts),
    imageStatus: (spec, verbose, opts) => {
      if (verbose) return images.imageStatus(spec, verbose, opts);
      const key = JSON.stringify(spec);
      let p = seen.get(key);
      if (!p) {
        p = images.imageStatus(spec, verbose, opts);
        seen.set(key, p);
        // An absent image is asked again: another thread may be pulling it (pullUnderLock re-checks).
        p.then(
          (r) => r.image === null && seen.get(key) === p && seen.delete(key),
          () => seen.delete(key),
        );
      }
      return p;
    },
    pullImage: async (image, auth, sandboxConfig, opts) => {
      seen.clear();
      try {
        return await images.pullImage(image, auth, sandboxConfig, opts);
      } finally {
        seen.clear();
      }
    },
    removeImage: (image, opts) => {
      seen.clear();
      return images.removeImage(image, opts);
    },
    imageFsInfo: (opts) => images.imageFsInfo(opts),
    close: () => images.close(),
  };
}
