// Authorization as Kubernetes has it (issue #38 finding 3): the request attributes of every path
// (the apiserver's RequestInfo, the kubelet's GetRequestAttributes), the RBAC matcher, the built-in
// policy, the policy file's checks, the apiserver's 403 and the self reviews from the same policy.
import { describe, expect, it } from 'vitest';
import {
  checkAccess,
  checkWebSocketAccess,
  kAdminUser,
  kAnonymousUser,
  kBearerProtocolPrefix,
  parseTokenFile,
  type ServerAuth,
} from '../../src/server/auth/auth.js';
import { apiRequestAttributes, getRequestAttributes, type Attributes } from '../../src/server/authz/attributes.js';
import { forbiddenMessage } from '../../src/server/authz/authorize.js';
import { builtinPolicy } from '../../src/server/authz/bootstrap.js';
import { parsePolicyFile } from '../../src/server/authz/policy-file.js';
import { newRbacAuthorizer, ruleAllows, type Policy } from '../../src/server/authz/rbac.js';
import { accessDecision, rulesReviewStatus } from '../../src/server/kube-api/reviews.js';

const attrs = (verb: string, resource: string, namespace = '', subresource = '', name = '', apiGroup = ''): Attributes => ({
  verb,
  resourceRequest: true,
  apiGroup,
  namespace,
  resource,
  subresource,
  name,
  path: '',
});
const pick = (a: Attributes) => [
  a.verb,
  a.resourceRequest ? `${a.apiGroup}|${a.namespace}|${a.resource}|${a.subresource}|${a.name}` : `nonResource ${a.path}`,
];

describe('request attributes', () => {
  it.each([
    ['get', '/api/v1/namespaces/ns/pods', '', 'list', '|ns|pods||'],
    ['get', '/api/v1/namespaces/ns/pods', 'watch=true', 'watch', '|ns|pods||'],
    ['get', '/api/v1/pods', 'watch=1', 'watch', '||pods||'],
    // The Python client's `watch=True` is a watch, for every kind, as the apiserver's request info reads it (issue 39 item 5).
    ['get', '/api/v1/namespaces/ns/events', 'watch=True', 'watch', '|ns|events||'],
    ['get', '/api/v1/nodes', 'watch=TRUE', 'watch', '||nodes||'],
    ['get', '/api/v1/namespaces', 'watch=False', 'list', '||namespaces||'],
    ['get', '/api/v1/namespaces', 'watch=0', 'list', '||namespaces||'],
    ['get', '/api/v1/namespaces/ns/pods', 'fieldSelector=metadata.name%3Dweb', 'list', '|ns|pods||web'],
    ['get', '/api/v1/namespaces/ns/pods/web', '', 'get', '|ns|pods||web'],
    ['head', '/api/v1/namespaces/ns/pods/web', '', 'get', '|ns|pods||web'],
    ['post', '/api/v1/namespaces/ns/pods', '', 'create', '|ns|pods||'],
    ['put', '/api/v1/namespaces/ns/pods/web', '', 'update', '|ns|pods||web'],
    ['patch', '/api/v1/namespaces/ns/pods/web', '', 'patch', '|ns|pods||web'],
    ['delete', '/api/v1/namespaces/ns/pods/web', '', 'delete', '|ns|pods||web'],
    ['delete', '/api/v1/namespaces/ns/pods', '', 'deletecollection', '|ns|pods||'],
    ['get', '/api/v1/namespaces/ns/pods/web/log', '', 'get', '|ns|pods|log|web'],
    ['get', '/api/v1/namespaces/ns/pods/web/exec', 'command=sh', 'create', '|ns|pods|exec|web'],
    ['post', '/api/v1/namespaces/ns/pods/web/exec', '', 'create', '|ns|pods|exec|web'],
    ['get', '/api/v1/namespaces/ns/pods/web/attach', '', 'create', '|ns|pods|attach|web'],
    ['get', '/api/v1/namespaces/ns/pods/web/portforward', '', 'create', '|ns|pods|portforward|web'],
    ['post', '/api/v1/namespaces/ns/pods/web/eviction', '', 'create', '|ns|pods|eviction|web'],
    ['get', '/api/v1/namespaces/ns', '', 'get', '|ns|namespaces||ns'],
    ['put', '/api/v1/namespaces/ns/status', '', 'update', '|ns|namespaces|status|ns'],
    ['get', '/api/v1/namespaces', '', 'list', '||namespaces||'],
    ['get', '/api/v1/nodes/n1', '', 'get', '||nodes||n1'],
    ['get', '/api/v1/watch/namespaces/ns/pods', '', 'watch', '|ns|pods||'],
    ['get', '/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods', '', 'list', 'metrics.k8s.io|ns|pods||'],
    ['post', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', '', 'create', 'authorization.k8s.io||selfsubjectaccessreviews||'],
  ])('%s %s?%s → %s %s', (method, path, query, verb, what) => {
    expect(pick(apiRequestAttributes(method, path, new URLSearchParams(query)))).toEqual([verb, what]);
  });

  it.each([
    ['get', '/api', 'get', 'nonResource /api'],
    ['get', '/api/v1', 'get', 'nonResource /api/v1'],
    ['get', '/apis', 'get', 'nonResource /apis'],
    ['get', '/apis/metrics.k8s.io/v1beta1', 'get', 'nonResource /apis/metrics.k8s.io/v1beta1'],
    ['get', '/version', 'get', 'nonResource /version'],
    ['get', '/openapi/v3/api/v1', 'get', 'nonResource /openapi/v3/api/v1'],
    ['post', '/version', 'post', 'nonResource /version'],
    // The kubelet's own paths (pkg/kubelet/server/auth.go): nodes/<sub>, named after the node.
    ['get', '/stats/summary', 'get', '||nodes|stats|n1'],
    ['get', '/metrics', 'get', '||nodes|metrics|n1'],
    ['get', '/metrics/cadvisor', 'get', '||nodes|metrics|n1'],
    ['get', '/logs/syslog', 'get', '||nodes|log|n1'],
    ['get', '/spec', 'get', '||nodes|spec|n1'],
    ['get', '/pods', 'get', '||nodes|proxy|n1'],
    ['post', '/pods', 'create', '||nodes|proxy|n1'],
    ['put', '/pods/ns/web', 'update', '||nodes|proxy|n1'],
    ['delete', '/pods/ns/web', 'delete', '||nodes|proxy|n1'],
    ['get', '/watch/pods', 'get', '||nodes|proxy|n1'],
    ['get', '/containerLogs/ns/web/main', 'get', '||nodes|proxy|n1'],
    ['get', '/events', 'get', '||nodes|proxy|n1'],
    // Streams into a container: create on nodes/proxy, also as a GET (WebSocket upgrade).
    ['get', '/exec/ns/web/main', 'create', '||nodes|proxy|n1'],
    ['get', '/attach/ns/web/main', 'create', '||nodes|proxy|n1'],
    ['get', '/portForward/ns/web', 'create', '||nodes|proxy|n1'],
    ['post', '/run/ns/web/main', 'create', '||nodes|proxy|n1'],
  ])('%s %s → %s %s', (method, path, verb, what) => {
    expect(pick(getRequestAttributes(method, path, 'n1')[0])).toEqual([verb, what]);
  });

  it('lets /metrics be allowed as nodes/metrics or as the non-resource URL', () => {
    expect(getRequestAttributes('get', '/metrics/probes', 'n1').map(pick)).toEqual([
      ['get', '||nodes|metrics|n1'],
      ['get', 'nonResource /metrics/probes'],
    ]);
  });
});

describe('the RBAC matcher (rbac/v1 evaluation helpers)', () => {
  it.each([
    [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, attrs('get', 'pods', 'a'), true],
    [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, attrs('list', 'pods', 'a'), false],
    [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }, attrs('deletecollection', 'pods', 'a'), true],
    [{ verbs: ['create'], apiGroups: [''], resources: ['pods'] }, attrs('create', 'pods', 'a', 'exec'), false],
    [{ verbs: ['create'], apiGroups: [''], resources: ['pods/exec'] }, attrs('create', 'pods', 'a', 'exec'), true],
    [{ verbs: ['create'], apiGroups: [''], resources: ['*/exec'] }, attrs('create', 'pods', 'a', 'exec'), true],
    [{ verbs: ['create'], apiGroups: [''], resources: ['*'] }, attrs('create', 'pods', 'a', 'exec'), true],
    [{ verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }, attrs('get', 'pods', 'a'), false],
    [{ verbs: ['get'], apiGroups: ['*'], resources: ['pods'] }, attrs('get', 'pods', 'a', '', '', 'metrics.k8s.io'), true],
    [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['web'] }, attrs('get', 'pods', 'a', '', 'web'), true],
    [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['web'] }, attrs('get', 'pods', 'a', '', 'db'), false],
    [{ verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: ['web'] }, attrs('list', 'pods', 'a'), false],
    [{ verbs: ['get'], nonResourceURLs: ['/api/*'] }, { ...attrs('get', ''), resourceRequest: false, path: '/api/v1' }, true],
    [{ verbs: ['get'], nonResourceURLs: ['/api'] }, { ...attrs('get', ''), resourceRequest: false, path: '/api/v1' }, false],
    [{ verbs: ['get'], nonResourceURLs: ['*'] }, { ...attrs('get', ''), resourceRequest: false, path: '/x' }, true],
    [{ verbs: ['get'], nonResourceURLs: ['*'] }, attrs('get', 'pods'), false],
  ])('%j allows %j: %s', (rule, a, allowed) => {
    expect(ruleAllows(a, rule)).toBe(allowed);
  });

  const file: Policy = parsePolicyFile(
    `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-edit, namespace: team-a}
subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
roleRef: {kind: ClusterRole, name: edit, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: logs, namespace: team-b}
rules: [{verbs: [get], apiGroups: [""], resources: [pods/log], resourceNames: [web]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: logs, namespace: team-b}
subjects: [{kind: Group, name: devs}, {kind: ServiceAccount, name: ci}]
roleRef: {kind: Role, name: logs, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: crd-view, labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}}
rules: [{verbs: [get], apiGroups: [example.com], resources: [widgets]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: carol-view}
subjects: [{kind: User, name: carol}]
roleRef: {kind: ClusterRole, name: view, apiGroup: rbac.authorization.k8s.io}
`,
    'policy.yaml',
  );
  const base = builtinPolicy(false);
  const authz = newRbacAuthorizer({ roles: [...base.roles, ...file.roles], bindings: [...base.bindings, ...file.bindings] });
  const u = (name: string, ...groups: string[]) => ({ name, uid: name, groups });

  it.each([
    [kAdminUser, attrs('create', 'pods', 'kube-system', 'exec', 'x'), true],
    [kAdminUser, { ...attrs('delete', ''), resourceRequest: false, path: '/anything' }, true],
    [u('nobody'), attrs('get', 'pods', 'default'), false],
    [u('nobody'), attrs('create', 'nodes', '', 'proxy', 'n1'), false],
    [u('nobody'), { ...attrs('get', ''), resourceRequest: false, path: '/apis/metrics.k8s.io' }, true],
    [u('nobody'), attrs('create', 'selfsubjectaccessreviews', '', '', '', 'authorization.k8s.io'), true],
    [u('bob'), attrs('create', 'pods', 'team-a', 'exec', 'web'), true],
    [u('bob'), attrs('create', 'pods', 'kube-system', 'exec', 'web'), false],
    [u('bob'), attrs('list', 'secrets', 'team-a'), true],
    [u('bob'), attrs('list', 'pods', ''), false],
    [u('bob'), attrs('create', 'rolebindings', 'team-a', '', '', 'rbac.authorization.k8s.io'), false],
    [u('bob'), attrs('list', 'pods', 'team-a', '', '', 'metrics.k8s.io'), true],
    [u('carol'), attrs('list', 'pods', ''), true],
    [u('carol'), attrs('get', 'secrets', 'team-a', '', 's'), false],
    [u('carol'), attrs('create', 'pods', 'team-a', 'exec', 'web'), false],
    [u('carol'), attrs('get', 'widgets', 'x', '', 'w', 'example.com'), true],
    [u('dave', 'devs'), attrs('get', 'pods', 'team-b', 'log', 'web'), true],
    [u('dave', 'devs'), attrs('get', 'pods', 'team-b', 'log', 'db'), false],
    [u('system:serviceaccount:team-b:ci'), attrs('get', 'pods', 'team-b', 'log', 'web'), true],
    [u('system:serviceaccount:team-a:ci'), attrs('get', 'pods', 'team-b', 'log', 'web'), false],
    [u('viewer', 'kubelet-ts:read-only'), attrs('get', 'nodes', '', 'proxy', 'n1'), true],
    [u('viewer', 'kubelet-ts:read-only'), attrs('create', 'nodes', '', 'proxy', 'n1'), false],
    [u('viewer', 'kubelet-ts:read-only'), attrs('create', 'pods', 'default', 'exec', 'w'), false],
    [kAnonymousUser, attrs('get', 'pods', 'default'), false],
  ])('%o: %j → %s', (user, a, allowed) => {
    expect(authz.authorize(user, a).allowed).toBe(allowed);
  });

  it("gives upstream's reason for an allowed request", () => {
    expect(authz.authorize(u('bob'), attrs('create', 'pods', 'team-a', 'exec', 'web')).reason).toBe(
      'RBAC: allowed by RoleBinding "bob-edit/team-a" of ClusterRole "edit" to User "bob"',
    );
    expect(authz.authorize(kAdminUser, attrs('get', 'pods')).reason).toBe(
      'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"',
    );
  });

  it('gives anonymous users reads only while --anonymous-auth is on', () => {
    const on = newRbacAuthorizer(builtinPolicy(true));
    expect(on.authorize(kAnonymousUser, attrs('list', 'pods', 'default')).allowed).toBe(true);
    expect(on.authorize(kAnonymousUser, attrs('get', 'nodes', '', 'proxy', 'n1')).allowed).toBe(true);
    expect(on.authorize(kAnonymousUser, attrs('create', 'nodes', '', 'proxy', 'n1')).allowed).toBe(false);
    expect(on.authorize(kAnonymousUser, attrs('create', 'pods', 'default', 'exec', 'w')).allowed).toBe(false);
    expect(on.authorize(kAnonymousUser, attrs('get', 'secrets', 'default', '', 's')).allowed).toBe(false);
  });
});

describe("the apiserver's 403", () => {
  it('names the user, verb, resource, group and namespace or scope', () => {
    expect(forbiddenMessage('u', attrs('create', 'pods', 'kube-system', 'exec', 'x'))).toBe(
      'pods "x" is forbidden: User "u" cannot create resource "pods/exec" in API group "" in the namespace "kube-system"',
    );
    expect(forbiddenMessage('u', attrs('list', 'pods'))).toBe(
      'pods is forbidden: User "u" cannot list resource "pods" in API group "" at the cluster scope',
    );
    expect(forbiddenMessage('u', attrs('get', 'pods', 'a', '', '', 'metrics.k8s.io'))).toBe(
      'pods.metrics.k8s.io is forbidden: User "u" cannot get resource "pods" in API group "metrics.k8s.io" in the namespace "a"',
    );
    expect(forbiddenMessage('u', { ...attrs('post', ''), resourceRequest: false, path: '/version' })).toBe(
      'forbidden: User "u" cannot post path "/version"',
    );
  });

  it('is what checkAccess answers to an identity without a binding, on every kind of path', () => {
    const auth: ServerAuth = { tokens: parseTokenFile('t1,alice,1\n', 'f'), anonymous: false, nodeName: 'n1' };
    const d = checkAccess(auth, 'post', '/run/kube-system/etcd-n1/main', 'Bearer t1');
    expect(d).toMatchObject({
      ok: false,
      status: {
        code: 403,
        reason: 'Forbidden',
        message: 'nodes "n1" is forbidden: User "alice" cannot create resource "nodes/proxy" in API group "" at the cluster scope',
        details: { kind: 'nodes', name: 'n1' },
      },
    });
    const ws = checkWebSocketAccess(
      auth,
      '/api/v1/namespaces/kube-system/pods/etcd-n1/exec',
      '',
      `${kBearerProtocolPrefix}${Buffer.from('t1').toString('base64url')}, v5.channel.k8s.io`,
    );
    expect(ws.access).toMatchObject({
      ok: false,
      status: {
        code: 403,
        message:
          'pods "etcd-n1" is forbidden: User "alice" cannot create resource "pods/exec" in API group "" in the namespace "kube-system"',
      },
    });
    expect(checkAccess(auth, 'get', '/api/v1/namespaces/default/pods', 'Bearer t1')).toMatchObject({ ok: false, status: { code: 403 } });
    expect(checkAccess(auth, 'get', '/watch/pods', 'Bearer t1')).toMatchObject({ ok: false, status: { code: 403 } });
    // Discovery and the self reviews stay open to every identity (system:discovery, system:basic-user).
    expect(checkAccess(auth, 'get', '/api', 'Bearer t1').ok).toBe(true);
    expect(checkAccess(auth, 'get', '/apis/metrics.k8s.io/v1beta1', 'Bearer t1').ok).toBe(true);
    expect(checkAccess(auth, 'get', '/openapi/v2', 'Bearer t1').ok).toBe(true);
    expect(checkAccess(auth, 'post', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', 'Bearer t1').ok).toBe(true);
  });
});

describe('the policy file', () => {
  const bad = (text: string) => {
    try {
      parsePolicyFile(text, '/etc/policy.yaml');
    } catch (err) {
      return (err as Error).message;
    }
    return 'no error';
  };
  it.each([
    [
      'a wrong apiVersion',
      'apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole\nmetadata: {name: x}\nrules: []\n',
      '/etc/policy.yaml: document 1 (ClusterRole "x"): apiVersion: Unsupported value: "rbac.authorization.k8s.io/v1beta1": supported values: "rbac.authorization.k8s.io/v1"',
    ],
    [
      'an unknown kind',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: Rolebinding\nmetadata: {name: x}\n',
      '/etc/policy.yaml: document 1 (Rolebinding "x"): kind: Unsupported value: "Rolebinding"',
    ],
    [
      'a Role without a namespace',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: x}\nrules: []\n',
      'document 1 (Role "x"): metadata.namespace: Required value',
    ],
    [
      'a rule without verbs',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: x}\nrules: [{apiGroups: [""], resources: [pods]}]\n',
      'document 1 (ClusterRole "x"): rules[0].verbs: Required value',
    ],
    [
      'a resource rule without apiGroups',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: x}\nrules: [{verbs: [get], resources: [pods]}]\n',
      'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
    ],
    [
      'nonResourceURLs in a Role',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: x, namespace: a}\nrules: [{verbs: [get], nonResourceURLs: [/x]}]\n',
      'rules[0].nonResourceURLs: Invalid value: namespaced rules cannot apply to non-resource URLs',
    ],
    [
      'a subject of an unknown kind',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nsubjects: [{kind: Usr, name: bob}]\nroleRef: {kind: ClusterRole, name: view, apiGroup: rbac.authorization.k8s.io}\n',
      'document 1 (ClusterRoleBinding "b"): subjects[0].kind: Unsupported value: "Usr"',
    ],
    [
      'a ClusterRoleBinding to a Role',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nsubjects: [{kind: User, name: bob}]\nroleRef: {kind: Role, name: view, apiGroup: rbac.authorization.k8s.io}\n',
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
    ],
    [
      'a binding to a role that does not exist',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b, namespace: a}\nsubjects: [{kind: User, name: bob}]\nroleRef: {kind: ClusterRole, name: eidt, apiGroup: rbac.authorization.k8s.io}\n',
      '/etc/policy.yaml: RoleBinding a/b: roleRef: ClusterRole "eidt" not found',
    ],
    [
      'a redefined built-in role',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: cluster-admin}\nrules: []\n',
      'metadata.name: Forbidden: ClusterRole "cluster-admin" is built in',
    ],
    [
      'YAML that does not parse, in the second document',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: x}\n---\nkind: [\n',
      '/etc/policy.yaml: document 2: yaml:',
    ],
    [
      'a List item',
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRole\n  metadata: {name: x}\n  rules: [{verbs: [get]}]\n',
      '/etc/policy.yaml: document 1 items[0] (ClusterRole "x"): rules[0].apiGroups: Required value',
    ],
  ])('names the file, document and field for %s', (_what, text, message) => {
    expect(bad(text)).toContain(message);
  });

  it('reads a List and multi-document YAML', () => {
    const p = parsePolicyFile(
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRole\n  metadata: {name: x}\n  rules: [{verbs: [get], nonResourceURLs: ["/x/*"]}]\n---\n',
      'f',
    );
    expect(p.roles).toEqual([
      { kind: 'ClusterRole', name: 'x', namespace: '', labels: {}, rules: [{ verbs: ['get'], nonResourceURLs: ['/x/*'] }] },
    ]);
  });
});

describe('self reviews answer from the same policy', () => {
  const policy = builtinPolicy(false);
  policy.bindings.push({
    kind: 'RoleBinding',
    name: 'bob-edit',
    namespace: 'team-a',
    subjects: [{ kind: 'User', name: 'bob' }],
    roleRef: { kind: 'ClusterRole', name: 'edit' },
  });
  const authz = newRbacAuthorizer(policy);
  const bob = { name: 'bob', uid: '3', groups: [] };
  it('can-i: what the authorizer says, for resources and non-resource URLs', () => {
    const ra = (verb: string, resource: string, namespace: string, subresource = '') => ({
      resourceAttributes: { verb, resource, namespace, subresource },
    });
    expect(accessDecision(bob, ra('create', 'pods', 'team-a', 'exec'), authz)).toMatchObject({
      allowed: true,
      reason: expect.stringContaining('RoleBinding "bob-edit/team-a"'),
    });
    expect(accessDecision(bob, ra('create', 'pods', 'kube-system', 'exec'), authz)).toMatchObject({ allowed: false, denied: true });
    expect(accessDecision(bob, { nonResourceAttributes: { verb: 'get', path: '/api' } }, authz).allowed).toBe(true);
    expect(accessDecision(bob, { nonResourceAttributes: { verb: 'get', path: '/metrics' } }, authz).allowed).toBe(false);
  });
  it('can-i --list: exactly the rules that apply in the namespace', () => {
    const inA = rulesReviewStatus(bob, 'team-a', authz);
    const inB = rulesReviewStatus(bob, 'team-b', authz);
    expect(inA.resourceRules).toContainEqual({
      verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'],
      apiGroups: [''],
      resources: ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward'],
    });
    expect(inB.resourceRules).toEqual([
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ]);
    expect(inB.nonResourceRules).toEqual([
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
    ]);
  });
});
