// Counterpart of pkg/kubelet/cri/remote/remote_image.go (remoteImageService: the CRI ImageService over gRPC).
/**
 * RemoteImageService: the CRI {@link ImageManagerService} of a runtime reached over gRPC at
 * `unix:///path` (`--image-service-endpoint`, which defaults to the runtime's endpoint). Every call
 * has the request timeout (`--runtime-request-timeout`) but PullImage, which has none (the kubelet
 * bounds a pull by its progress, not by a deadline). Worker threads only.
 */
import { parseCriEndpoint } from './endpoint.js';
import { CriConnection, type CriClientOptions } from './connection.js';
import { loadCriServices } from './proto.js';
import type { CriCallOptions, ImageManagerService } from './services.js';
import type { CriInput, ImageSpec, PodSandboxConfig } from './types.js';
import type { AuthConfig, Image, ImageFsInfoResponse, ImageStatusResponse } from './types-status.js';

/** RemoteImageService implements {@link ImageManagerService} over one gRPC connection (see the file's docstring). */
export class RemoteImageService implements ImageManagerService {
  private readonly conn: CriConnection;

  /**
   * `flag` names the setting in errors (default `--image-service-endpoint`). Throws
   * InvalidArgumentError naming it when `endpoint` is not `unix:///path`. Does not dial.
   */
  constructor(endpoint: string, opts: CriClientOptions = {}, flag = '--image-service-endpoint') {
    this.conn = new CriConnection(loadCriServices().ImageService, parseCriEndpoint(endpoint, flag), opts);
  }

  async listImages(filter?: CriInput<{ image: ImageSpec | null }>, opts?: CriCallOptions): Promise<Image[]> {
    return (await this.conn.call<{ images: Image[] }>('ListImages', { filter: filter ?? null }, 'request', opts)).images;
  }

  imageStatus(image: CriInput<ImageSpec>, verbose = false, opts?: CriCallOptions): Promise<ImageStatusResponse> {
    return this.conn.call('ImageStatus', { image, verbose }, 'request', opts);
  }

  async pullImage(
    image: CriInput<ImageSpec>,
    auth?: CriInput<AuthConfig> | null,
    sandboxConfig?: CriInput<PodSandboxConfig> | null,
    opts?: CriCallOptions,
  ): Promise<string> {
    const req = { image, auth: auth ?? null, sandbox_config: sandboxConfig ?? null };
    return (await this.conn.call<{ image_ref: string }>('PullImage', req, 'none', opts)).image_ref;
  }

  async removeImage(image: CriInput<ImageSpec>, opts?: CriCallOptions): Promise<void> {
    await this.conn.call('RemoveImage', { image }, 'request', opts);
  }

  imageFsInfo(opts?: CriCallOptions): Promise<ImageFsInfoResponse> {
    return this.conn.call('ImageFsInfo', {}, 'request', opts);
  }

  close(): void {
    this.conn.close();
  }
}
