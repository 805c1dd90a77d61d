// The API fuzz properties, shared by test/fuzz/api.test.ts (bounded) and bench/fuzz.ts (for N
// minutes): random requests to every route and method of the agent's server, and the check of
// each answer. As the apiserver promises (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters:
// every error is a metav1.Status), a request never gets a 5xx, every non-2xx JSON body is a Status
// with the same code, and no pod is accepted that validatePodForNode refuses.
import fc from 'fast-check';
import { stringify } from 'yaml';
import type { Pod, PodList, Status } from '../../src/shared/api.js';
import { formatFieldError } from '../../src/shared/errors.js';
import { validatePodForNode } from '../../src/shared/validation.js';
import {
  edgeNumber,
  invalidUtf8,
  jsonText,
  labelSelector,
  mutatedPod,
  name,
  podArbitrary,
  queryString,
  validishPodArbitrary,
  yamlText,
} from './arbitraries.js';

/** ApiRequest: one generated request (path with its query; body as text or bytes). */
export interface ApiRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** ApiFetch: how a property sends a request (the test harness's `node.api`, or a bench's fetch). */
export type ApiFetch = (path: string, init: RequestInit) => Promise<Response>;

/** kFuzzNamespace: the namespace most generated pods and paths use, so PUT and DELETE hit pods that exist. */
export const kFuzzNamespace = 'fuzz';
const kPodNames = ['fuzz-a', 'fuzz-b', 'fuzz-c'];

const nsSegment = fc.oneof(
  { weight: 4, arbitrary: fc.constant(kFuzzNamespace) },
  { weight: 1, arbitrary: fc.constantFrom('default', 'Bad_NS', '%2e%2e', '%zz', '') },
  { weight: 1, arbitrary: name },
);
const nameSegment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...kPodNames) },
  { weight: 1, arbitrary: fc.constantFrom('a%2Fb', '%00', '..', 'x'.repeat(300)) },
  { weight: 1, arbitrary: name },
);

/** A request path with a query, across every route of server.ts (and paths no route has). */
const pathArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '/healthz',
    '/healthz?verbose',
    '/events',
    '/node',
    '/metrics',
    '/',
    '/dashboard/app.js',
    '/dashboard/..%2F..%2Fetc%2Fpasswd',
    '/nope',
    '/pods/',
    '//pods',
    '/pods/a/b/c',
    '/watch/pods',
  ),
  queryString(['namespace', 'labelSelector', 'limit', 'resourceVersion']).map((q) => `/pods${q}`),
  fc
    .tuple(nsSegment, nameSegment, queryString(['gracePeriodSeconds', 'dryRun', 'propagationPolicy']))
    .map(([ns, n, q]) => `/pods/${ns}/${n}${q}`),
  fc
    .tuple(
      nsSegment,
      nameSegment,
      fc.constantFrom('main', 'nope', 'Bad'),
      queryString(['tailLines', 'timestamps', 'previous', 'sinceSeconds', 'limitBytes', 'follow']),
    )
    .map(([ns, n, c, q]) => `/containerLogs/${ns}/${n}/${c}${q}`),
  queryString(['namespace', 'fieldSelector']).map((q) => `/events${q}`),
  labelSelector.map((s) => `/pods?labelSelector=${encodeURIComponent(s)}`),
);

/** A pod: mostly valid, or random, or a valid one mutated; `poolName` (when given) replaces its metadata.name. */
const podBody = (poolName: fc.Arbitrary<string | undefined>): fc.Arbitrary<unknown> =>
  fc
    .tuple(
      fc.oneof(
        { weight: 3, arbitrary: validishPodArbitrary(kFuzzNamespace) },
        { weight: 1, arbitrary: podArbitrary(kFuzzNamespace) },
        { weight: 2, arbitrary: mutatedPod(kFuzzNamespace) },
      ),
      poolName,
    )
    .map(([pod, n]) => {
      const meta = (pod as { metadata?: unknown } | null)?.metadata;
      if (n && meta && typeof meta === 'object' && !Array.isArray(meta)) (meta as Record<string, unknown>).name = n;
      return pod;
    });
const anyPoolName = fc.option(fc.constantFrom(...kPodNames), { nil: undefined });

/** A body in any of the forms POST and PUT take (and forms they refuse), with its proper Content-Type. */
const bodyArbitrary = (pod: fc.Arbitrary<unknown>): fc.Arbitrary<{ body: string | Buffer; type: string }> =>
  fc.oneof(
    { weight: 6, arbitrary: pod.map((p) => ({ body: JSON.stringify(p), type: 'application/json' })) },
    { weight: 3, arbitrary: pod.map((p) => ({ body: stringify(p), type: 'application/yaml' })) },
    {
      weight: 1,
      arbitrary: fc
        .array(pod, { maxLength: 3 })
        .map((items) => ({ body: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }), type: 'application/json' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(pod, { minLength: 2, maxLength: 3 })
        .map((docs) => ({ body: docs.map((d) => stringify(d)).join('---\n'), type: 'text/yaml' })),
    },
    { weight: 1, arbitrary: yamlText.map((t) => ({ body: t, type: 'application/yaml' })) },
    { weight: 1, arbitrary: jsonText.map((t) => ({ body: t, type: 'application/json' })) },
    { weight: 1, arbitrary: invalidUtf8.map((b) => ({ body: b, type: 'application/json' })) },
    {
      weight: 1,
      arbitrary: fc
        .record({ gracePeriodSeconds: fc.oneof(edgeNumber, fc.string({ maxLength: 4 }), fc.constant(null)) })
        .map((o) => ({ body: JSON.stringify(o), type: 'application/json' })),
    },
  );

const contentType = (t: string) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant(t) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'text/plain',
        'application/json; charset=utf-16',
        'APPLICATION/YAML',
        'application/vnd.kubernetes.protobuf',
        'multipart/form-data; boundary=x',
        ';;;',
        'application/json;q=',
      ),
    },
  );

const extraHeaders = fc.dictionary(
  fc.constantFrom('accept', 'x-fuzz', 'accept-encoding', 'if-none-match', 'origin'),
  fc.constantFrom('*/*', 'application/json', 'gzip', '"x"', 'null', '\t'),
  { maxKeys: 2 },
);
const deleteQuery = queryString(['gracePeriodSeconds', 'dryRun', 'propagationPolicy']);

/** [method, path, body?]: each method mostly to its own routes (POST /pods, PUT and DELETE a pool pod), sometimes anywhere. */
const target: fc.Arbitrary<{ method: string; path: string; body?: { body: string | Buffer; type: string } }> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.oneof({ weight: 6, arbitrary: fc.constant('/pods') }, { weight: 1, arbitrary: pathArbitrary }),
        bodyArbitrary(podBody(anyPoolName)),
      )
      .map(([path, body]) => ({ method: 'POST', path, body })),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom(...kPodNames), fc.boolean(), deleteQuery).chain(([n, keep, q]) =>
      bodyArbitrary(podBody(fc.constant(keep ? n : undefined))).map((body) => ({
        method: 'PUT',
        path: `/pods/${kFuzzNamespace}/${n}${q}`,
        body,
      })),
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...kPodNames), deleteQuery, fc.option(bodyArbitrary(podBody(anyPoolName)), { nil: undefined, freq: 3 }))
      .map(([n, q, body]) => ({ method: 'DELETE', path: `/pods/${kFuzzNamespace}/${n}${q}`, ...(body ? { body } : {}) })),
  },
  { weight: 3, arbitrary: pathArbitrary.map((path) => ({ method: 'GET', path })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
        pathArbitrary,
        fc.option(bodyArbitrary(podBody(anyPoolName)), { nil: undefined }),
      )
      .map(([method, path, body]) => ({ method, path, ...(body ? { body } : {}) })),
  },
);

/** apiRequest: one random request to any route with any method, random query, headers and body. */
export const apiRequest: fc.Arbitrary<ApiRequest> = fc
  .tuple(target, extraHeaders)
  .chain(([t, extra]) => (t.body ? contentType(t.body.type) : fc.constant('')).map((ct) => ({ ...t, extra, ct })))
  .map((r) => {
    const headers: Record<string, string> = { ...r.extra };
    const canHaveBody = r.method !== 'GET' && r.method !== 'HEAD';
    if (r.body && canHaveBody && r.ct) headers['content-type'] = r.ct;
    return { method: r.method, path: r.path, headers, ...(r.body && canHaveBody ? { body: r.body.body } : {}) };
  });

/** describe: a request in one line for failure messages. */
export function describeRequest(r: ApiRequest): string {
  const body =
    r.body === undefined
      ? ''
      : typeof r.body === 'string'
        ? ` body ${JSON.stringify(r.body.slice(0, 2000))}`
        : ` body (bytes, base64) ${r.body.toString('base64').slice(0, 2000)}`;
  return `${r.method} ${r.path} headers ${JSON.stringify(r.headers)}${body}`;
}

/** podsOf: the pods of a 2xx POST/PUT/DELETE answer (a Pod or a PodList), or [] for other bodies. */
function podsOf(value: unknown): Pod[] {
  if (!value || typeof value !== 'object') return [];
  const v = value as { kind?: string; items?: unknown };
  if (v.kind === 'PodList' && Array.isArray(v.items)) return v.items as Pod[];
  if (v.kind === 'Pod') return [value as Pod];
  return [];
}

/** invalidAccepted: the field errors of each accepted pod the validator refuses (empty when none). */
export function invalidAccepted(pods: Pod[]): string[] {
  const out: string[] = [];
  for (const pod of pods) {
    // The agent's own bookkeeping on the stored pod is not the client's input.
    const { status: _status, ...input } = pod as Pod & { status?: unknown };
    const meta = { ...(input.metadata ?? {}) } as Record<string, unknown>;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    const errors = validatePodForNode({ ...input, metadata: meta } as Pod);
    if (errors.length) out.push(`${pod.metadata?.namespace}/${pod.metadata?.name}: ${errors.map(formatFieldError).join('; ')}`);
  }
  return out;
}

/**
 * checkAnswer sends `r` and checks the answer; resolves with the status code.
 * @throws Error naming the request when the answer is a 5xx, a non-2xx JSON body that is not a
 *   Status with the same code, or a 2xx write whose pods the validator refuses.
 */
export async function checkAnswer(api: ApiFetch, r: ApiRequest): Promise<number> {
  const res = await api(r.path, {
    method: r.method,
    headers: r.headers,
    ...(r.body !== undefined ? { body: typeof r.body === 'string' ? r.body : new Uint8Array(r.body) } : {}),
  });
  const text = await res.text();
  const fail = (why: string) => new Error(`${why}\nrequest: ${describeRequest(r)}\nanswer: ${res.status} ${text.slice(0, 1000)}`);
  if (res.status >= 500) throw fail('a 5xx answer');
  const json = (res.headers.get('content-type') ?? '').startsWith('application/json');
  if (!res.ok && r.method !== 'HEAD') {
    if (!json) throw fail('a non-2xx answer that is not a JSON Status');
    let status: Status;
    try {
      status = JSON.parse(text) as Status;
    } catch {
      throw fail('a non-2xx answer whose body is not JSON');
    }
    if (status.kind !== 'Status' || status.status !== 'Failure' || status.code !== res.status)
      throw fail('a non-2xx answer that is not a Failure Status with the same code');
  }
  if (res.ok && json && (r.method === 'POST' || r.method === 'PUT')) {
    const bad = invalidAccepted(podsOf(JSON.parse(text)));
    if (bad.length) throw fail(`accepted pods that the validator refuses: ${bad.join(' | ')}`);
  }
  return res.status;
}

/**
 * checkAgentAfter: the agent still answers `/healthz` with 200 and every pod `GET /pods` lists
 * passes the validator. @throws Error saying which does not hold.
 */
export async function checkAgentAfter(api: ApiFetch): Promise<void> {
  const health = await api('/healthz', { method: 'GET' });
  const healthText = await health.text();
  if (health.status !== 200) throw new Error(`/healthz answered ${health.status}: ${healthText}`);
  const list = (await (await api('/pods', { method: 'GET' })).json()) as PodList;
  const bad = invalidAccepted(list.items);
  if (bad.length) throw new Error(`GET /pods lists pods that the validator refuses: ${bad.join(' | ')}`);
}
