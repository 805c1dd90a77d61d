// Counterpart of the kubelet server's /pods endpoint (pkg/kubelet/server getPods) and the apiserver's pod GET.
import { stringify as toYaml } from 'yaml';
import { kKubernetesYaml } from '../../shared/yaml-options.js';
import type { Pod, PodList } from '../../shared/api.js';
import { isInvalidInput } from '../../shared/errors.js';
import type { AgentHost } from '../host/agent-host.js';
import { matchesLabelSelector, parseLabelSelector, type LabelSelector } from '../http/label-selector.js';
import { JsonFragments, listJson, objectInputs } from '../http/json-fragments.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { RouteContext } from './router.js';
import { notFound, statusError } from '../http/status.js';

/**
 * listPodsHandler answers `GET /pods`: a `PodList` of every pod with its status, optionally
 * filtered by `?namespace=` and `?labelSelector=` (equality and set-based terms, see
 * parseLabelSelector). A bad selector gives 400 `BadRequest`. When the host offers
 * `resourceVersion()`, the list carries it as `metadata.resourceVersion` (as the apiserver's
 * list does), so a client can watch from it (`WS /watch/pods?resourceVersion=`), and the
 * unfiltered list's serialized body is reused while it is still the same (see {@link PodListCache}).
 */
export function listPodsHandler({ host, req }: RouteContext): HttpReply {
  let selector: LabelSelector;
  try {
    selector = parseLabelSelector(req.query.get('labelSelector') ?? '');
  } catch (err) {
    if (!isInvalidInput(err)) throw err;
    return statusReply(statusError(400, 'BadRequest', (err as Error).message));
  }
  const namespace = req.query.get('namespace') ?? '';
  // Read the version before the pods: both are read synchronously, so they belong together.
  const rv = host.resourceVersion?.();
  const all = host.listPods();
  const metadata = rv === undefined ? {} : { resourceVersion: String(rv) };
  if (namespace === '' && selector.length === 0) {
    if (rv === undefined) return jsonReply(200, { apiVersion: 'v1', kind: 'PodList', metadata, items: all } satisfies PodList);
    return { status: 200, contentType: 'application/json', body: cachedPodListBody(host, rv, all) };
  }
  const items = all.filter(
    (p) => (namespace === '' || (p.metadata?.namespace ?? 'default') === namespace) && matchesLabelSelector(selector, p.metadata?.labels),
  );
  return jsonReply(200, { apiVersion: 'v1', kind: 'PodList', metadata, items } satisfies PodList);
}

/**
 * PodListCache: the last serialized unfiltered `PodList` of one host, with what it was built
 * from. The body is reused only while all of these still hold, which together cover every byte
 * of it:
 * - `resourceVersion` is unchanged: it is in the body, and the host bumps it on every change of a
 *   listed pod's status (the status manager's counter; an add and a delete are changes too);
 * - the host lists as many pods, in the same order, and every field of each listed pod other
 *   than `status` (`metadata`, `spec`, …) is the very same object as before. The agent replaces
 *   a pod object whenever it changes it (a spec update through a source or `PUT`, the
 *   `deletionTimestamp` a `DELETE` sets), and such a change may come before any status change,
 *   so the resourceVersion alone would serve a stale spec; identity catches it at O(pods)
 *   pointer compares per request, against O(bytes) to serialize.
 * Nothing else goes into the body: the filtered lists (`?namespace=`, `?labelSelector=`) are
 * computed every time and never cached.
 */
interface PodListCache {
  resourceVersion: number;
  /** The pods as `listPods()` returned them when `body` was made (only their fields are compared). */
  items: Pod[];
  /** The PodList's JSON as UTF-8 bytes (sent without encoding it again). */
  body: Buffer;
}

/** The pods' own JSON, shared by every host's list (a fragment is keyed by the pod's metadata object). */
const podFragments = new JsonFragments();

/** One cache per host (a process may serve several agents, e.g. in tests); dropped with the host. */
const podListCaches = new WeakMap<AgentHost, PodListCache>();

/** samePodObjects: true if `a` and `b` list the same pods with identical (===) fields apart from `status`. */
function samePodObjects(a: readonly Pod[], b: readonly Pod[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Record<string, unknown>;
    const y = b[i] as Record<string, unknown>;
    if (x === y) continue;
    const keys = Object.keys(x);
    if (keys.length !== Object.keys(y).length) return false;
    for (const k of keys) if (k !== 'status' && x[k] !== y[k]) return false;
    if ('status' in x !== 'status' in y) return false;
  }
  return true;
}

/**
 * cachedPodListBody: the serialized unfiltered PodList at `resourceVersion` made of `items`,
 * reusing the previous body of `host` when it is provably the same (see PodListCache), else
 * building it from the pods' JSON fragments (json-fragments.ts: only a changed pod is serialized
 * again) and keeping the result. Main thread, synchronous.
 */
function cachedPodListBody(host: AgentHost, resourceVersion: number, items: Pod[]): Buffer {
  const cached = podListCaches.get(host);
  if (cached && cached.resourceVersion === resourceVersion && samePodObjects(cached.items, items)) return cached.body;
  // A miss re-serializes only the pods that changed since they were last listed.
  const head = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: String(resourceVersion) } } satisfies Omit<
    PodList,
    'items'
  >;
  const body = Buffer.from(
    listJson(
      head,
      items.map((p) => podFragments.json(p.metadata ?? p, objectInputs(p), () => p)),
    ),
  );
  podListCaches.set(host, { resourceVersion, items, body });
  return body;
}

/**
 * getPodHandler answers `GET /pods/{namespace}/{name}`: the Pod (with `apiVersion`/`kind`), or 404
 * `NotFound`. JSON, or YAML (`application/yaml`) when the `Accept` header asks for YAML before
 * JSON — the apiserver's content negotiation, which the dashboard's YAML tab uses (`kubectl get -o yaml`).
 */
export function getPodHandler({ host, params, req }: RouteContext): HttpReply {
  const pod = host.getPod(params.namespace, params.name);
  if (pod === undefined) return statusReply(notFound('pods', params.name));
  const object = { apiVersion: 'v1', kind: 'Pod', ...pod };
  if (prefersYaml(req.headers.accept ?? '')) return { status: 200, contentType: 'application/yaml', body: toYaml(object, kKubernetesYaml) };
  return jsonReply(200, object);
}

/** prefersYaml: true when `accept` lists a YAML media type and no JSON one before it (q-values are not weighed). */
export function prefersYaml(accept: string): boolean {
  for (const part of accept.split(',')) {
    const type = part.split(';')[0].trim().toLowerCase();
    if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') return true;
    if (type === 'application/json' || type === '*/*' || type === 'application/*') return false;
  }
  return false;
}
