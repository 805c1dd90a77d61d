/**
 * Counterpart of the apiserver's request negotiation and list options (k8s.io/apiserver/pkg/endpoints/
 * handlers/negotiation: the `as=Table;g=meta.k8s.io;v=v1` media type parameters; metav1.ListOptions
 * labelSelector/fieldSelector; responsewriters' error Status). Pure functions over a request.
 */
import type { Status } from '../../shared/api.js';
import { isInvalidInput, statusReasonOf } from '../../shared/errors.js';
import { matchesLabelSelector, parseLabelSelector, type LabelSelector } from '../http/label-selector.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import { hostErrorStatus } from '../routes/intake.js';
import { statusError } from '../http/status.js';
export { queryBool } from '../http/query-bool.js';
import { checkFieldLabels, matchesFieldSelector, parseFieldSelector, type FieldSelector, type FieldSet } from './field-selector.js';
import type { IncludeObject } from './table.js';

/** MediaRange: one entry of an Accept header: `type/subtype` and its parameters (lowercased names). */
export interface MediaRange {
  type: string;
  params: Record<string, string>;
}

/** parseAccept splits an Accept header into its media ranges, in order (q-values are not weighed, as the apiserver's negotiation walks them in order). */
export function parseAccept(accept: string | undefined): MediaRange[] {
  const out: MediaRange[] = [];
  for (const part of (accept ?? '').split(',')) {
    const [type, ...rest] = part.split(';').map((s) => s.trim());
    if (!type) continue;
    const params: Record<string, string> = {};
    for (const p of rest) {
      const i = p.indexOf('=');
      if (i > 0) params[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim();
    }
    out.push({ type: type.toLowerCase(), params });
  }
  return out;
}

/**
 * wantsTable: the first JSON media range of `accept` that this server can serve asks for a
 * meta.k8s.io Table (`application/json;as=Table;v=v1;g=meta.k8s.io`, or v1beta1, answered as v1);
 * a plain `application/json` (or `*` / absent) before it means the object itself.
 */
export function wantsTable(accept: string | undefined): boolean {
  const ranges = parseAccept(accept);
  for (const r of ranges) {
    const json = r.type === 'application/json' || r.type === '*/*' || r.type === 'application/*';
    if (!json) continue;
    if (r.params.as === undefined) return false;
    if (r.params.as === 'Table' && r.params.g === 'meta.k8s.io' && (r.params.v === 'v1' || r.params.v === 'v1beta1')) return true;
  }
  return false;
}

/**
 * parseIncludeObject reads `?includeObject=` (Table rows: `None`, `Metadata` — the default — or `Object`).
 * @returns the policy, or a 400 Status naming the parameter.
 */
export function parseIncludeObject(query: URLSearchParams): IncludeObject | Status {
  const v = query.get('includeObject') ?? '';
  if (v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  return statusError(
    400,
    'BadRequest',
    `includeObject: Unsupported value: ${JSON.stringify(v)}: supported values: "Metadata", "None", "Object"`,
  );
}

/** ListFilter: the label and field selectors of a list or watch, checked against the resource's field labels. */
export interface ListFilter {
  labels: LabelSelector;
  fields: FieldSelector;
}

/**
 * parseListFilter reads `?labelSelector=` and `?fieldSelector=` of a list or watch.
 * @param fieldLabels the field labels the resource supports (others → 400 as the apiserver).
 * @returns the filter, or a 400 BadRequest Status with the parser's message.
 */
export function parseListFilter(query: URLSearchParams, fieldLabels: readonly string[]): ListFilter | Status {
  try {
    const labels = parseLabelSelector(query.get('labelSelector') ?? '');
    const fields = parseFieldSelector(query.get('fieldSelector') ?? '');
    checkFieldLabels(fields, fieldLabels);
    return { labels, fields };
  } catch (err) {
    if (!isInvalidInput(err)) throw err;
    return statusError(400, 'BadRequest', (err as Error).message);
  }
}

/**
 * matchesFilter: the object's labels and field set pass the filter. `fields` may be a function:
 * it is then called only when the filter has a field selector (a list without one — what kubectl
 * sends most — builds no field set per object).
 */
export function matchesFilter(
  filter: ListFilter,
  labels: Readonly<Record<string, string>> | undefined,
  fields: FieldSet | (() => FieldSet),
): boolean {
  if (!matchesLabelSelector(filter.labels, labels)) return false;
  if (filter.fields.length === 0) return true;
  return matchesFieldSelector(filter.fields, typeof fields === 'function' ? fields() : fields);
}

/** isStatus: `v` is a Status object (a parse helper's refusal). */
export function isStatus(v: unknown): v is Status {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'Status';
}

/**
 * kubeErrorStatus maps an AgentError from the host or a seam to the apiserver's Status: as
 * hostErrorStatus (404, 409, 422, 400, 403, 507), plus `UnsupportedMediaType` → 415 and
 * `NotAcceptable` → 406; anything
 * else → 500 InternalError with the message.
 * @param resource the plural resource for details.kind (e.g. `pods`).
 */
export function kubeErrorStatus(err: unknown, resource: string, name: string): Status {
  const message = err instanceof Error ? err.message : String(err);
  const reason = statusReasonOf(err);
  if (reason === 'UnsupportedMediaType') return statusError(415, 'UnsupportedMediaType', message);
  if (reason === 'NotAcceptable') return statusError(406, 'NotAcceptable', message);
  try {
    const s = hostErrorStatus(err, name);
    if (s.details?.kind === 'pods') s.details.kind = resource;
    return s;
  } catch {
    return statusError(500, 'InternalError', `Internal error occurred: ${message}`);
  }
}

/**
 * parseDryRun reads `?dryRun=` as the apiserver does (every value must be `All`; kubectl's
 * `--dry-run=server` sends `dryRun=All`): true for a dry run, false without the parameter, a 400
 * Status naming the parameter for any other value. A dry-run write runs every check of the real
 * one (decode, validation, names, UIDs, --max-pods, the intake store quota, preconditions, static
 * pods) and answers with the object as it would be, but stores, starts and stops nothing.
 */
export function parseDryRun(query: URLSearchParams): boolean | Status {
  const values = query.getAll('dryRun');
  if (values.length === 0) return false;
  const bad = values.find((v) => v !== 'All');
  if (bad !== undefined)
    return statusError(400, 'BadRequest', `dryRun: Unsupported value: ${JSON.stringify(bad)}: supported values: "All"`);
  return true;
}

/** objectReply: 200 (or `code`) with `object` as JSON. */
export function objectReply(object: unknown, code = 200): HttpReply {
  return jsonReply(code, object);
}

export { statusReply };
