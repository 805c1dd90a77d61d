/**
 * Counterpart of the apiserver's generated OpenAPI paths (k8s.io/apiserver/pkg/endpoints/installer.go
 * registering each verb with its query parameters and `x-kubernetes-action`): the operations of the
 * resources the one-node API serves, in the OpenAPI v3 shape. kubectl reads them: it sends
 * `fieldValidation=Strict` (server-side field validation, no client-side schema check) only when
 * the resource's PATCH operation lists a `fieldValidation` parameter. Pure data; any thread.
 */

type Json = Record<string, unknown>;

/** One served core/v1 resource: its plural, kind and whether it lives in a namespace. */
interface Resource {
  plural: string;
  kind: string;
  namespaced: boolean;
}

/** kServedResources: the core/v1 resources of issue 15 that the API serves. */
export const kServedResources: readonly Resource[] = [
  { plural: 'pods', kind: 'Pod', namespaced: true },
  { plural: 'events', kind: 'Event', namespaced: true },
  { plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  { plural: 'secrets', kind: 'Secret', namespaced: true },
  { plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true },
  { plural: 'nodes', kind: 'Node', namespaced: false },
  { plural: 'namespaces', kind: 'Namespace', namespaced: false },
];

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const core = (kind: string): string => `io.k8s.api.core.v1.${kind}`;
const meta = (kind: string): string => `io.k8s.apimachinery.pkg.apis.meta.v1.${kind}`;

function query(name: string, type: string, description: string): Json {
  return { description, in: 'query', name, schema: { type, uniqueItems: true } };
}

const kDryRun = query(
  'dryRun',
  'string',
  'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed',
);
const kFieldManager = query(
  'fieldManager',
  'string',
  'fieldManager is a name associated with the actor or entity that is making these changes.',
);
const kFieldValidation = query(
  'fieldValidation',
  'string',
  'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.',
);
const kForce = query(
  'force',
  'boolean',
  'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people.',
);
const kPretty = query('pretty', 'string', "If 'true', then the output is pretty printed.");
const kListParams = [
  query('allowWatchBookmarks', 'boolean', 'allowWatchBookmarks requests watch events with type "BOOKMARK".'),
  query('continue', 'string', 'The continue option should be set when retrieving more results from the server.'),
  query('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  query('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  query('limit', 'integer', 'limit is a maximum number of responses to return for a list call.'),
  query('resourceVersion', 'string', 'resourceVersion sets a constraint on what resource versions a request may be served from.'),
  query('timeoutSeconds', 'integer', 'Timeout for the list/watch call.'),
  query(
    'watch',
    'boolean',
    'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.',
  ),
];
const kDeleteParams = [
  kDryRun,
  query('gracePeriodSeconds', 'integer', 'The duration in seconds before the object should be deleted.'),
  query(
    'propagationPolicy',
    'string',
    "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'.",
  ),
];

function op(action: string, kind: string, id: string, response: string, extra: Json = {}): Json {
  return {
    description: `${action} ${kind}`,
    operationId: id,
    responses: {
      200: { content: { 'application/json': { schema: ref(response) }, 'application/yaml': { schema: ref(response) } }, description: 'OK' },
      401: { description: 'Unauthorized' },
    },
    tags: ['core_v1'],
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: '', kind, version: 'v1' },
    ...extra,
  };
}

function body(kind: string, types: string[] = ['*/*']): Json {
  return { requestBody: { content: Object.fromEntries(types.map((t) => [t, { schema: ref(kind) }])), required: true } };
}

/**
 * openApiV3Paths: the `paths` of `/openapi/v3/api/v1` for {@link kServedResources}: per resource
 * the collection (get list, post, delete collection), the item (get, put, patch with the four
 * patch types, delete), and the all-namespaces list for namespaced ones.
 */
export function openApiV3Paths(): Json {
  const paths: Json = {};
  for (const r of kServedResources) {
    const name = r.kind;
    const ns = r.namespaced ? 'Namespaced' : '';
    const base = r.namespaced ? `/api/v1/namespaces/{namespace}/${r.plural}` : `/api/v1/${r.plural}`;
    const scope: Json[] = r.namespaced
      ? [
          {
            description: 'object name and auth scope, such as for teams and projects',
            in: 'path',
            name: 'namespace',
            required: true,
            schema: { type: 'string', uniqueItems: true },
          },
        ]
      : [];
    paths[base] = {
      get: op('list', name, `listCoreV1${ns}${name}`, core(`${name}List`), { parameters: kListParams }),
      post: op('post', name, `createCoreV1${ns}${name}`, core(name), {
        ...body(core(name)),
        parameters: [kDryRun, kFieldManager, kFieldValidation],
      }),
      delete: op('deletecollection', name, `deleteCoreV1Collection${ns}${name}`, meta('Status'), {
        parameters: [...kDeleteParams, ...kListParams],
      }),
      parameters: [...scope, kPretty],
    };
    paths[`${base}/{name}`] = {
      get: op('get', name, `readCoreV1${ns}${name}`, core(name)),
      put: op('put', name, `replaceCoreV1${ns}${name}`, core(name), {
        ...body(core(name)),
        parameters: [kDryRun, kFieldManager, kFieldValidation],
      }),
      patch: op('patch', name, `patchCoreV1${ns}${name}`, core(name), {
        ...body(meta('Patch'), [
          'application/apply-patch+yaml',
          'application/json-patch+json',
          'application/merge-patch+json',
          'application/strategic-merge-patch+json',
        ]),
        parameters: [kDryRun, kFieldManager, kFieldValidation, kForce],
      }),
      delete: op('delete', name, `deleteCoreV1${ns}${name}`, meta('Status'), { ...body(meta('DeleteOptions')), parameters: kDeleteParams }),
      parameters: [
        { description: `name of the ${name}`, in: 'path', name: 'name', required: true, schema: { type: 'string', uniqueItems: true } },
        ...scope,
        kPretty,
      ],
    };
    if (r.namespaced) {
      paths[`/api/v1/${r.plural}`] = {
        get: op('list', name, `listCoreV1${name}ForAllNamespaces`, core(`${name}List`)),
        parameters: [...kListParams, kPretty],
      };
    }
  }
  return paths;
}
