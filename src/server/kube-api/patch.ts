/**
 * Counterpart of k8s.io/apiserver/pkg/endpoints/handlers/patch.go (PatchResource: the patch types
 * the apiserver accepts and how each is applied to the stored object) for one Pod. The route reads
 * the stored Pod, calls {@link patchPod}, then validates and stores the result as for an update
 * (resourceVersion preconditions, spec mutability, the status manager are the route's). Pure; any thread.
 */
import { isCollection, parseAllDocuments, visit, type Document } from 'yaml';
import { kKubernetesYaml } from '../../shared/yaml-options.js';
import type { Pod } from '../../shared/api.js';
import { AgentError, InvalidManifestError, type FieldError } from '../../shared/errors.js';
import { kMaxManifestDepth, manifestDepth } from '../../shared/manifest-depth.js';
import { applyJsonPatch } from './patch/json-patch.js';
import { badRequest, deepEqual, isObject, rejectProtoKeys, type Json, type JsonObject } from './patch/json.js';
import { recordUpdate, writeManagers } from './patch/managed-fields.js';
import { mergePatch } from './patch/merge-patch.js';
import { kPodPatchMeta, type PatchMeta } from './patch/pod-strategies.js';
import { serverSideApply } from './patch/server-side-apply.js';
import { strategicMerge } from './patch/strategic-merge.js';

/** kPatchContentTypes: the patch Content-Types the apiserver accepts, in its order (the 415 message lists them). */
export const kPatchContentTypes = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;

/** PatchQuery: the query parameters of a PATCH that change how it applies (`?fieldManager=&force=`). */
export interface PatchQuery {
  /** The field manager (`?fieldManager=`): required for apply; recorded as an `Update` manager otherwise. */
  fieldManager?: string;
  /** `?force=true`: an apply takes the conflicting fields from their managers instead of failing. */
  force?: boolean;
}

/**
 * patchPod returns the Pod that `body` (a patch of type `contentType`, parameters after `;`
 * ignored) makes of `current`; `current` is never modified. The four types of the apiserver:
 * `application/json-patch+json` (RFC 6902, via the rfc6902 library), `application/merge-patch+json`
 * (RFC 7386), `application/strategic-merge-patch+json` (the Pod's patch strategies: containers,
 * initContainers, ephemeralContainers, volumes, imagePullSecrets, env by name; ports by
 * containerPort; volumeMounts by mountPath; the `$patch`, `$retainKeys`, `$setElementOrder/` and
 * `$deleteFromPrimitiveList/` directives) and `application/apply-patch+yaml` (server-side apply
 * by `query.fieldManager`, see server-side-apply.ts for what it simplifies). With a
 * `fieldManager`, the other types record an `Update` entry in `metadata.managedFields`.
 *
 * Throws only AgentError: ERR_INVALID_ARGUMENT with statusReason `UnsupportedMediaType` (HTTP 415)
 * for another type; ERR_INVALID_ARGUMENT (`BadRequest`, 400) naming the problem for a body that
 * does not parse, nests deeper than kMaxManifestDepth or cannot be applied; ERR_INVALID_MANIFEST
 * (`Invalid`, 422) with field errors when the result changes `apiVersion`, `kind`,
 * `metadata.name`, `metadata.namespace` or `metadata.uid`, or is not an object with metadata;
 * ERR_CONFLICT (409) for an apply that conflicts with another manager without `force`.
 */
export function patchPod(current: Pod, contentType: string, body: string, query: PatchQuery): Pod {
  return patchObject(current, contentType, body, query, { kind: 'Pod', meta: kPodPatchMeta });
}

/**
 * PatchTarget: what the patched object is: its `kind` (an apply configuration must name it) and
 * its patch strategies (which lists merge by which key: pod-strategies.ts).
 */
export interface PatchTarget {
  kind: string;
  meta: PatchMeta;
}

/**
 * patchObject: {@link patchPod} for an object of any core/v1 kind the node serves (a ConfigMap or
 * Secret: `target` kConfigObjectPatchMeta), with the same four patch types, checks and errors.
 */
export function patchObject<T>(current: T, contentType: string, body: string, query: PatchQuery, target: PatchTarget): T {
  try {
    return patchUnchecked(current, contentType, body, query, target) as T;
  } catch (err) {
    if (err instanceof AgentError) throw err;
    // A stack overflow or a library's own exception: still a bad patch, never a crash.
    throw badRequest(`the patch could not be applied: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function patchUnchecked(current: unknown, contentType: string, body: string, query: PatchQuery, target: PatchTarget): unknown {
  const type = String(contentType ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (!(kPatchContentTypes as readonly string[]).includes(type)) {
    throw new AgentError(
      'ERR_INVALID_ARGUMENT',
      `the body of the request was in an unknown format - accepted media types include: ${kPatchContentTypes.join(', ')}`,
      { statusReason: 'UnsupportedMediaType' },
    );
  }
  if (typeof body !== 'string') throw badRequest('the patch body must be text');
  const yaml = type === 'application/apply-patch+yaml';
  if (manifestDepth(body, yaml ? 'yaml' : 'json') > kMaxManifestDepth) {
    throw badRequest(`the patch nests deeper than ${kMaxManifestDepth} levels`);
  }
  const patch = parseBody(body, yaml);
  rejectProtoKeys(patch, 'patch');
  const live = JSON.parse(JSON.stringify(current ?? {})) as Json;
  if (!isObject(live)) throw badRequest('the current object is not an object');
  let out: Json;
  switch (type) {
    case 'application/json-patch+json':
      out = applyJsonPatch(live, patch);
      break;
    case 'application/merge-patch+json':
      if (!isObject(patch)) throw badRequest('merge patch: the body must be a JSON object');
      out = mergePatch(live, patch);
      break;
    case 'application/strategic-merge-patch+json':
      if (!isObject(patch)) throw badRequest('strategic merge patch: the body must be a JSON object');
      out = strategicMerge(live, patch, target.meta) ?? {};
      break;
    default:
      if (!isObject(patch)) throw badRequest('apply: the body must be a YAML or JSON object');
      checkApplyIdentity(patch, target.kind);
      out = serverSideApply(live, patch, target.meta, query?.fieldManager, query?.force === true);
  }
  if (!isObject(out)) throw badRequest('the patched object is not an object');
  checkIdentity(live, out);
  if (!yaml && typeof query?.fieldManager === 'string' && query.fieldManager !== '' && !deepEqual(live, out)) {
    writeManagers(out, recordUpdate(live, out, target.meta, query.fieldManager));
  }
  // One more round trip: the result is plain JSON data (no shared references, no prototypes of ours).
  return JSON.parse(JSON.stringify(out)) as unknown;
}

function parseBody(body: string, yaml: boolean): Json {
  try {
    if (!yaml) return JSON.parse(body) as Json;
    // uniqueKeys off: the yaml package's check is quadratic in a mapping's size (a duplicate key: the last wins).
    const docs = parseAllDocuments(body, { ...kKubernetesYaml, prettyErrors: false, uniqueKeys: false });
    if (!Array.isArray(docs) || docs.length !== 1) throw new Error('want exactly one YAML document');
    const [doc] = docs;
    if (doc.errors.length > 0) throw new Error(doc.errors[0].message);
    const recursive = recursiveAlias(doc);
    if (recursive !== undefined) throw new Error(`anchor "${recursive}" value contains itself`);
    return doc.toJS({ maxAliasCount: 100 }) as Json;
  } catch (err) {
    throw badRequest(
      `${yaml ? 'apply' : 'patch'}: the body does not parse as ${yaml ? 'YAML' : 'JSON'}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/**
 * recursiveAlias: the name of an anchor whose value contains an alias to itself (`&a [*a]`), else
 * undefined. The yaml package would expand it into a cyclic value, spending seconds on an 11-byte
 * body before maxAliasCount stops it; go-yaml (the apiserver's) refuses it likewise.
 */
function recursiveAlias(doc: Document.Parsed): string | undefined {
  let found: string | undefined;
  visit(doc, {
    Alias(_, alias, path) {
      if (path.some((n) => isCollection(n) && n.anchor === alias.source)) {
        found = alias.source;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/** An apply configuration must say what it is: apiVersion v1, its kind, and the object's own name. */
function checkApplyIdentity(applied: JsonObject, kind: string): void {
  const errors: FieldError[] = [];
  if (applied.apiVersion !== 'v1')
    errors.push({ field: 'apiVersion', type: 'Invalid value', value: applied.apiVersion ?? null, detail: 'must be "v1"' });
  if (applied.kind !== kind)
    errors.push({ field: 'kind', type: 'Invalid value', value: applied.kind ?? null, detail: `must be "${kind}"` });
  const meta = isObject(applied.metadata) ? applied.metadata : undefined;
  if (meta === undefined || typeof meta.name !== 'string' || meta.name === '')
    errors.push({ field: 'metadata.name', type: 'Required value' });
  if (errors.length > 0) throw new InvalidManifestError('apply', errors);
}

/** The identity of the object may not change through a patch (the apiserver's ValidateObjectMetaUpdate and name checks). */
function checkIdentity(live: JsonObject, out: JsonObject): void {
  const errors: FieldError[] = [];
  for (const f of ['apiVersion', 'kind'] as const) {
    if (live[f] !== undefined && out[f] !== live[f])
      errors.push({ field: f, type: 'Invalid value', value: out[f] ?? null, detail: 'field is immutable' });
  }
  const lm = isObject(live.metadata) ? live.metadata : {};
  const om = out.metadata;
  if (!isObject(om)) {
    errors.push({ field: 'metadata', type: 'Required value' });
  } else {
    for (const f of ['name', 'namespace', 'uid'] as const) {
      // A field the live object lacks (e.g. a new object under apply) may be set; once set it stays.
      if (lm[f] !== undefined && om[f] !== lm[f])
        errors.push({ field: `metadata.${f}`, type: 'Invalid value', value: om[f] ?? null, detail: 'field is immutable' });
    }
  }
  if (errors.length > 0) throw new InvalidManifestError('patch', errors);
}
