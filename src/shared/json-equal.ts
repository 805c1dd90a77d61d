/**
 * jsonEqual: do `a` and `b` serialize to the same canonical JSON (keys sorted, as
 * safe-stable-stringify writes them and `stableHash` in hash.ts hashes them)? Compared in place,
 * without building either string: an object's key order does not matter, a key whose value is
 * `undefined` (or a function) counts as absent, an array's order does, `undefined` in an array
 * equals `null`, a non-finite number equals `null`, and a value with `toJSON` (a Date) is compared
 * by what `toJSON` returns. The first difference ends the walk.
 *
 * Why: the status manager compared each generated status with the stored one by the SHA-256 of
 * its canonical JSON, two serializations and a hash per status (issue #42 item 1); equality of
 * content is what it needs, as the kubelet's status manager compares with apiequality.Semantic
 * (pkg/kubelet/status/status_manager.go isPodStatusByKubeletEqual). Pure; never throws on acyclic
 * values (a cycle recurses until the stack ends, as JSON.stringify refuses it).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const x = normalize(a);
  const y = normalize(b);
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x)) {
    if (!Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!jsonEqual(x[i], y[i])) return false;
    return true;
  }
  if (Array.isArray(y)) return false;
  const ox = x as Record<string, unknown>;
  const oy = y as Record<string, unknown>;
  let count = 0;
  for (const k in ox) {
    if (!Object.prototype.hasOwnProperty.call(ox, k) || absent(ox[k])) continue;
    count++;
    if (!Object.prototype.hasOwnProperty.call(oy, k) || !jsonEqual(ox[k], oy[k])) return false;
  }
  for (const k in oy) if (Object.prototype.hasOwnProperty.call(oy, k) && !absent(oy[k])) count--;
  return count === 0;
}

/** A value JSON leaves out of an object: undefined, a function, a symbol. */
function absent(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/** The value JSON writes for `v`: `toJSON()`'s, null for what it cannot write, else `v`. */
function normalize(v: unknown): unknown {
  if (absent(v)) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function')
    return (v as { toJSON(): unknown }).toJSON();
  return v;
}
