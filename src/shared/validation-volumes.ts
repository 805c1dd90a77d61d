// Counterpart of pkg/apis/core/validation/validation.go ValidateVolumes (validateVolumeSource and the emptyDir, hostPath, configMap, secret, downwardAPI and projected sources).
/**
 * validateVolumes: the shape of `spec.volumes` as the apiserver checks it, for the volume sources
 * kubelet-ts runs (projected `serviceAccountToken`: tokens the node signs); other sources (and projected
 * `clusterTrustBundle`, `podCertificate`) are `Not supported` with the reason. Pure; safe in any thread.
 */
import { kAllVolumeSourceFields } from './defaults.js';
import { dns1123LabelErrors, dns1123SubdomainErrors } from './names.js';
import { parseQuantity, quantityError } from './quantity.js';
import { child, ErrorList, hasBacksteps, index, isAbsolutePath, type Obj } from './validation-util.js';

/** Volume fields kubelet-ts implements: exactly one source of emptyDir, hostPath, configMap, secret, downwardAPI, projected, persistentVolumeClaim (a local-path claim: shared/pvc.ts). */
export const kSupportedVolumeFields: readonly string[] = [
  'name',
  'emptyDir',
  'hostPath',
  'configMap',
  'secret',
  'downwardAPI',
  'projected',
  'persistentVolumeClaim',
];
/** Projected volume sources kubelet-ts runs. */
export const kSupportedProjectionFields: readonly string[] = ['configMap', 'secret', 'downwardAPI', 'serviceAccountToken'];
/** The fieldPaths a downwardAPI volume file may name (validVolumeDownwardAPIFieldPathExpressions). */
export const kVolumeDownwardAPIFieldPaths: readonly string[] = [
  'metadata.name',
  'metadata.namespace',
  'metadata.labels',
  'metadata.annotations',
  'metadata.uid',
];
/** The resources a downwardAPI volume's resourceFieldRef may name (validContainerResourceFieldPathExpressions). */
export const kVolumeDownwardAPIResources: readonly string[] = [
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
];

const kHostPathTypes = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'];
const kEmptyDirMedia = ['', 'Memory'];
const kMaxMode = 0o777;
const kNoApiserver = 'there is no apiserver on a lone node to sign or issue it';

/** validateLocalDescendingPath, as upstream: relative, no `..` component, not starting with `..`. */
export function validateLocalDescendingPath(el: ErrorList, field: string, p: string): void {
  if (isAbsolutePath(p)) el.invalid(field, p, 'must be a relative path');
  if (hasBacksteps(p)) el.invalid(field, p, "must not contain '..'");
  else if (p.startsWith('..')) el.invalid(field, p, "must not start with '..'");
}

function validateMode(el: ErrorList, field: string, v: unknown): void {
  const n = el.int(field, v, 'int32');
  if (n !== undefined && (n < 0 || n > kMaxMode)) el.invalid(field, n, 'must be a number between 0 and 0777 (octal), both inclusive');
}

/** Items (KeyToPath) of a configMap or secret source; `paths` collects the projected paths. */
function validateKeyToPaths(el: ErrorList, path: string, v: unknown, paths: Set<string>): void {
  el.list(path, v)?.forEach((raw, i) => {
    const p = index(path, i);
    const it = el.obj(p, raw);
    if (!it) return;
    el.checkFields(p, it, ['key', 'path', 'mode']);
    if (!el.str(child(p, 'key'), it.key)) el.required(child(p, 'key'));
    validateItemPath(el, child(p, 'path'), it.path, paths);
    validateMode(el, child(p, 'mode'), it.mode);
  });
}

/** validateItemPath: an item's `path` is required, a local descending path, and unique within the volume (`paths`, shared by a projected volume's sources). */
function validateItemPath(el: ErrorList, pp: string, v: unknown, paths: Set<string>): void {
  const rel = el.str(pp, v);
  if (!rel) return el.required(pp);
  validateLocalDescendingPath(el, pp, rel);
  if (paths.has(rel)) el.invalid(pp, rel, 'conflicting duplicate paths');
  paths.add(rel);
}

function validateObjectRefSource(el: ErrorList, path: string, src: Obj, nameField: string, extra: string[], paths: Set<string>): void {
  el.checkFields(path, src, [nameField, 'items', 'optional', ...extra]);
  const np = child(path, nameField);
  const name = el.str(np, src[nameField]);
  if (!name) el.required(np);
  else for (const m of dns1123SubdomainErrors(name)) el.invalid(np, name, m);
  el.bool(child(path, 'optional'), src.optional);
  validateKeyToPaths(el, child(path, 'items'), src.items, paths);
  if (extra.includes('defaultMode')) validateMode(el, child(path, 'defaultMode'), src.defaultMode);
}

function validateDownwardAPIItems(el: ErrorList, path: string, v: unknown, paths: Set<string>): void {
  el.list(path, v)?.forEach((raw, i) => {
    const p = index(path, i);
    const it = el.obj(p, raw);
    if (!it) return;
    el.checkFields(p, it, ['path', 'fieldRef', 'resourceFieldRef', 'mode']);
    validateItemPath(el, child(p, 'path'), it.path, paths);
    validateMode(el, child(p, 'mode'), it.mode);
    const fr = el.obj(child(p, 'fieldRef'), it.fieldRef);
    const rr = el.obj(child(p, 'resourceFieldRef'), it.resourceFieldRef);
    if (fr && rr) el.invalid(p, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously');
    if (!fr && !rr) el.required(p, 'one of fieldRef and resourceFieldRef is required');
    if (fr) {
      const fp = child(p, 'fieldRef');
      el.checkFields(fp, fr, ['apiVersion', 'fieldPath']);
      const fieldPath = el.str(child(fp, 'fieldPath'), fr.fieldPath);
      if (!fieldPath) el.required(child(fp, 'fieldPath'));
      else if (!kVolumeDownwardAPIFieldPaths.includes(fieldPath) && !/^metadata\.(labels|annotations)\['.+'\]$/.test(fieldPath)) {
        el.unsupported(child(fp, 'fieldPath'), fieldPath, kVolumeDownwardAPIFieldPaths);
      }
    }
    if (rr) {
      const rp = child(p, 'resourceFieldRef');
      el.checkFields(rp, rr, ['containerName', 'resource', 'divisor']);
      if (!el.str(child(rp, 'containerName'), rr.containerName)) el.required(child(rp, 'containerName'));
      const res = el.str(child(rp, 'resource'), rr.resource);
      if (!res) el.required(child(rp, 'resource'));
      else if (!kVolumeDownwardAPIResources.includes(res)) el.unsupported(child(rp, 'resource'), res, kVolumeDownwardAPIResources);
      if (rr.divisor !== undefined && rr.divisor !== null) {
        const why = quantityError(rr.divisor);
        if (why) el.invalid(child(rp, 'divisor'), rr.divisor, why);
      }
    }
  });
}

function validateProjected(el: ErrorList, path: string, pr: Obj): void {
  el.checkFields(path, pr, ['sources', 'defaultMode']);
  validateMode(el, child(path, 'defaultMode'), pr.defaultMode);
  const paths = new Set<string>();
  el.list(child(path, 'sources'), pr.sources)?.forEach((raw, i) => {
    const p = index(child(path, 'sources'), i);
    const s = el.obj(p, raw);
    if (!s) return;
    for (const k of ['clusterTrustBundle', 'podCertificate']) {
      if (s[k] !== undefined && s[k] !== null) el.notSupported(child(p, k), kNoApiserver);
    }
    el.checkFields(p, s, [...kSupportedProjectionFields, 'clusterTrustBundle', 'podCertificate']);
    const set = Object.keys(s).filter((k) => s[k] !== undefined && s[k] !== null);
    if (set.length > 1) el.forbidden(p, 'may not specify more than 1 volume type per source');
    const cm = el.obj(child(p, 'configMap'), s.configMap);
    if (cm) validateObjectRefSource(el, child(p, 'configMap'), cm, 'name', [], paths);
    const sec = el.obj(child(p, 'secret'), s.secret);
    if (sec) validateObjectRefSource(el, child(p, 'secret'), sec, 'name', [], paths);
    const da = el.obj(child(p, 'downwardAPI'), s.downwardAPI);
    if (da) {
      el.checkFields(child(p, 'downwardAPI'), da, ['items']);
      validateDownwardAPIItems(el, child(child(p, 'downwardAPI'), 'items'), da.items, paths);
    }
    const sat = el.obj(child(p, 'serviceAccountToken'), s.serviceAccountToken);
    if (sat) validateServiceAccountTokenProjection(el, child(p, 'serviceAccountToken'), sat, paths);
  });
}

/**
 * validateServiceAccountTokenProjection, as upstream's (pkg/apis/core/validation): `audience` a
 * string, `expirationSeconds` (seconds) at least 10 minutes and at most 2^32 seconds, `path` required.
 */
function validateServiceAccountTokenProjection(el: ErrorList, p: string, sat: Obj, paths: Set<string>): void {
  el.checkFields(p, sat, ['audience', 'expirationSeconds', 'path']);
  el.str(child(p, 'audience'), sat.audience);
  const exp = el.int(child(p, 'expirationSeconds'), sat.expirationSeconds);
  if (exp !== undefined && exp < 600) el.invalid(child(p, 'expirationSeconds'), exp, 'may not specify a duration less than 10 minutes');
  if (exp !== undefined && exp > 2 ** 32)
    el.invalid(child(p, 'expirationSeconds'), exp, 'may not specify a duration larger than 2^32 seconds');
  validateItemPath(el, child(p, 'path'), sat.path, paths);
}

/** validateVolumes checks spec.volumes (field paths under `path`); returns the set of volume names. */
export function validateVolumes(el: ErrorList, path: string, v: unknown): Set<string> {
  const names = new Set<string>();
  el.list(path, v)?.forEach((raw, i) => {
    const p = index(path, i);
    const vol = el.obj(p, raw);
    if (!vol) return;
    el.checkFields(p, vol, kSupportedVolumeFields);
    const namePath = child(p, 'name');
    const name = el.str(namePath, vol.name);
    if (!name) el.required(namePath);
    else {
      for (const m of dns1123LabelErrors(name)) el.invalid(namePath, name, m);
      if (names.has(name)) el.duplicate(namePath, name);
      names.add(name);
    }
    const sources = kAllVolumeSourceFields.filter((k) => vol[k] !== undefined && vol[k] !== null);
    if (sources.length === 0) el.required(p, 'must specify a volume type');
    for (const k of sources.slice(1)) el.forbidden(child(p, k), 'may not specify more than 1 volume type');

    const edPath = child(p, 'emptyDir');
    const ed = el.obj(edPath, vol.emptyDir);
    if (ed) {
      el.checkFields(edPath, ed, ['medium', 'sizeLimit']);
      const medium = el.str(child(edPath, 'medium'), ed.medium);
      if (medium !== undefined && !kEmptyDirMedia.includes(medium)) el.unsupported(child(edPath, 'medium'), medium, kEmptyDirMedia);
      const slPath = child(edPath, 'sizeLimit');
      if (ed.sizeLimit !== undefined && ed.sizeLimit !== null) {
        const why = quantityError(ed.sizeLimit);
        if (why) el.invalid(slPath, ed.sizeLimit, why);
        else if (parseQuantity(ed.sizeLimit as string | number, slPath) < 0)
          el.invalid(slPath, String(ed.sizeLimit), 'must be greater than or equal to 0');
      }
    }
    const hpPath = child(p, 'hostPath');
    const hp = el.obj(hpPath, vol.hostPath);
    if (hp) {
      el.checkFields(hpPath, hp, ['path', 'type']);
      const pathPath = child(hpPath, 'path');
      const hostPath = el.str(pathPath, hp.path);
      if (!hostPath) el.required(pathPath);
      else {
        if (!isAbsolutePath(hostPath)) el.invalid(pathPath, hostPath, 'must be an absolute path');
        if (hasBacksteps(hostPath)) el.invalid(pathPath, hostPath, "must not contain '..'");
      }
      const typePath = child(hpPath, 'type');
      const type = el.str(typePath, hp.type);
      if (type !== undefined && !kHostPathTypes.includes(type)) el.unsupported(typePath, type, kHostPathTypes);
    }
    const cm = el.obj(child(p, 'configMap'), vol.configMap);
    if (cm) validateObjectRefSource(el, child(p, 'configMap'), cm, 'name', ['defaultMode'], new Set());
    const sec = el.obj(child(p, 'secret'), vol.secret);
    if (sec) validateObjectRefSource(el, child(p, 'secret'), sec, 'secretName', ['defaultMode'], new Set());
    const da = el.obj(child(p, 'downwardAPI'), vol.downwardAPI);
    if (da) {
      el.checkFields(child(p, 'downwardAPI'), da, ['items', 'defaultMode']);
      validateMode(el, child(child(p, 'downwardAPI'), 'defaultMode'), da.defaultMode);
      validateDownwardAPIItems(el, child(child(p, 'downwardAPI'), 'items'), da.items, new Set());
    }
    const pvcPath = child(p, 'persistentVolumeClaim');
    const pvc = el.obj(pvcPath, vol.persistentVolumeClaim);
    if (pvc) {
      // validatePersistentClaimVolumeSource: claimName required; readOnly a boolean.
      el.checkFields(pvcPath, pvc, ['claimName', 'readOnly']);
      if (!el.str(child(pvcPath, 'claimName'), pvc.claimName)) el.required(child(pvcPath, 'claimName'));
      el.bool(child(pvcPath, 'readOnly'), pvc.readOnly);
    }
    const pr = el.obj(child(p, 'projected'), vol.projected);
    if (pr) validateProjected(el, child(p, 'projected'), pr);
  });
  return names;
}
