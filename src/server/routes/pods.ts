// Counterpart of the kubelet server's /pods endpoint (pkg/kubelet/server getPods) and the apiserver's pod GET.
import type { Pod, PodList } from '../../shared/api.js';
import { isInvalidInput } from '../../shared/errors.js';
import { matchesLabelSelector, parseLabelSelector, type LabelSelector } from '../label-selector.js';
import { jsonReply, statusReply, type HttpReply } from '../reply.js';
import type { RouteContext } from '../router.js';
import { notFound, statusError } from '../status.js';

/**
 * listPodsHandler answers `GET /pods`: a `PodList` of every pod with its status, optionally
 * filtered by `?namespace=` and `?labelSelector=` (equality terms, see parseLabelSelector).
 * A bad selector gives 400 `BadRequest`.
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
  const items: Pod[] = host
    .listPods()
    .filter((p) => (namespace === '' || (p.metadata?.namespace ?? 'default') === namespace) && matchesLabelSelector(selector, p.metadata?.labels));
  const list: PodList = { apiVersion: 'v1', kind: 'PodList', metadata: {}, items };
  return jsonReply(200, list);
}

/** getPodHandler answers `GET /pods/{namespace}/{name}`: the Pod (with `apiVersion`/`kind`), or 404 `NotFound`. */
export function getPodHandler({ host, params }: RouteContext): HttpReply {
  const pod = host.getPod(params.namespace, params.name);
  if (pod === undefined) return statusReply(notFound('pods', params.name));
  return jsonReply(200, { apiVersion: 'v1', kind: 'Pod', ...pod });
}
