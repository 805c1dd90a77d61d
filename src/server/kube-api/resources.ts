/**
 * Counterpart of the apiserver's read storage for the rest of what a one-node cluster shows
 * (pkg/registry/core: node, namespace, event, configmap, secret): this node (AgentHost.getNode),
 * the namespaces (namespaces.ts, which also creates and deletes empty ones), the agent's recent events
 * (AgentHost.listEvents, with the event registry's field selectors `involvedObject.*` that
 * `kubectl describe` uses) and the ConfigMaps and Secrets the agent holds (AgentHost.listObjects).
 * Each answers a Table when Accept asks for one (table.ts). Read only, but for namespaces, a
 * node's cordon (nodes.ts) and ConfigMaps and Secrets (config-objects.ts).
 */
import type { Event, Node } from '../../shared/api.js';
import { redactConfigObject, type ConfigObject, type ConfigObjectKind } from '../../shared/config-objects.js';
import type { TokenUser } from '../auth.js';
import type { AgentHost } from '../agent-host.js';
import { jsonReply, statusReply, type HttpReply } from '../reply.js';
import type { Route, RouteContext, RouteHandler } from '../router.js';
import { notFound, statusError } from '../status.js';
import { configObjectFields, eventFields, namespaceFields, nodeFields, type FieldSet } from './field-selector.js';
import { configObjectWriteRoutes } from './config-objects.js';
import { createNamespace, deleteNamespace, namespaceObjects, updateNamespace } from './namespaces.js';
import { patchNode } from './nodes.js';
import { isStatus, matchesFilter, parseIncludeObject, parseListFilter, wantsTable } from './request.js';
import { kConfigMapPrinter, kEventPrinter, kNamespacePrinter, kNodePrinter, kSecretPrinter, toTable, type NamespaceObject, type TablePrinter } from './table.js';

/** ResourceKind: how one read-only resource is listed, found, filtered and printed. */
interface ResourceKind<T> {
  resource: string;
  kind: string;
  namespaced: boolean;
  printer: TablePrinter<T>;
  fields(o: T): FieldSet;
  list(host: AgentHost, user: TokenUser | undefined): Promise<T[] | undefined> | T[] | undefined;
  /** The List's `metadata.resourceVersion`, when the kind has one (ConfigMaps and Secrets: the object store's counter). */
  version?(host: AgentHost): number | undefined;
}

function answer<T extends { apiVersion?: string; kind?: string; metadata?: unknown }>(r: ResourceKind<T>, req: RouteContext['req'], objects: T[], single: boolean, host: AgentHost): HttpReply {
  const rv = single ? undefined : r.version?.(host);
  const resourceVersion = rv === undefined ? undefined : String(rv);
  if (wantsTable(req.headers.accept)) {
    const include = parseIncludeObject(req.query);
    if (isStatus(include)) return statusReply(include);
    return jsonReply(200, toTable(r.printer, objects, { include, nowMs: Date.now(), resourceVersion }));
  }
  return single ? jsonReply(200, objects[0]) : jsonReply(200, { apiVersion: 'v1', kind: `${r.kind}List`, metadata: resourceVersion === undefined ? {} : { resourceVersion }, items: objects });
}

function routesOf<T extends { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string; labels?: Record<string, string> } }>(r: ResourceKind<T>): Route[] {
  const labels = Object.keys(r.fields({ kind: r.kind } as T));
  const listHandler = async ({ host, req, params, user }: RouteContext): Promise<HttpReply> => {
    const filter = parseListFilter(req.query, labels);
    if (isStatus(filter)) return statusReply(filter);
    if (req.query.get('watch') === 'true' || req.query.get('watch') === '1') {
      return statusReply(statusError(405, 'MethodNotAllowed', `watch of ${r.resource} is not served by this node (only pods can be watched)`));
    }
    const all = await r.list(host, user);
    if (all === undefined) return statusReply(statusError(405, 'MethodNotAllowed', `this agent does not serve ${r.resource}`));
    const items = all.filter((o) => (params.namespace === undefined || (o.metadata?.namespace ?? 'default') === params.namespace) && matchesFilter(filter, o.metadata?.labels, () => r.fields(o)));
    return answer(r, req, items, false, host);
  };
  const getHandler = async ({ host, req, params, user }: RouteContext): Promise<HttpReply> => {
    const all = (await r.list(host, user)) ?? [];
    const found = all.find((o) => o.metadata?.name === params.name && (!r.namespaced || (o.metadata?.namespace ?? 'default') === params.namespace));
    if (!found) return statusReply(notFound(r.resource, params.name));
    return answer(r, req, [found], true, host);
  };
  if (!r.namespaced) return [{ path: `/api/v1/${r.resource}`, methods: { get: listHandler } }, { path: `/api/v1/${r.resource}/:name`, methods: { get: getHandler } }];
  return [
    { path: `/api/v1/${r.resource}`, methods: { get: listHandler } },
    { path: `/api/v1/namespaces/:namespace/${r.resource}`, methods: { get: listHandler } },
    { path: `/api/v1/namespaces/:namespace/${r.resource}/:name`, methods: { get: getHandler } },
  ];
}

async function nodes(host: AgentHost): Promise<Node[] | undefined> {
  if (!host.getNode) return undefined;
  return [{ apiVersion: 'v1', kind: 'Node', ...(await host.getNode()) }];
}

function events(host: AgentHost): Event[] | undefined {
  return host.listEvents?.().map((e) => ({ apiVersion: 'v1', kind: 'Event', ...e }));
}

/**
 * objects: the ConfigMaps or Secrets the agent holds; a Secret without its data, as every reply of
 * this agent (redactConfigObject, issue #12: no Secret value leaves the agent), its keys named in
 * the `kubelet-ts/secret-keys` annotation.
 */
function objects(kind: ConfigObjectKind) {
  return (host: AgentHost): ConfigObject[] | undefined => host.listObjects?.(kind).map((o) => ({ ...redactConfigObject(o), apiVersion: 'v1' }));
}

/** resourceRoutes: GET (list and get, Table or object) of nodes, namespaces, events, configmaps and secrets. */
export function resourceRoutes(): Route[] {
  const ns: ResourceKind<NamespaceObject> = { resource: 'namespaces', kind: 'Namespace', namespaced: false, printer: kNamespacePrinter, fields: namespaceFields, list: namespaceObjects };
  const routes = [
    ...routesOf<Node>({ resource: 'nodes', kind: 'Node', namespaced: false, printer: kNodePrinter, fields: nodeFields, list: nodes }),
    ...routesOf(ns),
    ...routesOf<Event>({ resource: 'events', kind: 'Event', namespaced: true, printer: kEventPrinter, fields: eventFields, list: events }),
    ...routesOf<ConfigObject>({ resource: 'configmaps', kind: 'ConfigMap', namespaced: true, printer: kConfigMapPrinter, fields: configObjectFields, list: objects('ConfigMap'), version: (h) => h.objectsResourceVersion?.() }),
    ...routesOf<ConfigObject>({ resource: 'secrets', kind: 'Secret', namespaced: true, printer: kSecretPrinter, fields: configObjectFields, list: objects('Secret'), version: (h) => h.objectsResourceVersion?.() }),
  ];
  // GET and DELETE /api/v1/namespaces/{name}: the namespace route's `:name` is this path's `:namespace` (a DNS label).
  const asName = (handler: RouteHandler): RouteHandler => (ctx) => handler({ ...ctx, params: { name: ctx.params.namespace } });
  // ConfigMap and Secret writes (config-objects.ts) join the reads of the same paths.
  const writes = new Map(configObjectWriteRoutes().map((w) => [w.path, w.methods]));
  return routes.map((r) => {
    if (writes.has(r.path)) return { ...r, methods: { ...r.methods, ...writes.get(r.path) } };
    if (r.path === '/api/v1/namespaces') return { ...r, methods: { ...r.methods, post: createNamespace } };
    if (r.path === '/api/v1/nodes/:name') return { ...r, methods: { ...r.methods, patch: patchNode } };
    if (r.path === '/api/v1/namespaces/:name') return { path: '/api/v1/namespaces/:namespace', methods: { get: asName(r.methods.get!), delete: asName(deleteNamespace), put: updateNamespace, patch: updateNamespace } };
    return r;
  });
}
