// Counterpart of pkg/kubelet/dockershim/docker_image.go (ListImages, ImageStatus, PullImage, RemoveImage, ImageFsInfo) and convert.go imageToRuntimeAPIImage, kubernetes ≤1.23; cri-dockerd core/imagefs.go, core/image.go.
/**
 * The CRI ImageManagerService over the Docker-shaped ContainerRuntime. ImageStatus reads the
 * image's inspect (its `Config.User` as `uid` or `username`); RemoveImage removes by ID — every
 * tag of the image, as the CRI does (Docker's own removal untags one reference); the pod infra
 * image is answered `pinned`, so image GC leaves it. Errors: AgentError from the runtime
 * (ERR_NOT_FOUND, ERR_RUNTIME_UNAVAILABLE, ERR_RUNTIME; a failed pull with reason `ErrImagePull`).
 */
import { realClock, type Clock } from '../../../shared/clock.js';
import { isNotFound } from '../../../shared/errors.js';
import type { CriCallOptions, ImageManagerService } from '../cri/services.js';
import type { CriInput, ImageSpec } from '../cri/types.js';
import type { AuthConfig, Image, ImageFsInfoResponse, ImageStatusResponse } from '../cri/types-status.js';
import type { ContainerRuntime, LocalImage, RegistryAuth } from '../container/runtime.js';

/**
 * imageUser: a `Config.User` as the CRI's `uid` / `username` (dockershim getUserFromImageUser):
 * the part before `:`; a number is a uid, a name a username; unset → uid null, username ''.
 */
export function imageUser(user: string | undefined): { uid: { value: number } | null; username: string } {
  const u = (user ?? '').split(':')[0];
  if (u === '') return { uid: null, username: '' };
  return /^\d+$/.test(u) ? { uid: { value: Number(u) }, username: '' } : { uid: null, username: u };
}

/**
 * registryAuth: a CRI AuthConfig as Docker's X-Registry-Auth: `username`/`password`, or `auth`
 * (base64 of `user:password`) decoded; `server_address` as given. Null when it carries neither.
 */
export function registryAuth(a: CriInput<AuthConfig> | null | undefined): RegistryAuth | null {
  if (!a) return null;
  let { username = '', password = '' } = a as { username?: string; password?: string };
  if (!username && a.auth) {
    const text = Buffer.from(a.auth, 'base64').toString('utf8');
    const i = text.indexOf(':');
    if (i > 0) [username, password] = [text.slice(0, i), text.slice(i + 1)];
  }
  return username || password ? { username, password, serveraddress: a.server_address ?? '' } : null;
}

/** DockerImageService: ImageManagerService over `runtime`; `podInfraImage` is answered pinned; `clock` (default realClock) stamps imageFsInfo. */
export class DockerImageService implements ImageManagerService {
  constructor(
    private readonly runtime: ContainerRuntime,
    private readonly podInfraImage: string,
    private readonly clock: Clock = realClock,
  ) {}

  #toImage(img: LocalImage, asked: string): Image {
    const tags = img.repoTags ?? (asked && !asked.startsWith('sha256:') ? [asked] : []);
    return {
      id: img.id,
      repo_tags: tags,
      repo_digests: img.repoDigests ?? [],
      size: img.sizeBytes ?? 0,
      ...imageUser(img.user),
      spec: { image: img.id, annotations: {}, user_specified_image: '', runtime_handler: '' },
      pinned: tags.includes(this.podInfraImage),
    };
  }

  /** listImages: every local image (the filter, which the kubelet never sends, is applied on the reference when given). */
  async listImages(filter?: CriInput<{ image: ImageSpec | null }>, _opts?: CriCallOptions): Promise<Image[]> {
    const want = filter?.image?.image;
    const list = await this.runtime.listImages();
    return list
      .filter((i) => !want || i.id === want || i.repoTags.includes(want))
      .map((i) => ({
        id: i.id,
        repo_tags: i.repoTags,
        repo_digests: [],
        size: i.sizeBytes,
        uid: null,
        username: '',
        spec: { image: i.id, annotations: {}, user_specified_image: '', runtime_handler: '' },
        pinned: i.repoTags.includes(this.podInfraImage),
      }));
  }

  /** imageStatus: the inspect of `image.image`, or `image: null` when Docker does not hold it. */
  async imageStatus(image: CriInput<ImageSpec>, _verbose?: boolean, _opts?: CriCallOptions): Promise<ImageStatusResponse> {
    const ref = image.image ?? '';
    const found = ref ? await this.runtime.imageExists(ref) : null;
    return { image: found && this.#toImage(found, ref), info: {} };
  }

  /** pullImage: Docker's pull with the credentials of `auth`; resolves the image's ID. @throws reason `ErrImagePull` on failure. */
  async pullImage(
    image: CriInput<ImageSpec>,
    auth?: CriInput<AuthConfig> | null,
    _sandboxConfig?: unknown,
    _opts?: CriCallOptions,
  ): Promise<string> {
    const ref = image.image ?? '';
    await this.runtime.pullImage(ref, registryAuth(auth) ?? undefined);
    return (await this.runtime.imageExists(ref))?.id ?? '';
  }

  /**
   * removeImage: removes the image `image.image` names (a reference or an ID) with every tag it
   * has; one already gone succeeds. @throws ERR_ALREADY_EXISTS (Docker's 409) while a container uses it.
   */
  async removeImage(image: CriInput<ImageSpec>, _opts?: CriCallOptions): Promise<void> {
    const ref = image.image ?? '';
    const found = ref ? await this.runtime.imageExists(ref) : null;
    if (!found) return;
    const tags = found.repoTags ?? (await this.runtime.listImages()).find((i) => i.id === found.id)?.repoTags ?? [];
    const refs = tags.length > 0 ? tags : [found.id];
    for (const r of refs) {
      await this.runtime.removeImage(r).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  }

  /** imageFsInfo: the filesystem of Docker's root, its used bytes (capacity minus available); none for the in-memory fake. */
  async imageFsInfo(_opts?: CriCallOptions): Promise<ImageFsInfoResponse> {
    const fs = await this.runtime.imageFsInfo();
    if (!fs) return { image_filesystems: [], container_filesystems: [] };
    const usage = {
      timestamp: this.clock.now() * 1e6,
      fs_id: { mountpoint: fs.mountpoint },
      used_bytes: { value: Math.max(0, fs.capacityBytes - fs.availableBytes) },
      inodes_used: null,
    };
    return { image_filesystems: [usage], container_filesystems: [usage] };
  }

  /** close: nothing to drop (the engine client is the thread's). */
  close(): void {}
}
