/**
 * The pod deletes of the Kubernetes API slice (pods.ts): `DELETE` of one pod, `deletecollection`
 * and the `eviction` subresource (policy/v1 Eviction, what `kubectl drain` sends), as the
 * apiserver's generic registry Delete/DeleteCollection (k8s.io/apiserver/pkg/registry/generic/registry/store.go:
 * preconditions, `?dryRun=All`, the grace period of the DeleteOptions) and the pod EvictionREST
 * (pkg/registry/core/pod/storage/eviction.go). Writes go through AgentHost.deletePod (the intake);
 * a static pod (a mirror pod here) refuses them (present.ts).
 */
import type { Pod, PodList, Status } from '../../shared/api.js';
import { isStaticPod } from '../../shared/annotations.js';
import { markPodDeleted } from '../../shared/pod-update.js';
import { hostClock, type AgentHost } from '../host/agent-host.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import { notFound, statusError } from '../http/status.js';
import type { RouteContext, RouteHandler } from '../routes/router.js';
import { checkPreconditions, parseDeleteOptions, type DeleteOptions } from './delete-options.js';
import { parseEviction } from './eviction.js';
import { kPodFieldLabels, podFields } from './field-selector.js';
import type { PodVersions } from './pod-versions.js';
import { mirrorPodWriteRefused } from './present.js';
import { isStatus, kubeErrorStatus, matchesFilter, parseDryRun, parseListFilter } from './request.js';

/** PodDeleteDeps: what the deletes share with the other pod routes (pods.ts newPodRoutes). */
export interface PodDeleteDeps {
  /** present: the pod as the API shows it (its resourceVersion set; a static pod as its mirror pod). */
  present(host: AgentHost, pod: Pod): Pod;
  /** versions: the pods' resourceVersions on this server (a precondition's `resourceVersion` is checked against them). */
  versions(host: AgentHost): PodVersions;
}

/** PodDeleteHandlers: the handlers of `DELETE …/pods/{name}`, `POST …/pods/{name}/eviction` and `DELETE …/pods`. */
export interface PodDeleteHandlers {
  remove: RouteHandler;
  evict: RouteHandler;
  removeCollection: RouteHandler;
}

/** newPodDeleteHandlers: the delete handlers over `deps`. Answers are the apiserver's (200 with the pod, 201 Success for an eviction, a PodList for deletecollection) or its Statuses. */
export function newPodDeleteHandlers(deps: PodDeleteDeps): PodDeleteHandlers {
  const present = (host: AgentHost, pod: Pod): Pod => deps.present(host, pod);

  /**
   * deleteOne: the checks and the delete both DELETE and eviction make: the pod exists, is no
   * static pod, its preconditions hold; a dry run answers with the pod as the delete would mark
   * it. Resolves with the pod (deletionTimestamp set) or the refusal.
   */
  const deleteOne = async (
    host: AgentHost,
    namespace: string,
    name: string,
    opts: DeleteOptions,
    dryRun: boolean,
  ): Promise<Pod | Status> => {
    if (!host.deletePod) return statusError(405, 'MethodNotAllowed', 'this agent does not delete pods');
    const current = host.getPod(namespace, name);
    if (!current) return notFound('pods', name);
    if (isStaticPod(current)) return mirrorPodWriteRefused(name, 'delete');
    const failed = checkPreconditions(opts, 'pods', name, current.metadata?.uid, deps.versions(host).get(current.metadata?.uid ?? ''));
    if (failed) return failed;
    if (dryRun) return present(host, markPodDeleted(current, opts.gracePeriodSeconds, hostClock(host).now()));
    try {
      return present(host, await host.deletePod(namespace, name, opts.gracePeriodSeconds));
    } catch (err) {
      return kubeErrorStatus(err, 'pods', name);
    }
  };

  const remove = async ({ host, req, params, body }: RouteContext): Promise<HttpReply> => {
    const dryRun = parseDryRun(req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    const opts = parseDeleteOptions(req.query, body);
    if (isStatus(opts)) return statusReply(opts);
    const r = await deleteOne(host, params.namespace, params.name, opts, dryRun || opts.dryRun === true);
    return isStatus(r) ? statusReply(r) : jsonReply(200, r);
  };

  /**
   * evict: `POST …/pods/{name}/eviction` (policy/v1 Eviction, what `kubectl drain` sends): a delete
   * with the Eviction's deleteOptions, answered as the apiserver answers an eviction that went
   * through: 201 with a Success Status. No PodDisruptionBudget exists here, so none refuses it.
   */
  const evict = async ({ host, req, params, body }: RouteContext): Promise<HttpReply> => {
    const dryRun = parseDryRun(req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    const opts = parseEviction(body, params.name);
    if (isStatus(opts)) return statusReply(opts);
    const r = await deleteOne(host, params.namespace, params.name, opts, dryRun || opts.dryRun === true);
    if (isStatus(r)) return statusReply(r);
    return jsonReply(201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } satisfies Status);
  };

  /** deletecollection: every matching pod of the namespace that the API may delete (static pods are skipped), as a PodList. */
  const removeCollection = async ({ host, req, params, body }: RouteContext): Promise<HttpReply> => {
    if (!host.deletePod) return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not delete pods'));
    const dryRun = parseDryRun(req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    const filter = parseListFilter(req.query, kPodFieldLabels);
    if (isStatus(filter)) return statusReply(filter);
    const opts = parseDeleteOptions(req.query, body);
    if (isStatus(opts)) return statusReply(opts);
    const targets = host
      .listPods()
      .filter(
        (p) =>
          (p.metadata?.namespace ?? 'default') === params.namespace &&
          !isStaticPod(p) &&
          !p.metadata?.deletionTimestamp &&
          matchesFilter(filter, p.metadata?.labels, () => podFields(p)),
      );
    if (dryRun || opts.dryRun)
      return jsonReply(200, {
        apiVersion: 'v1',
        kind: 'PodList',
        metadata: {},
        items: targets.map((p) => present(host, markPodDeleted(p, opts.gracePeriodSeconds, hostClock(host).now()))),
      } satisfies PodList);
    const items: Pod[] = [];
    for (const p of targets) {
      try {
        items.push(present(host, await host.deletePod(params.namespace, p.metadata?.name ?? '', opts.gracePeriodSeconds)));
      } catch (err) {
        const s = kubeErrorStatus(err, 'pods', p.metadata?.name ?? '');
        if (s.code !== 404) return statusReply(s);
      }
    }
    return jsonReply(200, { apiVersion: 'v1', kind: 'PodList', metadata: {}, items } satisfies PodList);
  };

  return { remove, evict, removeCollection };
}
