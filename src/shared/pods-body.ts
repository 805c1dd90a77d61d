// Counterpart of the apiserver's request body decoding for create and update (k8s.io/apiserver/pkg/endpoints/handlers: create.go and update.go decode the body with the scope's serializer, then admission defaults and validates).
/**
 * decodePodsBody: what POST /pods and PUT /pods/{namespace}/{name} do with the bytes of a request
 * body — parse (YAML or JSON, multi-document, List/PodList), default and validate — as one pure
 * function whose input and output are plain data, so that it runs on the body decoder thread
 * (src/workers/manifest.worker.ts, task `decodePodsBody`), never on the main thread: a hostile
 * body may cost a parser far more memory and stack than its size suggests (issue 11, finding 1).
 * The server turns a refusal into its Status (src/server/routes/intake.ts). Safe in any thread.
 */
import type { Pod } from './api.js';
import { applyPodDefaults } from './defaults.js';
import { InvalidManifestError, formatFieldError, type FieldError } from './errors.js';
import { normalizeObjectEntries, parseManifestDocuments, prefixFieldErrors, type ManifestFormat } from './manifest.js';
import type { ConfigObject } from './config-objects.js';
import { validatePodForNode } from './validation.js';

/** PodIdentity: the namespace and name a request URL names (`PUT /pods/{namespace}/{name}`). */
export interface PodIdentity {
  namespace: string;
  name: string;
}

/** DecodePodsBodyRequest: one request body to decode (the `decodePodsBody` task without its wire fields). */
export interface DecodePodsBodyRequest {
  /** The body as UTF-8 text (at most the server's body limit, 1 MiB by default). */
  text: string;
  /** `json` for `application/json`, else `yaml` (the Content-Type decides, src/server/routes/intake.ts). */
  format: ManifestFormat;
  /** PUT: the URL's namespace and name, filled in where a lone Pod leaves them out. */
  fromUrl?: PodIdentity;
}

/**
 * DecodedPodsBody: the pods, defaulted and valid, and the ConfigMaps and Secrets beside them
 * (checked and normalised: shared/config-objects.ts normalizeConfigObject), with `single` true
 * when the body was one lone document, a Pod or an object (not a List or a stream); or why not, as data the server maps to a Status:
 * - `unparsable` (400 BadRequest): not a manifest at all (syntax, nesting, aliases, a non-object), or empty;
 * - `invalid` (422 Invalid): every invalid field of every pod, paths prefixed by document and item;
 * - `tooLarge` (413 RequestEntityTooLarge): decoding it needed more memory or time than the decoder thread may use;
 * - `busy` (429 TooManyRequests with `Retry-After: retryAfterSeconds`): every decoder slot and queue place is taken.
 * The last two come from the main thread's decoder (src/main/serving/body-decoder.ts), never from decodePodsBody.
 */
export type DecodedPodsBody =
  | { ok: true; pods: Pod[]; objects: ConfigObject[]; single: boolean }
  | { ok: false; kind: 'unparsable'; message: string }
  | { ok: false; kind: 'invalid'; name: string; errors: FieldError[] }
  | { ok: false; kind: 'tooLarge'; message: string }
  | { ok: false; kind: 'busy'; message: string; retryAfterSeconds: number };

/** A syntax error or a non-object document: the body is not a manifest at all (400, not 422). */
function isUnparsable(e: FieldError): boolean {
  return typeof e.detail === 'string' && (/^(YAML|JSON) syntax error/.test(e.detail) || e.detail.startsWith('must be an object'));
}

/**
 * decodePodsBody decodes, defaults and validates one request body. All or nothing. Pure and
 * synchronous; never throws for any input (an unexpected parser error is `unparsable`).
 * `fromUrl`: when given and the body is one lone Pod, a `metadata.name` / `metadata.namespace` the
 * body leaves out (absent or null) is taken from it before defaulting and validation, as the
 * apiserver's update fills the object's namespace from the request; a value the body gives is kept
 * (the caller compares it with the URL).
 */
export function decodePodsBody({ text, format, fromUrl }: DecodePodsBodyRequest): DecodedPodsBody {
  let entries: ReturnType<typeof parseManifestDocuments>['pods'];
  let objectEntries: ReturnType<typeof parseManifestDocuments>['objects'];
  try {
    ({ pods: entries, objects: objectEntries } = parseManifestDocuments(text, 'request body', format));
  } catch (err) {
    if (!(err instanceof InvalidManifestError)) {
      return {
        ok: false,
        kind: 'unparsable',
        message: `the request body could not be decoded: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    const unparsable = err.errors.filter(isUnparsable);
    if (unparsable.length > 0)
      return {
        ok: false,
        kind: 'unparsable',
        message: `the request body could not be decoded: ${unparsable.map(formatFieldError).join('; ')}`,
      };
    return { ok: false, kind: 'invalid', name: firstName(text, format) || (fromUrl?.name ?? ''), errors: err.errors };
  }
  if (entries.length === 0 && objectEntries.length === 0)
    return { ok: false, kind: 'unparsable', message: 'the request body holds no pods' };
  if (fromUrl && entries.length + objectEntries.length === 1) {
    if (entries.length === 1 && entries[0].path === '') fillIdentity(entries[0].pod, fromUrl);
    if (objectEntries.length === 1 && objectEntries[0].path === '') fillIdentity(objectEntries[0].object as Pod, fromUrl);
  }
  const normalized = normalizeObjectEntries(objectEntries);
  const errors: FieldError[] = [...normalized.errors];
  const seen = new Map<string, string>();
  const pods = entries.map(({ pod, path }) => {
    const defaulted = applyPodDefaults(pod);
    errors.push(...prefixFieldErrors(path, validatePodForNode(defaulted)));
    const full = `${defaulted.metadata?.namespace ?? 'default'}/${defaulted.metadata?.name ?? ''}`;
    const field = path ? `${path}.metadata.name` : 'metadata.name';
    if (defaulted.metadata?.name && seen.has(full)) {
      errors.push({
        field,
        type: 'Duplicate value',
        value: defaulted.metadata.name,
        detail: `also at ${seen.get(full) || 'the first document'}`,
      });
    } else {
      seen.set(full, path);
    }
    return defaulted;
  });
  const lone = entries.length + objectEntries.length === 1;
  if (errors.length > 0) {
    const loneName =
      entries.length === 1 ? entries[0].pod.metadata?.name : (objectEntries[0]?.object.metadata as { name?: unknown } | undefined)?.name;
    return { ok: false, kind: 'invalid', name: lone ? (typeof loneName === 'string' ? loneName : '') : 'request body', errors };
  }
  return { ok: true, pods, objects: normalized.objects, single: lone && (entries[0] ?? objectEntries[0]).path === '' };
}

function firstName(text: string, format: ManifestFormat): string {
  if (format === 'json') {
    try {
      const v = JSON.parse(text) as { metadata?: { name?: unknown } };
      if (typeof v?.metadata?.name === 'string') return v.metadata.name;
    } catch {
      // fall through
    }
  }
  return /^\s*name:\s*(\S+)/m.exec(text)?.[1] ?? '';
}

/**
 * fillIdentity sets `metadata.name` / `metadata.namespace` of a decoded (not yet defaulted) pod from
 * the URL where the body leaves them absent or null; a `metadata` that is not an object is left
 * for validation to report. Mutates `pod`.
 */
function fillIdentity(pod: Pod, fromUrl: PodIdentity): void {
  const raw = pod as { metadata?: unknown };
  raw.metadata ??= {};
  if (typeof raw.metadata !== 'object' || raw.metadata === null || Array.isArray(raw.metadata)) return;
  const meta = raw.metadata as { name?: unknown; namespace?: unknown };
  meta.name ??= fromUrl.name;
  meta.namespace ??= fromUrl.namespace;
}
