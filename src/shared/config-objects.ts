// Counterpart of pkg/apis/core/validation (ValidateConfigMap, ValidateSecret and their updates) and the apiserver's Secret conversion (stringData merged into data), for ConfigMap and Secret objects given beside pods.
/**
 * ConfigMap and Secret objects as the agent keeps them: parsed from any source (manifest file or
 * URL, intake body, etcd), checked and normalised here — pure functions, safe in any thread.
 *
 * What is checked (pkg/apis/core/validation ValidateConfigMap / ValidateSecret):
 * - `metadata.name` a DNS-1123 subdomain, `metadata.namespace` a DNS-1123 label (default `default`);
 * - each key of `data` / `binaryData` a config key (`[-._a-zA-Z0-9]+`, at most 253 characters, not
 *   `.` or `..`, not starting with `..`) — IsConfigMapKey; a key in both maps is a duplicate;
 * - ConfigMap `data` values strings, `binaryData` and Secret `data` values base64;
 * - all values together at most 1 MiB (MaxSecretSize / the ConfigMap limit);
 * - Secret `type` (default `Opaque`): the keys each well-known type requires
 *   (`kubernetes.io/dockerconfigjson` needs `.dockerconfigjson` holding JSON, `kubernetes.io/tls`
 *   needs `tls.crt` and `tls.key`, ...);
 * - on update, `immutable: true` forbids any change of data and the flag, and a Secret's `type`
 *   never changes (ValidateConfigMapUpdate / ValidateSecretUpdate).
 * Secret `stringData` is merged into `data` (stringData wins), as the apiserver's conversion does,
 * and dropped: a stored Secret carries `data` only, base64.
 *
 * Errors never quote a Secret's values: only field paths and key names.
 */
import type { ConfigMap, Pod, Secret } from './api.js';
import type { FieldError } from './errors.js';
import { dns1123LabelErrors, dns1123SubdomainErrors } from './names.js';
import { normalizePvc, validatePvcUpdate, type PersistentVolumeClaim } from './pvc.js';
import { validateLabelsAndAnnotations } from './validation-meta.js';
import { child, ErrorList, index, isObj, type Obj } from './validation-util.js';

/** ConfigObjectKind: the object kinds the agent keeps beside pods. */
export type ConfigObjectKind = 'ConfigMap' | 'Secret' | 'PersistentVolumeClaim';

/** ConfigObject: a ConfigMap, a Secret or a PersistentVolumeClaim (shared/pvc.ts), as kept by the object store (tagged by `kind`). */
export type ConfigObject = (ConfigMap & { kind: 'ConfigMap' }) | (Secret & { kind: 'Secret' }) | PersistentVolumeClaim;

/** kMaxConfigObjectBytes: the most bytes a ConfigMap's or Secret's values may total (1 MiB, as core/v1 MaxSecretSize). */
export const kMaxConfigObjectBytes = 1024 * 1024;

/** kSecretTypes: the Secret types with keys they require (core/v1 SecretType), and the free-form `Opaque`. */
export const kSecretTypeRequiredKeys: Readonly<Record<string, readonly string[]>> = Object.freeze({
  Opaque: [],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/basic-auth': [],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
  'kubernetes.io/service-account-token': [],
  'bootstrap.kubernetes.io/token': [],
});

const kConfigKeyRe = /^[-._a-zA-Z0-9]+$/;
const kBase64Re = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const kConfigMapFields = ['apiVersion', 'kind', 'metadata', 'data', 'binaryData', 'immutable'];
const kSecretFields = ['apiVersion', 'kind', 'metadata', 'data', 'stringData', 'type', 'immutable'];
const kMetaFields = [
  'name',
  'generateName',
  'namespace',
  'uid',
  'labels',
  'annotations',
  'creationTimestamp',
  'resourceVersion',
  'generation',
  'selfLink',
  'managedFields',
];
/** A claim also carries its finalizers and, while in use, its deletion (the pvc-protection finalizer's). */
const kPvcMetaFields = [...kMetaFields, 'finalizers', 'deletionTimestamp', 'deletionGracePeriodSeconds'];
const kPvcFields = ['apiVersion', 'kind', 'metadata', 'spec', 'status'];

/**
 * configKeyErrors: why `key` is no valid ConfigMap/Secret key (validation.IsConfigMapKey), empty
 * when it is one. The messages are the apimachinery ones.
 */
export function configKeyErrors(key: string): string[] {
  const errs: string[] = [];
  if (key.length > 253) errs.push('must be no more than 253 characters');
  if (!kConfigKeyRe.test(key))
    errs.push(
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    );
  if (key === '.') errs.push("must not be '.'");
  else if (key === '..') errs.push("must not be '..'");
  else if (key.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** isBase64: `s` is standard base64 with padding (how Go's encoding/json decodes a []byte). */
export function isBase64(s: string): boolean {
  return s.length % 4 === 0 && kBase64Re.test(s);
}

/** configObjectKey: the store's key of an object, `{kind}/{namespace}/{name}` (namespace default `default`). */
export function configObjectKey(kind: ConfigObjectKind, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace || 'default'}/${name}`;
}

/** keyOf: {@link configObjectKey} of an object. */
export function keyOf(o: ConfigObject): string {
  return configObjectKey(o.kind, o.metadata?.namespace, o.metadata?.name ?? '');
}

/** configObjectResource: the API resource of a kind: `configmaps`, `secrets`, `persistentvolumeclaims`. */
export function configObjectResource(kind: ConfigObjectKind): string {
  return kind === 'ConfigMap' ? 'configmaps' : kind === 'Secret' ? 'secrets' : 'persistentvolumeclaims';
}

/** isConfigObjectKind: the document's `kind` is one the agent keeps beside pods. */
export function isConfigObjectKind(kind: unknown): kind is ConfigObjectKind {
  return kind === 'ConfigMap' || kind === 'Secret' || kind === 'PersistentVolumeClaim';
}

function validateMeta(el: ErrorList, raw: unknown, fields = kMetaFields): void {
  const meta = el.obj('metadata', raw);
  if (!meta) {
    el.required('metadata.name', 'name or generateName is required');
    return;
  }
  el.checkFields('metadata', meta, fields);
  const name = el.str('metadata.name', meta.name);
  if (!name) el.required('metadata.name', 'name or generateName is required');
  else for (const m of dns1123SubdomainErrors(name)) el.invalid('metadata.name', name, m);
  const ns = el.str('metadata.namespace', meta.namespace);
  if (ns) for (const m of dns1123LabelErrors(ns)) el.invalid('metadata.namespace', ns, m);
  validateLabelsAndAnnotations(el, 'metadata', meta);
}

/** Checks each key of a data map; returns the total bytes of its values (decoded when base64). */
function validateDataMap(
  el: ErrorList,
  path: string,
  raw: unknown,
  values: 'string' | 'base64',
  secret: boolean,
): { keys: string[]; bytes: number } {
  const o = el.obj(path, raw);
  if (!o) return { keys: [], bytes: 0 };
  let bytes = 0;
  for (const [k, v] of Object.entries(o)) {
    const p = index(path, k);
    for (const m of configKeyErrors(k)) el.invalid(path, k, m);
    if (typeof v !== 'string') {
      // A Secret's value is never quoted back, whatever it is.
      el.invalid(p, secret ? '<value omitted>' : v, 'must be a string');
      continue;
    }
    if (values === 'base64') {
      if (!isBase64(v)) el.invalid(p, '<value omitted>', 'must be base64 encoded');
      else bytes += Buffer.from(v, 'base64').length;
    } else {
      bytes += Buffer.byteLength(v);
    }
  }
  return { keys: Object.keys(o), bytes };
}

/**
 * normalizeConfigObject checks a decoded ConfigMap or Secret document (any value; `kind` must be
 * `ConfigMap` or `Secret`) and returns it normalised: `apiVersion: v1`, namespace defaulted to
 * `default`, a Secret's `type` defaulted to `Opaque` and its `stringData` merged into `data`
 * (base64) and removed.
 * @returns `{ object }`, or `{ errors }` — every FieldError, paths relative to the object
 *   (`data[bad key]: Invalid value: "bad key": a valid config key must ...`). Never throws.
 */
export function normalizeConfigObject(
  raw: unknown,
): { object: ConfigObject; errors?: undefined } | { errors: FieldError[]; object?: undefined } {
  const el = new ErrorList();
  if (!isObj(raw)) return { errors: [{ field: '', type: 'Invalid value', detail: 'must be an object' }] };
  if (raw.apiVersion !== 'v1') el.unsupported('apiVersion', raw.apiVersion, ['v1']);
  if (!isConfigObjectKind(raw.kind)) {
    el.unsupported('kind', raw.kind, ['ConfigMap', 'Secret', 'PersistentVolumeClaim']);
    return { errors: el.errors };
  }
  if (raw.kind === 'PersistentVolumeClaim') {
    el.checkFields('', raw, kPvcFields);
    validateMeta(el, raw.metadata, kPvcMetaFields);
    const claim = normalizePvc(el, {
      ...raw,
      apiVersion: 'v1',
      metadata: { ...(raw.metadata as Obj), namespace: (raw.metadata as Obj | undefined)?.namespace || 'default' },
    });
    return el.errors.length > 0 ? { errors: el.errors } : { object: claim as unknown as ConfigObject };
  }
  const secret = raw.kind === 'Secret';
  el.checkFields('', raw, secret ? kSecretFields : kConfigMapFields);
  validateMeta(el, raw.metadata);
  el.bool('immutable', raw.immutable);
  let bytes = 0;
  const out: Obj = {
    ...raw,
    apiVersion: 'v1',
    metadata: { ...(raw.metadata as Obj), namespace: (raw.metadata as Obj | undefined)?.namespace || 'default' },
  };
  if (!secret) {
    const data = validateDataMap(el, 'data', raw.data, 'string', false);
    const bin = validateDataMap(el, 'binaryData', raw.binaryData, 'base64', false);
    for (const k of bin.keys) if (data.keys.includes(k)) el.invalid('data', k, 'duplicate of key present in binaryData');
    bytes = data.bytes + bin.bytes;
  } else {
    const type = el.str('type', raw.type) || 'Opaque';
    const data = validateDataMap(el, 'data', raw.data, 'base64', true);
    bytes = data.bytes;
    const merged: Record<string, string> = isObj(raw.data) ? { ...(raw.data as Record<string, string>) } : {};
    const sd = el.obj('stringData', raw.stringData);
    if (sd) {
      for (const [k, v] of Object.entries(sd)) {
        for (const m of configKeyErrors(k)) el.invalid('stringData', k, m);
        if (typeof v !== 'string') {
          el.invalid(index('stringData', k), '<value omitted>', 'must be a string');
          continue;
        }
        if (Object.hasOwn(merged, k) && isBase64(merged[k])) bytes -= Buffer.from(merged[k], 'base64').length;
        merged[k] = Buffer.from(v, 'utf8').toString('base64');
        bytes += Buffer.byteLength(v);
      }
    }
    const required = Object.hasOwn(kSecretTypeRequiredKeys, type) ? kSecretTypeRequiredKeys[type] : [];
    for (const k of required) if (!Object.hasOwn(merged, k)) el.required(index('data', k));
    if (type === 'kubernetes.io/dockerconfigjson' || type === 'kubernetes.io/dockercfg') {
      const k = type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (Object.hasOwn(merged, k) && isBase64(merged[k])) {
        try {
          JSON.parse(Buffer.from(merged[k], 'base64').toString('utf8'));
        } catch {
          el.invalid(index('data', k), '<secret contents redacted>', 'invalid JSON');
        }
      }
    }
    if (type === 'kubernetes.io/basic-auth' && !Object.hasOwn(merged, 'username') && !Object.hasOwn(merged, 'password')) {
      el.required(index('data', 'username'), 'either username or password is required');
    }
    if (type === 'kubernetes.io/service-account-token') {
      const ann = (raw.metadata as Obj | undefined)?.annotations as Record<string, unknown> | undefined;
      if (!ann || typeof ann['kubernetes.io/service-account.name'] !== 'string')
        el.required(child('metadata.annotations', 'kubernetes.io/service-account.name'));
    }
    out.type = type;
    out.data = merged;
    delete out.stringData;
  }
  if (bytes > kMaxConfigObjectBytes) el.tooLong(secret ? 'data' : '', `must have at most ${kMaxConfigObjectBytes} bytes`);
  if (el.errors.length > 0) return { errors: el.errors };
  return { object: out as unknown as ConfigObject };
}

/**
 * validateConfigObjectUpdate: why `next` may not replace `prev` (same kind and name): an
 * `immutable` object's data and flag never change, a Secret's `type` never changes
 * (ValidateConfigMapUpdate / ValidateSecretUpdate). Empty when it may.
 */
export function validateConfigObjectUpdate(next: ConfigObject, prev: ConfigObject): FieldError[] {
  if (next.kind === 'PersistentVolumeClaim' || prev.kind === 'PersistentVolumeClaim') {
    return next.kind === prev.kind
      ? validatePvcUpdate(next as PersistentVolumeClaim, prev as PersistentVolumeClaim)
      : [{ field: 'kind', type: 'Invalid value', value: next.kind, detail: 'field is immutable' }];
  }
  const errors: FieldError[] = [];
  if (next.kind === 'Secret' && prev.kind === 'Secret' && (next.type ?? 'Opaque') !== (prev.type ?? 'Opaque')) {
    errors.push({ field: 'type', type: 'Invalid value', value: next.type, detail: 'field is immutable' });
  }
  if (prev.immutable === true) {
    if (next.immutable !== true)
      errors.push({ field: 'immutable', type: 'Forbidden', detail: 'field is immutable when `immutable` is set' });
    const same = (a: unknown, b: unknown) => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
    if (!same(next.data, prev.data))
      errors.push({ field: 'data', type: 'Forbidden', detail: 'field is immutable when `immutable` is set' });
    if (next.kind === 'ConfigMap' && prev.kind === 'ConfigMap' && !same(next.binaryData, prev.binaryData)) {
      errors.push({ field: 'binaryData', type: 'Forbidden', detail: 'field is immutable when `immutable` is set' });
    }
  }
  return errors;
}

function sortKeys(o: unknown): unknown {
  if (!isObj(o)) return o ?? {};
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** PodObjectRefs: the names of the ConfigMaps, Secrets and PersistentVolumeClaims one pod references (in its own namespace). */
export interface PodObjectRefs {
  namespace: string;
  configMaps: string[];
  secrets: string[];
  /** `volumes[].persistentVolumeClaim.claimName` (the volume manager's desired state of world). */
  claims: string[];
}

/**
 * podObjectRefs walks a pod for the ConfigMaps and Secrets it references — as the kubelet's
 * configmap/secret managers' RegisterPod (pkg/kubelet/configmap, pkg/kubelet/secret with
 * podutil.VisitPodConfigmapNames / VisitPodSecretNames): `volumes[].configMap.name`,
 * `volumes[].secret.secretName`, `volumes[].projected.sources[].configMap/secret.name`, every
 * container's (init and regular) `envFrom[].configMapRef/secretRef.name` and
 * `env[].valueFrom.configMapKeyRef/secretKeyRef.name`, and `imagePullSecrets[].name`. Each name
 * once, in first-seen order. Pure; tolerates any shape (a name that is not a string is skipped).
 */
export function podObjectRefs(pod: Pod): PodObjectRefs {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  const claims = new Set<string>();
  const add = (set: Set<string>, name: unknown) => {
    if (typeof name === 'string' && name !== '') set.add(name);
  };
  const spec = pod.spec;
  for (const v of asList(spec?.volumes)) {
    add(configMaps, v?.configMap?.name);
    add(secrets, v?.secret?.secretName);
    add(claims, v?.persistentVolumeClaim?.claimName);
    for (const s of asList(v?.projected?.sources)) {
      add(configMaps, s?.configMap?.name);
      add(secrets, s?.secret?.name);
    }
  }
  for (const c of [...asList(spec?.initContainers), ...asList(spec?.containers)]) {
    for (const f of asList(c?.envFrom)) {
      add(configMaps, f?.configMapRef?.name);
      add(secrets, f?.secretRef?.name);
    }
    for (const e of asList(c?.env)) {
      add(configMaps, e?.valueFrom?.configMapKeyRef?.name);
      add(secrets, e?.valueFrom?.secretKeyRef?.name);
    }
  }
  for (const s of asList(spec?.imagePullSecrets)) add(secrets, s?.name);
  return { namespace: pod.metadata?.namespace || 'default', configMaps: [...configMaps], secrets: [...secrets], claims: [...claims] };
}

function asList<T>(v: T[] | undefined | null): T[] {
  return Array.isArray(v) ? v : [];
}

/** podObjectKeys: {@link configObjectKey} of every object {@link podObjectRefs} finds in `pod`. */
export function podObjectKeys(pod: Pod): string[] {
  const refs = podObjectRefs(pod);
  return [
    ...refs.configMaps.map((n) => configObjectKey('ConfigMap', refs.namespace, n)),
    ...refs.secrets.map((n) => configObjectKey('Secret', refs.namespace, n)),
    ...refs.claims.map((n) => configObjectKey('PersistentVolumeClaim', refs.namespace, n)),
  ];
}

/** kLastAppliedAnnotation: where `kubectl apply` keeps the whole object it applied (corev1.LastAppliedConfigAnnotation). */
export const kLastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * redactLastApplied: the `kubectl apply` annotation of a Secret without its values: the applied
 * object's `data` and `stringData` keep their keys, each value replaced by `""` (valid base64, so
 * a client that decodes it still can; kubectl's three-way merge still sees which keys the last
 * apply set, so a key dropped from the file is still deleted). Anything that does not parse as a
 * JSON object is dropped (undefined): it is never passed on. Pure.
 */
export function redactLastApplied(text: string): string | undefined {
  let applied: unknown;
  try {
    applied = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObj(applied)) return undefined;
  const out: Obj = { ...applied };
  for (const field of ['data', 'stringData']) {
    const m = out[field];
    if (m === undefined) continue;
    out[field] = isObj(m) ? Object.fromEntries(Object.keys(m).map((k) => [k, ''])) : {};
  }
  return `${JSON.stringify(out)}${text.endsWith('\n') ? '\n' : ''}`;
}

/**
 * withoutAppliedValues: a Secret with the values of its `kubectl.kubernetes.io/last-applied-configuration`
 * annotation blanked ({@link redactLastApplied}; an annotation that is no JSON object dropped); any
 * other object as it is. The Kubernetes API stores a Secret so (server/kube-api/config-objects.ts),
 * so that nothing can read a value back through the annotation (a JSON patch `copy` or `test` of
 * it). Pure.
 */
export function withoutAppliedValues(o: ConfigObject): ConfigObject {
  const annotations = o.metadata?.annotations;
  if (o.kind !== 'Secret' || !annotations || !Object.hasOwn(annotations, kLastAppliedAnnotation)) return o;
  const { [kLastAppliedAnnotation]: applied, ...rest } = annotations;
  const redacted = redactLastApplied(applied);
  return {
    ...o,
    metadata: { ...o.metadata, annotations: redacted === undefined ? rest : { ...rest, [kLastAppliedAnnotation]: redacted } },
  };
}

/**
 * redactConfigObject: an object as the API answers with it: a ConfigMap whole; a Secret without
 * its `data` (its keys listed in the `kubelet-ts/secret-keys` annotation instead) and with the
 * values of its `kubectl.kubernetes.io/last-applied-configuration` annotation blanked
 * ({@link redactLastApplied}), so that no Secret value leaves the agent in a reply, a watch event
 * or a log (issue #12: Secrets never in plain text outside the container). Pure.
 */
export function redactConfigObject(o: ConfigObject): ConfigObject {
  if (o.kind !== 'Secret') return o;
  const { data, ...rest } = withoutAppliedValues(o);
  const keys = Object.keys(data ?? {})
    .sort()
    .join(',');
  return { ...rest, metadata: { ...rest.metadata, annotations: { ...rest.metadata?.annotations, 'kubelet-ts/secret-keys': keys } } };
}
