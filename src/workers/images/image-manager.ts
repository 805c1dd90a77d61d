/**
 * Counterpart of pkg/kubelet/images/image_manager.go EnsureImageExists: whether a container's (or
 * the sandbox's) image is there to create from, pulling it as its pull policy says, with the
 * kubelet's pull backoff, events and waiting reasons. The pulls themselves go through the
 * thread's ImagePuller (image-puller.ts: one pull per image at a time, credentials).
 */
import type { Clock } from '../../shared/clock.js';
import type { PullPolicy, Pod } from '../../shared/api.js';
import { isUnavailable, serializeError } from '../../shared/errors.js';
import type { PodSyncResult, SyncPodTask } from '../../shared/sync-tasks.js';
import { imageReferenceError } from './image-reference.js';
import { isInPullBackoff, nextPullBackoff, pullBackoffKey, pullSecretAuths } from './image-puller.js';
import type { ContainerRuntime, RegistryAuth } from '../runtime/container/runtime.js';
import type { ImagePuller } from './image-puller.js';

/**
 * ImagePort: how ensureImageExists reaches the images of the runtime — Docker's (the sync's
 * runtime and ImagePuller, the default) or the CRI's ImageManagerService (kuberuntime/cri-images.ts).
 */
export interface ImagePort {
  /** present: whether the runtime holds `image` (ImageStatus / inspect). */
  present(image: string): Promise<boolean>;
  /** pull: make `image` present, with the pod's pull secrets for its registry (tried in order). @throws the runtime's error. */
  pull(image: string, opts: { ifNotPresent: boolean; pullSecrets: RegistryAuth[] }): Promise<void>;
}

/** dockerImagePort: the ImagePort over the sync's Docker-shaped runtime and its ImagePuller. */
function dockerImagePort(deps: ImageSync['deps']): ImagePort {
  return {
    present: async (image) => Boolean(await deps.runtime!.imageExists(image)),
    pull: async (image, opts) => {
      if (deps.imagePuller) await deps.imagePuller.pull(image, opts);
      else await deps.runtime!.pullImage(image, opts.pullSecrets[0]);
    },
  };
}

/** ImageSync: the part of a pod's sync that ensureImageExists reads and records into (sync-pod.ts). */
export interface ImageSync {
  readonly deps: { runtime?: ContainerRuntime; imagePuller?: ImagePuller; clock: Clock };
  /** The images of the runtime; absent = Docker's, through `deps.runtime` and `deps.imagePuller`. */
  readonly images?: ImagePort;
  readonly task: Pick<SyncPodTask, 'backoff' | 'configObjects'>;
  readonly pod: Pod;
  /** Steps, events, waiting reasons and pull backoff entries are added to it. */
  readonly result: PodSyncResult;
  /** Asks for the pod's next sync within `ms` milliseconds (the earliest ask wins). */
  requeue(ms: number): void;
}

/**
 * ensureImageExists: Never + absent → ErrImageNeverPull; IfNotPresent + absent, or Always → pull
 * (ErrImagePull on failure, then ImagePullBackOff while the pod's pull backoff for the image runs:
 * 10 s doubling to 300 s, a BackOff event and a requeue at its expiry). `target` names the step
 * (a container's name, or `POD`); `fieldPath` (`spec.containers{name}`) goes on the events and is
 * absent for the sandbox's image, which gets no Pulled event. Events as the kubelet words them:
 * Pulling, Pulled, Failed, BackOff. A reference that does not parse waits with InvalidImageName
 * before any runtime call (see checkImageReference). Resolves true when the image is usable.
 * @throws AgentError ERR_RUNTIME_UNAVAILABLE when the runtime cannot be reached; every other failure is recorded.
 */
export async function ensureImageExists(
  sync: ImageSync,
  image: string,
  policy: PullPolicy,
  target: string,
  fieldPath?: string,
): Promise<boolean> {
  if (!checkImageReference(sync, image, target, fieldPath)) return false;
  const port = sync.images ?? dockerImagePort(sync.deps);
  const present = await port.present(image);
  if (present && policy !== 'Always') {
    if (fieldPath)
      sync.result.events.push({
        type: 'Normal',
        reason: 'Pulled',
        message: `Container image "${image}" already present on machine`,
        fieldPath,
      });
    return true;
  }
  if (policy === 'Never') {
    const message = `Container image "${image}" is not present with pull policy of Never`;
    sync.result.steps.push({ action: 'PullImage', target, ok: false, reason: 'ErrImageNeverPull', message });
    sync.result.events.push({ type: 'Warning', reason: 'ErrImageNeverPull', message, fieldPath });
    sync.result.waiting[target] = { reason: 'ErrImageNeverPull', message };
    return false;
  }
  const key = pullBackoffKey(sync.result.podUid, image);
  const entry = sync.task.backoff?.[key];
  const now = sync.deps.clock.now();
  if (isInPullBackoff(entry, now)) {
    const message = `Back-off pulling image "${image}"`;
    sync.result.backoff[key] = entry!;
    sync.result.steps.push({ action: 'PullImage', target, ok: false, reason: 'ImagePullBackOff', message });
    sync.result.events.push({ type: 'Normal', reason: 'BackOff', message, fieldPath });
    sync.result.events.push({ type: 'Warning', reason: 'Failed', message: 'Error: ImagePullBackOff', fieldPath });
    sync.result.waiting[target] = { reason: 'ImagePullBackOff', message };
    sync.requeue(Math.max(1, entry!.lastUpdateMs + entry!.backoffMs - now));
    return false;
  }
  const secrets = pullSecretAuths(sync.pod, sync.task.configObjects, image);
  if (secrets.missing.length > 0) {
    // kubelet getPullSecretsForPod: pull anyway, with a warning on the pod.
    sync.result.events.push({
      type: 'Warning',
      reason: 'FailedToRetrieveImagePullSecret',
      message: `Unable to retrieve some image pull secrets (${secrets.missing.join(', ')}); attempting to pull the image may not succeed.`,
    });
  }
  sync.result.events.push({ type: 'Normal', reason: 'Pulling', message: `Pulling image "${image}"`, fieldPath });
  const started = sync.deps.clock.monotonicMs();
  try {
    await port.pull(image, { ifNotPresent: policy === 'IfNotPresent', pullSecrets: secrets.auths });
  } catch (err) {
    if (isUnavailable(err)) throw err;
    const message = `Failed to pull image "${image}": ${serializeError(err).message}`;
    const next = nextPullBackoff(entry, now);
    sync.result.backoff[key] = next;
    sync.result.steps.push({ action: 'PullImage', target, ok: false, reason: 'ErrImagePull', message });
    sync.result.events.push({ type: 'Warning', reason: 'Failed', message, fieldPath });
    sync.result.events.push({ type: 'Warning', reason: 'Failed', message: 'Error: ErrImagePull', fieldPath });
    sync.result.waiting[target] = { reason: 'ErrImagePull', message };
    sync.requeue(next.backoffMs);
    return false;
  }
  const secs = ((sync.deps.clock.monotonicMs() - started) / 1000).toFixed(3).replace(/\.?0+$/, '');
  sync.result.steps.push({ action: 'PullImage', target, ok: true });
  sync.result.events.push({ type: 'Normal', reason: 'Pulled', message: `Successfully pulled image "${image}" in ${secs}s`, fieldPath });
  return true;
}

/** The key of the entry that remembers an invalid image reference was reported for a pod. */
function invalidImageKey(podUid: string, image: string): string {
  return `invalid-image:${podUid}_${image}`;
}

/**
 * checkImageReference: false when `image` does not parse as an image reference (image-reference.ts),
 * as the kubelet's EnsureImageExists refuses it before inspecting or pulling (applyDefaultImageTag
 * → ErrInvalidImageName): the target waits with reason `InvalidImageName` and the message
 * `Failed to apply default image tag "<image>": couldn't parse image name …`; the Warning events
 * `InspectFailed` (that message) and `Failed` (`Error: InvalidImageName`) are recorded once per pod
 * and image — an entry in the pod's backoff map remembers it across syncs (it lasts while the pod
 * keeps the image), so later syncs neither repeat them nor reach the runtime, whose error each
 * sync used to log.
 */
function checkImageReference(sync: ImageSync, image: string, target: string, fieldPath?: string): boolean {
  const why = imageReferenceError(image);
  if (why === undefined) return true;
  const message = `Failed to apply default image tag ${JSON.stringify(image)}: ${why}`;
  const key = invalidImageKey(sync.result.podUid, image);
  const reported = sync.task.backoff?.[key];
  sync.result.backoff[key] = reported ?? { backoffMs: 0, lastUpdateMs: sync.deps.clock.now() };
  sync.result.steps.push({ action: 'PullImage', target, ok: false, reason: 'InvalidImageName', message });
  if (!reported) {
    sync.result.events.push({ type: 'Warning', reason: 'InspectFailed', message, fieldPath });
    sync.result.events.push({ type: 'Warning', reason: 'Failed', message: 'Error: InvalidImageName', fieldPath });
  }
  sync.result.waiting[target] = { reason: 'InvalidImageName', message };
  return false;
}
