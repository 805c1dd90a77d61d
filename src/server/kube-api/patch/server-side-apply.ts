/**
 * Counterpart of k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager's Apply over
 * sigs.k8s.io/structured-merge-diff (merge.Updater.Apply), cut down to what one node's Pods need:
 * the applied configuration is merged over the live object, the fields the same manager applied
 * before and no longer applies are removed (unless another manager owns them too), and a field
 * another manager owns with a different value is a conflict unless forced.
 *
 * Simplified versus structured-merge-diff: (1) the Pod's list types come from {@link kPodPatchMeta}
 * (the struct tags' merge keys), not from the OpenAPI `x-kubernetes-list-map-keys` (ports are keyed
 * by containerPort alone, not containerPort+protocol); (2) a live object without managedFields
 * has no owners, so its first apply never conflicts (upstream gives such fields to a
 * `before-first-apply` manager); (3) no version conversion (v1 only), no defaulting of the applied
 * configuration before the comparison, and a removed field is deleted, never reset to a default.
 * Pure; any thread.
 */
import { ConflictError } from '../../../shared/errors.js';
import { badRequest, clone, deepEqual, isObject, type JsonObject } from './json.js';
import { removeAll, renderPath, valueAt, type FieldPath, type FieldSet } from './field-set.js';
import { nowRfc3339, ownedFieldSet, readManagers, writeManagers, type Manager } from './managed-fields.js';
import type { PatchMeta } from './pod-strategies.js';
import { strategicMerge } from './strategic-merge.js';

/**
 * serverSideApply returns `live` with the applied configuration `applied` (a Pod object) applied
 * by field manager `manager`, `metadata.managedFields` updated (one `Apply` entry for `manager`,
 * the others keeping what they still own). Throws ConflictError (ERR_CONFLICT, 409) listing every
 * conflicting field (`Apply failed with 2 conflicts: conflict with "kubectl-edit" using v1:
 * .spec.containers[name="web"].image; …`) unless `force`, which moves those fields to `manager`;
 * ERR_INVALID_ARGUMENT for a missing manager or managedFields in the applied configuration.
 */
export function serverSideApply(
  live: JsonObject,
  applied: JsonObject,
  meta: PatchMeta,
  manager: string | undefined,
  force: boolean,
): JsonObject {
  if (manager === undefined || manager === '') throw badRequest('fieldManager: Required value: is required for apply patch');
  if (manager.length > 128) throw badRequest('fieldManager: Too long: must have at most 128 bytes');
  const appliedMeta = applied.metadata;
  if (isObject(appliedMeta) && appliedMeta.managedFields !== undefined) {
    throw badRequest('metadata.managedFields must be nil in an apply configuration');
  }
  const config = clone(applied);
  // Status belongs to the status subresource: an apply of the Pod ignores it (the Pod strategy's PrepareForUpdate).
  delete config.status;
  const newSet = ownedFieldSet(config, meta);
  const managers = readManagers(live);
  const prevIdx = managers.findIndex((m) => m.manager === manager && m.operation === 'Apply');
  const prev: FieldSet = prevIdx >= 0 ? managers[prevIdx].fields : new Map();
  const others = managers.filter((_, i) => i !== prevIdx);

  const conflicts: Array<{ manager: Manager; path: FieldPath }> = [];
  for (const [k, p] of newSet) {
    const last = p[p.length - 1];
    if (!last.startsWith('f:')) continue; // list items: their fields are compared one by one
    for (const o of others) {
      if (o.fields.has(k) && !deepEqual(valueAt(live, p), valueAt(config, p))) conflicts.push({ manager: o, path: p });
    }
  }
  if (conflicts.length > 0 && !force) {
    const lines = conflicts.map(
      (c) => `conflict with ${JSON.stringify(c.manager.manager)} using ${c.manager.apiVersion}: ${renderPath(c.path)}`,
    );
    const n = conflicts.length;
    throw new ConflictError(`Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${lines.join('\n')}`);
  }
  for (const c of conflicts) c.manager.fields.delete(JSON.stringify(c.path));

  const merged = strategicMerge(live, config, meta) ?? {};
  const ownedByOthers = new Set<string>();
  for (const o of others) for (const k of o.fields.keys()) ownedByOthers.add(k);
  const removed = [...prev].filter(([k]) => !newSet.has(k) && !ownedByOthers.has(k)).map(([, p]) => p);
  removeAll(merged, removed);

  const mine: Manager = { manager, operation: 'Apply', apiVersion: 'v1', time: nowRfc3339(), fields: newSet };
  const still = ownedFieldSet(merged, meta);
  for (const o of others) for (const k of [...o.fields.keys()]) if (!still.has(k)) o.fields.delete(k);
  const next = prevIdx >= 0 ? managers.map((m, i) => (i === prevIdx ? mine : m)) : [...others, mine];
  writeManagers(merged, next);
  return merged;
}
