/**
 * Counterpart of the protobuf form of `/openapi/v2` (kube-openapi's handler serving
 * `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`: the gnostic openapi.v2.Document
 * message, the only form kubectl's and client-go's discovery ask for). Encodes the Swagger 2.0
 * document's `info` and `definitions` (paths are left empty: kubectl reads the definitions and
 * their `x-kubernetes-*` extensions) with protobufjs's wire Writer. Pure; any thread.
 */
import { newProtobufWriter, type ProtobufWriter } from '../../shared/kube-protobuf.js';

type Json = Record<string, unknown>;
type Writer = ProtobufWriter;

/** Field numbers of gnostic's openapi.v2 messages (OpenAPIv2.proto) that we write. */
const kDocument = { swagger: 1, info: 2, paths: 8, definitions: 9 } as const;
const kInfo = { title: 1, version: 2 } as const;
const kNamed = { name: 1, value: 2 } as const; // NamedSchema, NamedAny
const kSchema = {
  ref: 1,
  format: 2,
  title: 3,
  description: 4,
  required: 19,
  additionalProperties: 21,
  type: 22,
  items: 23,
  properties: 25,
  vendorExtension: 31,
} as const;
const kAnyYaml = 2; // openapi.v2.Any.yaml

function str(w: Writer, field: number, value: string): void {
  w.uint32((field << 3) | 2).string(value);
}

function msg(w: Writer, field: number, body: (w: Writer) => void): void {
  w.uint32((field << 3) | 2).fork();
  body(w);
  w.ldelim();
}

/** A Swagger 2.0 Schema object as openapi.v2.Schema; extensions as NamedAny with their value as YAML (JSON text is YAML). */
function schema(w: Writer, s: Json): void {
  if (typeof s.$ref === 'string') str(w, kSchema.ref, s.$ref);
  if (typeof s.format === 'string') str(w, kSchema.format, s.format);
  if (typeof s.title === 'string') str(w, kSchema.title, s.title);
  if (typeof s.description === 'string') str(w, kSchema.description, s.description);
  if (Array.isArray(s.required)) for (const r of s.required) if (typeof r === 'string') str(w, kSchema.required, r);
  const extra = s.additionalProperties;
  if (extra !== null && typeof extra === 'object') msg(w, kSchema.additionalProperties, (v) => msg(v, 1, (x) => schema(x, extra as Json)));
  if (typeof s.type === 'string') msg(w, kSchema.type, (v) => str(v, 1, s.type as string));
  const items = s.items;
  if (items !== null && typeof items === 'object') msg(w, kSchema.items, (v) => msg(v, 1, (x) => schema(x, items as Json)));
  const props = s.properties;
  if (props !== null && typeof props === 'object') {
    msg(w, kSchema.properties, (v) => {
      for (const [name, p] of Object.entries(props as Record<string, Json>)) {
        msg(v, 1, (x) => {
          str(x, kNamed.name, name);
          msg(x, kNamed.value, (y) => schema(y, p));
        });
      }
    });
  }
  for (const [k, v] of Object.entries(s)) {
    if (!k.startsWith('x-')) continue;
    msg(w, kSchema.vendorExtension, (x) => {
      str(x, kNamed.name, k);
      msg(x, kNamed.value, (y) => str(y, kAnyYaml, JSON.stringify(v)));
    });
  }
}

/**
 * openApiV2Protobuf encodes a Swagger 2.0 document (`swagger`, `info.title`, `info.version`,
 * `definitions`) as the bytes of an openapi.v2.Document. Pure.
 */
export function openApiV2Protobuf(doc: Json): Buffer {
  const w = newProtobufWriter();
  str(w, kDocument.swagger, String(doc.swagger ?? '2.0'));
  const info = (doc.info ?? {}) as Json;
  msg(w, kDocument.info, (v) => {
    str(v, kInfo.title, String(info.title ?? ''));
    str(v, kInfo.version, String(info.version ?? ''));
  });
  msg(w, kDocument.paths, () => undefined);
  msg(w, kDocument.definitions, (v) => {
    for (const [name, s] of Object.entries((doc.definitions ?? {}) as Record<string, Json>)) {
      msg(v, 1, (x) => {
        str(x, kNamed.name, name);
        msg(x, kNamed.value, (y) => schema(y, s));
      });
    }
  });
  return Buffer.from(w.finish());
}
