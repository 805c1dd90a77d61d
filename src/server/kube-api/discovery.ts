/**
 * Counterpart of the apiserver's discovery and version endpoints (k8s.io/apiserver/pkg/endpoints/
 * discovery: legacy.go `/api`, group.go `/apis`, version.go `/api/v1` APIResourceList; and
 * pkg/version `/version`), for the one-node slice this agent serves. Aggregated discovery
 * (`Accept: …;as=APIGroupDiscoveryList`) is not served: the answer is the legacy document with
 * `Content-Type: application/json`, from which client-go's discovery falls back to the legacy
 * per-group requests without an error (discovery_client.go: a non-aggregated response type).
 */
import { jsonReply, type HttpReply } from '../http/reply.js';
import type { Route } from '../routes/router.js';
import { kDefaultGitVersion, type KubeApiOptions } from './options.js';

/** APIResource: metav1.APIResource as discovery lists it. */
export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  group?: string;
  version?: string;
}

/** kCoreResources: what /api/v1 lists: pods and their subresources, nodes, namespaces, events, configmaps, secrets. */
export const kCoreResources: readonly APIResource[] = Object.freeze([
  {
    name: 'pods',
    singularName: 'pod',
    namespaced: true,
    kind: 'Pod',
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['po'],
    categories: ['all'],
  },
  { name: 'pods/attach', singularName: '', namespaced: true, kind: 'PodAttachOptions', verbs: ['create', 'get'] },
  { name: 'pods/ephemeralcontainers', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
  { name: 'pods/eviction', singularName: '', namespaced: true, kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
  { name: 'pods/exec', singularName: '', namespaced: true, kind: 'PodExecOptions', verbs: ['create', 'get'] },
  { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
  { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
  {
    name: 'pods/proxy',
    singularName: '',
    namespaced: true,
    kind: 'PodProxyOptions',
    verbs: ['create', 'delete', 'get', 'patch', 'update'],
  },
  { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
  { name: 'nodes', singularName: 'node', namespaced: false, kind: 'Node', verbs: ['get', 'list', 'patch'], shortNames: ['no'] },
  { name: 'nodes/status', singularName: '', namespaced: false, kind: 'Node', verbs: ['get'] },
  {
    name: 'namespaces',
    singularName: 'namespace',
    namespaced: false,
    kind: 'Namespace',
    verbs: ['create', 'delete', 'get', 'list'],
    shortNames: ['ns'],
  },
  { name: 'events', singularName: 'event', namespaced: true, kind: 'Event', verbs: ['get', 'list'], shortNames: ['ev'] },
  {
    name: 'configmaps',
    singularName: 'configmap',
    namespaced: true,
    kind: 'ConfigMap',
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['cm'],
  },
  {
    name: 'secrets',
    singularName: 'secret',
    namespaced: true,
    kind: 'Secret',
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  },
  {
    name: 'serviceaccounts',
    singularName: 'serviceaccount',
    namespaced: true,
    kind: 'ServiceAccount',
    verbs: ['get', 'list', 'watch'],
    shortNames: ['sa'],
  },
  {
    name: 'persistentvolumeclaims',
    singularName: 'persistentvolumeclaim',
    namespaced: true,
    kind: 'PersistentVolumeClaim',
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['pvc'],
  },
]);

/** kApiGroups: the groups under /apis, each with its one version and its resources. */
export const kApiGroups: Readonly<Record<string, { version: string; resources: APIResource[] }>> = Object.freeze({
  'metrics.k8s.io': {
    version: 'v1beta1',
    resources: [
      { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
      { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
    ],
  },
  'authentication.k8s.io': {
    version: 'v1',
    resources: [{ name: 'selfsubjectreviews', singularName: '', namespaced: false, kind: 'SelfSubjectReview', verbs: ['create'] }],
  },
  'authorization.k8s.io': {
    version: 'v1',
    resources: [
      { name: 'selfsubjectaccessreviews', singularName: '', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] },
      { name: 'selfsubjectrulesreviews', singularName: '', namespaced: false, kind: 'SelfSubjectRulesReview', verbs: ['create'] },
    ],
  },
});

/** kServedSummary: the sentence unknown-resource answers use to say what this node serves. */
export const kServedSummary =
  'this node serves only pods (with log, exec, attach, status, eviction, ephemeralcontainers), nodes, namespaces, events, configmaps, secrets, persistentvolumeclaims and serviceaccounts (read only) in the core group, and metrics.k8s.io, authentication.k8s.io and authorization.k8s.io';

/**
 * versionInfo: the body of GET /version (version.Info). `major`/`minor` are read from the gitVersion
 * (`v1.32.0-…` → 1, 32) so kubectl's skew warning stays quiet for a v1.32 client.
 */
export function versionInfo(gitVersion: string): Record<string, string> {
  const m = /^v(\d+)\.(\d+)/.exec(gitVersion);
  return {
    major: m?.[1] ?? '1',
    minor: m?.[2] ?? '32',
    gitVersion,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'gc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

function groupVersion(group: string, version: string) {
  return { groupVersion: `${group}/${version}`, version };
}

/** apiGroupList: GET /apis (APIGroupList), every group with its one preferred version. */
export function apiGroupList(): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: Object.entries(kApiGroups).map(([name, g]) => ({
      name,
      versions: [groupVersion(name, g.version)],
      preferredVersion: groupVersion(name, g.version),
    })),
  };
}

/** resourceList: an APIResourceList for `groupVersion` (`v1`, `metrics.k8s.io/v1beta1`). */
export function resourceList(groupVersion: string, resources: readonly APIResource[]): Record<string, unknown> {
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}

function json(body: unknown): () => HttpReply {
  const text = JSON.stringify(body);
  return () => ({ status: 200, contentType: 'application/json', body: text });
}

/**
 * discoveryRoutes: GET /version, /api, /api/v1, /apis, /apis/{group} and /apis/{group}/{version}
 * for the served groups. Unknown groups fall to the not-served routes (routes.ts).
 */
export function discoveryRoutes(options: KubeApiOptions): Route[] {
  const routes: Route[] = [
    { path: '/version', methods: { get: json(versionInfo(options.gitVersion ?? kDefaultGitVersion)) } },
    {
      path: '/api',
      methods: {
        get: ({ req }) =>
          jsonReply(200, {
            kind: 'APIVersions',
            versions: ['v1'],
            serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: req.headers.host ?? '' }],
          }),
      },
    },
    { path: '/api/v1', methods: { get: json(resourceList('v1', kCoreResources)) } },
    { path: '/apis', methods: { get: json(apiGroupList()) } },
  ];
  for (const [name, g] of Object.entries(kApiGroups)) {
    routes.push({
      path: `/apis/${name}`,
      methods: {
        get: json({
          kind: 'APIGroup',
          apiVersion: 'v1',
          name,
          versions: [groupVersion(name, g.version)],
          preferredVersion: groupVersion(name, g.version),
        }),
      },
    });
    routes.push({ path: `/apis/${name}/${g.version}`, methods: { get: json(resourceList(`${name}/${g.version}`, g.resources)) } });
  }
  return routes;
}
