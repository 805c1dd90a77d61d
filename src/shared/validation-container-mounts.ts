// Counterpart of pkg/apis/core/validation/validation.go ValidateVolumeMounts / validateMountPropagation.
/**
 * The checks of a container's `volumeMounts` (validation-container.ts calls them): the volume
 * named, unique absolute mount paths, subPath/subPathExpr, mount propagation. Pure functions over
 * decoded JSON, safe in any thread.
 */
import { child, ErrorList, index, isAbsolutePath } from './validation-util.js';
import type { PodContext } from './validation-container.js';

/**
 * VolumeMount fields kubelet-ts implements (recursiveReadOnly is not). `mountPropagation`
 * maps to Docker's bind propagation as dockershim did: None → Docker's default (rprivate),
 * HostToContainer → `rslave`, Bidirectional → `rshared` (privileged containers only).
 */
export const kSupportedVolumeMountFields: readonly string[] = [
  'name',
  'mountPath',
  'readOnly',
  'subPath',
  'subPathExpr',
  'mountPropagation',
];
/** The core/v1 MountPropagationMode values. */
export const kMountPropagationModes: readonly string[] = ['None', 'HostToContainer', 'Bidirectional'];
/**
 * validateVolumeMounts checks a container's `volumeMounts` at `path` (ValidateVolumeMounts): each
 * names a volume of the pod (`ctx.volumeNames`); Bidirectional propagation only when `privileged`.
 */
export function validateVolumeMounts(el: ErrorList, path: string, v: unknown, ctx: PodContext, privileged: boolean): void {
  const mounts = el.list(path, v);
  if (!mounts) return;
  const paths = new Set<string>();
  mounts.forEach((raw, i) => {
    const p = index(path, i);
    const m = el.obj(p, raw);
    if (!m) return;
    el.checkFields(p, m, kSupportedVolumeMountFields);
    const namePath = child(p, 'name');
    const name = el.str(namePath, m.name);
    if (!name) el.required(namePath);
    else if (!ctx.volumeNames.has(name)) el.notFound(namePath, name);
    const mpPath = child(p, 'mountPath');
    const mp = el.str(mpPath, m.mountPath);
    if (!mp) el.required(mpPath);
    else {
      if (!isAbsolutePath(mp)) el.invalid(mpPath, mp, 'must be an absolute path');
      if (paths.has(mp)) el.invalid(mpPath, mp, 'must be unique');
      paths.add(mp);
    }
    el.bool(child(p, 'readOnly'), m.readOnly);
    // As ValidateVolumeMounts: subPath and subPathExpr are local descending paths, and exclusive.
    const sp = el.str(child(p, 'subPath'), m.subPath);
    const spe = el.str(child(p, 'subPathExpr'), m.subPathExpr);
    if (sp && spe) el.invalid(child(p, 'subPathExpr'), spe, 'subPathExpr and subPath are mutually exclusive');
    if (sp) validateSubPath(el, child(p, 'subPath'), sp);
    if (spe) validateSubPath(el, child(p, 'subPathExpr'), spe);
    // validateMountPropagation: a known mode; Bidirectional only for a privileged container.
    const mpropPath = child(p, 'mountPropagation');
    const mprop = el.str(mpropPath, m.mountPropagation);
    if (mprop !== undefined && mprop !== '') {
      if (!kMountPropagationModes.includes(mprop)) el.unsupported(mpropPath, mprop, kMountPropagationModes);
      else if (mprop === 'Bidirectional' && !privileged)
        el.forbidden(mpropPath, 'Bidirectional mount propagation is available only to privileged containers');
    }
  });
}

/** A subPath or subPathExpr: relative, no `..` component (validateLocalDescendingPath). */
function validateSubPath(el: ErrorList, field: string, p: string): void {
  if (isAbsolutePath(p)) el.invalid(field, p, 'must be a relative path');
  if (p.split('/').includes('..')) el.invalid(field, p, "must not contain '..'");
  else if (p.startsWith('..')) el.invalid(field, p, "must not start with '..'");
}
