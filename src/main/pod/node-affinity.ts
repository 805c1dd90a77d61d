/**
 * Counterpart of k8s.io/component-helpers/scheduling/corev1/nodeaffinity (GetRequiredNodeAffinity,
 * RequiredNodeAffinity.Match, NodeSelectorTerms.Match) as the kubelet's predicate admit handler
 * uses it (pkg/kubelet/lifecycle/predicate.go → scheduler.AdmissionCheck → NodeAffinity): does this
 * node satisfy a pod's `nodeSelector` and `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`?
 * Preferred node affinity, pod (anti-)affinity and topology spread constraints only steer a
 * scheduler and are not looked at. Pure functions; main thread.
 */
import type { Pod } from '../../shared/api.js';

/** The node as the matcher sees it: its name (for matchFields `metadata.name`) and its labels. */
export interface NodeIdentity {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** A NodeSelectorRequirement as core/v1 has it (decoded JSON: fields may be missing). */
interface Requirement {
  key?: string;
  operator?: string;
  values?: string[];
}

/** A NodeSelectorTerm as core/v1 has it. */
interface Term {
  matchExpressions?: Requirement[];
  matchFields?: Requirement[];
}

/** kErrReasonPod: nodeaffinity.ErrReasonPod, the predicate's description. */
export const kErrReasonPod = "node(s) didn't match Pod's node affinity/selector";
/** kNodeAffinityReason: the pod status reason of a pod the node affinity predicate rejected. */
export const kNodeAffinityReason = 'NodeAffinity';
/** kNodeAffinityMessage: the pod status message, as PredicateFailureError.Error() words it. */
export const kNodeAffinityMessage = `Predicate ${kNodeAffinityReason} failed: ${kErrReasonPod}`;

/** parseInt64: a label value or requirement value as an integer for Gt/Lt (strconv.ParseInt); null when it is not one. */
function parseInt64(s: string): bigint | null {
  if (!/^[+-]?\d+$/.test(s)) return null;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : null;
}

/**
 * requirementMatches: one matchExpressions entry against `labels`, as labels.Requirement.Matches:
 * In (present with one of the values), NotIn (absent, or present with none of them), Exists,
 * DoesNotExist, Gt / Lt (present, both integers, label greater / less than the one value). An
 * unknown operator or a malformed Gt/Lt value matches nothing (the upstream conversion fails and
 * the term is skipped).
 */
export function requirementMatches(r: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const key = r.key ?? '';
  const values = r.values ?? [];
  const has = Object.prototype.hasOwnProperty.call(labels, key);
  const v = has ? labels[key] : undefined;
  switch (r.operator) {
    case 'In':
      return has && values.includes(v!);
    case 'NotIn':
      return !has || !values.includes(v!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1) return false;
      const want = parseInt64(values[0]);
      const got = parseInt64(v!);
      if (want === null || got === null) return false;
      return r.operator === 'Gt' ? got > want : got < want;
    }
    default:
      return false;
  }
}

/** fieldRequirementMatches: one matchFields entry; only `metadata.name` with In / NotIn is a node field. */
function fieldRequirementMatches(r: Requirement, node: NodeIdentity): boolean {
  if (r.key !== 'metadata.name') return false;
  return requirementMatches(r, { 'metadata.name': node.name });
}

/**
 * termMatches: a NodeSelectorTerm matches when every matchExpressions and every matchFields entry
 * does; a term with neither matches nothing (NodeSelectorTerms.Match).
 */
export function termMatches(term: Term, node: NodeIdentity): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return exprs.every((r) => requirementMatches(r, node.labels)) && fields.every((r) => fieldRequirementMatches(r, node));
}

/**
 * podMatchesNodeAffinity: the pod's `spec.nodeSelector` (every key equal) and its required node
 * affinity terms (any one term, ORed) both hold for `node`, as RequiredNodeAffinity.Match. A pod
 * with neither matches every node. Never throws.
 */
export function podMatchesNodeAffinity(pod: Pod, node: NodeIdentity): boolean {
  const selector = (pod.spec?.nodeSelector ?? {}) as Record<string, string>;
  for (const [k, v] of Object.entries(selector)) {
    if (!Object.prototype.hasOwnProperty.call(node.labels, k) || node.labels[k] !== v) return false;
  }
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  const terms = (required.nodeSelectorTerms ?? []) as Term[];
  return terms.some((t) => termMatches(t, node));
}
