/**
 * Counterpart of k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager (FieldManager, the
 * `metadata.managedFields` entries `{manager, operation, apiVersion, time, fieldsType, fieldsV1}`):
 * reading and writing the field ownership kept on a Pod. Pure; any thread.
 */
import { deepEqual, isObject, type Json, type JsonObject } from './json.js';
import { fieldSetOf, fromFieldsV1, toFieldsV1, valueAt, type FieldSet } from './field-set.js';
import type { PatchMeta } from './pod-strategies.js';
import { realClock, type Clock } from '../../../shared/clock.js';

/** Manager: one managedFields entry, its fields as a set. `operation` is `Apply` or `Update`. */
export interface Manager {
  manager: string;
  operation: string;
  apiVersion: string;
  time?: string;
  fields: FieldSet;
}

/** readManagers: the managedFields entries of `obj` (entries that are not objects with a manager are dropped). */
export function readManagers(obj: JsonObject): Manager[] {
  const meta = obj.metadata;
  const list = isObject(meta) ? meta.managedFields : undefined;
  if (!Array.isArray(list)) return [];
  const out: Manager[] = [];
  for (const e of list) {
    if (!isObject(e) || typeof e.manager !== 'string') continue;
    out.push({
      manager: e.manager,
      operation: typeof e.operation === 'string' ? e.operation : 'Update',
      apiVersion: typeof e.apiVersion === 'string' ? e.apiVersion : 'v1',
      time: typeof e.time === 'string' ? e.time : undefined,
      fields: fromFieldsV1(e.fieldsV1),
    });
  }
  return out;
}

/**
 * writeManagers sets `obj.metadata.managedFields` (in place) from `managers`, dropping those that
 * own nothing, in the fieldmanager's order: Apply entries before Update ones, then by time, then
 * by manager name.
 */
export function writeManagers(obj: JsonObject, managers: Manager[]): void {
  if (!isObject(obj.metadata)) obj.metadata = {};
  const meta = obj.metadata as JsonObject;
  const seconds = (m: Manager): number => (m.time === undefined ? 0 : Math.floor(Date.parse(m.time) / 1000) || 0);
  const sorted = managers
    .filter((m) => m.fields.size > 0)
    .sort((p, q) => {
      if (p.operation !== q.operation) return p.operation < q.operation ? -1 : 1;
      if (seconds(p) !== seconds(q)) return seconds(p) - seconds(q);
      return p.manager < q.manager ? -1 : p.manager > q.manager ? 1 : 0;
    });
  const entries: Json[] = sorted.map((m) => {
    const e: JsonObject = { manager: m.manager, operation: m.operation, apiVersion: m.apiVersion };
    if (m.time !== undefined) e.time = m.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = toFieldsV1(m.fields);
    return e;
  });
  if (entries.length > 0) meta.managedFields = entries;
  else delete meta.managedFields;
}

/** nowRfc3339: `clock`'s time (default the real clock) as metav1.Time renders it (RFC 3339, whole seconds, UTC). */
export function nowRfc3339(clock: Clock = realClock): string {
  return new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Top-level paths no manager owns: identity and bookkeeping, as the fieldmanager strips them. */
const kUnowned = new Set(['["f:apiVersion"]', '["f:kind"]']);
const kUnownedMeta = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

/** ownedFieldSet: the fields of `obj` a manager can own (fieldSetOf minus apiVersion, kind and the identity metadata). */
export function ownedFieldSet(obj: JsonObject, meta: PatchMeta): FieldSet {
  const set = fieldSetOf(obj, meta);
  for (const [k, p] of set) {
    if (kUnowned.has(k) || (p[0] === 'f:metadata' && p.length >= 2 && kUnownedMeta.has(p[1].slice(2)))) set.delete(k);
  }
  return set;
}

/**
 * recordUpdate: the managers after a non-apply write (update or json/merge/strategic patch) by
 * `manager` that changed `before` into `after`, as the fieldmanager's Update: the writer takes
 * every field whose value it changed or added (from the other managers too), and every manager
 * loses the fields that no longer exist.
 */
export function recordUpdate(before: JsonObject, after: JsonObject, meta: PatchMeta, manager: string): Manager[] {
  const managers = readManagers(before);
  const now = ownedFieldSet(after, meta);
  const old = ownedFieldSet(before, meta);
  const changed: FieldSet = new Map();
  for (const [k, p] of now) if (!old.has(k) || !sameLeaf(before, after, p)) changed.set(k, p);
  let mine = managers.find((m) => m.manager === manager && m.operation === 'Update');
  for (const m of managers) {
    for (const k of [...m.fields.keys()]) if (!now.has(k) || (m !== mine && changed.has(k))) m.fields.delete(k);
  }
  if (changed.size > 0) {
    if (mine === undefined) {
      mine = { manager, operation: 'Update', apiVersion: 'v1', fields: new Map() };
      managers.push(mine);
    }
    for (const [k, p] of changed) mine.fields.set(k, p);
    mine.time = nowRfc3339();
  }
  return managers;
}

function sameLeaf(a: JsonObject, b: JsonObject, p: readonly string[]): boolean {
  const last = p[p.length - 1] ?? '';
  // An item of a keyed list or set is unchanged while it exists (its own fields count separately).
  if (last.startsWith('k:') || last.startsWith('v:')) return true;
  return deepEqual(valueAt(a, p), valueAt(b, p));
}
