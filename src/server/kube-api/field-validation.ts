/**
 * Counterpart of the apiserver's server-side field validation (`?fieldValidation=Strict|Warn|Ignore`,
 * KEP-2885: the strict JSON/YAML decoding in k8s.io/apimachinery/pkg/runtime/serializer that reports
 * `strict decoding error: unknown field "spec.containers[0].imagee"`): the fields of an object that its
 * core/v1 schema does not know. kubectl 1.32 sends `fieldValidation=Strict` and skips its own schema
 * check because our OpenAPI lists the parameter, so the routes must run this on create, update and
 * patch results. Reads the same generated schema data as openapi.ts. Pure after the first call; main thread.
 */
import { readFileSync } from 'node:fs';

type Schema = {
  $ref?: string;
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  additionalProperties?: Schema;
  items?: Schema;
  type?: string;
};

const kDataUrl = import.meta.url.endsWith('.ts')
  ? new URL('./openapi/core-v1.json', import.meta.url)
  : new URL('../../../../src/server/kube-api/openapi/core-v1.json', import.meta.url);

let schemas: Record<string, Schema> | undefined;

function load(): Record<string, Schema> {
  schemas ??= (JSON.parse(readFileSync(kDataUrl, 'utf8')) as { schemas: Record<string, Schema> }).schemas;
  return schemas;
}

function resolve(s: Schema | undefined, all: Record<string, Schema>): Schema | undefined {
  let cur = s;
  for (let i = 0; i < 8 && cur !== undefined; i++) {
    const ref = cur.$ref ?? cur.allOf?.[0]?.$ref;
    if (ref === undefined) return cur;
    cur = all[ref.replace('#/components/schemas/', '')];
  }
  return cur;
}

/** kMaxUnknownFields: at most this many unknown fields are listed (the rest would only lengthen the message). */
export const kMaxUnknownFields = 100;

/**
 * unknownFields lists the fields of `obj` that the core/v1 schema of `kind` (`Pod`, `Node`,
 * `ConfigMap`, … as served) does not define, as the apiserver's strict decoder names them:
 * `spec.containers[0].imagee`, `metadata.labelz`. Maps (`labels`, `data`) take any key; fields
 * the schema leaves open (`fieldsV1`, `RawExtension`) are not looked into. Throws an Error for a
 * kind that has no schema here (a programming error of the caller). Iterative; at most
 * kMaxUnknownFields entries.
 */
export function unknownFields(obj: unknown, kind: string): string[] {
  const all = load();
  const root = all[`io.k8s.api.core.v1.${kind}`];
  if (root === undefined) throw new Error(`unknownFields: no core/v1 schema for kind ${JSON.stringify(kind)}`);
  const out: string[] = [];
  const stack: Array<[unknown, Schema | undefined, string]> = [[obj, root, '']];
  while (stack.length > 0 && out.length < kMaxUnknownFields) {
    const [v, raw, path] = stack.pop() as [unknown, Schema | undefined, string];
    const s = resolve(raw, all);
    if (s === undefined || v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      if (s.items !== undefined) for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], s.items, `${path}[${i}]`]);
      continue;
    }
    const entries = Object.entries(v as Record<string, unknown>).reverse();
    if (s.properties !== undefined) {
      for (const [k, x] of entries) {
        const at = path === '' ? k : `${path}.${k}`;
        const p = Object.prototype.hasOwnProperty.call(s.properties, k) ? s.properties[k] : undefined;
        if (p === undefined) {
          if (out.length < kMaxUnknownFields) out.push(at);
        } else stack.push([x, p, at]);
      }
    } else if (s.additionalProperties !== undefined) {
      for (const [k, x] of entries) stack.push([x, s.additionalProperties, path === '' ? k : `${path}.${k}`]);
    }
  }
  return out.sort();
}

/**
 * strictDecodingMessage: the message of the apiserver's 400 BadRequest for `fields` under
 * `fieldValidation=Strict`: `strict decoding error: unknown field "a", unknown field "b"`.
 */
export function strictDecodingMessage(fields: readonly string[]): string {
  return `strict decoding error: ${fields.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ')}`;
}
