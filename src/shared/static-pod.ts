// Counterpart of pkg/kubelet/config/common.go applyDefaults: identity of static pods (file and http sources).
/**
 * A static pod is named `<name>-<nodeName>` and gets a UID derived from its content, so the same
 * manifest on the same node is the same pod across agent restarts, and an edited manifest is a
 * new pod (docs/contracts.md "Pod sources and pod identity"). Pure functions, safe in any thread.
 */
import type { Pod, PodSourceName } from './api.js';
import { ConfigHashAnnotationKey, ConfigSeenAnnotationKey, ConfigSourceAnnotationKey } from './annotations.js';
import { applyPodDefaults } from './defaults.js';
import { InvalidArgumentError, InvalidManifestError, type FieldError } from './errors.js';
import { podContentHash, stableHash } from './hash.js';
import {
  normalizeObjectEntries,
  parseManifestDocuments,
  parseManifestEntries,
  prefixFieldErrors,
  type ManifestFormat,
} from './manifest.js';
import type { ConfigObject } from './config-objects.js';
import { validatePodForNode } from './validation.js';
import { realClock } from './clock.js';

/** Options of {@link makeStaticPod}. */
export interface StaticPodOptions {
  /**
   * This node's name (`--hostname-override` or the host name). Lower-cased, as the kubelet's
   * nodeutil.GetHostname does, before it is used in the pod name, spec.nodeName and the UID.
   */
  nodeName: string;
  /** The source: `file` (`--pod-manifest-path`) or `http` (`--manifest-url`). */
  source: Extract<PodSourceName, 'file' | 'http'>;
  /** The manifest's path or URL; part of the UID, so the same pod in two files is two pods. */
  origin: string;
  /** When the source saw this version of the pod (`kubernetes.io/config.seen`); default now. */
  seenAt?: Date;
}

/**
 * podUidForStatic: the static pod's UID, 32 hex characters of a stable hash of
 * `{pod, nodeName, origin}` where `pod` is the object as read from the manifest (before any
 * defaulting). Key order in the manifest does not matter (the hash canonicalises it); any change
 * of content, node or origin gives a new UID. As the md5 over the pod, `host:` and `file:` upstream.
 */
export function podUidForStatic(pod: Pod, nodeName: string, origin: string): string {
  return stableHash({ pod, nodeName, origin }, 32);
}

/**
 * makeStaticPod returns a defaulted copy of `pod` (as read from a manifest) with a static pod's
 * identity, as the kubelet's applyDefaults for file and http sources:
 * - metadata.uid: the manifest's own `metadata.uid` if it sets one (as upstream), else
 *   {@link podUidForStatic};
 * - metadata.name `<name>-<nodeName>` (left empty when the manifest has no name, so validation
 *   reports it); metadata.namespace `default` when unset; spec.nodeName = nodeName (lower-cased);
 * - annotations `kubernetes.io/config.hash` (= uid), `kubernetes.io/config.source` (= source),
 *   `kubernetes.io/config.seen` (RFC 3339 of seenAt, default now);
 * - then {@link applyPodDefaults}.
 * It does not validate: run validatePod on the result (the suffixed name must still be a valid
 * name), or use {@link loadStaticPods}.
 * @throws InvalidArgumentError when opts.nodeName or opts.origin is empty.
 */
export function makeStaticPod(pod: Pod, opts: StaticPodOptions): Pod {
  if (typeof opts.nodeName !== 'string' || opts.nodeName === '') throw new InvalidArgumentError('opts.nodeName must be a non-empty string');
  if (typeof opts.origin !== 'string' || opts.origin === '') throw new InvalidArgumentError('opts.origin must be a non-empty string');
  const nodeName = opts.nodeName.toLowerCase();
  const out = structuredClone(pod);
  out.metadata ??= {};
  const metadata = out.metadata;
  // A malformed metadata (not an object) is left for validatePod to report.
  if (typeof metadata !== 'object' || Array.isArray(metadata)) return applyPodDefaults(out);
  const uid = typeof metadata.uid === 'string' && metadata.uid !== '' ? metadata.uid : podUidForStatic(pod, nodeName, opts.origin);
  (metadata as { uid?: string }).uid = uid;
  if (typeof metadata.name === 'string' && metadata.name !== '') metadata.name = `${metadata.name}-${nodeName}`;
  if (!metadata.namespace) metadata.namespace = 'default';
  metadata.annotations = {
    ...(metadata.annotations ?? {}),
    [ConfigHashAnnotationKey]: uid,
    [ConfigSourceAnnotationKey]: opts.source,
    [ConfigSeenAnnotationKey]: (opts.seenAt ?? new Date(realClock.now())).toISOString(),
  };
  const spec = (out.spec ??= { containers: [] });
  if (typeof spec === 'object' && spec !== null) spec.nodeName = nodeName;
  return applyPodDefaults(out);
}

/**
 * loadStaticPods: parse a manifest's text, make each pod a static pod ({@link makeStaticPod})
 * and validate the result. All or nothing, as loadPods.
 * @throws InvalidManifestError(opts.origin, errors) with every parse and validation error,
 *   paths prefixed by document / list item (see parseManifests).
 */
export function loadStaticPods(text: string, opts: StaticPodOptions & { format?: ManifestFormat }): Pod[] {
  return loadStaticManifest(text, opts, false).pods;
}

/**
 * loadStaticManifest: {@link loadStaticPods} for a manifest that may also hold ConfigMaps and
 * Secrets beside its pods (`withObjects`): those are checked and normalised
 * (normalizeObjectEntries) and returned as they are — an object is no static pod: it keeps its
 * name (no node-name suffix) and namespace. All or nothing, every error of pods and objects together.
 * @throws InvalidManifestError(opts.origin, errors).
 */
export function loadStaticManifest(
  text: string,
  opts: StaticPodOptions & { format?: ManifestFormat },
  withObjects = true,
): { pods: Pod[]; objects: ConfigObject[] } {
  const docs = withObjects
    ? parseManifestDocuments(text, opts.origin, opts.format)
    : { pods: parseManifestEntries(text, opts.origin, opts.format), objects: [] };
  const entries = docs.pods;
  const normalized = normalizeObjectEntries(docs.objects);
  const errors: FieldError[] = [...normalized.errors];
  const pods = entries.map(({ pod, path }) => {
    const staticPod = makeStaticPod(pod, opts);
    errors.push(...prefixFieldErrors(path, validatePodForNode(staticPod)));
    return staticPod;
  });
  if (errors.length > 0) throw new InvalidManifestError(opts.origin, errors);
  return { pods, objects: normalized.objects };
}

/**
 * staticPodContentHash: the file source's name for {@link podContentHash} (the one pod content
 * hash, 16 chars: the pod without `status` and `kubernetes.io/config.seen`). The file source keeps
 * a pod's previous object when a re-read gives the same hash (so config.seen stays the first time
 * the pod was seen) and sends a SET only when some pod's hash changed; computed in the worker that
 * loads the manifest (LoadStaticPodsResult.contentHashes). Pure. Not the UID: see podUidForStatic.
 */
export const staticPodContentHash: (pod: Pod) => string = (pod) => podContentHash(pod);
