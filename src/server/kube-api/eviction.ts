/**
 * Counterpart of the Eviction body the apiserver's `pods/eviction` subresource reads
 * (pkg/registry/core/pod/storage/eviction.go; the type is policy/v1 Eviction, also policy/v1beta1):
 * `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":…},"deleteOptions":{…}}`.
 * Pure: the handler (pods.ts) deletes the pod with the decoded options. There are no
 * PodDisruptionBudgets on a one-node agent, so an eviction is never refused with 429 for one.
 */
import type { Status } from '../../shared/api.js';
import { statusError } from '../http/status.js';
import { readDeleteOptions, type DeleteOptions } from './delete-options.js';

const kEvictionVersions = new Set(['policy/v1', 'policy/v1beta1']);

/**
 * parseEviction decodes an Eviction JSON body for the pod `name` of the URL.
 * @returns its delete options (`dryRun` set for `deleteOptions.dryRun: ["All"]`), or a 400
 * BadRequest Status naming what is wrong: not a JSON object, a kind or apiVersion that is not
 * policy's Eviction, `metadata.name` other than the URL's (the apiserver's "name in URL does not
 * match name in Eviction object"), or a bad `deleteOptions` field (as a DELETE's, delete-options.ts).
 */
export function parseEviction(body: Buffer | undefined, name: string): DeleteOptions | Status {
  let raw: unknown;
  try {
    raw = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
  } catch {
    return statusError(400, 'BadRequest', 'the Eviction body could not be decoded as JSON');
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return statusError(400, 'BadRequest', 'the Eviction body must be a JSON object');
  const e = raw as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown }; deleteOptions?: unknown };
  if (e.kind !== undefined && e.kind !== 'Eviction')
    return statusError(400, 'BadRequest', `kind: Invalid value: ${JSON.stringify(e.kind)}: the body of pods/eviction must be an Eviction`);
  if (e.apiVersion !== undefined && !kEvictionVersions.has(String(e.apiVersion))) {
    return statusError(
      400,
      'BadRequest',
      `apiVersion: Invalid value: ${JSON.stringify(e.apiVersion)}: supported values: "policy/v1", "policy/v1beta1"`,
    );
  }
  const bodyName = e.metadata?.name;
  if (bodyName !== undefined && bodyName !== '' && bodyName !== name)
    return statusError(400, 'BadRequest', 'name in URL does not match name in Eviction object');
  const d = e.deleteOptions ?? {};
  if (typeof d !== 'object' || Array.isArray(d))
    return statusError(400, 'BadRequest', 'deleteOptions: Invalid value: must be a DeleteOptions object');
  return readDeleteOptions(new URLSearchParams(), d as Record<string, unknown>);
}
