/**
 * The one authorization check of every request (HTTP, WebSocket upgrades, the port-forward tunnel,
 * the dashboard's calls): the request's attributes (attributes.ts) checked by the RBAC authorizer
 * (rbac.ts) for the authenticated user, as the apiserver's WithAuthorization filter
 * (k8s.io/apiserver/pkg/endpoints/filters/authorization.go) and the kubelet's auth filter
 * (pkg/kubelet/server/server.go InstallAuthFilter) do; a refusal is the apiserver's 403 Status
 * (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go Forbidden).
 */
import type { Status } from '../../shared/api.js';
import { statusError } from '../http/status.js';
import { getRequestAttributes, type Attributes } from './attributes.js';
import { builtinPolicy } from './bootstrap.js';
import { newRbacAuthorizer, type Authorizer, type Decision, type UserInfo } from './rbac.js';

/**
 * forbiddenMessage: the apiserver's text for a refused request (responsewriters forbiddenMessage
 * wrapped as errors.NewForbidden): `pods "x" is forbidden: User "u" cannot create resource
 * "pods/exec" in API group "" in the namespace "ns"`, `… at the cluster scope`, or
 * `forbidden: User "u" cannot get path "/p"` for a non-resource URL.
 */
export function forbiddenMessage(userName: string, a: Attributes): string {
  if (!a.resourceRequest) return `forbidden: User ${JSON.stringify(userName)} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  const why = `User ${JSON.stringify(userName)} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`;
  const qualified = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource;
  return a.name ? `${qualified} ${JSON.stringify(a.name)} is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
}

/** forbidden: the apiserver's 403 Status for `a`, with details naming the resource and object. */
export function forbidden(userName: string, a: Attributes): Status {
  return statusError(
    403,
    'Forbidden',
    forbiddenMessage(userName, a),
    a.resourceRequest ? { ...(a.apiGroup ? { group: a.apiGroup } : {}), kind: a.resource, ...(a.name ? { name: a.name } : {}) } : undefined,
  );
}

const kDefaultAuthorizers = new Map<boolean, Authorizer>();

/** defaultAuthorizer: the built-in policy alone (bootstrap.ts), with the anonymous bindings when `anonymous`. */
export function defaultAuthorizer(anonymous: boolean): Authorizer {
  let a = kDefaultAuthorizers.get(anonymous);
  if (!a) kDefaultAuthorizers.set(anonymous, (a = newRbacAuthorizer(builtinPolicy(anonymous))));
  return a;
}

/** RequestDecision: allowed, or refused with the first attributes (the ones a 403 names). */
export type RequestDecision = { allowed: true; reason: string } | { allowed: false; attributes: Attributes };

/**
 * authorizeRequest: whether `user` may make the request `method path?query` (any one of its
 * attributes being allowed is enough, see getRequestAttributes). Pure.
 * @param method lowercased HTTP method (`get` for a WebSocket upgrade).
 * @param nodeName this node's name (the kubelet paths' `nodes/…` object).
 */
export function authorizeRequest(
  authorizer: Authorizer,
  user: UserInfo,
  method: string,
  path: string,
  nodeName: string,
  query?: URLSearchParams,
): RequestDecision {
  const all = getRequestAttributes(method, path, nodeName, query);
  for (const a of all) {
    const d: Decision = authorizer.authorize(user, a);
    if (d.allowed) return { allowed: true, reason: d.reason };
  }
  return { allowed: false, attributes: all[0] };
}
