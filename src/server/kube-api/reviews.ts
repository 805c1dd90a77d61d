/**
 * Counterpart of the apiserver's self reviews: SelfSubjectReview (pkg/registry/authentication/
 * selfsubjectreview: `kubectl auth whoami`), SelfSubjectAccessReview and SelfSubjectRulesReview
 * (pkg/registry/authorization: `kubectl auth can-i`, `can-i --list`), answered from this node's
 * identities (auth.ts: the admin token, `--token-auth-file`, anonymous) and the same RBAC
 * authorizer every request goes through (authz/: the built-in policy and
 * `--authorization-policy-file`), so what they say is what the node would do.
 */
import type { Status } from '../../shared/api.js';
import { hostClock, type AgentHost } from '../host/agent-host.js';
import { kAnonymousUser, type TokenUser } from '../auth/auth.js';
import type { Attributes } from '../authz/attributes.js';
import { defaultAuthorizer } from '../authz/authorize.js';
import type { Authorizer, PolicyRule } from '../authz/rbac.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from '../routes/router.js';
import { statusError } from '../http/status.js';
import { kApiGroups, kCoreResources } from './discovery.js';
import { kProtobufMediaType } from '../../shared/kube-protobuf.js';
import { decodeBodyOffThread } from './protobuf-body.js';

/**
 * parseBody reads a review body: JSON, or the Kubernetes protobuf envelope kubectl's typed client
 * sends, whose kind must be the route's `kind` (refused before decoding) and which is decoded off
 * the main thread (protobuf.ts decodeBodyOffThread).
 */
async function parseBody(
  host: AgentHost,
  body: Buffer | undefined,
  kind: string,
  contentType?: string,
): Promise<Record<string, unknown> | Status> {
  if ((contentType ?? '').split(';')[0].trim().toLowerCase() === kProtobufMediaType) {
    const obj = await decodeBodyOffThread(host, body, [kind]);
    return isStatus(obj) ? obj : { ...obj, spec: obj.spec ?? {} };
  }
  try {
    const v = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8') || '{}') as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return statusError(400, 'BadRequest', `the body must be a ${kind} object`);
    return v as Record<string, unknown>;
  } catch {
    return statusError(400, 'BadRequest', `the ${kind} body could not be decoded as JSON`);
  }
}

function isStatus(v: unknown): v is Status {
  return (v as { kind?: unknown }).kind === 'Status' && typeof (v as { code?: unknown }).code === 'number';
}

/** userInfo: the UserInfo of `user` as the apiserver reports it (authenticated users also get `system:authenticated`). */
export function userInfo(user: TokenUser | undefined): { username: string; uid?: string; groups: string[] } {
  if (!user) return { username: 'system:anonymous', groups: ['system:unauthenticated'] };
  if (user.name === kAnonymousUser.name) return { username: user.name, groups: [...user.groups] };
  const groups = user.groups.includes('system:authenticated') ? [...user.groups] : [...user.groups, 'system:authenticated'];
  return { username: user.name, ...(user.uid ? { uid: user.uid } : {}), groups };
}

/** kServedResources: group → resources this node serves (for an access review of something that is not served). */
const kServed: ReadonlyMap<string, Set<string>> = new Map([
  ['', new Set(kCoreResources.map((r) => r.name.split('/')[0]))],
  ...Object.entries(kApiGroups).map(([g, v]) => [g, new Set(v.resources.map((r) => r.name))] as [string, Set<string>]),
]);

/**
 * accessDecision: the answer to one SelfSubjectAccessReview spec (pkg/registry/authorization/
 * selfsubjectaccessreview: the spec's attributes for the requesting user, decided by the
 * authorizer). A resource this node does not serve is denied with a reason saying so (the
 * request would get 404 here). `user` undefined (a server without auth) may do everything.
 * @param authorizer the server's (default: the built-in policy without anonymous bindings).
 */
export function accessDecision(
  user: TokenUser | undefined,
  spec: Record<string, unknown>,
  authorizer: Authorizer = defaultAuthorizer(false),
): { allowed: boolean; denied?: boolean; reason: string } {
  const ra = spec.resourceAttributes as Record<string, string> | undefined;
  const nra = spec.nonResourceAttributes as Record<string, string> | undefined;
  let attrs: Attributes;
  if (ra && typeof ra === 'object') {
    const group = String(ra.group ?? '');
    const resource = String(ra.resource ?? '');
    if (resource !== '*' && !(kServed.get(group)?.has(resource) ?? false)) {
      return {
        allowed: false,
        denied: true,
        reason: `${resource}${group ? `.${group}` : ''} is not served by this node: ${user ? 'it' : 'this node'} serves only pods, nodes, namespaces, events, configmaps, secrets and metrics`,
      };
    }
    attrs = {
      verb: String(ra.verb ?? ''),
      resourceRequest: true,
      apiGroup: group,
      namespace: String(ra.namespace ?? ''),
      resource,
      subresource: String(ra.subresource ?? ''),
      name: String(ra.name ?? ''),
      path: '',
    };
  } else if (nra && typeof nra === 'object') {
    const verb = String(nra.verb ?? '').toLowerCase();
    attrs = {
      verb: verb === 'head' ? 'get' : verb,
      resourceRequest: false,
      apiGroup: '',
      namespace: '',
      resource: '',
      subresource: '',
      name: '',
      path: String(nra.path ?? ''),
    };
  } else {
    return { allowed: false, reason: 'spec.resourceAttributes or spec.nonResourceAttributes is required' };
  }
  if (user === undefined) return { allowed: true, reason: 'authorization is off' };
  const d = authorizer.authorize(user, attrs);
  return d.allowed ? d : { ...d, denied: true };
}

/**
 * rulesReviewStatus: the SelfSubjectRulesReview status for `user` in `namespace` (rbac.go RulesFor
 * and the registry's ConvertToResourceRules/NonResourceRules): each rule that applies, as a
 * resource rule or a non-resource rule. `user` undefined (no auth): everything.
 */
export function rulesReviewStatus(
  user: TokenUser | undefined,
  namespace: string,
  authorizer: Authorizer = defaultAuthorizer(false),
): { resourceRules: object[]; nonResourceRules: object[]; incomplete: boolean } {
  const rules: PolicyRule[] =
    user === undefined
      ? [
          { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
          { verbs: ['*'], nonResourceURLs: ['*'] },
        ]
      : authorizer.rulesFor(user, namespace);
  const resourceRules: object[] = [];
  const nonResourceRules: object[] = [];
  for (const r of rules) {
    if ((r.resources ?? []).length > 0) {
      resourceRules.push({
        verbs: r.verbs,
        apiGroups: r.apiGroups ?? [],
        resources: r.resources,
        ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
      });
    }
    if ((r.nonResourceURLs ?? []).length > 0) nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
  }
  return { resourceRules, nonResourceRules, incomplete: false };
}

async function whoami({ host, user, body, req }: RouteContext): Promise<HttpReply> {
  const raw = await parseBody(host, body, 'SelfSubjectReview', req.headers['content-type']);
  if (isStatus(raw)) return statusReply(raw);
  return jsonReply(201, {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: new Date(hostClock(host).now()).toISOString() },
    status: { userInfo: userInfo(user) },
  });
}

async function accessReview({ host, user, body, req, authorizer }: RouteContext): Promise<HttpReply> {
  const raw = await parseBody(host, body, 'SelfSubjectAccessReview', req.headers['content-type']);
  if (isStatus(raw)) return statusReply(raw);
  const spec = (raw.spec ?? {}) as Record<string, unknown>;
  if (typeof spec !== 'object' || (spec.resourceAttributes === undefined && spec.nonResourceAttributes === undefined)) {
    return statusReply(
      statusError(
        422,
        'Invalid',
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
        {
          kind: 'SelfSubjectAccessReview',
          causes: [
            {
              field: 'spec.resourceAttributes',
              reason: 'FieldValueInvalid',
              message: 'exactly one of nonResourceAttributes or resourceAttributes must be specified',
            },
          ],
        },
      ),
    );
  }
  const d = accessDecision(user, spec, authorizer);
  return jsonReply(201, {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed: d.allowed, ...(d.denied ? { denied: true } : {}), reason: d.reason },
  });
}

async function rulesReview({ host, user, body, req, authorizer }: RouteContext): Promise<HttpReply> {
  const raw = await parseBody(host, body, 'SelfSubjectRulesReview', req.headers['content-type']);
  if (isStatus(raw)) return statusReply(raw);
  const spec = (typeof raw.spec === 'object' && raw.spec !== null ? raw.spec : {}) as Record<string, unknown>;
  const namespace = typeof spec.namespace === 'string' ? spec.namespace : '';
  return jsonReply(201, {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status: rulesReviewStatus(user, namespace, authorizer),
  });
}

/** reviewRoutes: POST selfsubjectreviews, selfsubjectaccessreviews and selfsubjectrulesreviews (allowed to every identity by the built-in system:basic-user). */
export function reviewRoutes(): Route[] {
  return [
    { path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', methods: { post: whoami } },
    { path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', methods: { post: accessReview } },
    { path: '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', methods: { post: rulesReview } },
  ];
}
