/**
 * Counterpart of k8s.io/apimachinery/pkg/runtime/serializer/protobuf (the `k8s\0` + runtime.Unknown
 * envelope) and of the generated protobuf codecs of k8s.io/api, for the request bodies kubectl's
 * typed clients send as `application/vnd.kubernetes.protobuf`: the Pods of `kubectl debug
 * --copy-to` and `kubectl debug node/NAME`, `kubectl create namespace`, the self reviews of
 * `kubectl auth whoami` / `auth can-i`. The messages are decoded by protobufjs from the published
 * definitions vendored under ./kube-proto (k8s.io/api and k8s.io/apimachinery release-1.32
 * `generated.proto`, see kube-proto/README.md), chosen by the envelope's apiVersion and kind, then
 * mapped to the JSON shape apimachinery's JSON serializer writes (toJsonShape). The only home of
 * protobufjs (.dependency-cruiser.cjs); it also gives the wire Writer of the /openapi/v2 protobuf.
 * A codec, safe in any thread: the main thread reads only envelopes (envelopeTypeMeta), the body
 * decoder thread (workers/manifest.worker.ts) decodes objects; the routes' glue that sends a body
 * there is server/kube-api/protobuf-body.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { InvalidArgumentError } from './errors.js';

/** ProtobufWriter: protobufjs's wire Writer, for the API's encoders (server/kube-api/openapi-v2-proto.ts); protobufjs lives here only. */
export type ProtobufWriter = protobuf.Writer;

/** newProtobufWriter: an empty protobufjs Writer. */
export function newProtobufWriter(): ProtobufWriter {
  return protobuf.Writer.create();
}

/** kProtobufMediaType: the Kubernetes protobuf media type. */
export const kProtobufMediaType = 'application/vnd.kubernetes.protobuf';
const kMagic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** isProtobufMediaType: whether a Content-Type header names the Kubernetes protobuf media type (parameters ignored). */
export function isProtobufMediaType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0].trim().toLowerCase() === kProtobufMediaType;
}

/** The vendored definitions' folder (from dist/, the sources' one: the .proto files are not compiled). */
const kProtoDir = import.meta.url.endsWith('.ts')
  ? new URL('./kube-proto/', import.meta.url)
  : new URL('../../../src/shared/kube-proto/', import.meta.url);

/** kApiFiles: the vendored k8s.io/api packages, by API group ('' is core); their imports load with them. */
const kApiFiles: Readonly<Record<string, string>> = {
  '': 'k8s.io/api/core/v1/generated.proto',
  'authorization.k8s.io': 'k8s.io/api/authorization/v1/generated.proto',
  'authentication.k8s.io': 'k8s.io/api/authentication/v1/generated.proto',
};

let root: protobuf.Root | undefined;

/**
 * definitions: the loaded Root of every vendored file, parsed once, at the first protobuf body
 * (keepCase: the fields keep their JSON names). The parse blocks the main thread once (0.1–0.3 s
 * with its first decode on this 2-core machine under load; ~0.4 ms a decode after that).
 */
function definitions(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => (target.startsWith('/') ? target : fileURLToPath(new URL(target, kProtoDir)));
  r.fetch = (path: string) => readFileSync(path, 'utf8');
  // No resolveAll: a type is resolved at its first decode, not every type of the files up front.
  r.loadSync(Object.values(kApiFiles), { keepCase: true });
  return (root = r);
}

/**
 * protobufType: the message type of `apiVersion` + `kind` among the vendored definitions
 * (`v1` Pod → k8s.io.api.core.v1.Pod, `authorization.k8s.io/v1` SelfSubjectAccessReview →
 * k8s.io.api.authorization.v1.SelfSubjectAccessReview), or undefined when none is served.
 */
function protobufType(apiVersion: string, kind: string): protobuf.Type | undefined {
  const slash = apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  if (kApiFiles[group] === undefined || !/^v[0-9a-z]+$/.test(version) || !/^[A-Z][A-Za-z0-9]*$/.test(kind)) return undefined;
  const pkg = group === '' ? 'core' : group.split('.')[0];
  const found = definitions().lookup(`k8s.io.api.${pkg}.${version}.${kind}`);
  return found instanceof protobuf.Type ? found : undefined;
}

const kMeta = '.k8s.io.apimachinery.pkg.apis.meta.v1.';
/** kZeroTimeSeconds: Go's zero time.Time in Unix seconds (January 1, year 1 UTC), which JSON writes as null. */
const kZeroTimeSeconds = -62135596800;

type Long = { low: number; high: number; unsigned: boolean; toNumber(): number };

/** num: a protobufjs integer (a number, or a Long for 64-bit fields) as a number. */
function num(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v !== null && typeof v === 'object' && typeof (v as Long).toNumber === 'function') return (v as Long).toNumber();
  return Number(v);
}

/** rfc3339: seconds + nanoseconds as Go's RFC 3339 in UTC, with `fraction` digits (0 for metav1.Time, 6 for MicroTime). */
function rfc3339(seconds: number, nanos: number, fraction: number): string {
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return fraction === 0 ? `${iso}Z` : `${iso}.${String(nanos).padStart(9, '0').slice(0, fraction)}Z`;
}

/** goDuration: nanoseconds as Go's time.Duration String() (`1h2m3s`, `1.5s`, `500ms`, `0s`), what metav1.Duration's JSON carries. */
function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let rest = Math.abs(ns);
  if (rest < 1e9) {
    const [unit, div] = rest < 1e3 ? ['ns', 1] : rest < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    return `${sign}${rest / (div as number)}${unit}`;
  }
  const h = Math.floor(rest / 3.6e12);
  rest -= h * 3.6e12;
  const m = Math.floor(rest / 6e10);
  rest -= m * 6e10;
  const s = rest / 1e9;
  return `${sign}${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}

/** rawJson: the bytes of a RawExtension or FieldsV1 as the JSON they hold (apimachinery keeps them verbatim). */
function rawJson(bytes: Uint8Array | undefined, field: string): unknown {
  if (!bytes || bytes.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new InvalidArgumentError(`${field}: the embedded object is not JSON (only JSON raw extensions are read)`);
  }
}

/**
 * special: the apimachinery types whose JSON is not their message shape, as their MarshalJSON
 * writes them: Quantity and QuantityValue → the string; IntOrString → the int or the string;
 * Time → RFC 3339 seconds (the zero time, or no time, omitted), MicroTime → microseconds;
 * Duration → Go's duration string; RawExtension and FieldsV1 → the JSON they hold; a named slice
 * (a message of one `items` field, such as ExtraValue or Verbs) → its items. `kNotSpecial` otherwise.
 */
const kNotSpecial = Symbol('not special');
function special(type: protobuf.Type, m: Record<string, unknown>, field: string): unknown {
  switch (type.fullName) {
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
    case '.k8s.io.apimachinery.pkg.api.resource.QuantityValue':
      return typeof m.string === 'string' ? m.string : undefined;
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return num(m.type) === 1 ? (m.strVal ?? '') : num(m.intVal ?? 0);
    case `${kMeta}Time`:
    case `${kMeta}MicroTime`: {
      const seconds = num(m.seconds ?? 0);
      const nanos = num(m.nanos ?? 0);
      if ((seconds === 0 && nanos === 0) || seconds === kZeroTimeSeconds) return undefined;
      return rfc3339(seconds, nanos, type.name === 'Time' ? 0 : 6);
    }
    case `${kMeta}Duration`:
      return goDuration(num(m.duration ?? 0));
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
      return rawJson(m.raw as Uint8Array | undefined, field);
    case `${kMeta}FieldsV1`:
      return rawJson(m.Raw as Uint8Array | undefined, field);
  }
  const fields = type.fieldsArray;
  // core/v1 DownwardAPIProjection is a struct `{items}` (a projected volume's downwardAPI source), not a named slice.
  if (
    fields.length === 1 &&
    fields[0].name === 'items' &&
    fields[0].repeated &&
    !type.name.endsWith('List') &&
    type.fullName !== '.k8s.io.api.core.v1.DownwardAPIProjection'
  ) {
    return ((m.items as unknown[] | undefined) ?? []).map((v, i) => value(fields[0], v, `${field}[${i}]`));
  }
  return kNotSpecial;
}

/**
 * kInline: the messages Go embeds with `json:",inline"` (their fields are the parent's in JSON):
 * Volume's VolumeSource, PersistentVolumeSpec's PersistentVolumeSource, Probe's ProbeHandler,
 * EphemeralContainer's EphemeralContainerCommon, the key selectors' and sources'
 * LocalObjectReference, Unknown's TypeMeta (every `json:",inline"` of k8s.io/api core/v1 types.go).
 */
const kInline: ReadonlySet<string> = new Set([
  '.k8s.io.api.core.v1.VolumeSource',
  '.k8s.io.api.core.v1.ProbeHandler',
  '.k8s.io.api.core.v1.PersistentVolumeSource',
  '.k8s.io.api.core.v1.EphemeralContainerCommon',
  '.k8s.io.api.core.v1.LocalObjectReference',
  '.k8s.io.apimachinery.pkg.runtime.TypeMeta',
]);

/** value: one decoded value of `f` (an element, for a repeated or map field) in its JSON shape. */
function value(f: protobuf.Field, v: unknown, field: string): unknown {
  f.resolve();
  if (f.resolvedType instanceof protobuf.Type) return toJsonShape(f.resolvedType, v as Record<string, unknown>, field);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'object' && v !== null) return num(v);
  return v;
}

/**
 * toJsonShape: a decoded message as the object apimachinery's JSON serializer would write for it:
 * fields under their JSON names (the definitions' names), absent optional fields and empty
 * strings, lists and maps omitted (Go's `omitempty`: the Go encoder writes a non-pointer string
 * even when empty), numbers and booleans kept as sent (a pointer's explicit 0 or false matters),
 * 64-bit integers as numbers, bytes as base64, and the types of special() in their own forms.
 * `field` names the value in errors (`spec.containers[0]`).
 * @throws InvalidArgumentError for an embedded raw object that is not JSON.
 */
function toJsonShape(type: protobuf.Type, m: Record<string, unknown>, field: string): unknown {
  const s = special(type, m, field);
  if (s !== kNotSpecial) return s;
  const out: Record<string, unknown> = {};
  for (const f of type.fieldsArray) {
    if (!Object.prototype.hasOwnProperty.call(m, f.name)) continue;
    const v = m[f.name];
    const path = field === '' ? f.name : `${field}.${f.name}`;
    let json: unknown;
    if (f instanceof protobuf.MapField) {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) continue;
      json = Object.fromEntries(entries.map(([k, e]) => [k, value(f, e, `${path}[${JSON.stringify(k)}]`)]));
    } else if (f.repeated) {
      const list = v as unknown[];
      if (list.length === 0) continue;
      json = list.map((e, i) => value(f, e, `${path}[${i}]`));
    } else {
      if (v === '' || (v instanceof Uint8Array && v.length === 0)) continue;
      json = value(f, v, path);
    }
    if (json === undefined) continue;
    if (!f.repeated && f.resolvedType && kInline.has(f.resolvedType.fullName)) Object.assign(out, json);
    else out[f.name] = json;
  }
  return out;
}

/**
 * decodeEnvelope: the TypeMeta and raw object bytes of a `k8s\0`-prefixed runtime.Unknown
 * (k8s.io/apimachinery/pkg/runtime generated.proto: typeMeta 1, raw 2).
 * @throws InvalidArgumentError when the magic prefix is missing or the message is malformed.
 */
export function decodeEnvelope(body: Uint8Array): { apiVersion: string; kind: string; raw: Uint8Array } {
  if (body.length < 4 || !kMagic.equals(Buffer.from(body.subarray(0, 4))))
    throw new InvalidArgumentError('the protobuf body does not start with the Kubernetes magic prefix "k8s\\0"');
  let unknown: Record<string, unknown>;
  try {
    unknown = definitions().lookupType('k8s.io.apimachinery.pkg.runtime.Unknown').decode(body.subarray(4)) as unknown as Record<
      string,
      unknown
    >;
  } catch (err) {
    throw new InvalidArgumentError(`the protobuf body could not be decoded as a runtime.Unknown envelope: ${(err as Error).message}`);
  }
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const raw = unknown.raw instanceof Uint8Array ? unknown.raw : new Uint8Array(0);
  return { apiVersion: typeMeta.apiVersion ?? '', kind: typeMeta.kind ?? '', raw };
}

/**
 * envelopeTypeMeta: the apiVersion and kind of a `k8s\0` runtime.Unknown envelope, read with the
 * wire Reader alone: no definitions are loaded and the object's bytes are skipped, not decoded, so
 * it is cheap enough for the main thread and a body of the wrong kind is refused before anything
 * decodes it (the protobuf serializer likewise reads the envelope's TypeMeta before the object:
 * k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go Decode).
 * @throws InvalidArgumentError as decodeEnvelope.
 */
export function envelopeTypeMeta(body: Uint8Array): { apiVersion: string; kind: string } {
  if (body.length < 4 || !kMagic.equals(Buffer.from(body.subarray(0, 4))))
    throw new InvalidArgumentError('the protobuf body does not start with the Kubernetes magic prefix "k8s\\0"');
  let apiVersion = '';
  let kind = '';
  try {
    const r = protobuf.Reader.create(body.subarray(4));
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag !== 0x0a) {
        r.skipType(tag & 7);
        continue;
      }
      const end = r.uint32() + r.pos; // typeMeta: apiVersion 1, kind 2
      if (end > r.len) throw new RangeError('typeMeta runs past the end of the body');
      while (r.pos < end) {
        const t = r.uint32();
        if (t === 0x0a) apiVersion = r.string();
        else if (t === 0x12) kind = r.string();
        else r.skipType(t & 7);
      }
    }
  } catch (err) {
    throw new InvalidArgumentError(`the protobuf body could not be decoded as a runtime.Unknown envelope: ${(err as Error).message}`);
  }
  return { apiVersion, kind };
}

/**
 * decodeObjectBody: a protobuf request body (the `k8s\0` envelope around any object of the
 * vendored k8s.io/api groups: core/v1 Pod, Namespace, ConfigMap, Secret…, authorization/v1 and
 * authentication/v1 reviews) as the JSON object apimachinery's JSON encoding of it would be,
 * `{apiVersion, kind, metadata, …}`. `expectedKind`, when given, is the only kind accepted.
 * @throws InvalidArgumentError naming what failed: no envelope, an apiVersion/kind with no
 * definition here, another kind than expected, or bytes that are not that message.
 */
export function decodeObjectBody(body: Uint8Array, expectedKind?: string): Record<string, unknown> {
  const { apiVersion, kind, raw } = decodeEnvelope(body);
  if (expectedKind !== undefined && kind !== expectedKind) {
    throw new InvalidArgumentError(
      `the protobuf body holds ${kind === '' ? 'no kind' : `a ${JSON.stringify(kind)}`} (apiVersion ${JSON.stringify(apiVersion)}), this request takes a ${expectedKind}`,
    );
  }
  const type = protobufType(apiVersion, kind);
  if (!type)
    throw new InvalidArgumentError(
      `the protobuf body's apiVersion ${JSON.stringify(apiVersion)} and kind ${JSON.stringify(kind)} are not a type this node decodes (core/v1, authorization.k8s.io/v1, authentication.k8s.io/v1)`,
    );
  let message: Record<string, unknown>;
  try {
    message = type.decode(raw) as unknown as Record<string, unknown>;
  } catch (err) {
    throw new InvalidArgumentError(`the protobuf ${kind} could not be decoded: ${(err as Error).message}`);
  }
  const json = toJsonShape(type, message, '') as Record<string, unknown>;
  return { apiVersion, kind, ...json };
}

/**
 * decodeReviewBody: a protobuf SelfSubjectAccessReview, SelfSubjectRulesReview or
 * SelfSubjectReview body as its JSON form `{apiVersion, kind, metadata, spec, status}` (decodeObjectBody).
 * @throws InvalidArgumentError for a malformed body.
 */
export function decodeReviewBody(body: Uint8Array): Record<string, unknown> {
  const obj = decodeObjectBody(body);
  return { ...obj, spec: obj.spec ?? {} };
}
