/**
 * Counterpart of k8s.io/apimachinery/pkg/util/strategicpatch (patch.go: StrategicMergePatch,
 * mergeMap, mergeSlice, the `$patch`, `$retainKeys`, `$setElementOrder/` and
 * `$deleteFromPrimitiveList/` directives): applies a strategic merge patch to a JSON object, with
 * the list strategies of {@link PatchMeta}. Pure; never mutates its inputs; any thread.
 */
import { badRequest, canonical, clone, isObject, setKey, type Json, type JsonObject } from './json.js';
import { childMeta, type PatchMeta } from './pod-strategies.js';

const kDeleteFromPrimitiveList = '$deleteFromPrimitiveList/';
const kSetElementOrder = '$setElementOrder/';

/**
 * strategicMerge returns `original` with `patch` applied as a strategic merge patch, or undefined
 * when the patch deletes the whole object (`$patch: delete` at the top). `meta` gives the list
 * strategies (e.g. kPodPatchMeta); `path` names the place in messages (`spec.containers`).
 * As strategicpatch: a null value deletes the key; objects merge key by key; a list with a merge
 * key merges its items by that key (`$patch: delete` in an item removes it, `$patch: replace` in
 * an item replaces the list); a primitive list with the merge strategy is merged by union; every
 * other list is replaced. Throws ERR_INVALID_ARGUMENT (BadRequest) naming the field for an unknown
 * `$patch` value, an unknown `$` directive, an item without its merge key or a directive of the
 * wrong shape.
 */
export function strategicMerge(original: JsonObject, patch: JsonObject, meta: PatchMeta | undefined, path = ''): JsonObject | undefined {
  const directive = patch.$patch;
  if (directive !== undefined) {
    if (directive === 'delete') return undefined;
    if (directive === 'replace') {
      const rest: JsonObject = {};
      for (const [k, v] of Object.entries(patch)) if (k !== '$patch') setKey(rest, k, v);
      return strategicMerge({}, rest, meta, path);
    }
    if (directive !== 'merge')
      throw badRequest(`${where(path)}unknown patch type ${JSON.stringify(directive)} in $patch (want replace, delete or merge)`);
  }
  const out = clone(original);
  const retain = patch.$retainKeys;
  if (retain !== undefined) {
    if (!Array.isArray(retain) || !retain.every((k) => typeof k === 'string'))
      throw badRequest(`${where(path)}$retainKeys must be a list of field names`);
    for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  }
  const orders: Array<[string, Json[]]> = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys') continue;
    if (key.startsWith(kDeleteFromPrimitiveList)) {
      const field = key.slice(kDeleteFromPrimitiveList.length);
      if (!Array.isArray(value)) throw badRequest(`${where(join(path, field))}${kDeleteFromPrimitiveList}${field} must be a list`);
      const have = out[field];
      const drop = new Set(value.map(canonical));
      if (Array.isArray(have)) out[field] = have.filter((x) => !drop.has(canonical(x)));
      continue;
    }
    if (key.startsWith(kSetElementOrder)) {
      const field = key.slice(kSetElementOrder.length);
      if (!Array.isArray(value)) throw badRequest(`${where(join(path, field))}${kSetElementOrder}${field} must be a list`);
      orders.push([field, value]);
      continue;
    }
    if (key.startsWith('$')) throw badRequest(`${where(path)}unknown strategic merge patch directive ${JSON.stringify(key)}`);
    const sub = join(path, key);
    const m = childMeta(meta, key);
    if (value === null) {
      delete out[key];
      continue;
    }
    const have = Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined;
    const merged = mergeValue(have, value, m, sub);
    if (merged === undefined) delete out[key];
    else setKey(out, key, merged);
  }
  for (const [field, order] of orders) {
    const list = out[field];
    if (Array.isArray(list)) out[field] = applyElementOrder(list, order, childMeta(meta, field)?.mergeKey);
  }
  return out;
}

/** mergeValue merges one patch value into the original's value of the same field (undefined: absent). */
function mergeValue(have: Json | undefined, value: Json, meta: PatchMeta | undefined, path: string): Json | undefined {
  if (isObject(value)) {
    return strategicMerge(isObject(have) ? have : {}, value, meta?.items ?? meta, path);
  }
  if (Array.isArray(value)) return mergeList(Array.isArray(have) ? have : [], value, meta, path);
  return value;
}

/** mergeList: mergeSlice of strategicpatch, by the list's strategy in `meta`. */
function mergeList(original: Json[], patch: Json[], meta: PatchMeta | undefined, path: string): Json[] {
  // The list-level directive is an item of its own, `{"$patch": "replace"}`; an item that also has
  // its merge key and `$patch: replace` replaces only that item (strategicMerge does that).
  const replaceAt = patch.findIndex(
    (x) =>
      isObject(x) && x.$patch === 'replace' && (meta?.mergeKey === undefined || !Object.prototype.hasOwnProperty.call(x, meta.mergeKey)),
  );
  if (meta?.mergeKey !== undefined) {
    const key = meta.mergeKey;
    if (replaceAt >= 0) {
      return patch
        .filter((_, i) => i !== replaceAt)
        .map((x, i) => {
          if (!isObject(x)) throw badRequest(`${where(`${path}[${i}]`)}an item of a list merged by "${key}" must be an object`);
          return strategicMerge({}, x, meta.items, `${path}[${i}]`) ?? {};
        });
    }
    // Items by the canonical text of their merge key (undefined: deleted), so a long list merges in linear time.
    const out: Array<Json | undefined> = original.map((x) => clone(x));
    const index = new Map<string, number[]>();
    const remember = (x: Json | undefined, i: number): void => {
      if (!isObject(x)) return;
      const k = canonical(x[key]);
      const at = index.get(k);
      if (at === undefined) index.set(k, [i]);
      else at.push(i);
    };
    out.forEach(remember);
    patch.forEach((item, i) => {
      const at = `${path}[${i}]`;
      if (!isObject(item)) throw badRequest(`${where(at)}an item of a list merged by "${key}" must be an object`);
      if (!Object.prototype.hasOwnProperty.call(item, key) || item[key] === null) {
        throw badRequest(`${where(at)}the item does not contain the merge key "${key}"`);
      }
      const id = canonical(item[key]);
      const live = (index.get(id) ?? []).filter((j) => out[j] !== undefined);
      if (item.$patch === 'delete') {
        for (const j of live) out[j] = undefined;
        return;
      }
      const idx = live.length > 0 ? live[0] : -1;
      const base = idx >= 0 ? out[idx] : undefined;
      const merged = strategicMerge(isObject(base) ? base : {}, item, meta.items, `${path}[${id}]`);
      if (merged === undefined) {
        if (idx >= 0) out[idx] = undefined;
      } else if (idx >= 0) out[idx] = merged;
      else {
        out.push(merged);
        remember(merged, out.length - 1);
      }
    });
    return out.filter((x): x is Json => x !== undefined);
  }
  if (meta?.primitiveMerge === true) {
    if (replaceAt >= 0) return patch.filter((_, i) => i !== replaceAt);
    const out = original.map((x) => clone(x));
    const seen = new Set(out.map(canonical));
    for (const x of patch) {
      const k = canonical(x);
      if (!seen.has(k)) {
        seen.add(k);
        out.push(clone(x));
      }
    }
    return out;
  }
  if (replaceAt >= 0) return patch.filter((_, i) => i !== replaceAt);
  return patch.map((x) => clone(x));
}

/**
 * applyElementOrder reorders `list` by `$setElementOrder`'s `order` (items given by their merge key,
 * or scalars): the items named in `order` take, in that order, the positions the named items hold;
 * items the order does not name (the server's own) keep their positions. A simplification of
 * strategicpatch's normalizeElementOrder, which interleaves server-only items by their original
 * index; both agree whenever the order names every item (what `kubectl apply` sends).
 */
function applyElementOrder(list: Json[], order: Json[], mergeKey: string | undefined): Json[] {
  const idOf = (x: Json): string | undefined => {
    if (mergeKey === undefined) return canonical(x);
    return isObject(x) && x[mergeKey] !== undefined ? canonical(x[mergeKey]) : undefined;
  };
  const rankOf = new Map<string, number>();
  order.forEach((o, r) => {
    const id = idOf(o);
    if (id !== undefined && !rankOf.has(id)) rankOf.set(id, r);
  });
  const named: Array<{ x: Json; i: number; r: number }> = [];
  list.forEach((x, i) => {
    const id = idOf(x);
    const r = id === undefined ? undefined : rankOf.get(id);
    if (r !== undefined) named.push({ x, i, r });
  });
  const sorted = [...named].sort((a, b) => a.r - b.r || a.i - b.i);
  const out = [...list];
  named.forEach((e, j) => {
    out[e.i] = sorted[j].x;
  });
  return out;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function where(path: string): string {
  return path === '' ? '' : `${path}: `;
}
