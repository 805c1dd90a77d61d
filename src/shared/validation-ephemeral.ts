/**
 * Counterpart of pkg/apis/core/validation/validation.go validateEphemeralContainers and
 * ValidatePodEphemeralContainersUpdate: the checks of `spec.ephemeralContainers` (what
 * `kubectl debug POD --image …` adds through `pods/{name}/ephemeralcontainers`). Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Pod } from './api.js';
import type { FieldError } from './errors.js';
import { validateContainerList, type PodContext } from './validation-container.js';
import { child, ErrorList, index, isObj, isZeroValue } from './validation-util.js';

/** kEphemeralForbiddenFields: Container fields an ephemeral container may not set (ports, probes, lifecycle, resources). */
export const kEphemeralForbiddenFields: readonly string[] = [
  'ports',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'resources',
  'resizePolicy',
];

/**
 * validateEphemeralContainers checks `spec.ephemeralContainers` (`path`) as upstream: each is a
 * valid container (validateContainerList) whose name is unique across all the pod's containers
 * (`names` holds the app and init containers' names), sets none of kEphemeralForbiddenFields
 * (`Forbidden: cannot be set for an Ephemeral Container`; an empty `resources: {}` is allowed), and
 * whose `targetContainerName`, when set, names an app or init container (`Not found`).
 */
export function validateEphemeralContainers(el: ErrorList, path: string, list: unknown[], ctx: PodContext, names: Set<string>): void {
  const targets = new Set(names);
  list.forEach((raw, i) => {
    const p = index(path, i);
    if (!isObj(raw)) {
      el.invalid(p, raw, 'must be an object');
      return;
    }
    const { targetContainerName, ...common } = raw;
    for (const f of kEphemeralForbiddenFields) {
      const v = common[f];
      const empty = isZeroValue(v) || (f === 'resources' && isObj(v) && Object.values(v).every(isZeroValue));
      if (!empty) el.forbidden(child(p, f), 'cannot be set for an Ephemeral Container');
      delete common[f];
    }
    if (targetContainerName !== undefined && targetContainerName !== null && targetContainerName !== '') {
      const tp = child(p, 'targetContainerName');
      const target = el.str(tp, targetContainerName);
      if (target !== undefined && !targets.has(target)) el.notFound(tp, target);
    }
    const at: unknown[] = [];
    at[i] = common;
    // validateContainerList visits only index i (a sparse list): the field paths keep the index.
    validateContainerList(el, path, at, false, ctx, names);
  });
}

/**
 * validateEphemeralContainersUpdate, as ValidatePodEphemeralContainersUpdate: ephemeral containers
 * may only be added; each of `oldPod`'s must stay in `newPod`, unchanged. Returns the FieldErrors
 * (`spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed`,
 * `spec.ephemeralContainers[0]: Forbidden: existing ephemeral containers "dbg" may not be changed`);
 * the new list's own checks are validatePod's.
 */
export function validateEphemeralContainersUpdate(newPod: Pod, oldPod: Pod): FieldError[] {
  const el = new ErrorList();
  const path = 'spec.ephemeralContainers';
  const next = newPod.spec?.ephemeralContainers ?? [];
  for (const old of oldPod.spec?.ephemeralContainers ?? []) {
    const i = next.findIndex((c) => c.name === old.name);
    if (i < 0) el.forbidden(path, `existing ephemeral containers ${JSON.stringify(old.name)} may not be removed`);
    else if (!isDeepStrictEqual(next[i], old))
      el.forbidden(index(path, i), `existing ephemeral containers ${JSON.stringify(old.name)} may not be changed`);
  }
  return el.errors;
}
