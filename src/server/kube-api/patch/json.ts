/**
 * Counterpart of the JSON plumbing under k8s.io/apimachinery/pkg/util/strategicpatch and
 * sigs.k8s.io/structured-merge-diff: the JSON value type the patch modules work on, a deep
 * equality, and the guard that keeps `__proto__` out of every object we build. Pure; any thread.
 */
import { AgentError } from '../../../shared/errors.js';

/** Json: a parsed JSON value (what JSON.parse or a YAML document without tags yields). */
export type Json = null | boolean | number | string | Json[] | JsonObject;
/** JsonObject: a JSON object. */
export interface JsonObject {
  [key: string]: Json;
}

/** isObject: true for a JSON object (not an array, not null). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** deepEqual: structural equality of two JSON values (key order ignored, array order kept). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** clone: a deep copy of a JSON value. */
export function clone<T extends Json>(v: T): T {
  return structuredClone(v);
}

/**
 * badRequest: the AgentError for a patch body that cannot be applied: ERR_INVALID_ARGUMENT, HTTP
 * 400 `BadRequest`, the message naming the problem (as the apiserver answers a bad patch).
 */
export function badRequest(message: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', message, { statusReason: 'BadRequest' });
}

/**
 * setKey assigns `obj[key] = value` as an own property, also for the key `__proto__` (a plain
 * assignment would replace the object's prototype instead).
 */
export function setKey(obj: JsonObject, key: string, value: Json): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/**
 * rejectProtoKeys throws ERR_INVALID_ARGUMENT when any object in `v` has the key `__proto__`
 * (no Pod field is named so, and merging one could reach Object.prototype). Iterative: a deeply
 * nested value cannot overflow the stack here.
 */
export function rejectProtoKeys(v: Json, what: string): void {
  const stack: Json[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (Array.isArray(x)) stack.push(...x);
    else if (isObject(x)) {
      if (Object.prototype.hasOwnProperty.call(x, '__proto__')) throw badRequest(`${what}: the key "__proto__" is not allowed`);
      stack.push(...Object.values(x));
    }
  }
}

/**
 * canonical: a text that is equal for deep-equal JSON values (object keys sorted), to index
 * values in a Map (merge keys, set members) instead of comparing every pair.
 */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'undefined';
}
