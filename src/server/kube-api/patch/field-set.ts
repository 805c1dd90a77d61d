/**
 * Counterpart of sigs.k8s.io/structured-merge-diff's fieldpath package (Set, PathElement, the
 * FieldsV1 wire form `{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{}}}}}`)
 * for the Pod's list types of {@link PatchMeta}: which fields an object sets, as a set of paths.
 * Pure; any thread.
 */
import { isObject, setKey, type Json, type JsonObject } from './json.js';
import { childMeta, type PatchMeta } from './pod-strategies.js';

/**
 * FieldPath: one field, as path elements: `f:<field>`, `k:<JSON of the item's merge key>` (an item
 * of a list merged by key), `v:<JSON of the value>` (an item of a set of scalars).
 */
export type FieldPath = readonly string[];

/** FieldSet: a set of FieldPaths, keyed by the JSON text of each path. */
export type FieldSet = Map<string, FieldPath>;

/** pathKey: the Map key of a FieldPath. */
export function pathKey(p: FieldPath): string {
  return JSON.stringify(p);
}

/**
 * fieldSetOf lists the fields `obj` sets: every scalar, atomic list and empty object is a leaf;
 * every item of a keyed list or scalar set is a member itself, and so are its own fields. `skip`
 * names top-level paths left out (e.g. `f:apiVersion`). An item without its merge key makes its
 * list atomic (a leaf), as structured-merge-diff falls back to for an ill-formed list.
 */
export function fieldSetOf(obj: JsonObject, meta: PatchMeta | undefined, prefix: FieldPath = []): FieldSet {
  const out: FieldSet = new Map();
  const add = (p: FieldPath): void => {
    out.set(pathKey(p), p);
  };
  const walk = (o: JsonObject, m: PatchMeta | undefined, at: FieldPath): void => {
    for (const [k, v] of Object.entries(o)) {
      const p = [...at, `f:${k}`];
      const cm = childMeta(m, k);
      if (isObject(v) && Object.keys(v).length > 0) walk(v, cm, p);
      else if (Array.isArray(v) && cm?.mergeKey !== undefined && v.every((x) => isObject(x) && x[cm.mergeKey as string] !== undefined)) {
        for (const item of v as JsonObject[]) {
          const ip = [...p, `k:${JSON.stringify({ [cm.mergeKey]: item[cm.mergeKey] })}`];
          add(ip);
          walk(item, cm.items, ip);
        }
      } else if (Array.isArray(v) && cm?.primitiveMerge === true) {
        for (const item of v) add([...p, `v:${JSON.stringify(item)}`]);
      } else add(p);
    }
  };
  walk(obj, meta, prefix);
  return out;
}

/**
 * toFieldsV1 renders a FieldSet as the FieldsV1 object of `metadata.managedFields[].fieldsV1`: each
 * path element a key, a member that also has children marked with `".": {}`.
 */
export function toFieldsV1(set: FieldSet): JsonObject {
  interface Node {
    member: boolean;
    children: Map<string, Node>;
  }
  const root: Node = { member: false, children: new Map() };
  for (const p of set.values()) {
    let node = root;
    for (const pe of p) {
      let next = node.children.get(pe);
      if (next === undefined) {
        next = { member: false, children: new Map() };
        node.children.set(pe, next);
      }
      node = next;
    }
    node.member = true;
  }
  const render = (node: Node): JsonObject => {
    const o: JsonObject = {};
    if (node.member && node.children.size > 0) o['.'] = {};
    for (const k of [...node.children.keys()].sort()) setKey(o, k, render(node.children.get(k) as Node));
    return o;
  };
  return render(root);
}

/**
 * fromFieldsV1 reads a FieldsV1 object back into a FieldSet (a node with `"."`, or with no
 * children, is a member). Anything that is not an object is ignored: managedFields come from the
 * stored object, and a malformed entry must not break a patch.
 */
export function fromFieldsV1(v: unknown): FieldSet {
  const out: FieldSet = new Map();
  const walk = (node: JsonObject, at: string[]): void => {
    const keys = Object.keys(node);
    if (at.length > 0 && (keys.length === 0 || keys.includes('.'))) out.set(pathKey(at), [...at]);
    for (const k of keys) {
      if (k === '.') continue;
      const child = node[k];
      if (isObject(child)) walk(child, [...at, k]);
    }
  };
  if (isObject(v)) walk(v, []);
  return out;
}

/** Per list, the index of its items by their path element (`k:{...}` or `v:...`): built once per lookup kind. */
const kItemIndex = new WeakMap<Json[], Map<string, number>>();

/** itemPe: the path element of `item` in a list whose items are named like `sample` (`k:` with the same key fields, or `v:`). */
function itemPe(item: Json, sample: string, keys: string[] | undefined): string | undefined {
  if (sample.startsWith('v:')) return `v:${JSON.stringify(item)}`;
  if (!isObject(item) || keys === undefined) return undefined;
  const key: JsonObject = {};
  for (const k of keys) {
    if (item[k] === undefined) return undefined;
    setKey(key, k, item[k]);
  }
  return `k:${JSON.stringify(key)}`;
}

function keysOf(pe: string): string[] | undefined {
  if (!pe.startsWith('k:')) return undefined;
  try {
    const key: unknown = JSON.parse(pe.slice(2));
    return isObject(key) ? Object.keys(key) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * findItem: the index of the item named by `pe` in `list`, or -1. The list is indexed once (never
 * a scan per lookup); a hit is checked against the item, and a stale index (the list changed) is rebuilt.
 */
function findItem(list: Json[], pe: string): number {
  const keys = keysOf(pe);
  const kind = `#${pe.slice(0, 2)}${JSON.stringify(keys ?? null)}`;
  const build = (): Map<string, number> => {
    const index = new Map<string, number>([
      [kind, -1],
      ['#length', list.length],
    ]);
    list.forEach((item, i) => {
      const name = itemPe(item, pe, keys);
      if (name !== undefined && !index.has(name)) index.set(name, i);
    });
    kItemIndex.set(list, index);
    return index;
  };
  let index = kItemIndex.get(list);
  if (index === undefined || !index.has(kind) || index.get('#length') !== list.length) index = build();
  const i = index.get(pe) ?? -1;
  return i >= 0 && itemPe(list[i], pe, keys) !== pe ? (build().get(pe) ?? -1) : i;
}

/** valueAt: the value at `path` in `obj`, or undefined when it is absent. Read-only: `obj` must not change between calls. */
export function valueAt(obj: JsonObject, path: FieldPath): Json | undefined {
  let v: Json | undefined = obj;
  for (const pe of path) {
    if (pe.startsWith('f:') && isObject(v)) {
      const k = pe.slice(2);
      if (!Object.prototype.hasOwnProperty.call(v, k)) return undefined;
      v = v[k];
    } else if (Array.isArray(v) && (pe.startsWith('k:') || pe.startsWith('v:'))) {
      const i = findItem(v, pe);
      if (i < 0) return undefined;
      v = v[i];
    } else return undefined;
  }
  return v;
}

/**
 * removeAll deletes from `obj` (in place) every field and list item named by `paths`, in one walk
 * (a list is filtered once, however many of its items go). A path under one that is removed, or
 * that names nothing, changes nothing.
 */
export function removeAll(obj: JsonObject, paths: Iterable<FieldPath>): void {
  interface Node {
    remove: boolean;
    children: Map<string, Node>;
  }
  const root: Node = { remove: false, children: new Map() };
  for (const p of paths) {
    let node = root;
    for (const pe of p) {
      let next = node.children.get(pe);
      if (next === undefined) {
        next = { remove: false, children: new Map() };
        node.children.set(pe, next);
      }
      node = next;
    }
    node.remove = true;
  }
  const walk = (v: Json, node: Node): void => {
    if (isObject(v)) {
      for (const [pe, child] of node.children) {
        if (!pe.startsWith('f:')) continue;
        const k = pe.slice(2);
        if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
        if (child.remove) delete v[k];
        else walk(v[k], child);
      }
    } else if (Array.isArray(v)) {
      const byName = new Map<string, Node>();
      let sample: string | undefined;
      for (const [pe, child] of node.children) {
        if (pe.startsWith('k:') || pe.startsWith('v:')) {
          byName.set(pe, child);
          sample ??= pe;
        }
      }
      if (sample === undefined) return;
      const keys = keysOf(sample);
      const keep: Json[] = [];
      for (const item of v) {
        const name = itemPe(item, sample, keys);
        const child = name === undefined ? undefined : byName.get(name);
        if (child?.remove === true) continue;
        if (child !== undefined) walk(item, child);
        keep.push(item);
      }
      v.length = 0;
      for (const x of keep) v.push(x);
    }
  };
  walk(obj, root);
}

/**
 * renderPath renders a FieldPath as the apiserver's conflict messages do:
 * `.spec.containers[name="web"].image`.
 */
export function renderPath(path: FieldPath): string {
  return path
    .map((pe) => {
      if (pe.startsWith('f:')) return `.${pe.slice(2)}`;
      if (pe.startsWith('v:')) return `[${pe.slice(2)}]`;
      try {
        const key = JSON.parse(pe.slice(2)) as Record<string, unknown>;
        return `[${Object.entries(key)
          .map(([k, w]) => `${k}=${JSON.stringify(w)}`)
          .join(',')}]`;
      } catch {
        return `[${pe.slice(2)}]`;
      }
    })
    .join('');
}
