/**
 * Counterpart of the apiserver's `application/json-patch+json` handling (patch.go's jsonPatcher over
 * gopkg.in/evanphx/json-patch): RFC 6902 operations applied with the rfc6902 library. Pure; any thread.
 */
import { applyPatch, type Operation } from 'rfc6902';
import { badRequest, clone, isObject, type Json, type JsonObject } from './json.js';

const kOps = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * applyJsonPatch returns `target` with the RFC 6902 operations `ops` applied (target untouched).
 * Throws ERR_INVALID_ARGUMENT (BadRequest) naming the operation (`op 2 (test /spec/x): ...`) when
 * `ops` is not a list of operations, a path does not exist, a `test` fails, or a path has a
 * `__proto__` segment; or when the result is not an object.
 */
export function applyJsonPatch(target: JsonObject, ops: Json): JsonObject {
  if (!Array.isArray(ops)) throw badRequest('json patch: the body must be a JSON list of operations');
  ops.forEach((op, i) => {
    if (!isObject(op) || typeof op.op !== 'string' || !kOps.has(op.op)) {
      throw badRequest(`json patch: op ${i}: "op" must be one of add, remove, replace, move, copy, test`);
    }
    for (const f of ['path', ...(op.op === 'move' || op.op === 'copy' ? ['from'] : [])]) {
      const v = op[f];
      if (typeof v !== 'string') throw badRequest(`json patch: op ${i} (${op.op}): "${f}" must be a string`);
      if (v !== '' && !v.startsWith('/'))
        throw badRequest(`json patch: op ${i} (${op.op} ${v}): "${f}" must be a JSON pointer starting with "/"`);
      if (v.split('/').some((s) => s === '__proto__' || s === 'constructor' || s === 'prototype')) {
        throw badRequest(`json patch: op ${i} (${op.op} ${v}): the path segment is not allowed`);
      }
    }
    if ((op.op === 'add' || op.op === 'replace' || op.op === 'test') && !('value' in op)) {
      throw badRequest(`json patch: op ${i} (${op.op} ${String(op.path)}): "value" is required`);
    }
  });
  const doc: { root: Json } = { root: clone(target) };
  // Wrap the document so that a patch of the whole document ("" path) replaces doc.root.
  const wrapped = (ops as JsonObject[]).map((op) => ({
    ...op,
    path: `/root${String(op.path)}`,
    ...(typeof op.from === 'string' ? { from: `/root${op.from}` } : {}),
  })) as unknown as Operation[];
  const results = applyPatch(doc, wrapped);
  results.forEach((r, i) => {
    if (r !== null) {
      const op = ops[i] as JsonObject;
      throw badRequest(`json patch: op ${i} (${String(op.op)} ${String(op.path)}): ${r.name}: ${describe(r)}`);
    }
  });
  if (!isObject(doc.root)) throw badRequest('json patch: the patched document is not an object');
  return doc.root;
}

function describe(r: Error): string {
  if (r.name === 'MissingError') return 'the path does not exist';
  if (r.name === 'TestError') return 'the value is not the one tested';
  return r.message;
}
