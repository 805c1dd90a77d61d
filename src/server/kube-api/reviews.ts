/**
 * Counterpart of the apiserver's self reviews: SelfSubjectReview (pkg/registry/authentication/
 * selfsubjectreview: `kubectl auth whoami`), SelfSubjectAccessReview and SelfSubjectRulesReview
 * (pkg/registry/authorization: `kubectl auth can-i`, `can-i --list`), answered from this node's
 * identities (auth.ts: the admin token, `--token-auth-file`, anonymous) and its rules
 * (authorizeAttributes), so what they say is what the node would do.
 */
import type { Status } from '../../shared/api.js';
import { authorizeAttributes, kAnonymousUser, kReadOnlyGroup, type TokenUser } from '../auth.js';
import { jsonReply, statusReply, type HttpReply } from '../reply.js';
import type { Route, RouteContext } from '../router.js';
import { statusError } from '../status.js';
import { kApiGroups, kCoreResources } from './discovery.js';
import { decodeReviewBody, kProtobufMediaType } from './protobuf.js';

/** parseBody reads a review body: JSON, or the Kubernetes protobuf envelope kubectl's typed client sends (protobuf.ts). */
function parseBody(body: Buffer | undefined, kind: string, contentType?: string): Record<string, unknown> | Status {
  if ((contentType ?? '').split(';')[0].trim().toLowerCase() === kProtobufMediaType) {
    try {
      return decodeReviewBody(body ?? Buffer.alloc(0));
    } catch (err) {
      return statusError(400, 'BadRequest', (err as Error).message);
    }
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
 * accessDecision: the answer to one SelfSubjectAccessReview spec. A resource this node does not
 * serve is denied with a reason saying so (the request would get 404 here); non-resource paths
 * are allowed for reads (GET, HEAD) to everyone who may read and for the rest as for resources.
 */
export function accessDecision(user: TokenUser | undefined, spec: Record<string, unknown>): { allowed: boolean; denied?: boolean; reason: string } {
  const ra = spec.resourceAttributes as Record<string, string> | undefined;
  const nra = spec.nonResourceAttributes as Record<string, string> | undefined;
  if (ra && typeof ra === 'object') {
    const verb = String(ra.verb ?? '');
    const group = String(ra.group ?? '');
    const resource = String(ra.resource ?? '');
    const sub = String(ra.subresource ?? '');
    if (resource !== '*' && !(kServed.get(group)?.has(resource) ?? false)) {
      return { allowed: false, denied: true, reason: `${resource}${group ? `.${group}` : ''} is not served by this node: ${user ? 'it' : 'this node'} serves only pods, nodes, namespaces, events, configmaps, secrets and metrics` };
    }
    const d = authorizeAttributes(user, verb, sub);
    return d.allowed ? d : { ...d, denied: true };
  }
  if (nra && typeof nra === 'object') {
    const verb = String(nra.verb ?? '').toLowerCase();
    const d = authorizeAttributes(user, verb === 'head' ? 'get' : verb);
    return d.allowed ? d : { ...d, denied: true };
  }
  return { allowed: false, reason: 'spec.resourceAttributes or spec.nonResourceAttributes is required' };
}

function whoami({ user, body, req }: RouteContext): HttpReply {
  const raw = parseBody(body, 'SelfSubjectReview', req.headers['content-type']);
  if (isStatus(raw)) return statusReply(raw);
  return jsonReply(201, { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1', metadata: { creationTimestamp: new Date().toISOString() }, status: { userInfo: userInfo(user) } });
}

function accessReview({ user, body, req }: RouteContext): HttpReply {
  const raw = parseBody(body, 'SelfSubjectAccessReview', req.headers['content-type']);
  if (isStatus(raw)) return statusReply(raw);
  const spec = (raw.spec ?? {}) as Record<string, unknown>;
  if (typeof spec !== 'object' || (spec.resourceAttributes === undefined && spec.nonResourceAttributes === undefined)) {
    return statusReply(statusError(422, 'Invalid', 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
      { kind: 'SelfSubjectAccessReview', causes: [{ field: 'spec.resourceAttributes', reason: 'FieldValueInvalid', message: 'exactly one of nonResourceAttributes or resourceAttributes must be specified' }] }));
  }
  const d = accessDecision(user, spec);
  return jsonReply(201, {
    kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec,
    status: { allowed: d.allowed, ...(d.denied ? { denied: true } : {}), reason: d.reason },
  });
}

function rulesReview({ user, body, req }: RouteContext): HttpReply {
  const raw = parseBody(body, 'SelfSubjectRulesReview', req.headers['content-type']);
  if (isStatus(raw)) return statusReply(raw);
  const full = authorizeAttributes(user, 'create').allowed;
  const readOnly = user?.groups.includes(kReadOnlyGroup) || user?.name === kAnonymousUser.name;
  const verbs = full && !readOnly ? ['*'] : ['get', 'list', 'watch'];
  return jsonReply(201, {
    kind: 'SelfSubjectRulesReview', apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec: raw.spec ?? {},
    status: {
      resourceRules: [{ verbs, apiGroups: ['', ...Object.keys(kApiGroups)], resources: ['*'] }],
      nonResourceRules: [{ verbs: full && !readOnly ? ['*'] : ['get'], nonResourceURLs: ['*'] }],
      incomplete: false,
    },
  });
}

/** reviewRoutes: POST selfsubjectreviews, selfsubjectaccessreviews and selfsubjectrulesreviews (auth.ts counts them as reads). */
export function reviewRoutes(): Route[] {
  return [
    { path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', methods: { post: whoami } },
    { path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', methods: { post: accessReview } },
    { path: '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', methods: { post: rulesReview } },
  ];
}
