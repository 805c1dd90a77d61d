/**
 * The one-node slice of the Kubernetes API (issue #15), on the agent's own port: discovery,
 * version, pods with their subresources, nodes, namespaces, events, configmaps, secrets,
 * metrics.k8s.io, the self reviews, the OpenAPI seam, and the apiserver's 404 Status for every
 * resource or group this node does not serve (as the apiserver's NotFound handler,
 * k8s.io/apiserver/pkg/endpoints/handlers/responsewriters errors.go, with a message that says
 * what is served). `WS …/pods/{name}/exec|attach` is served by streaming/exec-ws.ts.
 */
import type { AgentHost } from '../host/agent-host.js';
import { statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext, RouteHandler } from '../routes/router.js';
import { statusError } from '../http/status.js';
import { discoveryRoutes, kServedSummary } from './discovery.js';
import { metricsRoutes } from './metrics-api.js';
import type { KubeApiOptions } from './options.js';
import { openApi as servedOpenApi } from './openapi.js';
import { kubeErrorStatus } from './request.js';
import { newKindFeeds, type KindFeeds } from './kind-feeds.js';
import { newVersionClock } from './kind-history.js';
import { newPodVersions, type PodVersions } from './pod-versions.js';
import { newPodRoutes } from './pods.js';
import { podProxyRoutes } from './pod-proxy.js';
import { nodeStatusRoutes } from './node-status.js';
import { resourceRoutes } from './resources.js';
import { reviewRoutes } from './reviews.js';

/** KubeApi: the routes to merge into the server's router, and `close` for the server's shutdown. */
export interface KubeApi {
  routes: Route[];
  /** close ends the per-host watches the routes hold (pod versions, the other kinds' feeds). Idempotent. */
  close(): void;
}

function notServed({ params }: RouteContext): HttpReply {
  if (params.sub) {
    return statusReply(
      statusError(
        404,
        'NotFound',
        `the server could not find the requested resource: subresource ${JSON.stringify(params.sub)} of ${JSON.stringify(params.resource)} is not served (${kServedSummary})`,
        { kind: params.resource },
      ),
    );
  }
  const what = params.resource
    ? `${JSON.stringify(params.resource)}${params.group ? ` in group ${JSON.stringify(params.group)}` : ''}`
    : params.group
      ? `group ${JSON.stringify(params.group)}`
      : 'this path';
  return statusReply(
    statusError(
      404,
      'NotFound',
      `the server could not find the requested resource: ${what} is not served (${kServedSummary})`,
      params.resource ? { kind: params.resource } : undefined,
    ),
  );
}

const kAllMethods = (h: RouteHandler) => ({ get: h, post: h, put: h, patch: h, delete: h });

/** The catch-all paths of the API (fewer static segments than any served route, so they match last). */
const kNotServedPaths = [
  '/api/:version',
  '/api/v1/:resource',
  '/api/v1/:resource/:name',
  '/api/v1/:resource/:name/:sub',
  '/api/v1/namespaces/:namespace/:resource',
  '/api/v1/namespaces/:namespace/:resource/:name',
  '/api/v1/namespaces/:namespace/:resource/:name/:sub',
  '/apis/:group',
  '/apis/:group/:version',
  '/apis/:group/:version/:resource',
  '/apis/:group/:version/:resource/:name',
  '/apis/:group/:version/namespaces/:namespace/:resource',
  '/apis/:group/:version/namespaces/:namespace/:resource/:name',
  '/apis/:group/:version/namespaces/:namespace/:resource/:name/:sub',
];

/**
 * openApiRoutes: GET /openapi/v2, /openapi/v3 and /openapi/v3/{group...}/{version} through
 * KubeApiOptions.openApi, by default the shipped core/v1 documents (openapi.ts); 404 for a path
 * it does not serve, 406 for an Accept it cannot meet.
 */
function openApiRoutes(options: KubeApiOptions): Route[] {
  const openApi = options.openApi ?? servedOpenApi;
  const handler = ({ req }: RouteContext): HttpReply => {
    let doc;
    try {
      doc = openApi(req.path, req.headers.accept ?? '');
    } catch (err) {
      return statusReply(kubeErrorStatus(err, 'openapi', req.path));
    }
    if (!doc)
      return statusReply(
        statusError(404, 'NotFound', `the server could not find the requested resource: ${req.path} is not served by this node`),
      );
    return { status: 200, contentType: doc.contentType, body: typeof doc.body === 'string' ? doc.body : (doc.body as unknown as string) };
  };
  return ['/openapi/v2', '/openapi/v3', '/openapi/v3/api/:version', '/openapi/v3/apis/:group/:version'].map((path) => ({
    path,
    methods: { get: handler },
  }));
}

/** upgradeRequired: exec/attach without a WebSocket upgrade (kubectl 1.32 always upgrades). */
function upgradeRequired(): HttpReply {
  return statusReply(
    statusError(400, 'BadRequest', 'Upgrade request required: exec and attach are served over WebSocket (sub-protocol v5.channel.k8s.io)'),
  );
}

/**
 * newKubeApi builds the API's routes. The pods' resourceVersions come from one watch of the host,
 * started at the first pod request (a host serves one server).
 */
export function newKubeApi(options: KubeApiOptions = {}): KubeApi {
  const versions = new Map<AgentHost, PodVersions>();
  const feeds = new Map<AgentHost, KindFeeds>();
  const clock = newVersionClock();
  const routes: Route[] = [
    ...discoveryRoutes(options),
    ...newPodRoutes(options, {
      versions(host) {
        let v = versions.get(host);
        if (!v) versions.set(host, (v = newPodVersions(host)));
        return v;
      },
    }),
    { path: '/api/v1/namespaces/:namespace/pods/:name/exec', methods: { get: upgradeRequired, post: upgradeRequired } },
    { path: '/api/v1/namespaces/:namespace/pods/:name/attach', methods: { get: upgradeRequired, post: upgradeRequired } },
    ...podProxyRoutes(),
    ...nodeStatusRoutes(),
    ...resourceRoutes(
      {
        feeds(host) {
          let f = feeds.get(host);
          if (!f) feeds.set(host, (f = newKindFeeds(host, clock)));
          return f;
        },
      },
      options,
    ),
    ...metricsRoutes(),
    ...reviewRoutes(),
    ...openApiRoutes(options),
    ...kNotServedPaths.map((path) => ({ path, methods: kAllMethods(notServed) })),
  ];
  return {
    routes,
    close() {
      for (const v of versions.values()) v.close();
      versions.clear();
      for (const f of feeds.values()) f.close();
      feeds.clear();
    },
  };
}
