/**
 * `nodes/{name}/status` of the Kubernetes API. GET answers the Node (the apiserver's status
 * subresource, pkg/registry/core/node/storage/storage.go StatusREST, returns the whole object).
 * PUT and PATCH are refused with 405 naming why: upstream the kubelet is the writer of its node's
 * status (kubelet_node_status.go), and on this node the agent is the kubelet, which recomputes
 * the status at every update (`--node-status-update-frequency`) and would overwrite any write.
 */
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from '../routes/router.js';
import { notFound, statusError } from '../http/status.js';

async function getNodeStatus({ host, params }: RouteContext): Promise<HttpReply> {
  if (!host.getNode) return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not serve nodes'));
  const node = await host.getNode();
  if (node.metadata?.name !== params.name) return statusReply(notFound('nodes', params.name));
  return jsonReply(200, { apiVersion: 'v1', kind: 'Node', ...node });
}

function refuseWrite({ params }: RouteContext): HttpReply {
  return statusReply(
    statusError(
      405,
      'MethodNotAllowed',
      `the status of node ${JSON.stringify(params.name)} is written by this node's agent (the kubelet) alone, at each node status update; it is not written through the API`,
    ),
    { Allow: 'GET' },
  );
}

/** nodeStatusRoutes: GET, PUT and PATCH of /api/v1/nodes/{name}/status. */
export function nodeStatusRoutes(): Route[] {
  return [{ path: '/api/v1/nodes/:name/status', methods: { get: getNodeStatus, put: refuseWrite, patch: refuseWrite } }];
}
