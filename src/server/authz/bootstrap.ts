/**
 * The built-in policy, always present (the counterpart of upstream's bootstrap policy,
 * plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, reduced to what this node serves):
 * - `cluster-admin` (everything) bound to the group `system:masters` (the admin token's group);
 * - `system:basic-user` (the self reviews) and `system:discovery` (/api, /apis, /version,
 *   /openapi, /healthz) bound to `system:authenticated`;
 * - `view`, `edit` and `admin`, defined as upstream's aggregated roles (system:aggregate-to-view,
 *   -edit, -admin, and the metrics reader), for a policy file to bind; a ClusterRole of the policy
 *   file labelled `rbac.authorization.k8s.io/aggregate-to-view|edit|admin: "true"` adds to them;
 * - `kubelet-ts:node-reader` (read of nodes and of nodes/proxy, stats, metrics, log, spec: the
 *   kubelet's own paths) — with `view` bound to the group `kubelet-ts:read-only`, for
 *   compatibility with the two-level authorization before RBAC;
 * - only while `--anonymous-auth` is on: `view`, `kubelet-ts:node-reader`, `system:discovery` and
 *   `system:basic-user` for `system:unauthenticated` (the reads anonymous requests were served).
 */
import type { Binding, Policy, PolicyRule, Role } from './rbac.js';

/** kReadOnlyGroup: members of this group may read (view plus the kubelet's read paths), nothing else. */
export const kReadOnlyGroup = 'kubelet-ts:read-only';
/** kNodeReaderRole: the built-in ClusterRole that reads the node and the kubelet's own paths. */
export const kNodeReaderRole = 'kubelet-ts:node-reader';

const kRead = ['get', 'list', 'watch'];
const kWrite = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const kAggregateLabel = 'rbac.authorization.k8s.io/aggregate-to-';

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ verbs, apiGroups, resources });

function clusterRole(name: string, rules: PolicyRule[], labels: Record<string, string> = {}, aggregate?: Record<string, string>[]): Role {
  return { kind: 'ClusterRole', name, namespace: '', labels, rules, ...(aggregate ? { aggregate } : {}) };
}

function clusterBinding(name: string, role: string, subjects: Binding['subjects']): Binding {
  return { kind: 'ClusterRoleBinding', name, namespace: '', subjects, roleRef: { kind: 'ClusterRole', name: role } };
}

const aggregateTo = (...levels: string[]): Record<string, string> =>
  Object.fromEntries(levels.map((l) => [`${kAggregateLabel}${l}`, 'true']));

/** kBuiltinRoles: the built-in ClusterRoles (names as upstream's). */
const kBuiltinRoles: readonly Role[] = Object.freeze([
  clusterRole('cluster-admin', [
    { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
    { verbs: ['*'], nonResourceURLs: ['*'] },
  ]),
  clusterRole('system:basic-user', [
    rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
    rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
  ]),
  clusterRole('system:discovery', [
    {
      verbs: ['get'],
      nonResourceURLs: [
        '/livez',
        '/readyz',
        '/healthz',
        '/version',
        '/version/',
        '/openapi',
        '/openapi/*',
        '/api',
        '/api/*',
        '/apis',
        '/apis/*',
      ],
    },
  ]),
  clusterRole('admin', [], {}, [aggregateTo('admin')]),
  clusterRole('edit', [], aggregateTo('admin'), [aggregateTo('edit')]),
  clusterRole('view', [], aggregateTo('edit'), [aggregateTo('view')]),
  clusterRole(
    'system:aggregate-to-admin',
    [
      rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
      rule([...kRead, ...kWrite], ['rbac.authorization.k8s.io'], ['roles', 'rolebindings']),
    ],
    aggregateTo('admin'),
  ),
  clusterRole(
    'system:aggregate-to-edit',
    [
      rule(kRead, [''], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
      rule(['impersonate'], [''], ['serviceaccounts']),
      rule(kWrite, [''], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
      rule(['create'], [''], ['pods/eviction']),
      rule(
        kWrite,
        [''],
        [
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/proxy',
          'persistentvolumeclaims',
          'configmaps',
          'secrets',
          'events',
        ],
      ),
    ],
    aggregateTo('edit'),
  ),
  clusterRole(
    'system:aggregate-to-view',
    [
      rule(
        kRead,
        [''],
        [
          'pods',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/status',
          'endpoints',
          'persistentvolumeclaims',
          'persistentvolumeclaims/status',
          'configmaps',
        ],
      ),
      rule(
        kRead,
        [''],
        [
          'limitranges',
          'resourcequotas',
          'bindings',
          'events',
          'pods/status',
          'resourcequotas/status',
          'namespaces/status',
          'replicationcontrollers/status',
          'pods/log',
        ],
      ),
      rule(kRead, [''], ['namespaces']),
    ],
    aggregateTo('view'),
  ),
  clusterRole(
    'system:aggregated-metrics-reader',
    [rule(kRead, ['metrics.k8s.io'], ['pods', 'nodes'])],
    aggregateTo('view', 'edit', 'admin'),
  ),
  clusterRole(kNodeReaderRole, [
    rule(kRead, [''], ['nodes', 'nodes/proxy', 'nodes/stats', 'nodes/metrics', 'nodes/log', 'nodes/spec']),
    { verbs: ['get'], nonResourceURLs: ['/metrics', '/metrics/*'] },
  ]),
]);

const group = (name: string) => ({ kind: 'Group' as const, name });

/** kBuiltinBindings: always present. */
const kBuiltinBindings: readonly Binding[] = Object.freeze([
  clusterBinding('cluster-admin', 'cluster-admin', [group('system:masters')]),
  clusterBinding('system:basic-user', 'system:basic-user', [group('system:authenticated')]),
  clusterBinding('system:discovery', 'system:discovery', [group('system:authenticated')]),
  clusterBinding('kubelet-ts:read-only', 'view', [group(kReadOnlyGroup)]),
  clusterBinding('kubelet-ts:read-only:node', kNodeReaderRole, [group(kReadOnlyGroup)]),
]);

/** kAnonymousBindings: present only while anonymous requests are served (`--anonymous-auth=true`). */
const kAnonymousBindings: readonly Binding[] = Object.freeze([
  clusterBinding('kubelet-ts:anonymous:view', 'view', [group('system:unauthenticated')]),
  clusterBinding('kubelet-ts:anonymous:node', kNodeReaderRole, [group('system:unauthenticated')]),
  clusterBinding('kubelet-ts:anonymous:discovery', 'system:discovery', [group('system:unauthenticated')]),
  clusterBinding('kubelet-ts:anonymous:basic-user', 'system:basic-user', [group('system:unauthenticated')]),
]);

/** kBuiltinRoleNames: the ClusterRoles a policy file may not redefine. */
export const kBuiltinRoleNames: ReadonlySet<string> = new Set(kBuiltinRoles.map((r) => r.name));

/**
 * builtinPolicy: the built-in roles and bindings, the anonymous bindings only when `anonymous`.
 * Fresh arrays each call (the caller appends the policy file's).
 */
export function builtinPolicy(anonymous: boolean): Policy {
  return { roles: [...kBuiltinRoles], bindings: [...kBuiltinBindings, ...(anonymous ? kAnonymousBindings : [])] };
}
