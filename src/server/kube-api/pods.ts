/**
 * Counterpart of the apiserver's pod REST storage as a one-node API (pkg/registry/core/pod/storage:
 * get, list, watch, create, update, patch, delete, deletecollection, and the `status`, `log` and
 * `eviction` subresources; `?dryRun=All` on every write), over this agent's pods: reads from
 * AgentHost.listPods/getPod/watch, writes through the intake (AgentHost.submitPods/replacePod/
 * deletePod: the `api` source). A static pod reads as a mirror pod and refuses writes
 * (present.ts). Errors are the apiserver's Statuses. The deletes and eviction are pod-delete.ts's, the
 * log subresource pod-log.ts's; this file lists, reads, creates, updates and patches, and routes them all.
 */
import type { Pod, PodList, Status } from '../../shared/api.js';
import { isStaticPod } from '../../shared/annotations.js';
import { hostClock, type AgentHost } from '../host/agent-host.js';
import { JsonFragments, ListBody, objectInputs } from '../http/json-fragments.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from '../routes/router.js';
import { admitApiPods, invalidStatus, parsePodsBody, withHeaders } from '../routes/intake.js';
import { notFound, statusError } from '../http/status.js';
import { ephemeralContainersRoutes } from './ephemeral-containers.js';
import { kPodFieldLabels, podFields } from './field-selector.js';
import { strictDecodingMessage, unknownFields } from './field-validation.js';
import type { KubeApiOptions } from './options.js';
import { patchPod as strategicPatchPod } from './patch.js';
import { newPodDeleteHandlers } from './pod-delete.js';
import { podLogHandler } from './pod-log.js';
import type { PodVersions } from './pod-versions.js';
import { mirrorPodWriteRefused, presentPod } from './present.js';
import { jsonRequestBody } from './protobuf-body.js';
import {
  isStatus,
  kubeErrorStatus,
  matchesFilter,
  parseDryRun,
  parseIncludeObject,
  parseListFilter,
  queryBool,
  wantsTable,
} from './request.js';
import { kPodPrinter, toTable } from './table.js';
import { parseWatchParams, podWatchReply } from './watch-http.js';
import { compareKeys, continueExpired, pageOf, parseListPage } from './list-pages.js';

/** PodRouteDeps: the per-server state the pod routes read (the pods' resourceVersions). */
export interface PodRouteDeps {
  versions(host: AgentHost): PodVersions;
}

/** kStale: store's answer when the pod changed after a PATCH was applied to it (the patch is applied again). */
const kStale = Symbol('stale');
/** kPatchAttempts: how many times a PATCH is applied to a pod that keeps changing before 409 Conflict. */
const kPatchAttempts = 5;

function conflict(name: string, detail: string): Status {
  return statusError(409, 'Conflict', `Operation cannot be fulfilled on pods ${JSON.stringify(name)}: ${detail}`, { name, kind: 'pods' });
}

function respond(
  { host, req }: Pick<RouteContext, 'host' | 'req'>,
  objects: Pod[],
  single: boolean,
  resourceVersion: string | undefined,
): HttpReply {
  if (wantsTable(req.headers.accept)) {
    const include = parseIncludeObject(req.query);
    if (isStatus(include)) return statusReply(include);
    return jsonReply(200, toTable(kPodPrinter, objects, { include, nowMs: hostClock(host).now(), resourceVersion }));
  }
  if (single) return jsonReply(200, objects[0]);
  return jsonReply(200, {
    apiVersion: 'v1',
    kind: 'PodList',
    metadata: resourceVersion === undefined ? {} : { resourceVersion },
    items: objects,
  } satisfies PodList);
}

/**
 * strictFieldsRefusal: the apiserver's `fieldValidation=Strict` (what kubectl 1.32 sends by
 * default, `--validate=strict`, instead of checking the schema itself), at decode time as the
 * apiserver's strict decoder: a 400 BadRequest naming every field of the JSON `body` the served
 * core/v1 Pod schema does not define (`strict decoding error: unknown field
 * "spec.containers[0].imagee"`), else undefined. A body that is not a JSON object is left to the
 * usual decoder (YAML, or its own error). `Warn` and `Ignore` (and no parameter) go on to the
 * validation, which refuses unknown container fields as 422 on its own; the apiserver's Warn would
 * add a Warning header, which we do not send.
 */
function strictFieldsRefusal(query: URLSearchParams, body: Buffer | string | undefined): HttpReply | undefined {
  if (query.get('fieldValidation') !== 'Strict' || body === undefined) return undefined;
  let obj: unknown;
  try {
    obj = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  const unknown = unknownFields(obj, 'Pod');
  return unknown.length > 0 ? statusReply(statusError(400, 'BadRequest', strictDecodingMessage(unknown))) : undefined;
}

/** podKey: a pod's storage key, `namespace/name` (the apiserver's list order). */
function podKey(p: Pod): string {
  return `${p.metadata?.namespace ?? 'default'}/${p.metadata?.name ?? ''}`;
}

/**
 * newPodSorter: puts pods in key order (by namespace, then name), as the apiserver lists them.
 * The order of the last full sort is kept: a list of the same pods (the common case: kubectl and
 * informers list all pods again and again) is placed by it in linear time, without sorting
 * (a sort of 10,000 pods took 15–50 ms here).
 */
function newPodSorter(): (pods: Pod[], all: boolean) => Pod[] {
  let order = new Map<string, number>();
  return (pods, all) => {
    if (order.size === pods.length) {
      const out: Pod[] = new Array(pods.length);
      let placed = 0;
      for (const p of pods) {
        const i = order.get(podKey(p));
        if (i === undefined || out[i] !== undefined) break;
        out[i] = p;
        placed++;
      }
      if (placed === pods.length) return out;
    }
    const keyed = pods.map((p) => ({ p, k: podKey(p) }));
    keyed.sort((a, b) => compareKeys(a.k, b.k));
    // Only a list of all pods (`all`) is remembered: its order serves the next one; a filtered one is small.
    if (all) order = new Map(keyed.map((x, i) => [x.k, i]));
    return keyed.map((x) => x.p);
  };
}

/**
 * podVersionCompacted: the pods' watch history no longer holds `resourceVersion` (a watch from it
 * starts with an ERROR, AgentHost.watch delivers it synchronously), so a continue token of a list
 * at that version is too old, as a compacted etcd revision. A host without watch keeps no history: never.
 */
function podVersionCompacted(host: AgentHost, resourceVersion: number): boolean {
  let expired = false;
  let first = true;
  const cancel = host.watch?.(resourceVersion, (e) => {
    if (first) expired = e.type === 'ERROR';
    first = false;
  });
  cancel?.();
  return expired;
}

export function newPodRoutes(options: KubeApiOptions, deps: PodRouteDeps): Route[] {
  /** The presented pods' JSON (resourceVersion and mirror annotation in), per server: its versions are its own. */
  const podFragments = new JsonFragments();
  /** The last list body served: a repeated identical list is sent as the same bytes. */
  const listBody = new ListBody();
  const present = (host: AgentHost, pod: Pod) => presentPod(pod, deps.versions(host).get(pod.metadata?.uid ?? ''));
  const patchPod = options.patchPod ?? strategicPatchPod;
  const sortPods = newPodSorter();

  /** list and watch, in one namespace or (namespace undefined) all. */
  const list =
    (all: boolean) =>
    ({ host, req, params, user }: RouteContext): HttpReply => {
      const namespace = all ? undefined : params.namespace;
      const filter = parseListFilter(req.query, kPodFieldLabels);
      if (isStatus(filter)) return statusReply(filter);
      if (queryBool(req.query, 'watch')) {
        const w = parseWatchParams(req.query);
        if (isStatus(w)) return statusReply(w);
        let table: { include: 'None' | 'Metadata' | 'Object' } | undefined;
        if (wantsTable(req.headers.accept)) {
          const include = parseIncludeObject(req.query);
          if (isStatus(include)) return statusReply(include);
          table = { include };
        }
        const r = podWatchReply(host, { namespace, filter, ...w, table }, { limiter: options.watchLimiter, user: user?.name ?? '' });
        return isStatus(r) ? statusReply(r) : r;
      }
      const listPage = parseListPage(req.query);
      if (isStatus(listPage)) return statusReply(listPage);
      if (listPage.continueFrom && podVersionCompacted(host, listPage.continueFrom.resourceVersion)) return statusReply(continueExpired());
      const rv = host.resourceVersion?.();
      const filtered = host
        .listPods()
        .filter(
          (p) =>
            (namespace === undefined || (p.metadata?.namespace ?? 'default') === namespace) &&
            matchesFilter(filter, p.metadata?.labels, () => podFields(p)),
        );
      const selectors = filter.labels.length > 0 || filter.fields.length > 0;
      const { items: selected, metadata: listMeta } = pageOf(
        sortPods(filtered, namespace === undefined && !selectors),
        podKey,
        listPage,
        rv,
        selectors,
      );
      const resourceVersion = listMeta.resourceVersion;
      if (wantsTable(req.headers.accept)) {
        const include = parseIncludeObject(req.query);
        if (isStatus(include)) return statusReply(include);
        return jsonReply(
          200,
          toTable(
            kPodPrinter,
            selected.map((p) => present(host, p)),
            { include, nowMs: hostClock(host).now(), ...listMeta },
          ),
        );
      }
      // A PodList from the pods' JSON fragments: a pod is serialized again only when it or its
      // resourceVersion changed (json-fragments.ts); byte for byte what respond() would send.
      const versions = deps.versions(host);
      const items = selected.map((p) => {
        const version = versions.get(p.metadata?.uid ?? '');
        return podFragments.json(p.metadata ?? p, objectInputs(p, [version]), () => presentPod(p, version));
      });
      const head = { apiVersion: 'v1', kind: 'PodList', metadata: resourceVersion === undefined ? {} : listMeta };
      return { status: 200, contentType: 'application/json', body: listBody.body(head, items) };
    };

  const get = ({ host, req, params }: RouteContext): HttpReply => {
    const pod = host.getPod(params.namespace, params.name);
    if (!pod) return statusReply(notFound('pods', params.name));
    return respond({ host, req }, [present(host, pod)], true, undefined);
  };

  const create = async (ctx: RouteContext): Promise<HttpReply> => {
    const { host, req, params } = ctx;
    if (!host.submitPods) return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not create pods'));
    const dryRun = parseDryRun(req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    const decoded = await jsonRequestBody(host, ctx.body, req.headers['content-type'], 'Pod');
    if (isStatus(decoded)) return statusReply(decoded);
    const { body } = decoded;
    const strict = strictFieldsRefusal(req.query, body);
    if (strict) return strict;
    const parsed = await parsePodsBody(host, body, decoded.contentType, { namespace: params.namespace, name: '' });
    if (!parsed.ok) return parsed.reply;
    if (!parsed.single || parsed.pods.length !== 1 || parsed.objects.length > 0) {
      return statusReply(statusError(400, 'BadRequest', `POST /api/v1/namespaces/${params.namespace}/pods takes exactly one Pod`));
    }
    const pod = parsed.pods[0];
    if ((pod.metadata?.namespace ?? 'default') !== params.namespace) {
      return statusReply(
        statusError(
          400,
          'BadRequest',
          `the namespace of the provided object (${pod.metadata?.namespace}) does not match the namespace sent on the request (${params.namespace})`,
        ),
      );
    }
    // ValidatePodCreate: ephemeral containers come only through the ephemeralcontainers subresource.
    if ((pod.spec?.ephemeralContainers ?? []).length > 0) {
      return statusReply(
        invalidStatus(pod.metadata?.name ?? '', [
          { type: 'Forbidden', field: 'spec.ephemeralContainers', detail: 'cannot be set on create' },
        ]),
      );
    }
    const admission = admitApiPods(ctx, [pod]);
    if (admission.refused) return withHeaders(admission.refused, admission.headers);
    try {
      const [created] = await host.submitPods([pod], { dryRun });
      return withHeaders(jsonReply(201, present(host, created)), admission.headers);
    } catch (err) {
      return statusReply(kubeErrorStatus(err, 'pods', pod.metadata?.name ?? ''));
    }
  };

  /**
   * store: the PUT path (also a PATCH's result): validate, check the name, namespace and
   * resourceVersion, then AgentHost.replacePod. `basedOn` (a PATCH's) is the resourceVersion the
   * patch was applied to: if the result still carries it, the patch set no resourceVersion of its
   * own, so it is no precondition; instead, if the pod changed since (a status update while the body
   * was parsed), store answers kStale and the caller applies the patch again to the new pod.
   */
  const store = async (
    ctx: RouteContext,
    text: string,
    contentType: string | undefined,
    basedOn?: string,
  ): Promise<HttpReply | typeof kStale> => {
    const { host, params } = ctx;
    if (!host.replacePod) return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not update pods'));
    const dryRun = parseDryRun(ctx.req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    const current = host.getPod(params.namespace, params.name);
    if (!current) return statusReply(notFound('pods', params.name));
    if (isStaticPod(current)) return statusReply(mirrorPodWriteRefused(params.name, ctx.req.method === 'patch' ? 'patch' : 'update'));
    const strict = strictFieldsRefusal(ctx.req.query, text);
    if (strict) return strict;
    const parsed = await parsePodsBody(host, Buffer.from(text, 'utf8'), contentType, { namespace: params.namespace, name: params.name });
    if (!parsed.ok) return parsed.reply;
    if (!parsed.single || parsed.pods.length !== 1 || parsed.objects.length > 0)
      return statusReply(statusError(400, 'BadRequest', 'the body must be exactly one Pod'));
    const pod = parsed.pods[0];
    if (pod.metadata?.name !== params.name) {
      return statusReply(
        statusError(
          400,
          'BadRequest',
          `the name of the object (${pod.metadata?.name}) does not match the name on the URL (${params.name})`,
        ),
      );
    }
    if ((pod.metadata?.namespace ?? 'default') !== params.namespace) {
      return statusReply(
        statusError(
          400,
          'BadRequest',
          `the namespace of the provided object (${pod.metadata?.namespace}) does not match the namespace sent on the request (${params.namespace})`,
        ),
      );
    }
    const rv = pod.metadata?.resourceVersion;
    const have = deps.versions(host).get(current.metadata?.uid ?? '');
    if (basedOn !== undefined && rv === basedOn) {
      if (have !== undefined && String(have) !== basedOn) return kStale;
    } else if (rv !== undefined && rv !== '' && have !== undefined && rv !== String(have)) {
      return statusReply(
        conflict(params.name, 'the object has been modified; please apply your changes to the latest version and try again'),
      );
    }
    // Ephemeral containers change only through their subresource (ephemeral-containers.ts): a pod update keeps the stored ones.
    if (pod.spec) {
      if (current.spec?.ephemeralContainers?.length) pod.spec.ephemeralContainers = current.spec.ephemeralContainers;
      else delete pod.spec.ephemeralContainers;
    }
    const uid = pod.metadata?.uid;
    if (uid && uid !== current.metadata?.uid)
      return statusReply(
        conflict(params.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata?.uid}`),
      );
    const admission = admitApiPods(ctx, [pod], [current]);
    if (admission.refused) return withHeaders(admission.refused, admission.headers);
    try {
      return withHeaders(
        jsonReply(200, present(host, await host.replacePod(params.namespace, params.name, pod, { dryRun }))),
        admission.headers,
      );
    } catch (err) {
      return statusReply(kubeErrorStatus(err, 'pods', params.name));
    }
  };

  const update = async (ctx: RouteContext): Promise<HttpReply> => {
    const decoded = await jsonRequestBody(ctx.host, ctx.body, ctx.req.headers['content-type'], 'Pod');
    if (isStatus(decoded)) return statusReply(decoded);
    const r = await store(ctx, (decoded.body ?? Buffer.alloc(0)).toString('utf8'), decoded.contentType);
    return r === kStale
      ? statusReply(
          conflict(ctx.params.name, 'the object has been modified; please apply your changes to the latest version and try again'),
        )
      : r;
  };

  /**
   * patch: apply the patch to the pod as it is now and store the result. As the apiserver's
   * patcher inside GuaranteedUpdate (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go),
   * a patch that sets no resourceVersion is applied again to the newer pod when the pod changed
   * before the write (up to kPatchAttempts times, then 409 Conflict); one that sets a resourceVersion
   * is a precondition, as for a PUT.
   */
  const patch = async (ctx: RouteContext): Promise<HttpReply> => {
    const { host, req, params, body } = ctx;
    const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const force = queryBool(req.query, 'force');
    const text = (body ?? Buffer.alloc(0)).toString('utf8');
    for (let attempt = 1; ; attempt++) {
      const current = host.getPod(params.namespace, params.name);
      if (!current) return statusReply(notFound('pods', params.name));
      if (isStaticPod(current)) return statusReply(mirrorPodWriteRefused(params.name, 'patch'));
      const base = present(host, current);
      let patched: Pod;
      try {
        patched = patchPod(base, contentType, text, {
          ...(req.query.has('fieldManager') ? { fieldManager: req.query.get('fieldManager')! } : {}),
          ...(force ? { force: true } : {}),
        });
      } catch (err) {
        return statusReply(kubeErrorStatus(err, 'pods', params.name));
      }
      const r = await store(ctx, JSON.stringify(patched), 'application/json', base.metadata?.resourceVersion ?? '');
      if (r !== kStale) return r;
      if (attempt === kPatchAttempts)
        return statusReply(
          conflict(params.name, 'the object has been modified; please apply your changes to the latest version and try again'),
        );
    }
  };

  const { remove, evict, removeCollection } = newPodDeleteHandlers({ present, versions: (host) => deps.versions(host) });

  const base = '/api/v1/namespaces/:namespace/pods';
  return [
    { path: '/api/v1/pods', methods: { get: list(true) } },
    { path: base, methods: { get: list(false), post: create, delete: removeCollection } },
    { path: `${base}/:name`, methods: { get, put: update, patch, delete: remove } },
    { path: `${base}/:name/status`, methods: { get } },
    { path: `${base}/:name/log`, methods: { get: podLogHandler } },
    { path: `${base}/:name/eviction`, methods: { post: evict } },
    ...ephemeralContainersRoutes({ present, patchPod }),
  ];
}
