// Counterpart of pkg/apis/core/validation/validation.go ValidateResourceRequirements (and v1helper's resource-name predicates).
/**
 * The checks of a container's `resources` (validation-container.ts calls them): the resource
 * names kubelet-ts implements, extended and huge-page resources, quantities, and requests within
 * limits. Pure functions over decoded JSON, safe in any thread.
 */
import { parseQuantity, quantityError } from './quantity.js';
import { qualifiedNameErrors } from './names.js';
import { child, ErrorList, index, isObj } from './validation-util.js';

/** ResourceRequirements fields kubelet-ts implements (claims is not). */
export const kSupportedResourceRequirementsFields: readonly string[] = ['limits', 'requests'];
/**
 * Resource names kubelet-ts implements in limits and requests. `ephemeral-storage` is accepted and
 * not enforced (no local-storage eviction of container writable layers). Extended resources
 * (`example.com/foo`, `nvidia.com/gpu`: {@link isExtendedResourceName}) and `hugepages-<size>` are
 * validated as upstream and then refused at admission (src/main/pod/admission.ts: `OutOf<name>`,
 * as the kubelet's predicate admit handler when no device plugin offers them).
 */
export const kSupportedResourceNames: readonly string[] = ['cpu', 'memory', 'ephemeral-storage'];

/**
 * isExtendedResourceName, as v1helper.IsExtendedResourceName: a qualified name with a domain
 * prefix outside `kubernetes.io/` (a native resource), not starting with `requests.`. Pure.
 */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/') || name.includes('kubernetes.io/') || name.startsWith('requests.')) return false;
  return qualifiedNameErrors(name).length === 0;
}

/** isHugePageResourceName, as v1helper.IsHugePageResourceName: `hugepages-<size>` (e.g. `hugepages-2Mi`). */
export function isHugePageResourceName(name: string): boolean {
  return name.startsWith('hugepages-') && quantityError(name.slice('hugepages-'.length)) === null;
}
/**
 * validateResources checks a container's `resources` at `path` (ValidateResourceRequirements): known
 * resource names with valid non-negative quantities, each request at most its limit, extended and
 * huge-page resources not overcommitted (request = limit) and whole numbers.
 */
export function validateResources(el: ErrorList, path: string, v: unknown): void {
  const r = el.obj(path, v);
  if (!r) return;
  el.checkFields(path, r, kSupportedResourceRequirementsFields);
  const parsed: Record<'limits' | 'requests', Map<string, { raw: unknown; value: number }>> = { limits: new Map(), requests: new Map() };
  for (const kind of ['limits', 'requests'] as const) {
    const kp = child(path, kind);
    const list = el.obj(kp, r[kind]);
    if (!list) continue;
    for (const [name, q] of Object.entries(list)) {
      const qp = index(kp, name);
      if (!kSupportedResourceNames.includes(name) && !isExtendedResourceName(name) && !isHugePageResourceName(name)) el.notSupported(qp);
      else if (quantityError(q)) {
        // A request defaulted from its limit (applyPodDefaults) repeats the limit's value: reported once.
        if (!(kind === 'requests' && isObj(r.limits) && r.limits[name] === q)) el.invalid(qp, q, quantityError(q)!);
      } else {
        const value = parseQuantity(q as string | number, qp);
        if (value < 0) el.invalid(qp, String(q), 'must be greater than or equal to 0');
        else parsed[kind].set(name, { raw: q, value });
      }
    }
  }
  for (const [name, req] of parsed.requests) {
    const lim = parsed.limits.get(name);
    const rp = index(child(path, 'requests'), name);
    if (isExtendedResourceName(name) || isHugePageResourceName(name)) {
      // Not overcommitable (ValidateResourceRequirements): the request must equal the limit.
      if (!lim) el.forbidden(rp, 'Limit must be set for non overcommitable resources');
      else if (req.value !== lim.value) el.invalid(rp, String(req.raw), `must be equal to ${name} limit of ${String(lim.raw)}`);
    } else if (lim && req.value > lim.value) {
      el.invalid(rp, String(req.raw), `must be less than or equal to ${name} limit of ${String(lim.raw)}`);
    }
  }
  for (const kind of ['limits', 'requests'] as const) {
    for (const [name, q] of parsed[kind]) {
      if (isExtendedResourceName(name) && !Number.isInteger(q.value))
        el.invalid(index(child(path, kind), name), String(q.raw), 'must be an integer');
    }
  }
  const hugePages = [...parsed.limits.keys()].some(isHugePageResourceName);
  if (
    hugePages &&
    !parsed.limits.has('cpu') &&
    !parsed.limits.has('memory') &&
    !parsed.requests.has('cpu') &&
    !parsed.requests.has('memory')
  ) {
    el.forbidden(path, 'HugePages require cpu or memory');
  }
}
