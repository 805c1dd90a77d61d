// Counterpart of pkg/apis/core/validation/validation.go ValidateEnv / validateEnvVarValueFrom / ValidateEnvFrom.
/**
 * The checks of a container's `env` and `envFrom` (validation-container.ts calls them): variable
 * names, the one source of a `valueFrom` (fieldRef, resourceFieldRef, configMapKeyRef,
 * secretKeyRef) and the ConfigMap/Secret references. Pure functions over decoded JSON, safe in any thread.
 */
import { parseQuantity, quantityError } from './quantity.js';
import { configKeyErrors } from './config-objects.js';
import { dns1123SubdomainErrors, envVarNameErrors, qualifiedNameErrors } from './names.js';
import { child, enumField, ErrorList, index, type Obj } from './validation-util.js';
import type { PodContext } from './validation-container.js';

/** EnvVar fields kubelet-ts implements. */
export const kSupportedEnvVarFields: readonly string[] = ['name', 'value', 'valueFrom'];
/** EnvVarSource fields kubelet-ts implements (configMapKeyRef / secretKeyRef read the node's ConfigMaps and Secrets). */
export const kSupportedEnvVarSourceFields: readonly string[] = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'];
/** `valueFrom.fieldRef.fieldPath` values kubelet-ts resolves, besides `metadata.labels['k']` and `metadata.annotations['k']`. */
export const kSupportedEnvFieldPaths: readonly string[] = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.podIP',
];
/** `valueFrom.resourceFieldRef.resource` values kubelet-ts resolves. */
export const kSupportedEnvResources: readonly string[] = ['limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory'];

const kCpuDivisors = [1e-3, 1];
const kMemoryDivisors = ['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei'];

/**
 * validateEnv checks a container's `env` list at `path` (ValidateEnv): each name a valid variable
 * name, each `valueFrom` one source the agent resolves (`ctx` names the pod's containers).
 */
export function validateEnv(el: ErrorList, path: string, v: unknown, ctx: PodContext): void {
  const env = el.list(path, v);
  if (!env) return;
  env.forEach((raw, i) => {
    const p = index(path, i);
    const e = el.obj(p, raw);
    if (!e) return;
    el.checkFields(p, e, kSupportedEnvVarFields);
    const namePath = child(p, 'name');
    const name = el.str(namePath, e.name);
    if (!name) el.required(namePath);
    else for (const m of envVarNameErrors(name)) el.invalid(namePath, name, m);
    const value = el.str(child(p, 'value'), e.value);
    const vfPath = child(p, 'valueFrom');
    const vf = el.obj(vfPath, e.valueFrom);
    if (vf) validateEnvVarSource(el, vfPath, vf, value ?? '', ctx);
  });
}

/**
 * validateObjectRef: a `{name, optional}` reference to a ConfigMap or Secret (envFrom's
 * configMapRef/secretRef; with `key`, a configMapKeyRef/secretKeyRef), as validateConfigMapEnvSource
 * and validateSecretKeySelector: the name required and a DNS-1123 subdomain, the key required and
 * a config key (IsConfigMapKey).
 */
function validateObjectRef(el: ErrorList, path: string, ref: Obj, withKey: boolean): void {
  el.checkFields(path, ref, withKey ? ['name', 'key', 'optional'] : ['name', 'optional']);
  const namePath = child(path, 'name');
  const name = el.str(namePath, ref.name);
  if (!name) el.required(namePath);
  else for (const m of dns1123SubdomainErrors(name)) el.invalid(namePath, name, m);
  el.bool(child(path, 'optional'), ref.optional);
  if (!withKey) return;
  const keyPath = child(path, 'key');
  const key = el.str(keyPath, ref.key);
  if (!key) el.required(keyPath);
  else for (const m of configKeyErrors(key)) el.invalid(keyPath, key, m);
}

/** validateEnvFrom: each envFrom source (validateEnvFrom upstream): exactly one of configMapRef/secretRef, an optional `prefix` that is a valid variable name. */
export function validateEnvFrom(el: ErrorList, path: string, v: unknown): void {
  const list = el.list(path, v);
  if (!list) return;
  list.forEach((raw, i) => {
    const p = index(path, i);
    const e = el.obj(p, raw);
    if (!e) return;
    el.checkFields(p, e, ['prefix', 'configMapRef', 'secretRef']);
    const prefixPath = child(p, 'prefix');
    const prefix = el.str(prefixPath, e.prefix);
    if (prefix) for (const m of envVarNameErrors(prefix)) el.invalid(prefixPath, prefix, m);
    const refs = ['configMapRef', 'secretRef'].filter((k) => e[k] !== undefined && e[k] !== null);
    if (refs.length === 0) el.invalid(p, '', 'must specify one of: `configMapRef` or `secretRef`');
    if (refs.length > 1) el.invalid(p, '', 'may not have more than one field specified at a time');
    for (const k of refs) {
      const ref = el.obj(child(p, k), e[k]);
      if (ref) validateObjectRef(el, child(p, k), ref, false);
    }
  });
}

function validateEnvVarSource(el: ErrorList, path: string, vf: Obj, value: string, ctx: PodContext): void {
  el.checkFields(path, vf, kSupportedEnvVarSourceFields);
  const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'].filter((k) => vf[k] !== undefined && vf[k] !== null);
  if (value !== '' && sources.length > 0) el.invalid(path, '', 'may not be specified when `value` is not empty');
  if (sources.length === 0)
    el.invalid(path, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`');
  if (sources.length > 1) el.invalid(path, '', 'may not have more than one field specified at a time');

  const frPath = child(path, 'fieldRef');
  const fr = el.obj(frPath, vf.fieldRef);
  if (fr) {
    el.checkFields(frPath, fr, ['apiVersion', 'fieldPath']);
    enumField(el, child(frPath, 'apiVersion'), fr.apiVersion, ['v1']);
    const fpPath = child(frPath, 'fieldPath');
    const fp = el.str(fpPath, fr.fieldPath);
    if (!fp) el.required(fpPath);
    else {
      const sub = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(fp);
      if (sub) {
        const key = sub[1] === 'annotations' ? sub[2].toLowerCase() : sub[2];
        for (const m of qualifiedNameErrors(key)) el.invalid(fpPath, sub[2], m);
      } else if (!kSupportedEnvFieldPaths.includes(fp)) {
        el.unsupported(fpPath, fp, [...kSupportedEnvFieldPaths, "metadata.labels['<KEY>']", "metadata.annotations['<KEY>']"]);
      }
    }
  }

  for (const k of ['configMapKeyRef', 'secretKeyRef']) {
    const ref = el.obj(child(path, k), vf[k]);
    if (ref) validateObjectRef(el, child(path, k), ref, true);
  }

  const rfPath = child(path, 'resourceFieldRef');
  const rf = el.obj(rfPath, vf.resourceFieldRef);
  if (rf) {
    el.checkFields(rfPath, rf, ['containerName', 'resource', 'divisor']);
    const cnPath = child(rfPath, 'containerName');
    const cn = el.str(cnPath, rf.containerName);
    if (cn && !ctx.containerNames.has(cn)) el.invalid(cnPath, cn, 'must be the name of a container in the pod');
    const resPath = child(rfPath, 'resource');
    const res = el.str(resPath, rf.resource);
    if (!res) el.required(resPath);
    else if (!kSupportedEnvResources.includes(res)) el.unsupported(resPath, res, kSupportedEnvResources);
    const divPath = child(rfPath, 'divisor');
    if (rf.divisor !== undefined && rf.divisor !== null && res) {
      const why = quantityError(rf.divisor);
      if (why) el.invalid(divPath, rf.divisor, why);
      else if (res.endsWith('.cpu') && !kCpuDivisors.includes(parseQuantity(rf.divisor as string))) {
        el.invalid(divPath, String(rf.divisor), "only divisor's values 1m and 1 are supported with the cpu resource");
      } else if (res.endsWith('.memory') && !kMemoryDivisors.some((d) => parseQuantity(d) === parseQuantity(rf.divisor as string))) {
        el.invalid(
          divPath,
          String(rf.divisor),
          `only divisor's values ${kMemoryDivisors.join(', ')} are supported with the memory resource`,
        );
      }
    }
  }
}
