/**
 * Counterpart of sigs.k8s.io/structured-merge-diff's fieldpath package (Set, PathElement, the
 * FieldsV1 wire form `{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{}}}}}`)
 * for the Pod's list types of {@link PatchMeta}: which fields an object sets, as a set of paths.
 * Pure; any thread.
 */
import { deepEqual, isObject, setKey, type Json, type JsonObject } from './json.js';
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
  const add = (p: FieldPath): void => { out.set(pathKey(p), p); };
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
  interface Node { member: boolean; children: Map<string, Node> }
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

/** Where a path element points inside a value: the field, item index, or nothing. */
function step(v: Json | undefined, pe: string): { found: boolean; value?: Json; container?: JsonObject | Json[]; at?: string | number } {
  if (pe.startsWith('f:') && isObject(v)) {
    const k = pe.slice(2);
    return Object.prototype.hasOwnProperty.call(v, k) ? { found: true, value: v[k], container: v, at: k } : { found: false };
  }
  if (Array.isArray(v) && (pe.startsWith('k:') || pe.startsWith('v:'))) {
    let want: unknown;
    try { want = JSON.parse(pe.slice(2)); } catch { return { found: false }; }
    const i = pe.startsWith('v:')
      ? v.findIndex((x) => deepEqual(x, want))
      : v.findIndex((x) => isObject(x) && isObject(want) && Object.entries(want).every(([k, w]) => deepEqual(x[k], w)));
    return i >= 0 ? { found: true, value: v[i], container: v, at: i } : { found: false };
  }
  return { found: false };
}

/** valueAt: the value at `path` in `obj`, or undefined when it is absent. */
export function valueAt(obj: JsonObject, path: FieldPath): Json | undefined {
  let v: Json | undefined = obj;
  for (const pe of path) {
    const s = step(v, pe);
    if (!s.found) return undefined;
    v = s.value;
  }
  return v;
}

/** removeAt deletes the field or list item at `path` from `obj` (in place); absent: no change. */
export function removeAt(obj: JsonObject, path: FieldPath): void {
  let v: Json | undefined = obj;
  for (let i = 0; i < path.length; i++) {
    const s = step(v, path[i]);
    if (!s.found) return;
    if (i === path.length - 1) {
      if (Array.isArray(s.container)) s.container.splice(s.at as number, 1);
      else if (s.container !== undefined) delete s.container[s.at as string];
      return;
    }
    v = s.value;
  }
}

/**
 * renderPath renders a FieldPath as the apiserver's conflict messages do:
 * `.spec.containers[name="web"].image`.
 */
export function renderPath(path: FieldPath): string {
  return path.map((pe) => {
    if (pe.startsWith('f:')) return `.${pe.slice(2)}`;
    if (pe.startsWith('v:')) return `[${pe.slice(2)}]`;
    try {
      const key = JSON.parse(pe.slice(2)) as Record<string, unknown>;
      return `[${Object.entries(key).map(([k, w]) => `${k}=${JSON.stringify(w)}`).join(',')}]`;
    } catch {
      return `[${pe.slice(2)}]`;
    }
  }).join('');
}
