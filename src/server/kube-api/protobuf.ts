/**
 * Counterpart of k8s.io/apimachinery/pkg/runtime/serializer/protobuf (the `k8s\0` + runtime.Unknown
 * envelope) for the few request bodies kubectl's typed clients send as
 * `application/vnd.kubernetes.protobuf`: the self reviews of `kubectl auth whoami` / `auth can-i`
 * (k8s.io/api/authorization/v1 generated.proto: SelfSubjectAccessReview → spec →
 * resourceAttributes / nonResourceAttributes). Decoded with protobufjs's wire Reader into the
 * JSON shape the handlers read. The only home of protobufjs (.dependency-cruiser.cjs).
 */
import protobuf from 'protobufjs/minimal.js';
import { InvalidArgumentError } from '../../shared/errors.js';

/** ProtobufWriter: protobufjs's wire Writer, for the encoders of this folder (openapi-v2-proto.ts); protobufjs lives here only. */
export type ProtobufWriter = protobuf.Writer;

/** newProtobufWriter: an empty protobufjs Writer. */
export function newProtobufWriter(): ProtobufWriter {
  return protobuf.Writer.create();
}

/** kProtobufMediaType: the Kubernetes protobuf media type. */
export const kProtobufMediaType = 'application/vnd.kubernetes.protobuf';
const kMagic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Fields = Map<number, (Uint8Array | number)[]>;

/** readFields: a message's fields by number (length-delimited as bytes, varints as numbers); other wire types skipped. */
function readFields(bytes: Uint8Array): Fields {
  const r = protobuf.Reader.create(bytes);
  const out: Fields = new Map();
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    const wire = tag & 7;
    let v: Uint8Array | number;
    if (wire === 2) v = r.bytes();
    else if (wire === 0) v = r.uint32();
    else {
      r.skipType(wire);
      continue;
    }
    const list = out.get(field) ?? [];
    list.push(v);
    out.set(field, list);
  }
  return out;
}

function str(f: Fields, n: number): string | undefined {
  const v = f.get(n)?.[0];
  return v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : undefined;
}

function msg(f: Fields, n: number): Fields | undefined {
  const v = f.get(n)?.[0];
  return v instanceof Uint8Array ? readFields(v) : undefined;
}

/**
 * decodeEnvelope: the raw object bytes and TypeMeta of a `k8s\0`-prefixed runtime.Unknown.
 * @throws InvalidArgumentError when the magic prefix is missing or the message is malformed.
 */
export function decodeEnvelope(body: Uint8Array): { apiVersion: string; kind: string; raw: Uint8Array } {
  if (body.length < 4 || !kMagic.equals(Buffer.from(body.subarray(0, 4)))) throw new InvalidArgumentError('the protobuf body does not start with the Kubernetes magic prefix "k8s\\0"');
  try {
    const unknown = readFields(body.subarray(4));
    const typeMeta = msg(unknown, 1);
    const raw = unknown.get(2)?.[0];
    return { apiVersion: (typeMeta && str(typeMeta, 1)) ?? '', kind: (typeMeta && str(typeMeta, 2)) ?? '', raw: raw instanceof Uint8Array ? raw : new Uint8Array(0) };
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw err;
    throw new InvalidArgumentError(`the protobuf body could not be decoded: ${(err as Error).message}`);
  }
}

/**
 * decodeSelfSubjectAccessReview: a protobuf SelfSubjectAccessReview body as its JSON form
 * `{apiVersion, kind, spec: {resourceAttributes?: {namespace, verb, group, version, resource, subresource, name}, nonResourceAttributes?: {path, verb}}}`.
 * Also serves SelfSubjectReview and SelfSubjectRulesReview (their spec fields are read the same way: rules review spec.namespace).
 * @throws InvalidArgumentError for a malformed body.
 */
export function decodeReviewBody(body: Uint8Array): Record<string, unknown> {
  const { apiVersion, kind, raw } = decodeEnvelope(body);
  try {
    const obj = readFields(raw);
    const spec = msg(obj, 2);
    const out: Record<string, unknown> = { apiVersion, kind };
    if (!spec) return { ...out, spec: {} };
    if (kind === 'SelfSubjectRulesReview') return { ...out, spec: { namespace: str(spec, 1) ?? '' } };
    const s: Record<string, unknown> = {};
    const ra = msg(spec, 1);
    if (ra) {
      const names = ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'];
      s.resourceAttributes = Object.fromEntries(names.map((n, i) => [n, str(ra, i + 1) ?? '']).filter(([, v]) => v !== ''));
    }
    const nra = msg(spec, 2);
    if (nra) s.nonResourceAttributes = { path: str(nra, 1) ?? '', verb: str(nra, 2) ?? '' };
    return { ...out, spec: s };
  } catch (err) {
    throw new InvalidArgumentError(`the protobuf ${kind || 'object'} could not be decoded: ${(err as Error).message}`);
  }
}

/**
 * stringMap: a protobuf map<string, string> field (repeated entries of key 1, value 2); with
 * `bytes`, a map<string, bytes> as the JSON form of Go's map[string][]byte (values base64).
 */
function stringMap(f: Fields, n: number, bytes = false): Record<string, string> | undefined {
  const entries = f.get(n);
  if (!entries) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    if (!(e instanceof Uint8Array)) continue;
    const kv = readFields(e);
    const v = kv.get(2)?.[0];
    out[str(kv, 1) ?? ''] = !bytes ? str(kv, 2) ?? '' : v instanceof Uint8Array ? Buffer.from(v).toString('base64') : '';
  }
  return out;
}

/**
 * decodeNamespaceBody: a protobuf core/v1 Namespace (what `kubectl create namespace` sends) as its
 * JSON form `{apiVersion, kind, metadata: {name?, generateName?, labels?, annotations?}}`: the
 * ObjectMeta fields a create reads (generated.proto: name 1, generateName 2, labels 11, annotations 12).
 * @throws InvalidArgumentError for a malformed body.
 */
export function decodeNamespaceBody(body: Uint8Array): Record<string, unknown> {
  const { apiVersion, kind, raw } = decodeEnvelope(body);
  try {
    const meta = msg(readFields(raw), 1);
    if (!meta) return { apiVersion, kind, metadata: {} };
    const fields: [string, unknown][] = [['name', str(meta, 1)], ['generateName', str(meta, 2)], ['labels', stringMap(meta, 11)], ['annotations', stringMap(meta, 12)]];
    return { apiVersion, kind, metadata: Object.fromEntries(fields.filter(([, v]) => v !== undefined && v !== '')) };
  } catch (err) {
    throw new InvalidArgumentError(`the protobuf ${kind || 'object'} could not be decoded: ${(err as Error).message}`);
  }
}

/**
 * decodeConfigObjectBody: a protobuf core/v1 ConfigMap or Secret (what `kubectl create configmap`
 * and `kubectl create secret` send) as its JSON form. Field numbers of k8s.io/api core/v1
 * generated.proto (release-1.32): ConfigMap metadata 1, data 2 (map<string,string>), binaryData 3
 * (map<string,bytes>), immutable 4; Secret metadata 1, data 2 (map<string,bytes>), type 3,
 * stringData 4, immutable 5; ObjectMeta name 1, generateName 2, namespace 3, uid 5,
 * resourceVersion 6, labels 11, annotations 12. To be replaced by the general by-kind decoder of
 * the vendored definitions (issue #39 item 8) once it is merged.
 * @throws InvalidArgumentError for a malformed body or another kind.
 */
export function decodeConfigObjectBody(body: Uint8Array): Record<string, unknown> {
  const { apiVersion, kind, raw } = decodeEnvelope(body);
  if (kind !== 'ConfigMap' && kind !== 'Secret') throw new InvalidArgumentError(`the protobuf body holds a ${kind || 'object of no kind'}, not a ConfigMap or Secret`);
  try {
    const obj = readFields(raw);
    const meta = msg(obj, 1);
    const metaFields: [string, unknown][] = meta
      ? [['name', str(meta, 1)], ['generateName', str(meta, 2)], ['namespace', str(meta, 3)], ['uid', str(meta, 5)], ['resourceVersion', str(meta, 6)], ['labels', stringMap(meta, 11)], ['annotations', stringMap(meta, 12)]]
      : [];
    const out: Record<string, unknown> = { apiVersion, kind, metadata: Object.fromEntries(metaFields.filter(([, v]) => v !== undefined && v !== '')) };
    const immutable = obj.get(kind === 'ConfigMap' ? 4 : 5)?.[0];
    if (typeof immutable === 'number') out.immutable = immutable !== 0;
    const fields: [string, unknown][] = kind === 'ConfigMap'
      ? [['data', stringMap(obj, 2)], ['binaryData', stringMap(obj, 3, true)]]
      : [['data', stringMap(obj, 2, true)], ['type', str(obj, 3)], ['stringData', stringMap(obj, 4)]];
    for (const [k, v] of fields) if (v !== undefined && v !== '') out[k] = v;
    return out;
  } catch (err) {
    throw new InvalidArgumentError(`the protobuf ${kind} could not be decoded: ${(err as Error).message}`);
  }
}
