/**
 * Pod Security Admission of one pod, as upstream's admission controller decides it
 * (staging/src/k8s.io/pod-security-admission/admission/admission.go EvaluatePod): exempt
 * requesters pass unchecked; the namespace's `enforce` level refuses (`violates PodSecurity
 * "baseline:latest": …`), `warn` adds a warning (`would violate PodSecurity …`) unless it would
 * repeat the enforce refusal, and `audit` records a line (upstream: an audit annotation; this node
 * has no audit log, so the caller logs it). An update that changes neither the spec nor the
 * security annotations is not evaluated again (isSignificantPodUpdate: relabelling a pod admitted
 * before the namespace got stricter is allowed). Pure.
 */
import { evaluatePod, forbiddenReasons, levelVersionString, policyToEvaluate, type LevelVersion, type NamespacePolicy } from './policy.js';
import { obj } from './visit.js';

/** kDefaultPolicy: this node's default for a namespace without labels: baseline:latest for enforce, warn and audit. */
export const kDefaultPolicy: NamespacePolicy = Object.freeze({
  enforce: Object.freeze({ level: 'baseline', version: 'latest', minor: Number.POSITIVE_INFINITY }),
  warn: Object.freeze({ level: 'baseline', version: 'latest', minor: Number.POSITIVE_INFINITY }),
  audit: Object.freeze({ level: 'baseline', version: 'latest', minor: Number.POSITIVE_INFINITY }),
}) as NamespacePolicy;

/** PodAdmissionRequest: the pod (untyped JSON, defaulted), its namespace's labels, and for an update the pod it replaces. */
export interface PodAdmissionRequest {
  pod: unknown;
  namespace: string;
  namespaceLabels?: Readonly<Record<string, string>>;
  oldPod?: unknown;
  /** The requester is exempt (a member of system:masters): nothing is evaluated. */
  exempt: boolean;
  /** The policy of a namespace without labels (default {@link kDefaultPolicy}). */
  defaults?: NamespacePolicy;
}

/**
 * PodAdmissionResult: `denied` is the enforce refusal's message (without the `pods "x" is
 * forbidden: ` head); `warnings` the texts of Warning headers; `audit` the audit line's message.
 */
export interface PodAdmissionResult {
  denied?: string;
  warnings: string[];
  audit?: string;
}

const kSecurityAnnotationPrefixes = [
  'seccomp.security.alpha.kubernetes.io/',
  'container.seccomp.security.alpha.kubernetes.io/',
  'container.apparmor.security.beta.kubernetes.io/',
];

function securityAnnotations(pod: unknown): string {
  const a = obj(obj(obj(pod)?.metadata)?.annotations) ?? {};
  return JSON.stringify(
    Object.entries(a)
      .filter(([k]) => kSecurityAnnotationPrefixes.some((p) => k.startsWith(p)))
      .sort(([x], [y]) => (x < y ? -1 : 1)),
  );
}

/** significantUpdate: the spec or a security annotation changed (a key-order change counts: that only errs towards checking). */
function significantUpdate(pod: unknown, oldPod: unknown): boolean {
  return JSON.stringify(obj(pod)?.spec) !== JSON.stringify(obj(oldPod)?.spec) || securityAnnotations(pod) !== securityAnnotations(oldPod);
}

/** admitPod: see the module comment. Never throws. */
export function admitPod(req: PodAdmissionRequest): PodAdmissionResult {
  if (req.exempt) return { warnings: [] };
  if (req.oldPod !== undefined && !significantUpdate(req.pod, req.oldPod)) return { warnings: [] };
  const { policy, errors } = policyToEvaluate(req.namespaceLabels, req.defaults ?? kDefaultPolicy);
  const warnings: string[] =
    errors.length > 0
      ? [
          `namespace ${JSON.stringify(req.namespace)} has invalid PodSecurity labels (${errors.map((e) => `${e.field}: Invalid value: ${JSON.stringify(e.value)}: ${e.message}`).join('; ')}); evaluating enforce=${levelVersionString(policy.enforce)}`,
        ]
      : [];
  const cache = new Map<string, string>();
  const reasons = (lv: LevelVersion): string => {
    const key = levelVersionString(lv);
    let r = cache.get(key);
    if (r === undefined) cache.set(key, (r = forbiddenReasons(evaluatePod(lv, req.pod))));
    return r;
  };
  const enforced = reasons(policy.enforce);
  const result: PodAdmissionResult = { warnings };
  if (enforced !== '') result.denied = `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${enforced}`;
  const sameAsEnforce = levelVersionString(policy.warn) === levelVersionString(policy.enforce);
  if (policy.warn.level !== 'privileged' && !(result.denied && sameAsEnforce)) {
    const warned = reasons(policy.warn);
    if (warned !== '') warnings.push(`would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${warned}`);
  }
  if (policy.audit.level !== 'privileged') {
    const audited = reasons(policy.audit);
    if (audited !== '') result.audit = `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${audited}`;
  }
  return result;
}
