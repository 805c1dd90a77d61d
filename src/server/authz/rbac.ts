/**
 * Counterpart of the apiserver's RBAC authorizer (plugin/pkg/auth/authorizer/rbac/rbac.go, and
 * the rule helpers of pkg/apis/rbac/v1/evaluation_helpers.go): a request is allowed when a rule of
 * a role bound to the user matches it. ClusterRoleBindings apply in every namespace and to
 * cluster-scoped and non-resource requests; a RoleBinding applies only to requests in its own
 * namespace. There is no deny rule. Pure; built once at start-up from the built-in policy and the
 * `--authorization-policy-file`.
 */
import type { Attributes } from './attributes.js';

/** PolicyRule: rbac.authorization.k8s.io/v1 PolicyRule. */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** Subject: rbac/v1 Subject (kind User, Group or ServiceAccount). */
export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  /** A ServiceAccount's namespace (defaults to the RoleBinding's). */
  namespace?: string;
}

/** RoleRef: rbac/v1 RoleRef. */
export interface RoleRef {
  kind: 'Role' | 'ClusterRole';
  name: string;
}

/** Role: a Role (namespace set) or a ClusterRole (namespace ''). */
export interface Role {
  kind: 'Role' | 'ClusterRole';
  name: string;
  namespace: string;
  labels: Record<string, string>;
  rules: PolicyRule[];
  /** A ClusterRole's aggregationRule: the matchLabels of each clusterRoleSelector (the rules of matching ClusterRoles are added). */
  aggregate?: Record<string, string>[];
}

/** Binding: a RoleBinding (namespace set) or a ClusterRoleBinding (namespace ''). */
export interface Binding {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  name: string;
  namespace: string;
  subjects: Subject[];
  roleRef: RoleRef;
}

/** Policy: roles and bindings. */
export interface Policy {
  roles: Role[];
  bindings: Binding[];
}

/**
 * UserInfo: who asks, as RBAC reads it: the name and groups of k8s.io/apiserver/pkg/authentication/user's
 * Info. Declared here, where it is used, so that authz/ needs nothing of auth/ (whose TokenUser is one).
 */
export interface UserInfo {
  name: string;
  groups: string[];
}

/** Decision: allowed or not, and the reason (upstream's RBAC reason text when allowed). */
export interface Decision {
  allowed: boolean;
  reason: string;
}

/** Authorizer: authorize one set of attributes for a user; rulesFor lists what applies in a namespace. */
export interface Authorizer {
  /** authorize: whether `user` may do `attrs` (rbac.go Authorize). Pure. */
  authorize(user: UserInfo, attrs: Attributes): Decision;
  /** rulesFor: the rules that apply to `user` in `namespace` (rbac.go RulesFor: cluster bindings, and role bindings of that namespace). Pure. */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[];
}

const kAuthenticated = 'system:authenticated';
const kUnauthenticated = 'system:unauthenticated';

/** effectiveGroups: the user's groups with `system:authenticated` added for every identity but `system:unauthenticated` ones (as the apiserver's authenticators do). */
export function effectiveGroups(user: UserInfo): string[] {
  if (user.groups.includes(kUnauthenticated) || user.groups.includes(kAuthenticated)) return user.groups;
  return [...user.groups, kAuthenticated];
}

/** appliesTo: rbac.go appliesToUser: a User subject by name, a Group by membership, a ServiceAccount by `system:serviceaccount:<ns>:<name>`. */
function appliesTo(user: UserInfo, groups: string[], s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.name === s.name;
    case 'Group':
      return groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return ns !== '' && user.name === `system:serviceaccount:${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

const has = (list: string[] | undefined, v: string): boolean => (list ?? []).some((x) => x === '*' || x === v);

/** resourceMatches: evaluation_helpers.go ResourceMatches: `*`, `resource/subresource`, or `*\/subresource`. */
function resourceMatches(rule: PolicyRule, attrs: Attributes): boolean {
  const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  return (rule.resources ?? []).some((r) => r === '*' || r === combined || (attrs.subresource !== '' && r === `*/${attrs.subresource}`));
}

/** nonResourceURLMatches: `*`, the exact path, or a prefix ending in `*`. */
function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

/** ruleAllows: evaluation_helpers.go RuleAllows. Pure. */
export function ruleAllows(attrs: Attributes, rule: PolicyRule): boolean {
  if (!has(rule.verbs, attrs.verb)) return false;
  if (!attrs.resourceRequest) return nonResourceURLMatches(rule, attrs.path);
  return (
    has(rule.apiGroups, attrs.apiGroup) &&
    resourceMatches(rule, attrs) &&
    ((rule.resourceNames ?? []).length === 0 || rule.resourceNames!.includes(attrs.name))
  );
}

function subjectText(s: Subject): string {
  return s.kind === 'ServiceAccount' ? `ServiceAccount "${s.namespace ?? ''}/${s.name}"` : `${s.kind} "${s.name}"`;
}

/**
 * newRbacAuthorizer: the authorizer over `policy`. A ClusterRole's aggregationRule is resolved once
 * (its rules are those of every ClusterRole whose labels match a selector, as the apiserver's
 * clusterrole aggregation controller keeps them). Bindings to a role that does not exist grant
 * nothing (as upstream; the policy file loader refuses them).
 */
export function newRbacAuthorizer(policy: Policy): Authorizer {
  const clusterRoles = new Map<string, Role>();
  const roles = new Map<string, Role>();
  for (const r of policy.roles)
    (r.kind === 'ClusterRole' ? clusterRoles : roles).set(r.kind === 'ClusterRole' ? r.name : `${r.namespace}/${r.name}`, r);
  const rulesOf = new Map<Role, PolicyRule[]>();
  // An aggregated role's rules include those of aggregated roles it selects (admin ⊇ edit ⊇ view), once each.
  const resolve = (r: Role, seen: Set<Role>): PolicyRule[] => {
    const done = rulesOf.get(r);
    if (done) return done;
    if (!r.aggregate || seen.has(r)) return r.rules;
    seen.add(r);
    const matched = [...clusterRoles.values()].filter(
      (c) => c !== r && r.aggregate!.some((sel) => Object.entries(sel).every(([k, v]) => c.labels[k] === v)),
    );
    const rules = [...r.rules, ...matched.flatMap((c) => resolve(c, seen))];
    seen.delete(r);
    return rules;
  };
  for (const r of policy.roles) rulesOf.set(r, resolve(r, new Set()));
  const roleFor = (b: Binding): Role | undefined =>
    b.roleRef.kind === 'ClusterRole' ? clusterRoles.get(b.roleRef.name) : roles.get(`${b.namespace}/${b.roleRef.name}`);
  /** visit: each (binding, role, rules) that applies to the user for a request in `namespace`. */
  function* visit(user: UserInfo, namespace: string): Generator<{ binding: Binding; role: Role; subject: Subject; rules: PolicyRule[] }> {
    const groups = effectiveGroups(user);
    for (const b of policy.bindings) {
      if (b.kind === 'RoleBinding' && (namespace === '' || b.namespace !== namespace)) continue;
      const subject = b.subjects.find((s) => appliesTo(user, groups, s, b.namespace));
      const role = roleFor(b);
      if (subject && role) yield { binding: b, role, subject, rules: rulesOf.get(role) ?? [] };
    }
  }
  return {
    authorize(user, attrs) {
      for (const { binding, role, subject, rules } of visit(user, attrs.resourceRequest ? attrs.namespace : '')) {
        if (rules.some((rule) => ruleAllows(attrs, rule))) {
          const where =
            binding.kind === 'RoleBinding' ? `RoleBinding "${binding.name}/${binding.namespace}"` : `ClusterRoleBinding "${binding.name}"`;
          return { allowed: true, reason: `RBAC: allowed by ${where} of ${role.kind} "${role.name}" to ${subjectText(subject)}` };
        }
      }
      return { allowed: false, reason: '' };
    },
    rulesFor(user, namespace) {
      return [...visit(user, namespace)].flatMap((v) => v.rules);
    },
  };
}
