/**
 * Counterpart of the apiserver's `application/merge-patch+json` handling (patch.go's jsonPatcher
 * with jsonpatch.MergePatch): RFC 7386 JSON Merge Patch, small enough to own. Pure; any thread.
 */
import { isObject, setKey, type Json, type JsonObject } from './json.js';

/**
 * mergePatch returns `target` with the RFC 7386 merge patch `patch` applied (inputs untouched):
 * an object patch merges key by key (null deletes the key), anything else replaces the target.
 * Iterative over objects, so a deep patch never overflows the stack.
 */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const root: JsonObject = isObject(target) ? structuredClone(target) : {};
  const stack: Array<[JsonObject, JsonObject]> = [[root, patch]];
  while (stack.length > 0) {
    const [t, p] = stack.pop() as [JsonObject, JsonObject];
    for (const [k, v] of Object.entries(p)) {
      if (v === null) {
        delete t[k];
      } else if (isObject(v)) {
        const have = Object.prototype.hasOwnProperty.call(t, k) ? t[k] : undefined;
        const next: JsonObject = isObject(have) ? have : {};
        setKey(t, k, next);
        stack.push([next, v]);
      } else {
        setKey(t, k, structuredClone(v));
      }
    }
  }
  return root;
}
