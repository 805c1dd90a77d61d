/**
 * Counterpart of metav1.DeleteOptions as the apiserver's delete handler reads it
 * (k8s.io/apiserver/pkg/endpoints/handlers/delete.go; validation in
 * pkg/apis/meta/v1/validation ValidateDeleteOptions; preconditions checked as
 * registry/generic/registry/store.go's checkPreconditions): the query parameters or the JSON body.
 */
import type { Status } from '../../shared/api.js';
import { statusError } from '../http/status.js';

/** DeleteOptions: what a delete asked for (gracePeriodSeconds in seconds). */
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  /** Orphan, Background or Foreground: a pod has no dependents here, so all three delete the same way. */
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  /** The body's `dryRun: ["All"]` (kubectl's `delete --dry-run=server` sends it there, not in the query). */
  dryRun?: boolean;
}

const kPolicies = ['Orphan', 'Background', 'Foreground'];

function bad(field: string, value: unknown, detail: string): Status {
  return statusError(400, 'BadRequest', `${field}: Invalid value: ${JSON.stringify(value)}: ${detail}`, {
    causes: [{ field, reason: 'FieldValueInvalid', message: detail }],
  });
}

/**
 * parseDeleteOptions reads `gracePeriodSeconds`, `propagationPolicy` and `orphanDependents` from the
 * query, else a DeleteOptions JSON body (`{"gracePeriodSeconds":0,"preconditions":{"uid":…},"dryRun":["All"]}`),
 * as {@link readDeleteOptions}. Pure.
 * @returns the options, or a 400 Status naming the bad field (or saying the body is no JSON object).
 */
export function parseDeleteOptions(query: URLSearchParams, body: Buffer | undefined): DeleteOptions | Status {
  let raw: Record<string, unknown> = {};
  if (body && body.length > 0) {
    try {
      const v = JSON.parse(body.toString('utf8')) as unknown;
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        return statusError(400, 'BadRequest', 'the DeleteOptions body must be a JSON object');
      raw = v as Record<string, unknown>;
    } catch {
      return statusError(400, 'BadRequest', 'the DeleteOptions body could not be decoded as JSON');
    }
  }
  return readDeleteOptions(query, raw);
}

/**
 * readDeleteOptions checks a decoded DeleteOptions object `raw` (a DELETE's body, an Eviction's
 * `deleteOptions`); the query's `gracePeriodSeconds`, `propagationPolicy` and `orphanDependents`
 * win over the object's. `dryRun` must be a list of `All` (kubectl's `delete --dry-run=server`
 * sends it here, not in the query). Pure.
 * @returns the options, or a 400 Status naming the bad field.
 */
export function readDeleteOptions(query: URLSearchParams, raw: Record<string, unknown>): DeleteOptions | Status {
  const out: DeleteOptions = {};
  const grace: unknown = query.get('gracePeriodSeconds') ?? raw.gracePeriodSeconds;
  if (grace !== undefined && grace !== null) {
    const n = typeof grace === 'number' ? grace : /^-?\d+$/.test(String(grace)) ? Number(grace) : NaN;
    if (!Number.isSafeInteger(n)) return bad('gracePeriodSeconds', grace, 'must be an integer number of seconds');
    // As the apiserver: a negative grace period means "the object's own"; 0 is immediate.
    if (n >= 0) out.gracePeriodSeconds = n;
  }
  const policy: unknown = query.get('propagationPolicy') ?? raw.propagationPolicy;
  if (policy !== undefined && policy !== null) {
    if (typeof policy !== 'string' || !kPolicies.includes(policy))
      return bad('propagationPolicy', policy, `supported values: "Orphan", "Background", "Foreground"`);
    out.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  }
  const orphan: unknown = query.get('orphanDependents') ?? raw.orphanDependents;
  if (orphan !== undefined && orphan !== null && out.propagationPolicy !== undefined) {
    return bad('propagationPolicy', out.propagationPolicy, 'orphanDependents and propagationPolicy cannot both be set');
  }
  const dry = raw.dryRun;
  if (dry !== undefined && dry !== null) {
    if (!Array.isArray(dry) || dry.some((v) => v !== 'All')) return bad('dryRun', dry, 'supported values: "All"');
    if (dry.length > 0) out.dryRun = true;
  }
  const pre = raw.preconditions;
  if (pre !== undefined && pre !== null) {
    if (typeof pre !== 'object' || Array.isArray(pre))
      return bad('preconditions', pre, 'must be an object with uid and/or resourceVersion');
    const p = pre as { uid?: unknown; resourceVersion?: unknown };
    out.preconditions = {};
    if (p.uid !== undefined && p.uid !== null) {
      if (typeof p.uid !== 'string') return bad('preconditions.uid', p.uid, 'must be a string');
      out.preconditions.uid = p.uid;
    }
    if (p.resourceVersion !== undefined && p.resourceVersion !== null) {
      if (typeof p.resourceVersion !== 'string') return bad('preconditions.resourceVersion', p.resourceVersion, 'must be a string');
      out.preconditions.resourceVersion = p.resourceVersion;
    }
  }
  return out;
}

/**
 * checkPreconditions: the 409 Conflict the apiserver answers when a precondition does not hold
 * (`Operation cannot be fulfilled on pods "x": Precondition failed: UID in precondition: A, UID in object meta: B`),
 * else undefined.
 * @param resourceVersion the object's current resourceVersion (undefined when unknown: a resourceVersion precondition then fails).
 */
export function checkPreconditions(
  opts: DeleteOptions,
  resource: string,
  name: string,
  uid: string | undefined,
  resourceVersion: number | undefined,
): Status | undefined {
  const p = opts.preconditions;
  if (!p) return undefined;
  const fail = (detail: string) =>
    statusError(409, 'Conflict', `Operation cannot be fulfilled on ${resource} ${JSON.stringify(name)}: Precondition failed: ${detail}`, {
      name,
      kind: resource,
    });
  if (p.uid !== undefined && p.uid !== (uid ?? '')) return fail(`UID in precondition: ${p.uid}, UID in object meta: ${uid ?? ''}`);
  const rv = resourceVersion === undefined ? '' : String(resourceVersion);
  if (p.resourceVersion !== undefined && p.resourceVersion !== rv)
    return fail(`ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${rv}`);
  return undefined;
}
