// Counterpart of pkg/apis/core/validation/validation.go validateAffinity / ValidateNodeSelector / validateTopologySpreadConstraints.
/**
 * PodSpec scheduling fields of {@link validatePod} (validation.ts): `nodeSelector` and
 * `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution` are validated as upstream
 * and matched against this node's labels at admission (src/main/pod/node-affinity.ts); preferred
 * node affinity, `podAffinity`, `podAntiAffinity` and `topologySpreadConstraints` only steer a
 * scheduler: accepted (their shape checked: objects and lists) and ignored on a lone node.
 * `automountServiceAccountToken` is a boolean; the node's ServiceAccount admission reads it
 * (service-account-admission.ts). Pure functions over decoded JSON, safe in any thread.
 */
import { labelValueErrors, qualifiedNameErrors } from './names.js';
import { child, ErrorList, index, type Obj } from './validation-util.js';

/** PodSpec fields this module validates (added to kSupportedPodSpecFields). */
export const kSchedulingPodSpecFields: readonly string[] = [
  'nodeSelector',
  'affinity',
  'topologySpreadConstraints',
  'automountServiceAccountToken',
];

const kOperators = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
const kFieldOperators = ['In', 'NotIn'];

/** validateSchedulingFields checks the fields of {@link kSchedulingPodSpecFields} under `path` (`spec`). */
export function validateSchedulingFields(el: ErrorList, path: string, spec: Obj): void {
  const nsPath = child(path, 'nodeSelector');
  for (const [k, v] of Object.entries(el.strMap(nsPath, spec.nodeSelector) ?? {})) {
    for (const m of qualifiedNameErrors(k)) el.invalid(nsPath, k, m);
    for (const m of labelValueErrors(v)) el.invalid(index(nsPath, k), v, m);
  }
  el.bool(child(path, 'automountServiceAccountToken'), spec.automountServiceAccountToken);
  el.list(child(path, 'topologySpreadConstraints'), spec.topologySpreadConstraints)?.forEach((c, i) =>
    el.obj(index(child(path, 'topologySpreadConstraints'), i), c),
  );

  const aPath = child(path, 'affinity');
  const affinity = el.obj(aPath, spec.affinity);
  if (!affinity) return;
  el.checkFields(aPath, affinity, ['nodeAffinity', 'podAffinity', 'podAntiAffinity']);
  el.obj(child(aPath, 'podAffinity'), affinity.podAffinity);
  el.obj(child(aPath, 'podAntiAffinity'), affinity.podAntiAffinity);
  const naPath = child(aPath, 'nodeAffinity');
  const na = el.obj(naPath, affinity.nodeAffinity);
  if (!na) return;
  el.checkFields(naPath, na, ['requiredDuringSchedulingIgnoredDuringExecution', 'preferredDuringSchedulingIgnoredDuringExecution']);
  const reqPath = child(naPath, 'requiredDuringSchedulingIgnoredDuringExecution');
  const req = el.obj(reqPath, na.requiredDuringSchedulingIgnoredDuringExecution);
  if (req) {
    el.checkFields(reqPath, req, ['nodeSelectorTerms']);
    const termsPath = child(reqPath, 'nodeSelectorTerms');
    const terms = el.list(termsPath, req.nodeSelectorTerms) ?? [];
    if (terms.length === 0) el.required(termsPath, 'must have at least one node selector term');
    terms.forEach((t, i) => validateTerm(el, index(termsPath, i), t));
  }
  const prefPath = child(naPath, 'preferredDuringSchedulingIgnoredDuringExecution');
  el.list(prefPath, na.preferredDuringSchedulingIgnoredDuringExecution)?.forEach((raw, i) => {
    const p = index(prefPath, i);
    const pref = el.obj(p, raw);
    if (!pref) return;
    el.checkFields(p, pref, ['weight', 'preference']);
    const w = el.int(child(p, 'weight'), pref.weight, 'int32');
    if (w !== undefined && (w < 1 || w > 100)) el.invalid(child(p, 'weight'), w, 'must be in the range 1-100');
    if (pref.preference !== undefined && pref.preference !== null) validateTerm(el, child(p, 'preference'), pref.preference);
  });
}

/** validateTerm: a NodeSelectorTerm (ValidateNodeSelectorTerm): its matchExpressions and matchFields. */
function validateTerm(el: ErrorList, path: string, raw: unknown): void {
  const term = el.obj(path, raw);
  if (!term) return;
  el.checkFields(path, term, ['matchExpressions', 'matchFields']);
  const mePath = child(path, 'matchExpressions');
  el.list(mePath, term.matchExpressions)?.forEach((r, i) => validateRequirement(el, index(mePath, i), r, false));
  const mfPath = child(path, 'matchFields');
  el.list(mfPath, term.matchFields)?.forEach((r, i) => validateRequirement(el, index(mfPath, i), r, true));
}

/**
 * validateRequirement: a NodeSelectorRequirement (ValidateNodeSelectorRequirement, and
 * validateNodeFieldSelectorRequirement for matchFields: key `metadata.name`, In/NotIn, one value).
 */
function validateRequirement(el: ErrorList, path: string, raw: unknown, field: boolean): void {
  const r = el.obj(path, raw);
  if (!r) return;
  el.checkFields(path, r, ['key', 'operator', 'values']);
  const keyPath = child(path, 'key');
  const key = el.str(keyPath, r.key) ?? '';
  const opPath = child(path, 'operator');
  const op = el.str(opPath, r.operator) ?? '';
  const valuesPath = child(path, 'values');
  const values = el.strList(valuesPath, r.values) ?? [];
  if (field) {
    if (key !== 'metadata.name') el.unsupported(keyPath, key, ['metadata.name']);
    if (!kFieldOperators.includes(op)) el.unsupported(opPath, op, kFieldOperators);
    else if (values.length !== 1)
      el.required(valuesPath, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector");
    return;
  }
  if (!key) el.required(keyPath);
  else for (const m of qualifiedNameErrors(key)) el.invalid(keyPath, key, m);
  switch (op) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) el.required(valuesPath, "must be specified when `operator` is 'In' or 'NotIn'");
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) el.forbidden(valuesPath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) el.required(valuesPath, "must be specified single value when `operator` is 'Lt' or 'Gt'");
      break;
    default:
      el.unsupported(opPath, op, kOperators);
  }
}
