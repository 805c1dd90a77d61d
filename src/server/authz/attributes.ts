/**
 * Request attributes for authorization, as upstream computes them:
 * - Kubernetes API paths (`/api/…`, `/apis/…`): the apiserver's RequestInfo
 *   (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go): verb from the method, `list`/`watch`
 *   for a GET without a name, `deletecollection` for a DELETE without one; namespace, resource,
 *   subresource and name from the path; paths too short to name a resource (`/api`, `/api/v1`,
 *   `/apis/{group}/{version}`) are non-resource requests.
 * - The kubelet's own paths: pkg/kubelet/server/auth.go (GetRequestAttributes): a resource request
 *   on `nodes` named after this node, subresource `stats` (`/stats`), `metrics` (`/metrics`), `log`
 *   (`/logs`), `spec` (`/spec`), everything else `proxy`; the verb from the method.
 * - Streams into a container need `create`, also when they arrive as a GET WebSocket upgrade:
 *   `pods/exec|attach|portforward` on the API paths (as the apiserver's
 *   AuthorizePodWebsocketUpgradeCreatePermission, which checks `create` on such upgrades), and
 *   `nodes/proxy` on the kubelet's `/exec`, `/attach`, `/run`, `/portForward`.
 * Pure functions.
 */
import { queryBool } from '../http/query-bool.js';

/** Attributes: authorizer.Attributes (k8s.io/apiserver/pkg/authorization/authorizer), reduced. */
export interface Attributes {
  /** The Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection; for a non-resource request the lowercased HTTP method. */
  verb: string;
  /** true for a request on a resource; false for a non-resource URL (`path` then matters). */
  resourceRequest: boolean;
  /** API group ('' = core). */
  apiGroup: string;
  /** Namespace ('' = cluster scope). */
  namespace: string;
  /** Resource, e.g. `pods`. */
  resource: string;
  /** Subresource, e.g. `exec` ('' = none). */
  subresource: string;
  /** Object name ('' = none, a collection). */
  name: string;
  /** The request path (non-resource requests are matched on it). */
  path: string;
}

/** kStreamingSubresources: pod subresources that enter a container; a GET (WebSocket upgrade) of them needs `create`. */
const kStreamingSubresources = new Set(['exec', 'attach', 'portforward']);

/** kKubeletStreamingPrefixes: the kubelet's streaming endpoints; any method on them is `create` on nodes/proxy. */
export const kKubeletStreamingPrefixes: readonly string[] = Object.freeze(['/exec/', '/attach/', '/run/', '/portForward/']);

/** kNamespaceSubresources: requestinfo.go's namespaceSubresources (`/namespaces/{ns}/status`, `/finalize`). */
const kNamespaceSubresources = new Set(['status', 'finalize']);

/** kSpecialVerbs: requestinfo.go's verbs given by a path prefix (`/api/v1/watch/pods`). */
const kSpecialVerbs = new Set(['proxy', 'watch']);

/** methodVerb: the kubelet's and RequestInfo's verb of an HTTP method (lowercased); HEAD reads as get. */
function methodVerb(method: string): string {
  switch (method) {
    case 'post':
      return 'create';
    case 'get':
    case 'head':
      return 'get';
    case 'put':
      return 'update';
    case 'patch':
      return 'patch';
    case 'delete':
      return 'delete';
    default:
      return '';
  }
}

function nonResource(method: string, path: string): Attributes {
  return {
    verb: method === 'head' ? 'get' : method,
    resourceRequest: false,
    apiGroup: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    path,
  };
}

function isSubpath(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** decode: a path segment percent-decoded ('' when it cannot be: the router answers 400 for it). */
function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * apiRequestAttributes: the apiserver's RequestInfo of a request on `/api` or `/apis`
 * (requestinfo.go NewRequestInfo): resource request when the path names at least a resource,
 * else non-resource.
 * @param method lowercased HTTP method.
 * @param path the path without query, still percent-encoded.
 * @param query the query (`watch`, `fieldSelector=metadata.name=…` turn a collection GET into watch / a named request).
 */
export function apiRequestAttributes(method: string, path: string, query?: URLSearchParams): Attributes {
  // As requestinfo.go's splitPath: the leading and trailing '/' trimmed, empty segments inside kept (the router sees them too).
  let parts = path
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .map(decode);
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return nonResource(method, path);
  const prefix = parts[0];
  parts = parts.slice(1);
  let apiGroup = '';
  if (prefix === 'apis') {
    if (parts.length < 3) return nonResource(method, path);
    apiGroup = parts[0];
    parts = parts.slice(1);
  }
  parts = parts.slice(1); // the version
  let verb = methodVerb(method);
  let viaPrefix = false;
  if (kSpecialVerbs.has(parts[0])) {
    if (parts.length < 2) return nonResource(method, path);
    verb = parts[0];
    parts = parts.slice(1);
    viaPrefix = true;
  }
  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1];
    if (parts.length > 2 && !kNamespaceSubresources.has(parts[2])) parts = parts.slice(2);
  }
  const resource = parts[0] ?? '';
  let name = parts[1] ?? '';
  const subresource = parts.length >= 3 && verb !== 'proxy' ? parts[2] : '';
  if (name === '' && verb === 'get') {
    verb = query && queryBool(query, 'watch') ? 'watch' : 'list';
    const exact = /^metadata\.name(==?)([^,]+)$/.exec(query?.get('fieldSelector') ?? '');
    if (exact && !exact[2].includes('/') && exact[2] !== '.' && exact[2] !== '..') name = exact[2];
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';
  if (!viaPrefix && verb === 'get' && kStreamingSubresources.has(subresource) && resource === 'pods') verb = 'create';
  return { verb, resourceRequest: true, apiGroup, namespace, resource, subresource, name, path };
}

/**
 * kubeletRequestAttributes: the kubelet's attributes of a request on its own paths
 * (pkg/kubelet/server/auth.go GetRequestAttributes): `nodes/<subresource>` named `nodeName`.
 * The kubelet's streaming endpoints ({@link kKubeletStreamingPrefixes}) are `create` whatever the method.
 * @returns the attributes; for `/metrics…` also the non-resource URL, either one allowing is enough
 *   (the kubelet serves /metrics as nodes/metrics, the apiserver as a non-resource URL).
 */
export function kubeletRequestAttributes(method: string, path: string, nodeName: string): Attributes[] {
  let subresource = 'proxy';
  if (isSubpath(path, '/stats')) subresource = 'stats';
  else if (isSubpath(path, '/metrics')) subresource = 'metrics';
  else if (isSubpath(path, '/logs')) subresource = 'log';
  else if (isSubpath(path, '/spec')) subresource = 'spec';
  const streaming = kKubeletStreamingPrefixes.some((p) => path.startsWith(p));
  const attrs: Attributes = {
    verb: streaming ? 'create' : methodVerb(method),
    resourceRequest: true,
    apiGroup: '',
    namespace: '',
    resource: 'nodes',
    subresource,
    name: nodeName,
    path,
  };
  return subresource === 'metrics' ? [attrs, nonResource(method, path)] : [attrs];
}

/** kNonResourcePaths: the apiserver's non-resource URLs this server serves outside `/api` and `/apis`. */
function isNonResourcePath(path: string): boolean {
  return ['/version', '/openapi', '/healthz', '/livez', '/readyz'].some((p) => isSubpath(path, p));
}

/**
 * getRequestAttributes: the attributes of one request to this server: RequestInfo for `/api` and
 * `/apis` ({@link apiRequestAttributes}), non-resource for `/version`, `/openapi/…`, `/healthz`,
 * `/livez`, `/readyz`, the kubelet's for every other path ({@link kubeletRequestAttributes}).
 * The request is allowed when any one of the returned attributes is allowed; the first is the one
 * a 403 names. Pure.
 * @param method lowercased HTTP method.
 * @param path the path without query, still percent-encoded.
 * @param nodeName this node's name (the `name` of the kubelet's `nodes/…` attributes).
 */
export function getRequestAttributes(method: string, path: string, nodeName: string, query?: URLSearchParams): Attributes[] {
  if (isSubpath(path, '/api') || isSubpath(path, '/apis')) return [apiRequestAttributes(method, path, query)];
  if (isNonResourcePath(path)) return [nonResource(method, path)];
  return kubeletRequestAttributes(method, path, nodeName);
}
