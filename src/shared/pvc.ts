// Counterpart of pkg/apis/core/validation (ValidatePersistentVolumeClaim, ValidatePersistentVolumeClaimSpec, ValidatePersistentVolumeClaimUpdate) and of the local-path provisioners' binding (rancher/local-path-provisioner, k3s).
/**
 * PersistentVolumeClaims on a lone node: a claim of storage class `local-path` (or none) is a
 * directory under the root dir, bound at once (no PersistentVolume object is served: the claim is
 * the whole API of it). Pure functions, safe in any thread.
 *
 * What is checked (ValidatePersistentVolumeClaimSpec):
 * - `spec.accessModes` required, each one of ReadWriteOnce, ReadOnlyMany, ReadWriteMany,
 *   ReadWriteOncePod, and ReadWriteOncePod alone;
 * - `spec.resources.requests.storage` required, a quantity greater than zero;
 * - `spec.volumeMode` Filesystem (Block: refused, a directory is no block device);
 * - `spec.storageClassName` `local-path` or `""` (refused by name otherwise: no other provisioner);
 * - `spec.selector`, `spec.volumeName`, `spec.dataSource`, `spec.dataSourceRef`: not supported.
 * On update (ValidatePersistentVolumeClaimUpdate): the spec is immutable but for a larger
 * `resources.requests.storage` (an expansion; a smaller one is refused).
 *
 * normalizePvc sets what the binding sets upstream: `status.phase: Bound`, `status.capacity` the
 * request, `status.accessModes` those asked, the `kubernetes.io/pvc-protection` finalizer (the
 * StorageObjectInUseProtection admission plugin), `spec.volumeMode: Filesystem` and the default
 * storage class `local-path` when none is named (DefaultStorageClass admission).
 */
import type * as v1 from 'kubernetes-types/core/v1.js';
import type { FieldError } from './errors.js';
import { parseQuantity } from './quantity.js';
import { child, ErrorList, index, isObj, type Obj } from './validation-util.js';

/** PersistentVolumeClaim: the v1 object as kept by the object store. */
export type PersistentVolumeClaim = v1.PersistentVolumeClaim & {
  kind: 'PersistentVolumeClaim';
  /** Never set: lets code read `data` of any store object. */ data?: undefined;
};

/** kLocalPathClass: the one storage class served (k3s's and the local-path provisioner's default). */
export const kLocalPathClass = 'local-path';
/** kPvcProtectionFinalizer: the finalizer that keeps a claim while a pod uses it (pkg/volume/util: PVCProtectionFinalizer). */
export const kPvcProtectionFinalizer = 'kubernetes.io/pvc-protection';
/** kAccessModes: core/v1 PersistentVolumeAccessMode values. */
export const kAccessModes = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const;

const kSpecFields = [
  'accessModes',
  'resources',
  'storageClassName',
  'volumeMode',
  'selector',
  'volumeName',
  'dataSource',
  'dataSourceRef',
  'volumeAttributesClassName',
];

/**
 * validatePvcSpec: the errors of a claim's `spec` (paths `spec.…`), as
 * ValidatePersistentVolumeClaimSpec with this node's limits. Never throws.
 */
export function validatePvcSpec(el: ErrorList, raw: unknown): void {
  const spec = el.obj('spec', raw);
  if (!spec) {
    el.required('spec.accessModes', 'at least 1 access mode is required');
    el.required(index('spec.resources', 'storage'));
    return;
  }
  el.checkFields('spec', spec, kSpecFields);
  for (const f of ['selector', 'volumeName', 'dataSource', 'dataSourceRef', 'volumeAttributesClassName']) {
    if (spec[f] !== undefined && spec[f] !== null && spec[f] !== '')
      el.notSupported(
        child('spec', f),
        'a claim is bound to a new local-path directory of this node; no existing volume or data source is served',
      );
  }
  const modes = el.strList('spec.accessModes', spec.accessModes);
  if (!modes || modes.length === 0) el.required('spec.accessModes', 'at least 1 access mode is required');
  else {
    modes.forEach((m, i) => {
      if (!(kAccessModes as readonly string[]).includes(m)) el.unsupported(index('spec.accessModes', i), m, kAccessModes);
    });
    if (modes.includes('ReadWriteOncePod') && modes.length > 1)
      el.forbidden('spec.accessModes', 'may not use ReadWriteOncePod with other access modes');
  }
  const requests = isObj(spec.resources) ? el.obj('spec.resources.requests', (spec.resources as Obj).requests) : undefined;
  const storage = requests?.storage;
  const storagePath = index('spec.resources', 'storage');
  if (storage === undefined || storage === null) el.required(storagePath);
  else if (typeof storage !== 'string' && typeof storage !== 'number') el.invalid(storagePath, storage, 'must be a quantity');
  else {
    try {
      if (parseQuantity(storage, storagePath) <= 0) el.invalid(storagePath, storage, 'must be greater than zero');
    } catch (err) {
      el.invalid(storagePath, storage, (err as Error).message);
    }
  }
  const mode = spec.volumeMode;
  if (mode !== undefined && mode !== null && mode !== 'Filesystem') {
    if (mode === 'Block') el.notSupported('spec.volumeMode', 'a local-path claim is a directory: only Filesystem');
    else el.unsupported('spec.volumeMode', mode, ['Block', 'Filesystem']);
  }
  const cls = spec.storageClassName;
  if (cls !== undefined && cls !== null && cls !== '' && cls !== kLocalPathClass) {
    el.unsupported('spec.storageClassName', cls, [kLocalPathClass, '']);
  }
}

/**
 * normalizePvc: the checked claim `raw` (metadata already checked by the caller) with what its
 * binding sets: storage class `local-path` when absent, volumeMode Filesystem, the pvc-protection
 * finalizer, and `status` Bound with the request as capacity. Errors are pushed to `el`; the
 * result is meaningful only when `el` stayed empty.
 */
export function normalizePvc(el: ErrorList, raw: Obj): Obj {
  validatePvcSpec(el, raw.spec);
  if (!isObj(raw.spec)) return raw;
  const spec = raw.spec as v1.PersistentVolumeClaimSpec;
  const meta = (isObj(raw.metadata) ? raw.metadata : {}) as Obj;
  const finalizers = Array.isArray(meta.finalizers) ? (meta.finalizers as string[]) : [];
  return {
    ...raw,
    metadata: { ...meta, finalizers: finalizers.includes(kPvcProtectionFinalizer) ? finalizers : [...finalizers, kPvcProtectionFinalizer] },
    spec: { ...spec, storageClassName: spec.storageClassName ?? kLocalPathClass, volumeMode: 'Filesystem' },
    status: { phase: 'Bound', accessModes: [...(spec.accessModes ?? [])], capacity: { storage: spec.resources?.requests?.storage } },
  };
}

/**
 * validatePvcUpdate: why `next` may not replace `prev` (ValidatePersistentVolumeClaimUpdate): the
 * spec is immutable but for `resources.requests.storage`, which may only grow. Empty when it may.
 */
export function validatePvcUpdate(next: PersistentVolumeClaim, prev: PersistentVolumeClaim): FieldError[] {
  const errors: FieldError[] = [];
  const strip = (s: v1.PersistentVolumeClaimSpec | undefined) => JSON.stringify({ ...s, resources: undefined });
  if (strip(next.spec) !== strip(prev.spec)) {
    errors.push({
      field: 'spec',
      type: 'Forbidden',
      detail: 'spec is immutable after creation except resources.requests for bound claims',
    });
  }
  const size = (c: PersistentVolumeClaim) => parseQuantity(c.spec?.resources?.requests?.storage ?? 0, 'spec.resources.requests.storage');
  if (size(next) < size(prev)) {
    errors.push({
      field: index('spec.resources.requests', 'storage'),
      type: 'Forbidden',
      value: next.spec?.resources?.requests?.storage,
      detail: 'field can not be less than status.capacity',
    });
  }
  return errors;
}

/** kLocalPathDirName: the directory under --root-dir that holds the claims' directories. */
export const kLocalPathDirName = 'local-path';

/**
 * claimDir: the claim's directory, `{rootDir}/local-path/pvc-{uid}_{namespace}_{name}`, as the
 * local-path provisioner names its folders (a new claim of an old name gets a new directory).
 * @throws Error when the claim has no uid or a part is no safe path segment (a tampered file). Pure.
 */
export function claimDir(rootDir: string, claim: PersistentVolumeClaim): string {
  const uid = claim.metadata?.uid ?? '';
  const base = `pvc-${uid}_${claim.metadata?.namespace ?? 'default'}_${claim.metadata?.name ?? ''}`;
  if (!/^[0-9a-f-]{8,64}$/i.test(uid) || base.includes('/') || base.includes('\0') || base.includes('..')) {
    throw new Error(`persistentvolumeclaim ${JSON.stringify(claim.metadata?.name)} has no usable uid for its directory`);
  }
  return `${rootDir.replace(/\/+$/, '')}/${kLocalPathDirName}/${base}`;
}

/** usesClaims: false for a pod that no longer uses its claims (phase Succeeded or Failed), as the pvc-protection controller's podIsShutDown. */
export function usesClaims(pod: { status?: { phase?: string } }): boolean {
  return pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}
