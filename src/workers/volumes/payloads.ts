/**
 * Counterpart of the payload builders of pkg/volume/configmap (MakePayload), pkg/volume/secret
 * (MakePayload), pkg/volume/downwardapi (CollectData) and pkg/volume/projected (collectData): from a
 * volume source and the objects (and service account tokens) it names to the files an AtomicWriter writes. Pure functions (apart
 * from reading the node's capacity for an unset resource limit); worker thread.
 */
import type { ConfigMap, Pod, Secret, Volume } from '../../shared/api.js';
import type { PodConfigObjects } from '../../shared/sync-tasks.js';
import { AgentError } from '../../shared/errors.js';
import { fieldRefValue, resourceFieldValue, type DownwardAPIContext } from '../kubetypes/downward-api.js';
import type { Payload } from './atomic-writer.js';

/** The default file mode of configMap, secret, downwardAPI and projected volumes (0644, as the API's defaulting). */
export const kDefaultVolumeFileMode = 0o644;

interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

function mountError(message: string): AgentError {
  return new AgentError('ERR_NOT_FOUND', message);
}

/** The files a key→bytes map makes: every key (no items), or the items' keys at their paths (missing key: error unless optional). */
function keyedPayload(
  data: Map<string, Buffer>,
  items: KeyToPath[] | undefined,
  defaultMode: number,
  optional: boolean,
  missingKey: (k: string) => string,
): Payload {
  const out: Payload = {};
  if (!items?.length) {
    for (const [k, v] of data) out[k] = { data: v, mode: defaultMode };
    return out;
  }
  for (const it of items) {
    const v = data.get(it.key);
    if (v === undefined) {
      if (optional) continue;
      throw mountError(missingKey(it.key));
    }
    out[it.path] = { data: v, mode: it.mode ?? defaultMode };
  }
  return out;
}

function configMapData(cm: ConfigMap): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm.data ?? {})) m.set(k, Buffer.from(String(v), 'utf8'));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) m.set(k, Buffer.from(String(v), 'base64'));
  return m;
}

function secretData(s: Secret): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(s.data ?? {})) m.set(k, Buffer.from(String(v), 'base64'));
  for (const [k, v] of Object.entries((s as { stringData?: Record<string, string> }).stringData ?? {}))
    m.set(k, Buffer.from(String(v), 'utf8'));
  return m;
}

/**
 * configMapPayload, as configmap MakePayload: the ConfigMap's `data` and `binaryData` keys (or the
 * `items`) with `defaultMode`; a missing ConfigMap gives `configmap "x" not found` unless optional
 * (then no files), a missing item key `configmap references non-existent config key: k`.
 * @throws AgentError ERR_NOT_FOUND (a FailedMount).
 */
export function configMapPayload(
  src: { name?: string; items?: KeyToPath[]; optional?: boolean },
  objects: PodConfigObjects | undefined,
  defaultMode: number,
): Payload {
  const name = src.name ?? '';
  const cm = objects?.configMaps?.[name];
  if (!cm) {
    if (src.optional) return {};
    throw mountError(`configmap ${JSON.stringify(name)} not found`);
  }
  return keyedPayload(
    configMapData(cm),
    src.items,
    defaultMode,
    src.optional === true,
    (k) => `configmap references non-existent config key: ${k}`,
  );
}

/**
 * secretPayload, as secret MakePayload: the Secret's `data` (base64-decoded; `stringData` too) with
 * `defaultMode`; a missing Secret gives `secret "x" not found` unless optional, a missing item key
 * `references non-existent secret key: k`.
 * @throws AgentError ERR_NOT_FOUND (a FailedMount).
 */
export function secretPayload(
  name: string,
  src: { items?: KeyToPath[]; optional?: boolean },
  objects: PodConfigObjects | undefined,
  defaultMode: number,
): Payload {
  const s = objects?.secrets?.[name];
  if (!s) {
    if (src.optional) return {};
    throw mountError(`secret ${JSON.stringify(name)} not found`);
  }
  return keyedPayload(secretData(s), src.items, defaultMode, src.optional === true, (k) => `references non-existent secret key: ${k}`);
}

/** formatMap, as fieldpath.FormatMap: `key="value"` lines in key order, no final newline. */
export function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}

interface DownwardAPIFile {
  path: string;
  mode?: number;
  fieldRef?: { fieldPath: string };
  resourceFieldRef?: { containerName?: string; resource: string; divisor?: string | number };
}

/**
 * downwardAPIPayload, as downwardapi CollectData: each item's value — `metadata.labels` and
 * `metadata.annotations` as formatMap, other fieldRefs as the env's downward API, resourceFieldRef
 * of the named container (limits unset → node capacity) — at its path with its mode or `defaultMode`.
 * @throws AgentError (reason CreateContainerConfigError) for an unknown field or container.
 */
export function downwardAPIPayload(
  items: DownwardAPIFile[] | undefined,
  pod: Pod,
  ctx: DownwardAPIContext,
  defaultMode: number,
  field: string,
): Payload {
  const out: Payload = {};
  (items ?? []).forEach((it, i) => {
    const f = `${field}.items[${i}]`;
    let value: string;
    if (it.fieldRef) {
      const fp = it.fieldRef.fieldPath;
      if (fp === 'metadata.labels') value = formatMap(pod.metadata?.labels);
      else if (fp === 'metadata.annotations') value = formatMap(pod.metadata?.annotations);
      else value = fieldRefValue(pod, fp, ctx, `${f}.fieldRef`);
    } else if (it.resourceFieldRef) {
      const ref = it.resourceFieldRef;
      const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
      const target = all.find((c) => c.name === ref.containerName);
      if (!target)
        throw new AgentError(
          'ERR_INVALID_ARGUMENT',
          `${f}.resourceFieldRef.containerName: Not found: ${JSON.stringify(ref.containerName ?? '')}`,
          { reason: 'CreateContainerConfigError' },
        );
      value = resourceFieldValue(target, ref.resource, ref.divisor, `${f}.resourceFieldRef`);
    } else return;
    out[it.path] = { data: Buffer.from(value, 'utf8'), mode: it.mode ?? defaultMode };
  });
  return out;
}

/**
 * serviceAccountTokenPayload, as projected collectData's serviceAccountToken case: the token the
 * main thread's token manager issued for this source (PodConfigObjects.serviceAccountTokens) at
 * `path` with the volume's default mode.
 * @throws AgentError ERR_NOT_FOUND (a FailedMount, retried) when no token came with the task.
 */
export function serviceAccountTokenPayload(path: string, token: string | undefined, mode: number): Payload {
  if (!token) throw mountError(`failed to fetch token: no service account token was issued for ${JSON.stringify(path)}`);
  return { [path]: { data: Buffer.from(token, 'utf8'), mode } };
}

/**
 * volumePayload: the payload of a configMap, secret, downwardAPI or projected volume (projected:
 * its sources' payloads together, tokens included, as projected collectData, `defaultMode` for items without a
 * mode); null for other kinds. `field` names the volume in messages (`spec.volumes[i]`).
 * @throws AgentError: ERR_NOT_FOUND (missing object or key: a FailedMount), CreateContainerConfigError (bad reference).
 */
export function volumePayload(
  vol: Volume,
  pod: Pod,
  objects: PodConfigObjects | undefined,
  ctx: DownwardAPIContext,
  field: string,
): Payload | null {
  if (vol.configMap) return configMapPayload(vol.configMap, objects, vol.configMap.defaultMode ?? kDefaultVolumeFileMode);
  if (vol.secret) return secretPayload(vol.secret.secretName ?? '', vol.secret, objects, vol.secret.defaultMode ?? kDefaultVolumeFileMode);
  if (vol.downwardAPI)
    return downwardAPIPayload(
      vol.downwardAPI.items,
      pod,
      ctx,
      vol.downwardAPI.defaultMode ?? kDefaultVolumeFileMode,
      `${field}.downwardAPI`,
    );
  if (vol.projected) {
    const mode = vol.projected.defaultMode ?? kDefaultVolumeFileMode;
    const out: Payload = {};
    (vol.projected.sources ?? []).forEach((s, i) => {
      const sf = `${field}.projected.sources[${i}]`;
      let part: Payload = {};
      if (s.configMap) part = configMapPayload(s.configMap, objects, mode);
      else if (s.secret) part = secretPayload(s.secret.name ?? '', s.secret, objects, mode);
      else if (s.downwardAPI) part = downwardAPIPayload(s.downwardAPI.items, pod, ctx, mode, `${sf}.downwardAPI`);
      else if (s.serviceAccountToken)
        part = serviceAccountTokenPayload(s.serviceAccountToken.path, objects?.serviceAccountTokens?.[`${vol.name}/${i}`], mode);
      else
        throw new AgentError(
          'ERR_INVALID_ARGUMENT',
          `${sf}: Not supported: only configMap, secret, downwardAPI and serviceAccountToken sources are run`,
          { reason: 'CreateContainerConfigError' },
        );
      Object.assign(out, part);
    });
    return out;
  }
  return null;
}
