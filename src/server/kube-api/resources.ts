/**
 * Counterpart of the apiserver's read storage for the rest of what a one-node cluster shows
 * (pkg/registry/core: node, namespace, event, configmap, secret): this node (AgentHost.getNode),
 * the namespaces (namespaces.ts, which also creates and deletes empty ones), the agent's recent events
 * (AgentHost.listEvents, with the event registry's field selectors `involvedObject.*` that
 * `kubectl describe` uses), the ConfigMaps and Secrets the agent holds (AgentHost.listObjects) and the
 * ServiceAccounts (service-accounts.ts).
 * Each answers a Table when Accept asks for one (table.ts). Read only, but for namespaces, a
 * node's cordon (nodes.ts) and ConfigMaps and Secrets (config-objects.ts).
 */
import type { Event, Node } from '../../shared/api.js';
import type { KindFeeds, KindSpec } from './kind-feeds.js';
import { objectKey, type KindObject } from './kind-history.js';
import { continueExpired, pageOf, parseListPage, type ListMetaOut } from './list-pages.js';
import type { KubeApiOptions } from './options.js';
import { parseWatchParams, watchReply, type WatchKind } from './watch-http.js';
import { redactConfigObject, type ConfigObject, type ConfigObjectKind } from '../../shared/config-objects.js';
import type { TokenUser } from '../auth/auth.js';
import { hostClock, type AgentHost } from '../host/agent-host.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext, RouteHandler } from '../routes/router.js';
import { notFound, statusError } from '../http/status.js';
import { configObjectFields, eventFields, namespaceFields, nodeFields, serviceAccountFields, type FieldSet } from './field-selector.js';
import { configObjectWriteRoutes } from './config-objects.js';
import { createNamespace, deleteNamespace, namespaceObjects, updateNamespace } from './namespaces.js';
import { patchNode } from './nodes.js';
import { serviceAccountObjects } from './service-accounts.js';
import type { ServiceAccountObject } from '../../shared/service-account-admission.js';
import { isStatus, matchesFilter, parseIncludeObject, parseListFilter, queryBool, wantsTable } from './request.js';
import {
  kConfigMapPrinter,
  kEventPrinter,
  kNamespacePrinter,
  kNodePrinter,
  kPvcPrinter,
  kSecretPrinter,
  kServiceAccountPrinter,
  toTable,
  type IncludeObject,
  type NamespaceObject,
  type TablePrinter,
} from './table.js';

/** ResourceKind: how one resource is listed, found, filtered and printed, and how its changes are followed. */
interface ResourceKind<T extends KindObject> extends KindSpec<T> {
  namespaced: boolean;
  printer: TablePrinter<T>;
  fields(o: T): FieldSet;
}

/** ResourceRouteDeps: the per-server state the routes read: each host's kind feeds (kind-feeds.ts). */
export interface ResourceRouteDeps {
  feeds(host: AgentHost): KindFeeds;
}

function tableOrObject<T extends KindObject>(
  r: ResourceKind<T>,
  { host, req }: Pick<RouteContext, 'host' | 'req'>,
  objects: T[],
  list: ListMetaOut | undefined,
): HttpReply {
  if (wantsTable(req.headers.accept)) {
    const include = parseIncludeObject(req.query);
    if (isStatus(include)) return statusReply(include);
    return jsonReply(200, toTable(r.printer, objects, { include, nowMs: hostClock(host).now(), ...list }));
  }
  return list === undefined
    ? jsonReply(200, objects[0])
    : jsonReply(200, { apiVersion: 'v1', kind: `${r.kind}List`, metadata: list, items: objects });
}

function routesOf<T extends KindObject>(r: ResourceKind<T>, deps: ResourceRouteDeps, options: KubeApiOptions): Route[] {
  const labels = Object.keys(r.fields({ kind: r.kind } as T));
  /** synced: the kind's feed, listed again now; undefined when the host does not serve the kind. */
  const synced = async (host: AgentHost) => {
    const feed = deps.feeds(host).feed(r);
    return (await feed.sync()) ? feed.history : undefined;
  };
  const notServed = () => statusReply(statusError(405, 'MethodNotAllowed', `this agent does not serve ${r.resource}`));
  const listHandler = async ({ host, req, params, user }: RouteContext): Promise<HttpReply> => {
    const filter = parseListFilter(req.query, labels);
    if (isStatus(filter)) return statusReply(filter);
    const selected = (o: T) =>
      (params.namespace === undefined || (o.metadata?.namespace ?? 'default') === params.namespace) &&
      matchesFilter(filter, o.metadata?.labels, () => r.fields(o));
    if (queryBool(req.query, 'watch')) {
      const w = parseWatchParams(req.query);
      if (isStatus(w)) return statusReply(w);
      let table: { include: IncludeObject } | undefined;
      if (wantsTable(req.headers.accept)) {
        const include = parseIncludeObject(req.query);
        if (isStatus(include)) return statusReply(include);
        table = { include };
      }
      const history = await synced(host);
      if (!history) return notServed();
      const kind: WatchKind<T> = {
        matches: selected,
        present: (o) => o,
        printer: r.printer,
        clock: hostClock(host),
        *currentKeys() {
          for (const o of history.list()) if (selected(o)) yield objectKey(o);
        },
      };
      return watchReply(history.watch.bind(history), kind, { ...w, table }, { limiter: options.watchLimiter, user: user?.name ?? '' });
    }
    const page = parseListPage(req.query);
    if (isStatus(page)) return statusReply(page);
    const history = await synced(host);
    if (!history) return notServed();
    if (page.continueFrom && page.continueFrom.resourceVersion < history.compacted()) return statusReply(continueExpired());
    const filtered = filter.labels.length > 0 || filter.fields.length > 0;
    const { items, metadata } = pageOf(history.list().filter(selected), objectKey, page, history.resourceVersion(), filtered);
    return tableOrObject(r, { host, req }, items, metadata);
  };
  const getHandler = async ({ host, req, params }: RouteContext): Promise<HttpReply> => {
    const history = await synced(host);
    const found = history
      ?.list()
      .find((o) => o.metadata?.name === params.name && (!r.namespaced || (o.metadata?.namespace ?? 'default') === params.namespace));
    if (!found) return statusReply(notFound(r.resource, params.name));
    return tableOrObject(r, { host, req }, [found], undefined);
  };
  if (!r.namespaced)
    return [
      { path: `/api/v1/${r.resource}`, methods: { get: listHandler } },
      { path: `/api/v1/${r.resource}/:name`, methods: { get: getHandler } },
    ];
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

/** kNodePollMs: how often a watched node is built again to find changes nothing reported (the kubelet's node status update frequency, 10 s). */
const kNodePollMs = 10_000;

/** nodeFingerprint: the node without its conditions' heartbeat times (a heartbeat alone is not a change, as with node leases). */
function nodeFingerprint(n: Node): string {
  return JSON.stringify(n, (k, v: unknown) => (k === 'lastHeartbeatTime' || k === 'resourceVersion' ? undefined : v));
}

/** eventFingerprint: an event is replaced (never edited) when it is counted again, so its name, count and last time say whether it changed. */
function eventFingerprint(e: Event): string {
  return `${e.metadata?.name}|${e.count}|${e.lastTimestamp}`;
}

function events(host: AgentHost): Event[] | undefined {
  return host.listEvents?.().map((e) => ({ apiVersion: 'v1', kind: 'Event', ...e }));
}

/**
 * objects: the ConfigMaps or Secrets the agent holds; a Secret without its data, as every reply of
 * this agent (redactConfigObject, issue #12: no Secret value leaves the agent), its keys named in
 * the `kubelet-ts/secret-keys` annotation.
 */
/** objectsVersion: the object store's counter (ConfigMaps' and Secrets' own resourceVersions). */
function objectsVersion(host: AgentHost): number | undefined {
  return host.objectsResourceVersion?.();
}

function objects(kind: ConfigObjectKind) {
  return (host: AgentHost): ConfigObject[] | undefined =>
    host.listObjects?.(kind).map((o) => ({ ...redactConfigObject(o), apiVersion: 'v1' }));
}

/** resourceRoutes: GET (list and get, Table or object) of nodes, namespaces, events, configmaps, secrets, claims and serviceaccounts (list, get and watch only). */
export function resourceRoutes(deps: ResourceRouteDeps, options: KubeApiOptions = {}): Route[] {
  const ns: ResourceKind<NamespaceObject> = {
    resource: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    printer: kNamespacePrinter,
    fields: namespaceFields,
    list: namespaceObjects,
  };
  const node: ResourceKind<Node> = {
    resource: 'nodes',
    kind: 'Node',
    namespaced: false,
    printer: kNodePrinter,
    fields: nodeFields,
    list: nodes,
    fingerprint: nodeFingerprint,
    pollMs: kNodePollMs,
  };
  // ConfigMaps and Secrets carry the object store's own resourceVersions (PUT compares them).
  const configMaps: ResourceKind<ConfigObject> = {
    resource: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
    printer: kConfigMapPrinter,
    fields: configObjectFields,
    list: objects('ConfigMap'),
    ownVersions: objectsVersion,
  };
  const secrets: ResourceKind<ConfigObject> = {
    resource: 'secrets',
    kind: 'Secret',
    namespaced: true,
    printer: kSecretPrinter,
    fields: configObjectFields,
    list: objects('Secret'),
    ownVersions: objectsVersion,
  };
  const claims: ResourceKind<ConfigObject> = {
    resource: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    printer: kPvcPrinter,
    fields: configObjectFields,
    list: objects('PersistentVolumeClaim'),
    ownVersions: objectsVersion,
  };
  const routes = [
    ...routesOf<Node>(node, deps, options),
    ...routesOf(ns, deps, options),
    ...routesOf<Event>(
      {
        resource: 'events',
        kind: 'Event',
        namespaced: true,
        printer: kEventPrinter,
        fields: eventFields,
        list: events,
        fingerprint: eventFingerprint,
      },
      deps,
      options,
    ),
    ...routesOf(configMaps, deps, options),
    ...routesOf(secrets, deps, options),
    ...routesOf(claims, deps, options),
    ...routesOf<ServiceAccountObject>(
      {
        resource: 'serviceaccounts',
        kind: 'ServiceAccount',
        namespaced: true,
        printer: kServiceAccountPrinter,
        fields: serviceAccountFields,
        list: serviceAccountObjects,
      },
      deps,
      options,
    ),
  ];
  // GET and DELETE /api/v1/namespaces/{name}: the namespace route's `:name` is this path's `:namespace` (a DNS label).
  const asName =
    (handler: RouteHandler): RouteHandler =>
    (ctx) =>
      handler({ ...ctx, params: { name: ctx.params.namespace } });
  /** A write of the kind: its watchers see it now, not at the next poll. */
  const then =
    <T extends KindObject>(spec: KindSpec<T>, handler: RouteHandler): RouteHandler =>
    async (ctx) => {
      const reply = await handler(ctx);
      void deps
        .feeds(ctx.host)
        .feed(spec)
        .sync()
        .catch(() => undefined);
      return reply;
    };
  // ConfigMap and Secret writes (config-objects.ts) join the reads of the same paths.
  const writes = new Map(configObjectWriteRoutes().map((w) => [w.path, w.methods]));
  return routes.map((r) => {
    const w = writes.get(r.path);
    if (w) {
      const spec = r.path.includes('/secrets') ? secrets : r.path.includes('/persistentvolumeclaims') ? claims : configMaps;
      return { ...r, methods: { ...r.methods, ...Object.fromEntries(Object.entries(w).map(([m, h]) => [m, then(spec, h)])) } };
    }
    if (r.path === '/api/v1/namespaces') return { ...r, methods: { ...r.methods, post: then(ns, createNamespace) } };
    if (r.path === '/api/v1/nodes/:name') return { ...r, methods: { ...r.methods, patch: then(node, patchNode) } };
    if (r.path === '/api/v1/namespaces/:name') {
      return {
        path: '/api/v1/namespaces/:namespace',
        methods: {
          get: asName(r.methods.get!),
          delete: then(ns, asName(deleteNamespace)),
          put: then(ns, updateNamespace),
          patch: then(ns, updateNamespace),
        },
      };
    }
    return r;
  });
}
